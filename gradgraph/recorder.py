"""``record()``: run ordinary PyTorch code and keep a time-ordered log of what autograd did.

What is observed, and how:

- forward ops through a ``TorchFunctionMode`` (each op's new ``grad_fn`` nodes, found by
  walking ``next_functions``, including ``AccumulateGrad`` leaves);
- saved tensors through per-slot saved-tensor hooks (pack logs ``saved``; the holder's
  death logs ``freed``). PyTorch skips its in-place (version) check for hooked saved
  tensors, so the recorder repeats it: modifying a saved tensor still fails backward
  ("... modified by an inplace operation ..."), with a message that says gradgraph
  checked it. A node whose saved tensors were already modified or freed when first seen
  is not hooked, and PyTorch raises its own error;
- backward order through node pre-hooks, gradients through ``AccumulateGrad`` post-hooks
  (a leaf's start too, as it only accumulates; through a pre-hook where a post-accumulate-
  grad hook must come after it; after ``retain_grad()``, through the pre-hook of the
  tensor's node); in a
  ``create_graph`` backward, the nodes it makes through post-hooks that a node's pre-hook
  adds when grad mode is on;
- user hooks: tensor hooks and hooks on ``grad_fn`` nodes (``node.register_hook``,
  ``node.register_prehook``) registered inside the block, and hooks of the modules passed
  to ``record(*modules)``;
- errors: a ``RuntimeError`` raised by a PyTorch call inside the block, or by
  :meth:`Recording.backward` after it.

Node hooks stay installed after the block, so a later ``loss.backward()`` is still
recorded; :meth:`Recording.close` removes them (garbage collection of the recording
does too). Ops run after the block are not recorded.

Leaf names: parameters are named after the outermost module called
(``"0.weight"``); tensors are named with ``record(names={"w": w})`` or
``recording.name(w, "w")`` before their first use.

>>> import torch, gradgraph
>>> x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> w = torch.tensor([0.5, 0.5, 0.5], requires_grad=True)
>>> with gradgraph.record(names={"x": x, "w": w}) as rec:
...     loss = (x * w).exp().sum()
...     loss.backward()
>>> [e.name for e in rec.events if e.kind.value == "backward"]
['SumBackward0', 'ExpBackward0', 'MulBackward0', 'x', 'w']
>>> rec.close()
"""

from __future__ import annotations

import contextlib
import html
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from .device import pick_device
from .eventlog import EventLog
from .events import Event, EventKind
from .modules import ModuleTracker, observe_module_hooks
from .names import LeafNames
from .nodehooks import observe_node_hooks
from .source import caller_frame
from .watcher import GraphWatcher

__all__ = ["Recording", "record", "side_by_side"]

_LOGGED = "_gradgraph_logged"
_push_mode = torch._C._push_on_torch_function_stack
_pop_mode = torch._C._pop_torch_function_stack
# Gradients a recording may hold to compute their norms when its events are read (CPU
# only: on CUDA and MPS they would show in the allocator's figure), see gradgraph.norms
_LATE_NORM_BYTES = 16 * 2**20
_active_lock = threading.Lock()
_active: list[Recording] = []


