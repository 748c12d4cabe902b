"""What the picture shows after a given event: the state of every displayed node.

A scene is a pure function of the events up to a step and the layout, so drawing a
step twice gives the same frame.

>>> import torch, gradgraph
>>> from gradgraph.layout import layout
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> events = rec.events; rec.close()
>>> s = scene_at(events, layout(events), 2)
>>> s.present, s.saved
({0, 1}, {1: 1})
>>> s = scene_at(events, layout(events), len(events) - 1)
>>> sorted(s.ran.items()), s.saved, round(s.grads[0], 4)
([(0, 1), (1, 1), (2, 1)], {}, 4.7082)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .captions import caption
from .events import Event, EventKind
from .layout import GraphLayout

__all__ = ["Scene", "scene_at"]


@dataclass
class Scene:
    """Displayed-node state after event ``step``.

    ``present``: nodes created so far; ``ran``: how many times each ran in backward;
    ``saved``: live saved tensors per node; ``grads``: the norm of what ``.grad`` holds, per node;
    ``current``: the node the current event is about (None for module hooks, errors).
    """

    step: int
    event: Event
    caption: str
    present: set[int] = field(default_factory=set)
    ran: dict[int, int] = field(default_factory=dict)
    saved: dict[int, int] = field(default_factory=dict)
    grads: dict[int, float] = field(default_factory=dict)
    current: int | None = None

    def __repr__(self) -> str:
        return f"Scene(step={self.step}, {self.event!r})"


def scene_at(events: Sequence[Event], graph: GraphLayout, step: int) -> Scene:
    """The scene after ``events[step]`` (0-based)."""
    if not 0 <= step < len(events):
        raise IndexError(
            f"step {step} is outside the recording's {len(events)} events (0..{len(events) - 1})"
        )
    event = events[step]
    scene = Scene(step=step, event=event, caption=caption(event))
    for e in events[: step + 1]:
        g = graph.group_of.get(e.node) if e.node is not None else None
        if e.kind is EventKind.NODE:
            scene.present.add(g)
        elif e.kind is EventKind.BACKWARD:
            scene.ran[g] = scene.ran.get(g, 0) + 1
        elif e.kind is EventKind.SAVED:
            scene.saved[g] = scene.saved.get(g, 0) + 1
        elif e.kind is EventKind.FREED:
            scene.saved[g] -= 1  # a free always follows its save
        elif e.kind is EventKind.GRAD and g is not None:
            held = e.details.get("accumulated_norm")
            scene.grads[g] = held if held is not None else e.details["norm"]
    scene.saved = {g: n for g, n in scene.saved.items() if n > 0}
    scene.current = graph.group_of.get(event.node) if event.node is not None else None
    return scene
