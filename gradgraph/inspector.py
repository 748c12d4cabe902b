"""What the node inspector says about one node at one step: what it is, the source line
that made it, what it saved (shapes, dtypes, bytes, device; held or freed by then), what
its ``.grad`` holds, and where its gradient goes next.

The facts of a node change only at the events about it, so :func:`facts_timeline` lists
them once per change; the player's inspect menu and the HTML page's both read it.

>>> import torch, gradgraph
>>> from gradgraph.film import Film
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     y = x.exp()
...     y.sum().backward()
>>> film = Film(rec.events); rec.close()
>>> exp = next(g for g, label in film.graph.labels.items() if label == "ExpBackward0")
>>> print(node_facts(film, exp, len(film) - 1))
ExpBackward0 (exp · 3 · torch.float32 on cpu)
made by: y = x.exp()
saved: 'result' 3 (torch.float32, 12 B, cpu), freed
its gradient goes next to: x
>>> [step for step, _ in facts_timeline(film, exp)]  # made, saved, freed
[1, 2, 6]
"""

from __future__ import annotations

from autograder.i18n import gettext as _

from . import wording as w
from .captions import format_bytes
from .events import Event, EventKind
from .film import Film

__all__ = ["facts_at", "facts_timeline", "node_facts"]


def node_facts(film: Film, g: int, step: int) -> str:
    """Plain-text facts about displayed node ``g`` after event ``step`` (one per line);
    "not made yet at this step" before the node exists."""
    facts = facts_at(facts_timeline(film, g), step)
    return _(w.INSPECT_NOT_MADE) if facts is None else facts


def facts_at(timeline: list[tuple[int, str]], step: int) -> str | None:
    """The facts a node's ``timeline`` gives at ``step`` (None: not made yet)."""
    facts = None
    for since, text in timeline:
        if since > step:
            break
        facts = text
    return facts


def facts_timeline(film: Film, g: int) -> list[tuple[int, str]]:
    """``(step, facts)`` at each step where what the inspector says about ``g`` changes,
    from the step that made it on."""
    graph = film.graph
    first = graph.nodes[g].details
    head = [
        _(w.INSPECT_WHAT).format(
            name=graph.labels[g],
            what=first.get("op") or first.get("grad_fn"),
            shape=w.shape_text(first.get("shape")),
            dtype=first.get("dtype"),
            device=first.get("device"),
        )
    ]
    if first.get("source"):
        head.append(_(w.INSPECT_MADE_BY).format(source=first["source"].split(": ", 1)[-1]))
    targets = [graph.labels[a] for a, b in graph.edges if b == g]
    if targets:
        tail = _(w.INSPECT_GOES_TO).format(targets=_(w.INSPECT_TARGET_SEPARATOR).join(targets))
    else:
        tail = _(w.INSPECT_STOPS)
    held: dict[tuple[int | None, str], Event] = {}
    freed: set[tuple[int | None, str]] = set()
    timeline: list[tuple[int, str]] = []
    for e in film.events:
        if e.node is None or graph.group_of.get(e.node) != g:
            continue
        if e.kind is EventKind.SAVED:
            held[(e.node, e.details["slot"])] = e
            freed.discard((e.node, e.details["slot"]))
        elif e.kind is EventKind.FREED and (e.node, e.details["slot"]) in held:
            freed.add((e.node, e.details["slot"]))
        lines = list(head)
        if held:
            tensors = [_saved_tensor(saved, key in freed) for key, saved in held.items()]
            lines.append(_(w.INSPECT_SAVED).format(tensors=_(w.INSPECT_SEPARATOR).join(tensors)))
        grads = film.scenes[e.index].grads
        if g in grads:
            lines.append(_(w.INSPECT_GRAD).format(norm=grads[g]))
        lines.append(tail)
        facts = "\n".join(lines)
        if not timeline or timeline[-1][1] != facts:
            timeline.append((e.index, facts))
    return timeline


def _saved_tensor(e: Event, freed: bool) -> str:
    d = e.details
    template = _(w.INSPECT_FREED_TENSOR) if freed else _(w.INSPECT_SAVED_TENSOR)
    return template.format(
        slot=d["slot"],
        shape=w.shape_text(d["shape"]),
        dtype=d["dtype"],
        size=format_bytes(d["bytes"]),
        device=d["device"],
    )