class Recording:
    """The log of one ``record()`` block. Create it with :func:`record`.

    Event details by kind (all plain values):

    - ``node``: ``grad_fn``, ``op`` (the PyTorch call whose output it is, else None),
      ``shape``, ``dtype``, ``device``, ``inputs`` (ids of the nodes its gradient flows to),
      ``leaf``, ``leaf_name``, ``parameter``, ``source``, ``module``, ``during_backward``;
    - ``saved``: ``slot``, ``shape``, ``dtype``, ``device``, ``numel``, ``bytes``,
      ``storage`` (a number naming its storage, shared by the tensors that read it),
      ``storage_bytes`` (that storage's size), ``alias`` (its storage was already held by
      another saved tensor, so it adds no memory);
    - ``freed``: the same facts plus ``released`` (the storage left the saved set);
    - ``backward``: ``grad_fn``; ``grad``: ``target`` (``"leaf"`` or ``"retained"``),
      ``norm`` (of the arriving gradient; None where it has none, or where it aliased a
      tensor changed in place before the events were read), ``accumulated_norm`` (of what
      ``.grad`` holds now); logged after ``.grad`` was set and before a post-accumulate-grad
      hook fires;
    - ``hook``: ``target`` (``"tensor"``, ``"node"`` or ``"module"``), ``kind``, ``hook``,
      ``module``; a node's pre-hook fires after its ``backward`` event (the recorder's own
      pre-hook comes first), its post-hook after it ran;
    - ``error``: ``op``, ``type``, ``message`` (PyTorch's own text), ``failed_node`` (the
      name of the node whose backward raised it, also the event's ``node``; else None).

    Every event of a backward call carries ``call`` (its number and loss name).
    """

    def __init__(self, device: torch.device | None = None) -> None:
        self._closed = True  # until it has something to close
        self.device = device if device is not None else pick_device()
        self._log = EventLog(self.device)
        self._leaf_names = LeafNames()
        self._modules = ModuleTracker(self._leaf_names)
        self._watcher = GraphWatcher(
            self._log,
            self._leaf_names,
            self._modules.where,
            late_norm_bytes=_LATE_NORM_BYTES if self.device.type == "cpu" else 0,
        )
        self._closed = False
        self._frame_stores: dict[tuple[int, bool, tuple[str, ...]], Any] = {}

    @property
    def events(self) -> tuple[Event, ...]:
        """The events so far, oldest first."""
        return self._log.snapshot()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran: hooks removed, nothing more is recorded."""
        return self._closed

    def __len__(self) -> int:
        return len(self._log)

    def __repr__(self) -> str:
        events = self.events
        if not events:
            return "Recording(empty: nothing requiring grad ran inside the block)"
        counts = Counter(e.kind.value for e in events)
        summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        return f"Recording({len(events)} events: {summary}{'; closed' if self.closed else ''})"

    def _repr_html_(self) -> str:
        counts = Counter(e.kind.value for e in self.events)
        rows = "".join(
            f"<tr><td>{kind.value}</td><td>{counts.get(kind.value, 0)}</td></tr>"
            for kind in EventKind
        )
        title = html.escape(repr(self))
        return (
            f"<table><caption>{title}</caption><tr><th>event</th><th>count</th></tr>{rows}</table>"
        )

    def name(self, obj: torch.Tensor | torch.nn.Module, label: str) -> None:
        """Give a leaf tensor a display name, or a module's parameters the prefix ``label.``.

        Call it before the tensor is first used in the recording.
        """
        if isinstance(obj, torch.nn.Module):
            self._modules.name_module(obj, prefix=label)
        elif isinstance(obj, torch.Tensor):
            self._leaf_names[obj] = label
        else:
            raise TypeError(
                f"name() takes a tensor or an nn.Module to call {label!r}, got {type(obj).__name__}"
            )

    def backward(self, tensor: torch.Tensor, **kwargs: Any) -> None:
        """``tensor.backward(**kwargs)``, logging an ``error`` event if autograd raises.

        Inside the block a plain ``loss.backward()`` is enough; after it, use this to
        record the error too (a node hook cannot see one).
        """
        with _errors_logged(self._log, self._watcher, "backward"):
            tensor.backward(**kwargs)

    def close(self) -> None:
        """Remove every hook the recording left on the graph and stop recording (idempotent)."""
        if not self._closed:
            self._closed = True
            self._watcher.close()
            self._log.close()

    def __del__(self) -> None:  # a recording that goes takes its hooks with it
        self.close()

    def play(self, projector: bool = False, fold: Sequence[str] = ()) -> Any:
        """An ipywidgets player over the events recorded so far (see ``gradgraph.player``).

        ``projector=True``: everything 1.5 times larger, for a classroom. ``fold``:
        top-level modules to draw as one box each (``fold=("trunk",)``). ValueError if
        nothing was recorded.
        """
        from .player import Player

        return Player(self._frame_store(projector, fold))

    def to_html(self, projector: bool = False, fold: Sequence[str] = ()) -> str:
        """A self-contained HTML player (frames as base64 SVGs, a little JS), no kernel needed."""
        from .page import to_html

        return to_html(self._frame_store(projector, fold))

    def save(self, path: str | Path, projector: bool = False, fold: Sequence[str] = ()) -> Path:
        """Write the frames as a GIF (``.gif``) or a PNG strip (``.png``); return the path."""
        from .export import save

        return save(self._frame_store(projector, fold), path)

    def _frame_store(self, projector: bool, fold: Sequence[str] = ()) -> Any:
        """Frames of the events so far, shared by play, to_html and save (drawing is lazy)."""
        from .frames import FrameStore

        events = self.events
        key = (len(events), projector, tuple(fold))
        if key not in self._frame_stores:
            self._frame_stores[key] = FrameStore(events, projector=projector, fold=fold)
        return self._frame_stores[key]

    def _on_module_hook(self, module: str, kind: str, hook: str) -> None:
        details = {"target": "module", "kind": kind, "hook": hook, "module": module}
        self._log.emit(EventKind.HOOK, None, f"{module} {kind}", details)


def side_by_side(
    *recordings: Recording,
    titles: Sequence[str] = (),
    projector: bool = False,
    fold: Sequence[str] = (),
) -> Any:
    """One player over several recordings, side by side, stepped by one slider.

    Use it to compare two runs of the same code (full vs frozen, retain_graph or not);
    ``projector`` and ``fold`` as in :meth:`Recording.play`.
    Each column stays on its last frame once its recording has ended. Display the
    player in a notebook cell; ``player.to_html()`` (and nbconvert's HTML export) gives
    the same comparison with no kernel.

    >>> import torch, gradgraph
    >>> x = torch.ones(3, requires_grad=True)
    >>> def run(w):
    ...     with gradgraph.record(names={"x": x, "w": w}) as rec:
    ...         (x * w).sum().backward()
    ...     return rec
    >>> full, frozen = run(torch.ones(3, requires_grad=True)), run(torch.ones(3))
    >>> player = gradgraph.side_by_side(full, frozen, titles=("full", "frozen"))
    >>> player.slider.max + 1 == max(len(full), len(frozen)), len(player.columns)
    (True, 2)
    >>> player.to_html().count('class="gradgraph-column"')
    2
    >>> full.close(); frozen.close()
    """
    if not recordings:
        raise ValueError("side_by_side() needs at least one recording")
    from .player import Player

    return Player(*(r._frame_store(projector, fold) for r in recordings), titles=titles)


@contextlib.contextmanager
def _errors_logged(log: EventLog, watcher: GraphWatcher, op: str) -> Iterator[None]:
    """Log a RuntimeError raised in the block (see :func:`_log_error`)."""
    try:
        yield
    except RuntimeError as err:
        _log_error(log, watcher, op, err)
        raise


def _log_error(log: EventLog, watcher: GraphWatcher, op: str, err: RuntimeError) -> None:
    """Log ``err``, raised by ``op``, once however many recorded calls it crosses.

    An error raised inside backward names the node that was running (the one that failed).
    """
    if not getattr(err, _LOGGED, False):
        setattr(err, _LOGGED, True)
        node = watcher.running if op == "backward" else None
        details = {
            "op": op,
            "type": type(err).__name__,
            "message": str(err),
            "failed_node": watcher.name_of(node) if node is not None else None,
        }
        log.emit_error(node, type(err).__name__, details)
    watcher.forget_running()


class _ForwardMode(TorchFunctionMode):
    """Sees every PyTorch call in the block, in program order, and reports its outputs."""

    def __init__(self, recording: Recording) -> None:  # TorchFunctionMode's does nothing
        self._log = recording._log
        self._watcher = recording._watcher

    def __torch_function__(
        self, func: Callable, types: Any, args: tuple = (), kwargs: Mapping | None = None
    ) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "op")
        if name == "__get__":  # attribute reads (.grad_fn, .shape) make no nodes
            return func(*args, **kwargs)
        special = _SPECIAL.get(func)
        try:
            if special is not None:
                return special(self, *args, **kwargs)
            result = func(*args, **kwargs)
        except RuntimeError as err:
            _log_error(self._log, self._watcher, name.strip("_"), err)
            raise
        # "__mul__" -> "mul"; the walk to the learner's line starts at the caller's frame
        if isinstance(result, torch.Tensor):
            # read once: each read of a node makes its Python object anew (none holds it)
            node = result.grad_fn
            if node is not None:
                self._watcher.watch_output(result, node, name.strip("_"), caller_frame(1))
        elif isinstance(result, (tuple, list)):
            self._watcher.watch(result, name.strip("_"), caller=caller_frame(1))
        return result

    def _register_hook(self, t: torch.Tensor, hook: Callable) -> Any:
        return t.register_hook(self._watcher.observed_tensor_hook(t, hook, "tensor hook"))

    def _register_post_accumulate_grad_hook(self, t: torch.Tensor, hook: Callable) -> Any:
        observed = self._watcher.observed_tensor_hook(t, hook, "post-accumulate-grad hook")
        return t.register_post_accumulate_grad_hook(observed)

    def _retain_grad(self, t: torch.Tensor) -> None:
        t.retain_grad()
        if not t.is_leaf:
            self._watcher.watch_retained(t)


# Calls the recorder takes over (plain functions, called with the mode: a table of the
# mode's bound methods would be a reference cycle that only the garbage collector frees)
_SPECIAL: dict[Callable, Callable] = {
    torch.Tensor.register_hook: _ForwardMode._register_hook,
    torch.Tensor.register_post_accumulate_grad_hook: (
        _ForwardMode._register_post_accumulate_grad_hook
    ),
    torch.Tensor.retain_grad: _ForwardMode._retain_grad,
}


def record(
    *modules: torch.nn.Module,
    names: Mapping[str, torch.Tensor | torch.nn.Module] | None = None,
    device: torch.device | None = None,
) -> contextlib.AbstractContextManager[Recording]:
    """Record what autograd does while the block runs; ``with ... as`` gives the
    :class:`Recording`.

    ``modules``: modules whose hooks (forward, backward) should be observed; their
    parameters are named after them (``"0.weight"``) even when a submodule is called alone.
    ``names``: display names for leaf tensors (or parameter-name prefixes for modules).
    ``device``: whose allocator to sample (default :func:`gradgraph.pick_device`).
    Blocks cannot be nested (``RuntimeError``).

    >>> import torch, gradgraph
    >>> with gradgraph.record() as outer:
    ...     with gradgraph.record():
    ...         pass
    Traceback (most recent call last):
    RuntimeError: gradgraph.record() blocks cannot be nested: ...
    """
    return _Block(modules, names, device)


class _Block:
    """One ``record()`` block: it starts a recording on entry and takes down what it
    installed on exit, whatever the block raised.

    A class rather than a generator and ``contextlib.contextmanager``: the block is
    entered right after the learner's own computation, with the caches cold, where
    contextlib's machinery cost more than the rest of the set-up (measured: 11 us a
    recording of the benchmark's MLP).
    """

    __slots__ = ("_modules", "_names", "_device", "_recording", "_undo")

    def __init__(
        self,
        modules: tuple[torch.nn.Module, ...],
        names: Mapping[str, torch.Tensor | torch.nn.Module] | None,
        device: torch.device | None,
    ) -> None:
        self._modules, self._names, self._device = modules, names, device
        self._undo: list[Callable[[], None]] = []  # what each step installed, undone in reverse

    def __enter__(self) -> Recording:
        recording = self._recording = Recording(self._device)
        for label, obj in (self._names or {}).items():
            recording.name(obj, label)
        for module in self._modules:  # after names: a name given explicitly wins
            recording.name(module, "")
        with _active_lock:
            if _active:
                raise RuntimeError(
                    "gradgraph.record() blocks cannot be nested: a recording is already active "
                    f"({_active[0]!r}). Finish the outer `with` block first, or record the "
                    "whole program in one block."
                )
            _active.append(recording)
        try:
            self._install(recording, _opening_frame())
        except BaseException:
            self._take_down()
            raise
        return recording

    def __exit__(self, *exc_info: object) -> None:
        self._take_down()

    def _install(self, recording: Recording, opening: FrameType | None) -> None:
        """Install the recording's observers, each with its undo step; the forward mode last
        (``opening``: the frame whose ``with`` statement opened the block)."""
        undo = self._undo
        recording._modules.stop = opening
        if self._modules:
            undo.append(observe_module_hooks(self._modules, recording._on_module_hook))
        undo.append(observe_node_hooks(recording._watcher.observed_node_hook))
        # what the mode's __enter__ and __exit__ do, without their four Python calls
        _push_mode(_ForwardMode(recording))
        undo.append(_pop_mode)

    def _take_down(self) -> None:
        """Undo what :meth:`_install` installed, in reverse, and let the next block start."""
        recording = self._recording
        for step in reversed(self._undo):
            step()
        self._undo.clear()
        recording._modules.stop = None  # the frame may end: hold it no longer
        with _active_lock:
            _active.remove(recording)


def _opening_frame() -> FrameType | None:
    """The frame whose ``with`` statement opened the block (called from ``_Block.__enter__``:
    the first frame outwards outside contextlib, which may run more than one frame between,
    as ``ExitStack`` does)."""
    frame = caller_frame(2)
    while frame is not None and frame.f_globals.get("__name__") == "contextlib":
        frame = frame.f_back
    return frame
