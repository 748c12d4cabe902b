"""Find new autograd nodes, log them, and hook them for backward, gradients and saved tensors.

Each node is tagged in its own ``node.metadata`` with the recording's serial number and
the node's id, so the watcher recognises nodes without keeping the graph alive. Node
and tensor hooks stay installed after the ``with`` block (a later backward is still
recorded) until :meth:`GraphWatcher.close`.

Hooks run inside the user's forward and backward, so they only note what they see
(shapes, dtypes, the norm as a 0-dim tensor); the event log turns that into plain
values when the events are first read. On the CPU, the norm of a gradient added into a
``.grad`` that already held one waits until then too (see ``gradgraph.norms``), within
a budget of bytes held per recording. The norm of what ``.grad`` holds is computed in
the hook, right after the gradient was accumulated into it (the tensor is still in the
processor's cache there: cheaper than one batched call at the end of the backward call).

>>> import torch
>>> from gradgraph.eventlog import EventLog
>>> from gradgraph.modules import ModuleTracker
>>> from gradgraph.names import LeafNames
>>> from gradgraph.watcher import GraphWatcher
>>> log = EventLog(torch.device("cpu"))
>>> names = LeafNames()
>>> watcher = GraphWatcher(log, names, ModuleTracker(names).where)
>>> x = torch.ones(3, requires_grad=True)
>>> y = x.exp()
>>> watcher.watch([y], op="exp")
>>> [(e.kind.value, e.name) for e in log.snapshot()]
[('node', 'AccumulateGrad'), ('node', 'ExpBackward0'), ('saved', 'ExpBackward0')]
>>> watcher.close()
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterable
from functools import partial
from operator import attrgetter, itemgetter
from types import FrameType
from typing import Any

import torch
from torch.autograd.graph import get_gradient_edge

from .eventlog import EventLog
from .events import EventKind
from .introspect import output_metadata, saved_slots
from .names import LeafNames
from .nodehooks import OwnHook, remove_hooks
from .norms import LateNorm, norm
from .saved import packer, unpack
from .source import SourceLine, caller_frame

__all__ = ["GraphWatcher"]

_METADATA_KEY = "gradgraph"
_grad_enabled = torch.is_grad_enabled
_graph_task_id = torch._C._current_graph_task_id
_current_node = torch._C._current_autograd_node
_queue_callback = torch.autograd.Variable._execution_engine.queue_callback
_serials = itertools.count()
_first = itemgetter(0)
_second = itemgetter(1)
_metadata = attrgetter("metadata")
_tag = itemgetter(_METADATA_KEY)
_Tensor, _Parameter = torch.Tensor, torch.nn.Parameter
_AccumulateGrad = torch._C._functions.AccumulateGrad
# an enum member read through its class costs a lookup per event: read once here
_NODE, _BACKWARD, _GRAD, _HOOK = EventKind.NODE, EventKind.BACKWARD, EventKind.GRAD, EventKind.HOOK
_LEAF_STARTED = {"grad_fn": "AccumulateGrad"}  # the details of every leaf's backward event
# One walk and its adoptions at a time, whichever recording's (a lock for each recording
# would be made inside the learner's loop; only one recording's block runs at a time)
_WALKING = threading.RLock()


class GraphWatcher:
    """Discovers nodes reachable from tensors and installs the recording's hooks on them."""

    __slots__ = (  # read in every hook: fixed slots, not an instance dictionary
        "_log",
        "_leaf_names",
        "_where",
        "_serial",
        "_count",
        "_names",
        "_handles",
        "_retained",
        "_arriving",
        "_leaf_prehooked",
        "_leaf_logged",
        "_late_norm_bytes",
        "_running",
        "_building",
        "_backward_details",
        "__weakref__",  # a test checks that nothing keeps it alive
    )

    def __init__(
        self,
        log: EventLog,
        leaf_names: LeafNames,
        where: Callable[[FrameType | None], tuple[SourceLine | None, str | None]],
        late_norm_bytes: int = 0,
    ) -> None:
        self._log = log
        self._leaf_names = leaf_names
        self._where = where  # frame -> (the learner's line, the module running)
        self._serial = next(_serials)
        self._count = 0
        self._names: dict[int, str] = {}
        self._handles: list[Any] = []
        self._retained: dict[int, list[tuple[int, weakref.ref]]] = {}  # node -> (output, tensor)
        # leaf node -> (the backward call it started in, norm of the gradient arriving,
        # whether .grad was None before it), from its start until its grad event
        self._arriving: dict[int, tuple[int, torch.Tensor | LateNorm | None, bool]] = {}
        self._leaf_prehooked: set[int] = set()  # leaves whose start a pre-hook of ours logs
        self._leaf_logged: dict[int, int] = {}  # leaf -> the backward call it logged a grad in
        self._late_norm_bytes = late_norm_bytes  # what LateNorms may still hold
        # graph task of each backward call under way (innermost last) -> the node that
        # started last in it; None once a leaf is done
        self._running: dict[int, int | None] = {}
        self._building: set[int] = set()  # nodes hooked to log what a create_graph backward makes
        self._backward_details: dict[str, dict[str, str]] = {}  # one per node class, shared

    @property
    def running(self) -> int | None:
        """The node whose backward is running now (the one that failed, after an error):
        the node that started last in the innermost backward call under way."""
        return next(reversed(self._running.values()), None)

    def __repr__(self) -> str:
        return f"GraphWatcher({self._count} nodes, {len(self._handles)} hooks)"

    def node_id(self, node: Any) -> int | None:
        """This recording's id for a node, or None if it has not been seen."""
        tag = node.metadata.get(_METADATA_KEY)
        return tag[1] if tag is not None and tag[0] == self._serial else None

    def name_of(self, nid: int) -> str:
        """The display name of a node this watcher logged."""
        return self._names[nid]

    def tensor_node(self, t: torch.Tensor) -> tuple[int | None, str]:
        """Id and display name of the node that receives ``t``'s gradient (None: no node)."""
        if not t.requires_grad:
            return None, self._leaf_names.get(t, "tensor")
        nid = self.node_id(get_gradient_edge(t).node)
        return nid, (self._names[nid] if nid is not None else self._leaf_names.get(t, "tensor"))

    def watch(
        self,
        tensors: Iterable[Any],
        op: str | None,
        during_backward: bool = False,
        caller: FrameType | None = None,
    ) -> None:
        """Log and hook every node reachable from ``tensors`` that is new to this recording
        (``caller``: as in :meth:`watch_nodes`)."""
        roots = []
        for t in tensors:
            if isinstance(t, torch.Tensor):
                node = t.grad_fn
                if node is not None:
                    roots.append(node)
        if roots:
            self.watch_nodes(roots, op, during_backward, caller=caller)

    def watch_output(self, t: torch.Tensor, node: Any, op: str, caller: FrameType) -> None:
        """:meth:`watch` for the one tensor an operation returned, ``t``, whose node ``node``
        (``t.grad_fn``) is described by the tensor itself; ``caller``: the frame that called
        the operation."""
        try:
            meta = (t.shape, t.dtype, t.device) if t.output_nr == 0 else None
        except RuntimeError:  # a nested tensor has no one shape: ask its node later
            meta = None
        self.watch_nodes([node], op, root_meta=meta, caller=caller)

    def watch_nodes(
        self,
        roots: list[Any],
        op: str | None,
        during_backward: bool = False,
        root_meta: tuple[Any, Any, Any] | None = None,
        caller: FrameType | None = None,
    ) -> None:
        """Log and hook every node reachable from the nodes ``roots`` that is new here; the
        roots are what ``op`` made (``root_meta``: the shape, dtype and device of a single
        root's output, where the caller knows them; ``caller``: the frame that called
        ``op``, where the caller has it, to find the learner's line from)."""
        with _WALKING:
            new_nodes = self._new_nodes(roots)
            if not new_nodes:
                return
            # starting from the op's caller spares making frame objects of the recorder's
            line, module = self._where(caller if caller is not None else caller_frame(0))
            context = (line, module, during_backward, _graph_task_id())  # one task per walk
            for node, metadata, children in new_nodes:
                if children is None:
                    self._adopt_leaf(node, metadata, context)
                elif node in roots:
                    self._adopt(node, metadata, children, op, context, root_meta)
                else:
                    self._adopt(node, metadata, children, None, context)

    def watch_retained(self, t: torch.Tensor) -> None:
        """Log a ``grad`` event whenever a gradient reaches ``t`` (after ``t.retain_grad()``).

        It is logged when ``t``'s node starts, after the tensor hooks and the retained
        ``.grad`` was stored (as PyTorch orders them), so its norm is what ``t.grad`` holds.
        """
        self.watch([t], op=None)
        nid, _ = self.tensor_node(t)
        if nid is not None:
            self._retained.setdefault(nid, []).append((t.output_nr, weakref.ref(t)))

    def observed_tensor_hook(self, t: torch.Tensor, hook: Callable, kind: str) -> Callable:
        """Wrap a user's tensor hook so that each call logs a ``hook`` event first.

        The node is looked up when the hook fires (a leaf's ``AccumulateGrad`` may not
        exist yet when the hook is registered). A post-accumulate-grad hook sees ``.grad``
        already set, so the leaf's ``grad`` event is logged before it.
        """
        self.watch([t], op=None)
        tensor = weakref.ref(t)
        details = {"target": "tensor", "kind": kind, "hook": getattr(hook, "__name__", repr(hook))}
        log = self._log
        after_accumulation = kind == "post-accumulate-grad hook"
        if after_accumulation and t.requires_grad and t.is_leaf:  # torch refuses others
            node = get_gradient_edge(t).node  # the leaf's start must be seen before the hook
            nid = self.node_id(node)
            if nid is not None:
                self._prehook_leaf(node, nid, tensor)

        def observed(*args: Any) -> Any:
            target = tensor()
            nid, name = self.tensor_node(target) if target is not None else (None, "tensor")
            if after_accumulation and nid is not None:
                self._leaf_done(nid, name, target, None, _graph_task_id())
            log.emit(_HOOK, nid, name, details)
            return hook(*args)

        return observed

    def observed_node_hook(self, hook: Callable) -> Callable:
        """Wrap a user's node hook (``node.register_hook`` or ``register_prehook``) so that
        each call logs a ``hook`` event on the node running it first.

        A pre-hook is called with the node's output gradients alone, a post-hook with its
        input and output gradients: the number of arguments tells which fired. On a leaf's
        node, a pre-hook logs the leaf's start first, where no pre-hook of ours does, and a
        post-hook its gradient (the user's hooks may have been filed before ours).
        """
        name = getattr(hook, "__name__", repr(hook))
        pre = {"target": "node", "kind": "node pre-hook", "hook": name}
        post = {"target": "node", "kind": "node post-hook", "hook": name}
        log = self._log

        def observed(*args: Any) -> Any:
            node = _current_node()
            nid = self.node_id(node) if node is not None else None
            label = self._names[nid] if nid is not None else type(node).__name__
            if type(node) is _AccumulateGrad and nid is not None:
                if len(args) == 1:
                    self._on_leaf_backward(nid, label, weakref.ref(node.variable), args[0])
                else:  # a post-hook gets the gradient that arrived among its output gradients
                    self._leaf_done(nid, label, node.variable, args[1][0], _graph_task_id())
            log.emit(_HOOK, nid, label, pre if len(args) == 1 else post)
            return hook(*args)

        return observed

    def close(self) -> None:
        """Remove every node and tensor hook this watcher installed (idempotent)."""
        handles, self._handles = self._handles, []
        remove_hooks(handles)

    def forget_running(self) -> None:
        """Clear the running nodes (after an error ended their backward)."""
        self._running.clear()

    def _new_nodes(self, roots: list[Any]) -> list[tuple[Any, dict, tuple[Any, ...] | None]]:
        """Unseen nodes reachable from ``roots``, inputs first: each with its ``metadata``
        and its input nodes (None for a leaf's ``AccumulateGrad``, which has none)."""
        found: list[tuple[Any, dict, tuple[Any, ...] | None]] = []
        serial = self._serial
        found_tag = (serial, None)  # the tag of a node found here, until it is adopted
        # a node: to visit; (node, metadata, its input nodes): visited, found once its
        # inputs are (a node is never a tuple). Pushed in reverse: inputs are found in order
        stack: list[Any] = roots[::-1]
        pop = stack.pop
        while stack:
            node = pop()
            if type(node) is tuple:
                found.append(node)
                continue
            metadata = node.metadata
            tag = metadata.get(_METADATA_KEY)
            if tag is not None and tag[0] == serial:
                continue  # adopted, or found already in this walk
            metadata[_METADATA_KEY] = found_tag
            if type(node) is _AccumulateGrad:  # a leaf's node has no input nodes (not asked)
                found.append((node, metadata, None))
                continue
            # the input nodes, without the Nones of inputs that need no gradient (a node is
            # always true); map and filter spare a Python frame per node
            children = tuple(filter(None, map(_first, node.next_functions)))
            stack.append((node, metadata, children))
            stack += children[::-1]
        return found

    def _adopt(
        self,
        node: Any,
        metadata: dict,
        children: tuple[Any, ...],
        op: str | None,
        context: tuple[Any, str | None, bool, int],
        meta: tuple[Any, Any, Any] | None = None,
    ) -> None:
        """Log an operation's node and hook it (its backward, its saved tensors)."""
        nid = self._count
        self._count = nid + 1
        metadata[_METADATA_KEY] = (self._serial, nid)
        name = type(node).__name__
        self._names[nid] = name
        # read from torch's record of the output when the events are read, where not given
        shape, dtype, device = meta or (output_metadata(node), None, None)
        source, module, during_backward, task = context
        # the values under eventlog.NODE_KEYS; its inputs were adopted before it, or
        # earlier: all carry this recording's tag, read through C-level getters
        details = (
            name,
            op,
            shape,
            dtype,
            device,
            tuple(map(_second, map(_tag, map(_metadata, children)))),
            False,
            None,
            False,
            source,
            module,
            during_backward,
        )
        log = self._log
        log.emit(_NODE, nid, name, details, task)
        started = self._backward_details.get(name)
        if started is None:
            started = self._backward_details[name] = {"grad_fn": name}
        self._handles.append(node.register_prehook(OwnHook(self._on_backward, nid, name, started)))
        slots = saved_slots(node)
        if slots is None:
            return  # already freed or modified in place: PyTorch will raise its own error
        for slot, saved in slots:
            try:
                saved.register_hooks(packer(log, nid, name, slot, task), unpack)
            except RuntimeError:  # hooks the user set already
                continue

    def _adopt_leaf(
        self, node: Any, metadata: dict, context: tuple[Any, str | None, bool, int]
    ) -> None:
        """Log a leaf's ``AccumulateGrad`` node and hook it (its gradient's arrival)."""
        nid = self._count
        self._count = nid + 1
        metadata[_METADATA_KEY] = (self._serial, nid)
        variable = node.variable
        leaf_name = self._leaf_names.get(variable)
        name = self._names[nid] = leaf_name or "AccumulateGrad"
        kind = type(variable)  # isinstance asks nn.Parameter's metaclass (slow): types first
        try:
            shape = variable.shape
        except RuntimeError:  # a nested tensor has no one shape
            shape = None
        source, module, during_backward, task = context
        details = (  # the values under eventlog.NODE_KEYS
            "AccumulateGrad",
            None,
            shape,
            variable.dtype,
            variable.device,
            (),
            True,
            leaf_name,
            kind is _Parameter or (kind is not _Tensor and isinstance(variable, _Parameter)),
            source,
            module,
            during_backward,
        )
        self._log.emit(_NODE, nid, name, details, task)
        leaf = weakref.ref(variable)
        if variable._post_accumulate_grad_hooks:  # they see .grad set: its start comes first
            self._prehook_leaf(node, nid, leaf)
        self._handles.append(node.register_hook(OwnHook(self._on_leaf_grad, nid, name, leaf)))

    def _prehook_leaf(self, node: Any, nid: int, leaf: weakref.ref) -> None:
        """Log leaf ``nid``'s start from a pre-hook of its own, before anything it runs.

        Most leaves need none: their post-hook logs start and gradient together, at the
        end of the one thing they do. A leaf with a post-accumulate-grad hook needs one,
        since its ``grad`` event is logged before that hook fires.
        """
        if nid not in self._leaf_prehooked:
            self._leaf_prehooked.add(nid)
            hook = OwnHook(self._on_leaf_backward, nid, self._names[nid], leaf)
            self._handles.append(node.register_prehook(hook))

    def _on_backward(self, nid: int, name: str, details: dict, grad_outputs: tuple) -> None:
        """A node's pre-hook: the retained gradients it receives, then its ``backward``."""
        task = _graph_task_id()
        retained = self._retained.get(nid)
        if retained is not None:
            for output, tensor in retained:
                t = tensor()
                grad = {
                    "target": "retained",
                    "norm": norm(grad_outputs[output]),
                    "accumulated_norm": norm(t.grad if t is not None else None),
                }
                self._log.emit(_GRAD, nid, name, grad, task)
        self._log.emit(_BACKWARD, nid, name, details, task)
        self._started(nid, task)
        if _grad_enabled() and nid not in self._building:  # create_graph: it makes nodes
            self._building.add(nid)
            self._handles.append(_current_node().register_hook(OwnHook(self._on_node_done)))

    def _on_leaf_backward(
        self, nid: int, name: str, leaf: weakref.ref, grad_outputs: tuple
    ) -> None:
        """A leaf's pre-hook (or the user's pre-hook on its node, whichever fires first in a
        backward call): the norm of the arriving gradient, then its ``backward``."""
        task = _graph_task_id()
        started = self._arriving.get(nid)
        if started is not None and started[0] == task:
            return
        variable = leaf()
        empty = variable is not None and variable.grad is None
        self._arriving[nid] = (task, self._arriving_norm(grad_outputs[0], empty), empty)
        self._log.emit(_BACKWARD, nid, name, _LEAF_STARTED, task)
        self._started(nid, task)

    def _arriving_norm(self, grad: torch.Tensor | None, empty: bool) -> Any:
        """The norm of a gradient arriving at a leaf: a :class:`LateNorm` where it will be
        added into a ``.grad`` already there (so nothing holds it after) and the budget
        allows, else computed now (a ``.grad`` that was None may become that very tensor;
        a gradient with history, from a create_graph backward, would keep its graph alive)."""
        if empty or grad is None or not grad.is_cpu or grad.requires_grad:
            return norm(grad)
        try:
            nbytes = grad.nbytes
        except RuntimeError:  # a sparse gradient has none (nn.Embedding(sparse=True))
            return norm(grad)
        if nbytes > self._late_norm_bytes:
            return norm(grad)
        self._late_norm_bytes -= nbytes
        return LateNorm(grad)

    def _started(self, nid: int, task: int) -> None:
        """Note that node ``nid`` started in the backward call running now, autograd's graph
        task ``task`` (the first node of a call also asks to hear when the call ends well)."""
        running = self._running
        if task not in running:
            _queue_callback(partial(running.pop, task, None))
        running[task] = nid

    def _on_node_done(self, grad_inputs: tuple, grad_outputs: tuple) -> None:
        """After a node ran in a create_graph backward: log the nodes its gradients made."""
        self.watch(grad_inputs, op=None, during_backward=True)

    def _leaf_done(
        self, nid: int, name: str, leaf: torch.Tensor | None, grad: torch.Tensor | None, task: int
    ) -> None:
        """Log, once per backward call (autograd's graph task ``task``), the gradient
        ``grad`` that arrived at leaf ``nid`` and was accumulated into ``.grad``: its
        ``grad`` event, after its ``backward`` event where nothing logged its start (None:
        the arriving gradient is not known)."""
        if self._leaf_logged.get(nid) == task:
            return
        self._leaf_logged[nid] = task
        held = leaf.grad if leaf is not None else None
        started = self._arriving.pop(nid, None)
        if started is not None and started[0] == task:  # a pre-hook noted the arriving norm
            # (a post-accumulate-grad hook fires next, and may change .grad: computed now)
            _, arrived, was_empty = started
            accumulated = arrived if was_empty else norm(held)
        else:  # nothing logged its start: it starts and ends now
            self._log.emit(_BACKWARD, nid, name, _LEAF_STARTED, task)
            self._started(nid, task)
            if held is not None and grad is not None and _same_data(held, grad):
                # .grad was None: it became the gradient
                arrived = accumulated = norm(held)
            else:
                arrived = self._arriving_norm(grad, False)
                accumulated = norm(held)
        details = {"target": "leaf", "norm": arrived, "accumulated_norm": accumulated}
        self._log.emit(_GRAD, nid, name, details, task)

    def _on_leaf_grad(
        self,
        nid: int,
        name: str,
        variable: weakref.ref,
        grad_inputs: tuple,
        grad_outputs: tuple,
    ) -> None:
        """A leaf's post-hook: its ``grad`` event (and its ``backward`` event, unless its
        start was logged before), unless a hook of the user's logged them already, and the
        nodes of a ``.grad`` that a create_graph backward made."""
        leaf = variable()
        task = _graph_task_id()
        self._leaf_done(nid, name, leaf, grad_outputs[0], task)
        if self._running.get(task) == nid:
            self._running[task] = None  # the leaf is done: nothing runs until the next node
        if _grad_enabled() and leaf is not None:  # create_graph: .grad may have a history
            accumulated = leaf.grad
            if accumulated is not None and accumulated.grad_fn is not None:
                self.watch([accumulated], op=None, during_backward=True)


def _same_data(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors read the same memory (autograd may make a ``.grad`` that was
    None an alias of the gradient arriving, without copying it)."""
    try:
        return a.data_ptr() == b.data_ptr() and a.shape == b.shape
    except (RuntimeError, NotImplementedError):  # no storage (sparse) or no one shape
        return False
