"""The legend: only what the film uses, each entry a swatch and a line of text, laid out
in rows that fit the frame.

>>> legend = Legend([("leaf", "leaf tensor (gets .grad)"), ("now", "the current event")], 600)
>>> len(legend.rows), [key for key, _, _ in legend.rows[0]]
(1, ['leaf', 'now'])
>>> Legend(legend.items, 200).rows[1][0][:2]  # a narrow frame: one entry a row
('now', 'the current event')
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.i18n import gettext as _

from . import wording as w
from .events import Event, EventKind
from .fonts import text_width
from .layout import GraphLayout
from .picture import Picture, Polygon, Polyline, Rect, Text
from .style import BLUE, GREY, GROUP_FILL, MARGIN, ORANGE, RAN_FILL, SMALL, VERMILLION

__all__ = ["Legend", "legend_items"]

ROW_HEIGHT = SMALL * 1.9


def legend_items(events: Sequence[Event], layout: GraphLayout) -> list[tuple[str, str]]:
    """``(swatch key, text)`` of each thing the film of ``events`` draws."""
    kinds = {e.kind for e in events}
    hooks = {e.details.get("target") for e in events if e.kind is EventKind.HOOK}
    g = layout.graph
    ops = set(g.labels) - g.leaves - g.folded - g.second_order
    used = {
        "leaf": bool(g.leaves),
        "op": bool(ops),
        "second": bool(g.second_order),
        "folded": bool(g.folded),
        "group": bool(layout.modules),
        "ran": EventKind.BACKWARD in kinds,
        "tensor hook": "tensor" in hooks,
        "node hook": "node" in hooks,
        "module hook": "module" in hooks,
        "edge": bool(g.edges),
        "now": True,
    }
    return [(key, _(text)) for key, text in w.LEGEND.items() if used[key]]


class Legend:
    """The legend's ``items`` in rows of ``(key, text, left)`` that fit a frame ``width`` wide."""

    def __init__(self, items: list[tuple[str, str]], width: float) -> None:
        self.items = items
        self.rows: list[list[tuple[str, str, float]]] = [[]]
        x = MARGIN
        for key, text in items:
            entry = 22 + text_width(text, SMALL) + 14
            if x + entry > width - MARGIN and self.rows[-1]:
                self.rows.append([])
                x = MARGIN
            self.rows[-1].append((key, text, x))
            x += entry

    def __repr__(self) -> str:
        return f"Legend({len(self.items)} items in {len(self.rows)} rows)"

    @property
    def height(self) -> float:
        return len(self.rows) * ROW_HEIGHT

    def draw(self, picture: Picture, top: float) -> None:
        """The legend's rows from ``top`` down."""
        y = top + SMALL * 1.2
        for row in self.rows:
            for key, text, x in row:
                picture.items.extend(_swatch(key, x, y - SMALL * 0.85))
                picture.items.append(Text(x + 22, y, text, SMALL, "legend", "#444444"))
            y += ROW_HEIGHT


def _swatch(key: str, x: float, y: float) -> list[Rect | Polyline | Polygon | Text]:
    width, height = 16.0, 10.0
    if key.endswith("hook"):  # the flag that marks a box or a frame where a hook fired
        return [Text(x + 3, y + height, "⚑", SMALL, "legend", VERMILLION, True)]
    if key == "edge":
        middle, tip = y + height / 2, x + width
        return [
            Polyline(((x, middle), (tip - 6, middle)), "legend", GREY, 1.3),
            Polygon(((tip, middle), (tip - 6, y + 1), (tip - 6, y + height - 1)), "legend"),
        ]
    looks = {
        "leaf": dict(stroke=ORANGE, stroke_width=1.6),
        "op": dict(stroke=BLUE, stroke_width=1.6, radius=3),
        "second": dict(stroke=BLUE, stroke_width=1.6, radius=3, dashed=True),
        "folded": dict(stroke=BLUE, stroke_width=2.6, radius=3),
        "group": dict(fill=GROUP_FILL, stroke="#BBBBBB", radius=3),
        "ran": dict(fill=RAN_FILL, stroke=BLUE, stroke_width=1.6, radius=3),
        "now": dict(stroke=VERMILLION, stroke_width=3, radius=3),
    }
    return [Rect(x, y, x + width, y + height, "legend", **looks[key])]
