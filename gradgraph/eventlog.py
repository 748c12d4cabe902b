"""A thread-safe, append-only event log with a memory sample on every event.

Hooks may fire on autograd's worker thread (CUDA backward): they only append here,
under a lock, and never draw. Each event is stamped with the backward call it happened
in (autograd's graph task: one per ``backward()`` or ``autograd.grad()`` call).

>>> import torch
>>> from gradgraph.eventlog import EventLog
>>> from gradgraph.events import EventKind
>>> log = EventLog(torch.device("cpu"))
>>> log.emit(EventKind.NODE, 0, "x", {"grad_fn": "AccumulateGrad"})
>>> log.snapshot()
(Event(0, node, 'x'),)
>>> log.close(); log.emit(EventKind.NODE, 1, "y", {})
>>> len(log.snapshot())
1
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping
from typing import Any

import torch

from .events import BackwardCall, Event, EventKind
from .memory import SavedMemory
from .source import backward_target, user_source_line

__all__ = ["EventLog"]


class EventLog:
    """Time-ordered events; once closed, further emits are ignored."""

    def __init__(self, device: torch.device) -> None:
        self._lock = threading.RLock()
        self._events: list[Event] = []
        self._memory = SavedMemory(device)
        self._closed = False
        self._calls: dict[int, BackwardCall] = {}  # autograd graph task id -> call
        self._last_call: BackwardCall | None = None

    def __repr__(self) -> str:
        return f"EventLog({len(self._events)} events{', closed' if self._closed else ''})"

    @property
    def lock(self) -> threading.RLock:
        """The lock that orders events; hold it to make several steps atomic."""
        return self._lock

    def emit(
        self, kind: EventKind, node: int | None, name: str, details: Mapping[str, Any]
    ) -> None:
        """Append one event, stamped with its index, memory sample and thread name."""
        with self._lock:
            if not self._closed:
                self._append(kind, node, name, details)

    def emit_saved(
        self, node: int, name: str, details: dict[str, Any], key: Hashable, nbytes: int
    ) -> None:
        """Log a saved tensor and count its storage (``details["alias"]``: storage already held)."""
        with self._lock:
            if not self._closed:
                details["alias"] = not self._memory.add(key, nbytes)
                self._append(EventKind.SAVED, node, name, details)

    def emit_freed(self, node: int, name: str, details: dict[str, Any], key: Hashable) -> None:
        """Log a released saved tensor (``details["released"]``: its storage left the saved set)."""
        with self._lock:
            if not self._closed:
                details["released"] = self._memory.remove(key)
                self._append(EventKind.FREED, node, name, details)

    def emit_error(self, node: int | None, name: str, details: Mapping[str, Any]) -> None:
        """Log an error; one raised by a backward call belongs to the last call that ran."""
        with self._lock:
            if not self._closed:
                call = self._last_call if details.get("op") == "backward" else None
                self._append(EventKind.ERROR, node, name, details, call)

    def snapshot(self) -> tuple[Event, ...]:
        """The events so far."""
        with self._lock:
            return tuple(self._events)

    def close(self) -> None:
        """Stop accepting events."""
        with self._lock:
            self._closed = True

    def _call(self, name: str) -> BackwardCall | None:
        """The backward call running now (None outside backward); a new one is numbered and
        named on its first event (from the user's source line, else the event's node)."""
        task = torch._C._current_graph_task_id()
        if task < 0:
            return None
        call = self._calls.get(task)
        if call is None:
            loss = backward_target(user_source_line()) or name
            call = self._calls[task] = BackwardCall(len(self._calls) + 1, loss)
        self._last_call = call
        return call

    def _append(
        self,
        kind: EventKind,
        node: int | None,
        name: str,
        details: Mapping[str, Any],
        call: BackwardCall | None = None,
    ) -> None:
        self._events.append(
            Event(
                index=len(self._events),
                kind=kind,
                node=node,
                name=name,
                details=details,
                memory=self._memory.sample(),
                thread=threading.current_thread().name,
                call=call if kind is EventKind.ERROR else self._call(name),
            )
        )
