"""Find new autograd nodes, log them, and hook them for backward, gradients and saved tensors.

Each node is tagged in its own ``node.metadata`` with the recording's serial number and
the node's id, so the watcher recognises nodes without keeping the graph alive. Node
and tensor hooks stay installed after the ``with`` block (a later backward is still
recorded) until :meth:`GraphWatcher.close`.

>>> import torch
>>> from gradgraph.eventlog import EventLog
>>> from gradgraph.watcher import GraphWatcher
>>> log = EventLog(torch.device("cpu"))
>>> watcher = GraphWatcher(log, leaf_names={}, module_path=lambda: None)
>>> x = torch.ones(3, requires_grad=True)
>>> y = x.exp()
>>> watcher.watch([y], op="exp")
>>> [(e.kind.value, e.name) for e in log.snapshot()]
[('node', 'AccumulateGrad'), ('node', 'ExpBackward0'), ('saved', 'ExpBackward0')]
>>> watcher.close()
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch
from torch.autograd.graph import get_gradient_edge

from .eventlog import EventLog
from .events import EventKind
from .introspect import node_class, output_meta, saved_hooks_active, saved_intact, saved_slots
from .memory import storage_key, storage_nbytes
from .source import user_source_line

__all__ = ["GraphWatcher"]

_METADATA_KEY = "gradgraph"
_serials = itertools.count()


class _SavedHolder:
    """What autograd keeps instead of a saved tensor; its death is the observed free.

    PyTorch skips its in-place (version counter) check for saved tensors that have hooks,
    so the holder remembers the version at saving time and :func:`_unpack` checks it.
    """

    __slots__ = ("tensor", "version", "saved_by", "__weakref__")

    def __init__(self, tensor: torch.Tensor, saved_by: str) -> None:
        self.tensor = tensor  # detached: shares storage and version counter, no graph cycle
        self.version = tensor._version
        self.saved_by = saved_by

    def __repr__(self) -> str:
        return f"_SavedHolder({tuple(self.tensor.shape)}, version {self.version})"


def _unpack(holder: _SavedHolder) -> torch.Tensor:
    t = holder.tensor
    if t._version != holder.version:
        dims = ", ".join(map(str, t.shape))
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{t.type()} [{dims}]], saved by {holder.saved_by}, is at "
            f"version {t._version}; expected version {holder.version} instead. (Checked by "
            "gradgraph: PyTorch skips this check for saved tensors with hooks.)"
        )
    return t


def _norm(t: torch.Tensor | None) -> float | None:
    """The gradient's 2-norm, or None where it has none (a hook must never raise)."""
    if t is None:
        return None
    try:
        return float(torch.linalg.vector_norm(t.detach()))
    except (RuntimeError, NotImplementedError, TypeError):  # meta, sparse, integer...
        return None


