"""Lay the recorded graph out once, in layers, from the whole recording.

Forward runs left to right: inputs in the first columns, the loss in the last; each
node sits one column after its latest input, side chains as late as their users allow,
and the order inside a column is refined by a few barycentre sweeps. Positions never
change while playing. Graphs with more than ``max_nodes`` nodes are folded: the nodes
made inside one top-level module become one box.

>>> from gradgraph.events import Event, EventKind
>>> def node(i, name, inputs, module=None):
...     details = {"inputs": inputs, "leaf": not inputs, "module": module}
...     return Event(i, EventKind.NODE, i, name, details)
>>> x, w = node(0, "x", ()), node(1, "w", ())
>>> graph = layout([x, w, node(2, "MulBackward0", (0, 1)), node(3, "SumBackward0", (2,))])
>>> graph.positions[0], graph.positions[1], graph.positions[2], graph.positions[3]
((0.0, 0.5), (0.0, -0.5), (1.0, 0.0), (2.0, 0.0))
>>> graph.edges
((0, 2), (1, 2), (2, 3))
>>> folded = layout([x, node(1, "A", (0,), "enc"), node(2, "B", (1,), "enc")], max_nodes=2)
>>> folded.labels, folded.group_of
({0: 'x', 1: 'enc (2 nodes)'}, {0: 0, 1: 1, 2: 1})
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from .events import Event, EventKind

__all__ = ["GraphLayout", "layout"]

_SWEEPS = 4


@dataclass(frozen=True)
class GraphLayout:
    """Where each displayed node goes.

    ``group_of`` maps a recorded node id to its displayed node (itself unless folded);
    ``edges`` run from an input to the node that used it (forward direction).
    """

    positions: dict[int, tuple[float, float]]
    labels: dict[int, str]
    leaves: frozenset[int]
    folded: frozenset[int]
    second_order: frozenset[int]
    edges: tuple[tuple[int, int], ...]
    group_of: dict[int, int]

    def __repr__(self) -> str:
        return f"GraphLayout({len(self.positions)} nodes, {len(self.edges)} edges)"

    @property
    def size(self) -> tuple[float, float]:
        """Width (number of columns) and height (tallest column) of the drawing."""
        if not self.positions:
            return (1.0, 1.0)
        xs = [x for x, _ in self.positions.values()]
        ys = [y for _, y in self.positions.values()]
        return (max(xs) - min(xs) + 1.0, max(ys) - min(ys) + 1.0)


def layout(events: Iterable[Event], max_nodes: int = 80) -> GraphLayout:
    """Compute the layered layout of every ``node`` event in ``events``."""
    nodes = [e for e in events if e.kind is EventKind.NODE]
    group_of = _groups(nodes, max_nodes)
    members: dict[int, list[Event]] = defaultdict(list)
    for e in nodes:
        members[group_of[e.node]].append(e)
    order = list(members)  # display nodes in creation order (dicts keep insertion order)
    edges = _edges(nodes, group_of)
    inputs: dict[int, list[int]] = defaultdict(list)
    for src, dst in edges:
        inputs[dst].append(src)
    layers = _layers(order, inputs, edges)
    positions = _positions(order, layers, edges)
    labels = {g: _label(ms) for g, ms in members.items()}
    return GraphLayout(
        positions=positions,
        labels=labels,
        leaves=frozenset(
            g for g, ms in members.items() if len(ms) == 1 and ms[0].details.get("leaf")
        ),
        folded=frozenset(g for g, ms in members.items() if len(ms) > 1),
        second_order=frozenset(
            g for g, ms in members.items() if all(m.details.get("during_backward") for m in ms)
        ),
        edges=edges,
        group_of=group_of,
    )


def _groups(nodes: list[Event], max_nodes: int) -> dict[int, int]:
    """Recorded node id -> displayed node id: identity, or folded by top-level module."""
    if len(nodes) <= max_nodes:
        return {e.node: e.node for e in nodes}
    first_of_module: dict[str, int] = {}
    group_of = {}
    for e in nodes:
        module = e.details.get("module")
        top = module.split(".")[0] if module else None
        group_of[e.node] = e.node if top is None else first_of_module.setdefault(top, e.node)
    return group_of


def _label(members: list[Event]) -> str:
    if len(members) == 1:
        return members[0].name
    return f"{members[0].details['module'].split('.')[0]} ({len(members)} nodes)"


def _edges(nodes: list[Event], group_of: dict[int, int]) -> tuple[tuple[int, int], ...]:
    edges: dict[tuple[int, int], None] = {}
    for e in nodes:
        dst = group_of[e.node]
        for src_node in e.details.get("inputs", ()):
            src = group_of.get(src_node)
            if src is not None and src != dst:
                edges[(src, dst)] = None
    return tuple(edges)


def _layers(
    order: list[int], inputs: dict[int, list[int]], edges: tuple[tuple[int, int], ...]
) -> dict[int, int]:
    """Longest path from the inputs, then every node as late as its users allow.

    The second pass keeps a side chain (a weight, its transpose) next to the node that
    uses it instead of in the first column.
    """
    layer: dict[int, int] = {}
    for g in order:  # creation order: inputs come first; a later input (folding cycle) is ignored
        placed = [layer[i] for i in inputs.get(g, ()) if i in layer]
        layer[g] = 1 + max(placed) if placed else 0
    users: dict[int, list[int]] = defaultdict(list)
    for src, dst in edges:
        users[src].append(dst)
    for g in reversed(order):
        later = [layer[u] for u in users.get(g, ()) if layer[u] > layer[g]]
        if later:
            layer[g] = min(later) - 1
    return layer


def _positions(
    order: list[int], layer: dict[int, int], edges: tuple[tuple[int, int], ...]
) -> dict[int, tuple[float, float]]:
    rows: dict[int, list[int]] = defaultdict(list)
    for g in order:
        rows[layer[g]].append(g)
    neighbours: dict[int, list[int]] = defaultdict(list)
    for src, dst in edges:
        neighbours[src].append(dst)
        neighbours[dst].append(src)
    rank = {g: float(i) for row in rows.values() for i, g in enumerate(row)}
    depths = sorted(rows)
    for sweep in range(_SWEEPS):
        for depth in depths if sweep % 2 == 0 else reversed(depths):
            row = rows[depth]
            centre = {g: _mean([rank[n] for n in neighbours[g]], rank[g]) for g in row}
            row.sort(key=lambda g: (centre[g], rank[g]))
            for i, g in enumerate(row):
                rank[g] = float(i)
    return {
        g: (float(depth), (len(row) - 1) / 2 - i)
        for depth, row in rows.items()
        for i, g in enumerate(row)
    }


def _mean(values: list[float], default: float) -> float:
    return sum(values) / len(values) if values else default
