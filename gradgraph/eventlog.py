"""A thread-safe, append-only event log with a memory sample on every event.

Hooks may fire on autograd's worker thread (CUDA backward): they only append here,
under a lock, and never draw. Each event is stamped with the backward call it happened
in (autograd's graph task: one per ``backward()`` or ``autograd.grad()`` call).

Recording must cost little, so an entry is stored as it comes: the facts as the hook
found them (a ``torch.Size``, a ``dtype``, a 0-dim tensor holding a norm, a
:class:`~gradgraph.source.SourceLine`). It becomes an :class:`~gradgraph.events.Event`
of plain values (tuples, strings, floats) the first time the events are looked at; each
entry is converted once, and what it says was fixed when it was logged.

>>> import torch
>>> from gradgraph.eventlog import EventLog
>>> from gradgraph.events import EventKind
>>> log = EventLog(torch.device("cpu"))
>>> log.emit(EventKind.NODE, 0, "x", {"grad_fn": "AccumulateGrad", "dtype": torch.float32})
>>> log.snapshot()
(Event(0, node, 'x'),)
>>> log.snapshot()[0].details["dtype"]
'torch.float32'
>>> log.close(); log.emit(EventKind.NODE, 1, "y", {})
>>> len(log)
1
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from types import MappingProxyType
from typing import Any

import torch

from .events import BackwardCall, Event, EventKind, MemorySample
from .memory import SavedMemory
from .source import SourceLine, backward_target, user_source_line

__all__ = ["EventLog"]

# One logged entry: kind, node, name, details, saved bytes, allocator bytes, thread, call number.
_Entry = tuple[Any, ...]
_graph_task_id = torch._C._current_graph_task_id  # < 0 outside backward
_current_thread = threading.current_thread


class EventLog:
    """Time-ordered events; once closed, further emits are ignored."""

    def __init__(self, device: torch.device) -> None:
        self._lock = threading.RLock()
        self._entries: list[_Entry] = []
        self._events: list[Event] = []  # the entries converted so far, in order
        self._memory = SavedMemory(device)
        self._closed = False
        self._calls: dict[int, int] = {}  # autograd graph task id -> call number
        self._call_origins: list[tuple[SourceLine | None, str]] = []  # by call number - 1
        self._backward_calls: dict[int, BackwardCall] = {}

    def __repr__(self) -> str:
        return f"EventLog({len(self._entries)} events{', closed' if self._closed else ''})"

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def lock(self) -> threading.RLock:
        """The lock that orders events; hold it to make several steps atomic."""
        return self._lock

    def emit(
        self, kind: EventKind, node: int | None, name: str, details: Mapping[str, Any]
    ) -> None:
        """Append one event, stamped with its memory sample, thread and backward call.

        ``details`` is kept as given (not copied): do not change it afterwards.
        """
        with self._lock:
            if not self._closed:  # what _append does, inlined: this is the hooks' path
                task = _graph_task_id()
                memory = self._memory
                self._entries.append(
                    (
                        kind,
                        node,
                        name,
                        details,
                        memory.total,
                        memory.allocated() if memory.allocated is not None else None,
                        _current_thread(),  # its name is read with the event
                        None if task < 0 else (self._calls.get(task) or self._new_call(task, name)),
                    )
                )

    def emit_saved(
        self, node: int, name: str, details: dict[str, Any], key: Hashable, nbytes: int
    ) -> None:
        """Log a saved tensor and count its storage (``details["alias"]``: storage already held)."""
        with self._lock:
            if not self._closed:
                details["alias"] = not self._memory.add(key, nbytes)
                self._append(EventKind.SAVED, node, name, details, _graph_task_id())

    def emit_freed(self, node: int, name: str, details: dict[str, Any], key: Hashable) -> None:
        """Log a released saved tensor (``details["released"]``: its storage left the saved set)."""
        with self._lock:
            if not self._closed:
                details["released"] = self._memory.remove(key)
                self._append(EventKind.FREED, node, name, details, _graph_task_id())

    def emit_error(self, node: int | None, name: str, details: Mapping[str, Any]) -> None:
        """Log an error; one raised by a backward call belongs to the last call that ran."""
        with self._lock:
            if not self._closed:
                call = self._last_call() if details.get("op") == "backward" else None
                self._append(EventKind.ERROR, node, name, details, -1, call)

    def snapshot(self) -> tuple[Event, ...]:
        """The events so far."""
        with self._lock:
            events = self._events
            for entry in self._entries[len(events) :]:
                events.append(self._event(len(events), entry))
            return tuple(events)

    def close(self) -> None:
        """Stop accepting events."""
        with self._lock:
            self._closed = True

    def _append(
        self,
        kind: EventKind,
        node: int | None,
        name: str,
        details: Mapping[str, Any],
        task: int,
        call: int | None = None,
    ) -> None:
        """Log one entry: of the backward call of graph task ``task`` (< 0: ``call``)."""
        if task >= 0:
            call = self._calls.get(task) or self._new_call(task, name)
        memory = self._memory
        allocated = memory.allocated() if memory.allocated is not None else None
        thread = _current_thread()  # its name is read with the event
        self._entries.append((kind, node, name, details, memory.total, allocated, thread, call))

    def _new_call(self, task: int, name: str) -> int:
        """Number autograd's graph task ``task`` as the next backward call, noting where it
        was made, to be named after what it differentiates."""
        call = self._calls[task] = len(self._calls) + 1
        self._call_origins.append((user_source_line(), name))
        return call

    def _last_call(self) -> int | None:
        """The number of the backward call that logged last, None before any."""
        return next((entry[7] for entry in reversed(self._entries) if entry[7] is not None), None)

    def _event(self, index: int, entry: _Entry) -> Event:
        kind, node, name, details, saved, allocated, thread, call = entry
        previous = self._events[-1].memory if self._events else None
        if previous is not None and (previous.saved_bytes, previous.allocator_bytes) == (
            saved,
            allocated,
        ):
            memory = previous  # one sample for every event that left memory as it was
        else:
            memory = MemorySample(saved, allocated)
        plain = MappingProxyType({key: _plain(value) for key, value in details.items()})
        call = self._backward_call(call)
        return Event(index, kind, node, name, plain, memory, thread.name, call)

    def _backward_call(self, number: int | None) -> BackwardCall | None:
        if number is None:
            return None
        call = self._backward_calls.get(number)
        if call is None:
            where, name = self._call_origins[number - 1]
            loss = backward_target(str(where) if where is not None else None) or name
            call = self._backward_calls[number] = BackwardCall(number, loss)
        return call


def _tensor_value(t: torch.Tensor) -> float | None:
    """A 0-dim tensor (a norm) as a float; None where it cannot be read (the meta device)."""
    try:
        return float(t)
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        return None


_PLAIN: dict[type, Callable[[Any], Any]] = {
    torch.Size: tuple,
    torch.dtype: str,
    torch.device: str,
    SourceLine: str,
}


def _plain(value: Any) -> Any:
    """A detail as a plain value: tuples for shapes, strings for dtypes, devices and source
    lines, floats for norms."""
    convert = _PLAIN.get(type(value))
    if convert is not None:
        return convert(value)
    if isinstance(value, torch.Tensor):
        return _tensor_value(value)
    return value
