"""A thread-safe, append-only event log.

Hooks may fire on autograd's worker thread (CUDA backward): they only append here and
never draw. An append is one ``list.append`` of a tuple (atomic in Python), so hooks
take no lock. Each entry is stamped with autograd's graph task (one per ``backward()``
or ``autograd.grad()`` call; the first entry of a task notes where the call was made),
the thread, and on CUDA and MPS the allocator's figure.

Recording must cost little, so an entry is stored as it comes: the facts as the hook
found them (a ``torch.Size``, a ``dtype``, a 0-dim tensor holding a norm or a
:class:`~gradgraph.norms.LateNorm` to compute, a :class:`~gradgraph.source.SourceLine`).
It becomes an :class:`~gradgraph.events.Event` of plain values (tuples, strings, floats)
the first time the events are looked at, in order; each entry is converted once, and
what it says was fixed when it was logged.
The bytes held by saved tensors are counted then too, by replaying the ``saved`` and
``freed`` entries in order: the sample on each event is what was held at that moment.

>>> import torch
>>> from gradgraph.eventlog import EventLog
>>> from gradgraph.events import EventKind
>>> log = EventLog(torch.device("cpu"))
>>> log.emit(EventKind.NODE, 0, "x", {"grad_fn": "AccumulateGrad", "dtype": torch.float32})
>>> facts = ("self", torch.Size([3]), torch.float32, torch.device("cpu"), 12, "k")
>>> log.emit(EventKind.SAVED, 1, "ExpBackward0", facts)
>>> [(e.kind.value, e.memory.saved_bytes) for e in log.snapshot()]
[('node', 0), ('saved', 12)]
>>> log.snapshot()[0].details["dtype"], log.snapshot()[1].details["alias"]
('torch.float32', False)
>>> log.close(); log.emit(EventKind.NODE, 1, "y", {})
>>> len(log)
2
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import torch

from .events import BackwardCall, Event, EventKind, MemorySample
from .introspect import OutputMetadata, output_facts
from .memory import SavedMemory, allocator_reader
from .norms import LateNorm, value_of
from .source import SourceLine, backward_target, user_source_line

__all__ = ["NODE_KEYS", "EventLog"]

# One logged entry: kind, node, name, details, graph task (< 0: none), thread id,
# allocator bytes (None on CPU)
_Entry = tuple[Any, ...]
_graph_task_id = torch._C._current_graph_task_id  # < 0 outside backward
_get_ident = threading.get_ident
_NODE, _SAVED, _FREED = EventKind.NODE, EventKind.SAVED, EventKind.FREED
# Where a closed log's emits go: nowhere (one for every log: a recording is made inside
# the learner's loop, where each object made and each lock is paid for)
_NOWHERE: deque = deque(maxlen=0)
# One conversion of entries into events at a time, whichever log it is
_CONVERTING = threading.RLock()

# What a ``node`` entry may carry instead of a mapping: a plain tuple of these, in order
# (its shape, dtype and device may come as torch's record of the node's output, an
# :data:`~gradgraph.introspect.OutputMetadata` under ``shape``, read when converted)
NODE_KEYS = (
    "grad_fn",
    "op",
    "shape",
    "dtype",
    "device",
    "inputs",
    "leaf",
    "leaf_name",
    "parameter",
    "source",
    "module",
    "during_backward",
)
# What a ``saved`` or ``freed`` entry carries: a plain tuple (made without a Python call)
# of the saved tensor's slot, shape, dtype and device, its storage's size and a key that
# identifies the storage, for the memory count. Its number of values and bytes follow
# from its shape and dtype, so they are worked out when the entry is read (asking the
# tensor costs a call into torch each, inside the learner's forward)


class EventLog:
    """Time-ordered events; once closed, further emits are ignored."""

    __slots__ = (  # read on every event: fixed slots, not an instance dictionary
        "_entries",
        "_sink",
        "_events",
        "_memory",
        "_storages",
        "_origins",
        "_backward_calls",
        "_allocated",
        "_threads",
        "__weakref__",  # a test checks that nothing keeps it alive
    )

    def __init__(self, device: torch.device) -> None:
        self._entries: list[_Entry] = []
        self._sink: list[_Entry] | deque = self._entries  # where emits go (closed: nowhere)
        self._events: list[Event] = []  # the entries converted so far, in order
        self._memory: SavedMemory | None = None  # replayed while converting (made then)
        self._storages: dict[Any, int] = {}  # storage key -> its number in the details
        # graph task id -> (call number, where the call was made, name of its first event)
        self._origins: dict[int, tuple[int, SourceLine | None, str]] = {}
        self._backward_calls: dict[int, BackwardCall] = {}
        # the allocator's figure, read on every event; on the CPU, None (NoneType() is
        # None, with no Python call)
        self._allocated = allocator_reader(device) or type(None)
        self._threads: dict[int, str] = {}  # thread id -> name, as each first logged

    def __repr__(self) -> str:
        closed = self._sink is not self._entries
        return f"EventLog({len(self._entries)} events{', closed' if closed else ''})"

    def __len__(self) -> int:
        return len(self._entries)

    def emit(
        self, kind: EventKind, node: int | None, name: str, details: Any, task: int | None = None
    ) -> None:
        """Append one event, stamped with its backward call (autograd's graph task running
        now, unless ``task`` is given; < 0: none) and thread.

        ``details`` (a mapping; for ``saved`` and ``freed``, the tuple ``(slot, shape,
        dtype, device, storage bytes, storage key)``; for ``node``, a mapping
        or the tuple of its values under :data:`NODE_KEYS`) is kept as given, not copied:
        do not change it afterwards. A thread is named the first time it logs
        (one that Python did not start, such as CUDA's autograd worker, by its id).
        """
        if task is None:
            task = _graph_task_id()
        if task >= 0 and task not in self._origins:
            self._new_call(task, name)
        ident = _get_ident()
        if ident not in self._threads:
            self._threads[ident] = _thread_name(ident)
        self._sink.append((kind, node, name, details, task, ident, self._allocated()))

    def emit_error(self, node: int | None, name: str, details: Mapping[str, Any]) -> None:
        """Log an error; one raised by a backward call belongs to the last call that ran."""
        task = self._last_task() if details.get("op") == "backward" else -1
        self.emit(EventKind.ERROR, node, name, details, task)

    def snapshot(self) -> tuple[Event, ...]:
        """The events so far."""
        with _CONVERTING:
            if self._memory is None:
                self._memory = SavedMemory()
            events = self._events
            for entry in self._entries[len(events) :]:
                events.append(self._event(len(events), entry))
            return tuple(events)

    def close(self) -> None:
        """Stop accepting events."""
        self._sink = _NOWHERE

    def _new_call(self, task: int, name: str) -> None:
        """Number autograd's graph task ``task`` as the next backward call, noting where it
        was made, to be named after what it differentiates."""
        self._origins[task] = (len(self._origins) + 1, user_source_line(), name)

    def _last_task(self) -> int:
        """The graph task of the backward call that logged last, -1 before any."""
        return next((entry[4] for entry in reversed(self._entries) if entry[4] >= 0), -1)

    def _event(self, index: int, entry: _Entry) -> Event:
        kind, node, name, details, task, thread, allocated = entry
        if kind is _SAVED or kind is _FREED:
            details = self._storage_counted(kind, details)
        elif kind is _NODE and type(details) is tuple:
            details = dict(zip(NODE_KEYS, details, strict=True))
            if type(details["shape"]) is OutputMetadata:
                details["shape"], details["dtype"], details["device"] = output_facts(
                    details["shape"]
                )
        saved = self._memory.total
        previous = self._events[-1].memory if self._events else None
        if previous is not None and (previous.saved_bytes, previous.allocator_bytes) == (
            saved,
            allocated,
        ):
            memory = previous  # one sample for every event that left memory as it was
        else:
            memory = MemorySample(saved, allocated)
        plain = MappingProxyType({key: _plain(value) for key, value in details.items()})
        thread_name = self._threads[thread]
        return Event(index, kind, node, name, plain, memory, thread_name, self._backward_call(task))

    def _storage_counted(self, kind: EventKind, facts: tuple) -> dict[str, Any]:
        """The details of a ``saved`` or ``freed`` entry, its storage counted in or out:
        ``storage`` (the storage's number in this log, the same for every tensor that reads
        it), ``storage_bytes`` (its size: the whole base, for a view), ``alias`` (it was
        already held), ``released`` (it left the saved set)."""
        slot, shape, dtype, device, size, key = facts
        # a nested tensor has no one shape: no count of values, and the bytes of its buffer
        numel = math.prod(shape) if shape is not None else None
        details: dict[str, Any] = {
            "slot": slot,
            "shape": shape,
            "dtype": dtype,
            "device": device,
            "numel": numel,
            "bytes": numel * dtype.itemsize if numel is not None else size,
            "storage": self._storages.setdefault(key, len(self._storages)),
            "storage_bytes": size,
        }
        if kind is _SAVED:
            details["alias"] = not self._memory.add(key, size)
        else:
            details["released"] = self._memory.remove(key)
        return details

    def _backward_call(self, task: int) -> BackwardCall | None:
        origin = self._origins.get(task)
        if origin is None:
            return None
        number, where, name = origin
        call = self._backward_calls.get(number)
        if call is None:
            loss = backward_target(str(where) if where is not None else None) or name
            call = self._backward_calls[number] = BackwardCall(number, loss)
        return call


def _thread_name(ident: int) -> str:
    """The name of the running thread ``ident`` (``"thread <id>"`` for one that Python did not
    start, such as CUDA's autograd worker)."""
    thread = threading._active.get(ident)
    return thread.name if thread is not None else f"thread {ident}"


_PLAIN: dict[type, Callable[[Any], Any]] = {
    torch.Size: tuple,
    torch.dtype: str,
    torch.device: str,
    SourceLine: str,
    LateNorm: LateNorm.read,
}


def _plain(value: Any) -> Any:
    """A detail as a plain value: tuples for shapes, strings for dtypes, devices and source
    lines, floats for norms (0-dim tensors and :class:`~gradgraph.norms.LateNorm`)."""
    convert = _PLAIN.get(type(value))
    if convert is not None:
        return convert(value)
    if isinstance(value, torch.Tensor):
        return value_of(value)
    return value