class GraphWatcher:
    """Discovers nodes reachable from tensors and installs the recording's hooks on them."""

    def __init__(
        self,
        log: EventLog,
        leaf_names: Mapping[torch.Tensor, str],
        module_path: Callable[[], str | None],
    ) -> None:
        self._log = log
        self._leaf_names = leaf_names
        self._module_path = module_path
        self._serial = next(_serials)
        self._count = 0
        self._names: dict[int, str] = {}
        self._handles: list[Any] = []
        self._retained: dict[int, list[tuple[int, weakref.ref]]] = {}  # node -> (output, tensor)
        self._arriving: dict[int, float | None] = {}  # leaf node -> norm of the gradient arriving
        self._running: list[int] = []  # nodes whose backward started and has not finished

    @property
    def running(self) -> int | None:
        """The node whose backward is running now (the one that failed, after an error)."""
        return self._running[-1] if self._running else None

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

    def watch(self, tensors: Iterable[Any], op: str | None, during_backward: bool = False) -> None:
        """Log and hook every node reachable from ``tensors`` that is new to this recording."""
        roots = [
            t.grad_fn for t in tensors if isinstance(t, torch.Tensor) and t.grad_fn is not None
        ]
        if not roots:
            return
        with self._log.lock:
            new_nodes = self._new_nodes(roots)
            if not new_nodes:
                return
            context = {
                "source": user_source_line(),
                "module": self._module_path(),
                "during_backward": during_backward,
            }
            root_ids = {id(r) for r in roots}
            for node, children in new_nodes:
                self._adopt(node, children, op if id(node) in root_ids else None, context)

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

        def observed(*args: Any) -> Any:
            target = tensor()
            nid, name = self.tensor_node(target) if target is not None else (None, "tensor")
            if after_accumulation and nid is not None:
                self._log_leaf_grad(nid, target)
            log.emit(EventKind.HOOK, nid, name, details)
            return hook(*args)

        return observed

    def close(self) -> None:
        """Remove every node and tensor hook this watcher installed (idempotent)."""
        handles, self._handles = self._handles, []
        for handle in handles:
            handle.remove()

    def _new_nodes(self, roots: list[Any]) -> list[tuple[Any, list[Any]]]:
        """Unseen nodes reachable from ``roots`` with their input nodes, inputs first."""
        found: list[tuple[Any, list[Any]]] = []
        marked: set[int] = set()
        stack: list[tuple[Any, list[Any] | None]] = [(root, None) for root in reversed(roots)]
        while stack:
            node, children = stack.pop()
            if children is not None:
                found.append((node, children))
                continue
            if id(node) in marked or self.node_id(node) is not None:
                continue
            marked.add(id(node))
            children = [child for child, _ in node.next_functions if child is not None]
            stack.append((node, children))
            stack.extend((child, None) for child in reversed(children))
        return found

    def _adopt(self, node: Any, children: list[Any], op: str | None, context: dict) -> None:
        nid = self._count
        self._count += 1
        node.metadata[_METADATA_KEY] = (self._serial, nid)
        cls = node_class(node)
        variable = node.variable if cls == "AccumulateGrad" else None
        is_leaf = isinstance(variable, torch.Tensor)
        leaf_name = self._leaf_names.get(variable) if is_leaf else None
        name = leaf_name or cls
        self._names[nid] = name
        details = {
            "grad_fn": cls,
            "op": op,
            **output_meta(node),
            "inputs": tuple(self.node_id(child) for child in children),
            "leaf": is_leaf,
            "leaf_name": leaf_name,
            "parameter": isinstance(variable, torch.nn.Parameter),
            **context,
        }
        self._log.emit(EventKind.NODE, nid, name, details)
        self._handles.append(node.register_prehook(self._on_backward(nid, name, cls)))
        if is_leaf:
            self._handles.append(
                node.register_hook(self._on_leaf_grad(nid, name, weakref.ref(variable)))
            )
        else:
            self._handles.append(node.register_hook(self._on_node_done(nid)))
            self._hook_saved(node, nid, name)

    def _hook_saved(self, node: Any, nid: int, name: str) -> None:
        if saved_hooks_active() or not saved_intact(node):
            return  # the user's hooks own these; or PyTorch will raise its own error later
        for slot, saved in saved_slots(node):
            try:
                saved.register_hooks(self._packer(nid, name, slot), _unpack)
            except RuntimeError:  # nothing saved in this slot, or hooks set by the user
                continue

    def _packer(self, nid: int, name: str, slot: str) -> Callable[[torch.Tensor], _SavedHolder]:
        log = self._log

        def pack(t: torch.Tensor) -> _SavedHolder:
            holder = _SavedHolder(t.detach(), f"{name} as {slot!r}")
            key = storage_key(t)
            facts = {
                "slot": slot,
                "shape": tuple(t.shape),
                "dtype": str(t.dtype),
                "device": str(t.device),
                "numel": t.numel(),
                "bytes": t.numel() * t.element_size(),
            }
            log.emit_saved(nid, name, dict(facts), key, storage_nbytes(t))
            finalizer = weakref.finalize(holder, log.emit_freed, nid, name, facts, key)
            finalizer.atexit = False
            return holder

        return pack

    def _on_backward(self, nid: int, name: str, cls: str) -> Callable:
        log = self._log

        def on_backward(grad_outputs: tuple) -> None:
            for output, tensor in self._retained.get(nid, ()):
                t = tensor()
                details = {
                    "target": "retained",
                    "norm": _norm(grad_outputs[output]),
                    "accumulated_norm": _norm(t.grad if t is not None else None),
                }
                log.emit(EventKind.GRAD, nid, name, details)
            if cls == "AccumulateGrad":
                self._arriving[nid] = _norm(grad_outputs[0])
            log.emit(EventKind.BACKWARD, nid, name, {"grad_fn": cls})
            self._running.append(nid)

        return on_backward

    def _finished(self, nid: int) -> None:
        if nid in self._running:
            self._running.remove(nid)

    def _on_node_done(self, nid: int) -> Callable:
        def on_node_done(grad_inputs: tuple, grad_outputs: tuple) -> None:
            self._finished(nid)
            self.watch(grad_inputs, op=None, during_backward=True)

        return on_node_done

    def _log_leaf_grad(self, nid: int, leaf: torch.Tensor | None) -> None:
        """Log the gradient that just arrived at a leaf, once, with what ``.grad`` holds now."""
        if nid not in self._arriving:
            return  # already logged (before a post-accumulate-grad hook)
        details = {
            "target": "leaf",
            "norm": self._arriving.pop(nid),
            "accumulated_norm": _norm(leaf.grad if leaf is not None else None),
        }
        self._log.emit(EventKind.GRAD, nid, self._names[nid], details)

    def _on_leaf_grad(self, nid: int, name: str, variable: weakref.ref) -> Callable:
        def on_leaf_grad(grad_inputs: tuple, grad_outputs: tuple) -> None:
            self._finished(nid)
            leaf = variable()
            self._log_leaf_grad(nid, leaf)
            accumulated = leaf.grad if leaf is not None else None
            if accumulated is not None and accumulated.grad_fn is not None:
                self.watch([accumulated], op=None, during_backward=True)

        return on_leaf_grad

    def forget_running(self) -> None:
        """Clear the running nodes (after an error ended their backward)."""
        self._running.clear()
