"""What the player's node inspector says about one node at one step: what it is, the
source line that made it, what it saved (shapes, dtypes, bytes, device; held or freed
by then), and where its gradient goes next.

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
"""

from __future__ import annotations

from .captions import format_bytes
from .events import EventKind
from .film import Film

__all__ = ["node_facts"]


def node_facts(film: Film, g: int, step: int) -> str:
    """Plain-text facts about displayed node ``g`` after event ``step`` (one per line)."""
    graph = film.graph
    first = graph.nodes[g].details
    shape = "x".join(map(str, first.get("shape") or ())) or "scalar"
    what = f"{first.get('op') or first.get('grad_fn')} · {shape} · {first.get('dtype')}"
    lines = [f"{graph.labels[g]} ({what} on {first.get('device')})"]
    if first.get("source"):
        lines.append(f"made by: {first['source'].split(': ', 1)[-1]}")
    held: dict[tuple[int | None, str], str] = {}
    for e in film.events[: step + 1]:
        if e.node is None or graph.group_of.get(e.node) != g:
            continue
        d = e.details
        if e.kind is EventKind.SAVED:
            held[(e.node, d["slot"])] = (
                f"{d['slot']!r} {'x'.join(map(str, d['shape'])) or 'scalar'} "
                f"({d['dtype']}, {format_bytes(d['bytes'])}, {d['device']})"
            )
        elif e.kind is EventKind.FREED and (e.node, d["slot"]) in held:
            held[(e.node, d["slot"])] += ", freed"
    if held:
        lines.append("saved: " + "; ".join(held.values()))
    scene = film.scenes[step]
    if g in scene.grads:
        lines.append(f".grad norm now: {scene.grads[g]:.4g}")
    targets = [graph.labels[a] for a, b in graph.edges if b == g]
    lines.append(
        "its gradient goes next to: " + ", ".join(targets)
        if targets
        else "its gradient stops here (a leaf: it lands in .grad)"
    )
    return "\n".join(lines)
