"""The event log's vocabulary: what kinds of thing a recording can see, and one event.

Every event is labelled with its kind at the moment it happens (in a hook, a pack
function or the forward mode), carries plain data only (no tensors, no nodes) and a
memory sample taken at that moment.

>>> from gradgraph.events import Event, EventKind, MemorySample
>>> e = Event(index=0, kind=EventKind.NODE, node=0, name="x", details={"grad_fn": "AccumulateGrad"},
...           memory=MemorySample(saved_bytes=0, allocator_bytes=None))
>>> e
Event(0, node, 'x')
>>> EventKind("freed") is EventKind.FREED
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

__all__ = ["BackwardCall", "Event", "EventKind", "MemorySample"]


class EventKind(StrEnum):
    """What happened. The value is the short name used in captions and tests.

    - ``NODE``: a graph node was created: a ``grad_fn`` during forward (or during a
      ``create_graph`` backward), or an ``AccumulateGrad`` leaf the first time an op used it.
    - ``SAVED``: a node saved a tensor for backward.
    - ``BACKWARD``: a node started to run during backward (real engine order).
    - ``GRAD``: a gradient arrived at a leaf (or at a tensor that called ``retain_grad()``).
    - ``FREED``: autograd released a saved tensor (observed when the packed holder died).
    - ``HOOK``: a hook the user registered fired (on a tensor, a ``grad_fn`` node or a module).
    - ``ERROR``: a PyTorch call inside the recording raised a ``RuntimeError``.
    """

    NODE = "node"
    SAVED = "saved"
    BACKWARD = "backward"
    GRAD = "grad"
    FREED = "freed"
    HOOK = "hook"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class MemorySample:
    """Memory at the moment of an event.

    ``saved_bytes``: bytes of the storages held by live saved tensors, each storage
    counted once (every device). ``allocator_bytes``: the CUDA or MPS allocator's figure
    for the recording's device, ``None`` on CPU (which has no allocator counter).
    """

    saved_bytes: int
    allocator_bytes: int | None


@dataclass(frozen=True, slots=True)
class BackwardCall:
    """The backward call an event belongs to: its number in the recording (1, 2, ...) and
    the name of what it differentiates (``"loss"`` from ``loss.backward()``; the root
    node's name where the call's source line does not say)."""

    number: int
    loss: str


@dataclass(frozen=True, slots=True)
class Event:
    """One entry of a recording's time-ordered log.

    ``node`` is the recording's id of the graph node the event is about (``None`` for an
    error outside any node), ``name`` the node's display name (``grad_fn`` class name or
    the leaf's name), ``details`` the kind-specific facts (read-only mapping of plain
    values; see ``Recording`` for the keys of each kind), ``call`` the backward call it
    happened in (None outside backward).
    """

    index: int
    kind: EventKind
    node: int | None
    name: str
    details: Mapping[str, Any] = field(default_factory=dict)
    memory: MemorySample = MemorySample(0, None)
    thread: str = "MainThread"
    call: BackwardCall | None = None

    def __post_init__(self) -> None:
        if type(self.details) is not MappingProxyType:  # the log hands over a fresh proxy
            object.__setattr__(self, "details", MappingProxyType(dict(self.details)))

    def __repr__(self) -> str:
        return f"Event({self.index}, {self.kind.value}, {self.name!r})"
