"""What the picture shows after a given event: the state of every displayed node.

Scenes are computed in one pass over the events (each from the one before), so a film
of n events costs O(n) to prepare, and drawing a step twice gives the same frame.

>>> import torch, gradgraph
>>> from gradgraph.layout import build_graph
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> events = rec.events; rec.close()
>>> s = scenes(events, build_graph(events))[2]
>>> s.present, s.saved
({0, 1}, {1: (1, 12)})
>>> s = scenes(events, build_graph(events))[-1]
>>> sorted(s.ran.items()), s.saved, s.freed, round(s.grads[0], 4)
([(0, 1), (1, 1), (2, 1)], {}, {1: (1, 12)}, 4.7082)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from .captions import caption
from .events import BackwardCall, Event, EventKind
from .layout import RecordedGraph

__all__ = ["Scene", "scenes"]


@dataclass
class Scene:
    """Displayed-node state after event ``step``.

    ``present``: nodes created so far; ``ran``: how many times each ran in backward (a
    start that raised, once the error is logged, does not count);
    ``saved`` / ``freed``: (count, bytes) of the tensors a node holds / has released, the
    bytes of each storage shown on the first node still holding it (so that the badges add
    up to the memory strip's figure, and a storage that one node lets go while another
    still holds it moves to that one); ``holders``: storage -> the nodes holding it;
    ``grads``: the norm of what ``.grad`` holds; ``hooks``: the last hook fired on a node;
    ``module_hooks``: the last hook fired on each top-level module; ``failed``: the node
    whose backward raised (None: none did); ``current`` / ``current_module``: what the
    current event is about; ``call``: the backward call it belongs to; ``calls``: how
    many backward calls have started so far.
    """

    step: int
    event: Event
    caption: str
    present: set[int] = field(default_factory=set)
    ran: dict[int, int] = field(default_factory=dict)
    saved: dict[int, tuple[int, int]] = field(default_factory=dict)
    freed: dict[int, tuple[int, int]] = field(default_factory=dict)
    holders: dict[int, tuple[int, ...]] = field(default_factory=dict)
    grads: dict[int, float] = field(default_factory=dict)
    hooks: dict[int, str] = field(default_factory=dict)
    module_hooks: dict[str, str] = field(default_factory=dict)
    failed: int | None = None
    current: int | None = None
    current_module: str | None = None
    call: BackwardCall | None = None
    calls: int = 0

    def __repr__(self) -> str:
        return f"Scene(step={self.step}, {self.event!r})"


def _add(counts: dict[int, tuple[int, int]], g: int, n: int, nbytes: int) -> None:
    count, total = counts.get(g, (0, 0))
    counts[g] = (count + n, total + nbytes)
    if counts[g][0] <= 0:
        del counts[g]


def _count_down(counts: dict[int, int], g: int) -> None:
    left = counts.get(g, 0) - 1
    if left > 0:
        counts[g] = left
    else:
        counts.pop(g, None)


def _hold(state: Scene, g: int, storage: int, nbytes: int) -> None:
    """Node ``g`` saved a tensor of ``storage``: its bytes show on ``g`` if none held it."""
    holders = state.holders.get(storage, ())
    state.holders[storage] = (*holders, g)
    _add(state.saved, g, 1, 0 if holders else nbytes)


def _let_go(state: Scene, g: int, storage: int, nbytes: int) -> None:
    """Node ``g`` freed a tensor of ``storage``: its bytes move to the next node holding
    it, or count as released on ``g`` where none does."""
    holders = list(state.holders.pop(storage, ()))
    first = bool(holders) and holders[0] == g
    if g in holders:
        holders.remove(g)
    _add(state.saved, g, -1, -nbytes if first else 0)
    if holders:
        state.holders[storage] = tuple(holders)
        if first:
            _add(state.saved, holders[0], 0, nbytes)
    _add(state.freed, g, 1, 0 if holders else nbytes)


def _copied(scene: Scene) -> Scene:
    return replace(
        scene,
        present=set(scene.present),
        ran=dict(scene.ran),
        saved=dict(scene.saved),
        freed=dict(scene.freed),
        holders=dict(scene.holders),
        grads=dict(scene.grads),
        hooks=dict(scene.hooks),
        module_hooks=dict(scene.module_hooks),
    )


def scenes(events: Sequence[Event], graph: RecordedGraph) -> list[Scene]:
    """The scene after each event, in order."""
    result: list[Scene] = []
    state = Scene(step=-1, event=events[0], caption="") if events else None
    for step, e in enumerate(events):
        state = _copied(state) if result else state
        g = graph.group_of.get(e.node) if e.node is not None else None
        details = e.details
        if e.kind is EventKind.NODE:
            state.present.add(g)
        elif e.kind is EventKind.BACKWARD:
            state.ran[g] = state.ran.get(g, 0) + 1
        elif e.kind is EventKind.SAVED:
            _hold(state, g, details["storage"], details["storage_bytes"])
        elif e.kind is EventKind.FREED:
            _let_go(state, g, details["storage"], details["storage_bytes"])
        elif e.kind is EventKind.GRAD and g is not None:
            held = details.get("accumulated_norm")  # what .grad holds now
            if held is None:  # not known (an integer or meta gradient): no number to show
                state.grads.pop(g, None)
            else:
                state.grads[g] = held
        elif e.kind is EventKind.HOOK:
            if g is not None:
                state.hooks[g] = details["kind"]
            elif details.get("module"):
                state.module_hooks[details["module"].split(".")[0]] = details["kind"]
        elif e.kind is EventKind.ERROR and g is not None:
            state.failed = g
            _count_down(state.ran, g)  # its start in this call was not a run: it raised
        if e.call is not None:
            state.calls = max(state.calls, e.call.number)
        state.step, state.event, state.caption = step, e, caption(e)
        state.call = e.call
        state.current = g
        module = details.get("module") if e.kind is EventKind.HOOK and g is None else None
        state.current_module = module.split(".")[0] if module else None
        result.append(state)
    return result
