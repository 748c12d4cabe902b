"""What each node's box says at a step, how large the box is, and how it is drawn.

Every box is sized once for the largest text it will show during the whole film, so
boxes and texts never move. Every state is drawn where it happens and never by colour
alone: a node that ran in backward is filled and its name starts with ✓; its saved
tensors ("saved 2 · 24 B"), freed ones ("freed 2 · 24 B", struck through), the norm of
what ``.grad`` holds ("grad 0.989"), the last hook fired on it (⚑) and a failure (✗)
are lines inside its box; the current event's node has a thick outline.

>>> import torch, gradgraph
>>> from gradgraph.layout import build_graph
>>> from gradgraph.scene import scenes
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> events = rec.events; rec.close()
>>> graph = build_graph(events)
>>> boxes = NodeBoxes(graph, scenes(events, graph))
>>> exp = next(g for g, label in graph.labels.items() if label == "ExpBackward0")
>>> boxes.lines(exp, boxes.scenes[-1])
[('title', '✓ ExpBackward0'), ('subtitle', 'exp() · 3'), ('saved', 'freed 1 · 12 B')]
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.i18n import gettext as _

from . import wording as w
from .captions import format_bytes, hook_kind
from .fonts import text_width
from .layout import RecordedGraph
from .picture import Picture, Rect, Text
from .scene import Scene
from .style import (
    BLUE,
    FAILED_FILL,
    GREEN,
    GREY,
    INK,
    LINE,
    ORANGE,
    PAD,
    PURPLE,
    RAN_FILL,
    SMALL,
    TITLE,
    VERMILLION,
)

__all__ = ["NodeBoxes", "box_title"]

ROWS = ("saved", "grad", "hook", "failed")


def box_title(label: str, runs: int) -> str:
    """A box's title: the node's label, marked ✓ once it ran in backward (✓×2 after two runs).

    >>> box_title("x", 0), box_title("x", 1), box_title("x", 3)
    ('x', '✓ x', '✓×3 x')
    """
    if runs == 0:
        return label
    if runs == 1:
        return _(w.BOX_TITLE_RAN).format(name=label)
    return _(w.BOX_TITLE_RAN_TIMES).format(runs=runs, name=label)


class NodeBoxes:
    """The boxes of ``graph``'s displayed nodes over the film's ``scenes``."""

    def __init__(self, graph: RecordedGraph, scenes: Sequence[Scene]) -> None:
        self.graph = graph
        self.scenes = scenes
        self.subtitles = {g: self._subtitle(g) for g in graph.labels}
        self.rows = self._rows()

    def __repr__(self) -> str:
        return f"NodeBoxes({len(self.graph.labels)} nodes)"

    def _subtitle(self, g: int) -> str:
        e = self.graph.nodes[g]
        if g in self.graph.folded:
            return _(w.BOX_FOLDED)
        shape = w.shape_text(e.details.get("shape"))
        if e.details.get("leaf"):
            leaf = _(w.BOX_PARAMETER) if e.details.get("parameter") else _(w.BOX_LEAF)
            return leaf.format(shape=shape)
        gloss = w.GLOSS.get(e.details.get("grad_fn") or e.name)
        if gloss is not None:
            return _(w.BOX_GLOSS).format(gloss=_(gloss), shape=shape)
        if e.details.get("op"):
            return _(w.BOX_OP_CALL).format(op=e.details["op"], shape=shape)
        return _(w.BOX_OPERATION).format(shape=shape)

    def _rows(self) -> dict[int, tuple[str, ...]]:
        """Which status lines each node's box keeps room for (it will need them)."""
        last = self.scenes[-1]
        has = {
            "saved": set(last.saved) | set(last.freed),
            "grad": set(last.grads),
            "hook": set(last.hooks),
            "failed": {s.failed for s in self.scenes if s.failed is not None},
        }
        return {g: tuple(r for r in ROWS if g in has[r]) for g in self.graph.labels}

    def lines(self, g: int, scene: Scene) -> list[tuple[str, str]]:
        """``(row, text)`` of each line of node ``g``'s box in ``scene``."""
        title = box_title(self.graph.labels[g], scene.ran.get(g, 0))
        lines = [("title", title), ("subtitle", self.subtitles[g])]
        for row in self.rows[g]:
            lines.append((row, self._row_text(row, g, scene)))
        return lines

    @staticmethod
    def _row_text(row: str, g: int, scene: Scene) -> str:
        if row == "saved":
            if g in scene.saved:
                n, nbytes = scene.saved[g]
                return _(w.BOX_SAVED).format(count=n, size=format_bytes(nbytes))
            if g in scene.freed:
                n, nbytes = scene.freed[g]
                return _(w.BOX_FREED).format(count=n, size=format_bytes(nbytes))
            return ""
        if row == "grad":
            return _(w.BOX_GRAD).format(norm=scene.grads[g]) if g in scene.grads else ""
        if row == "hook":
            return _(w.BOX_HOOK).format(kind=hook_kind(scene.hooks[g])) if g in scene.hooks else ""
        return _(w.BOX_FAILED) if scene.failed == g else ""

    def sizes(self) -> dict[int, tuple[float, float]]:
        """Width and height of each box: room for the largest text it shows in the film."""
        widths = {g: 0.0 for g in self.graph.labels}
        final = self.scenes[-1]
        seen = [s for s in self.scenes if s.current is not None] + [final]
        for scene in seen:
            for g in {scene.current} | (set(scene.present) if scene is final else set()):
                if g is None or g not in widths:
                    continue
                for row, text in self.lines(g, scene):
                    size, bold = (TITLE, True) if row == "title" else (SMALL, row != "subtitle")
                    widths[g] = max(widths[g], text_width(text, size, bold))
        runs = max(final.ran.values(), default=0)  # room for a ✓ mark that says as much
        return {
            g: (
                max(width, text_width(box_title(self.graph.labels[g], runs), TITLE, True))
                + 2 * PAD,
                2 * PAD + (TITLE + SMALL * (1 + len(self.rows[g]))) * LINE,
            )
            for g, width in widths.items()
        }

    def draw(
        self, picture: Picture, g: int, box: tuple[float, float, float, float], scene: Scene
    ) -> None:
        """Node ``g``'s box at ``box`` (left, top, right, bottom) as ``scene`` has it."""
        x0, y0, x1, y1 = box
        graph = self.graph
        now, failed = g == scene.current, g == scene.failed
        stroke = ORANGE if g in graph.leaves else BLUE
        fill = FAILED_FILL if failed else RAN_FILL if scene.ran.get(g) else "white"
        picture.items.append(
            Rect(x0, y0, x1, y1, "node", fill=fill, stroke=VERMILLION if now or failed else stroke,
                 stroke_width=3.5 if now else 2.6 if g in graph.folded else 1.6,
                 radius=0 if g in graph.leaves else 7, dashed=g in graph.second_order)
        )  # fmt: skip
        y = y0 + PAD + TITLE
        looks = {
            "title": (TITLE, INK, True),
            "subtitle": (SMALL, "#555555", False),
            "saved": (SMALL, PURPLE, True),
            "grad": (SMALL, GREEN, True),
            "hook": (SMALL, VERMILLION, now),
            "failed": (SMALL, VERMILLION, True),
        }
        for row, text in self.lines(g, scene):
            size, colour, bold = looks[row]
            struck = row == "saved" and g not in scene.saved
            if struck:
                colour, bold = GREY, False
            if text:
                picture.items.append(Text(x0 + PAD, y, text, size, "node", colour, bold, struck))
            y += (size if row != "title" else SMALL) * LINE
