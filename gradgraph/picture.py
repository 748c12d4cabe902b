"""One frame as a list of shapes and texts in pixels, before it becomes SVG or PNG.

Shapes are plain frozen records with a ``role`` ("node", "edge", "legend", ...), so the
picture checks can read a frame as easily as the SVG and PNG writers draw it.

>>> from gradgraph.picture import Picture, Rect, Text
>>> picture = Picture(200, 60, [Rect(10, 10, 130, 50, "node", stroke="#0072B2"),
...                             Text(17, 30, "ExpBackward0", 12.5, "node", bold=True)])
>>> [t.text for t in picture.texts("node")]
['ExpBackward0']
>>> x0, y0, x1, y1 = picture.items[1].bbox
>>> 17 < x1 < 130 and y0 < 30 < y1  # inside its box
True
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from .fonts import text_width
from .style import GREY, INK

__all__ = ["Picture", "Polygon", "Polyline", "Rect", "Text"]


@dataclass(frozen=True, slots=True)
class Rect:
    x0: float
    y0: float
    x1: float
    y1: float
    role: str
    fill: str = "none"
    stroke: str = "none"
    stroke_width: float = 1.0
    radius: float = 0.0
    dashed: bool = False


@dataclass(frozen=True, slots=True)
class Polyline:
    points: tuple[tuple[float, float], ...]
    role: str
    color: str = GREY
    width: float = 1.3
    dashed: bool = False
    edge: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Polygon:
    points: tuple[tuple[float, float], ...]
    role: str
    color: str = GREY
    edge: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Text:
    """One line of text; ``(x, y)`` is the left end of its baseline."""

    x: float
    y: float
    text: str
    size: float
    role: str
    color: str = INK
    bold: bool = False
    struck: bool = False

    @property
    def width(self) -> float:
        return text_width(self.text, self.size, self.bold)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (self.x, self.y - self.size * 0.8, self.x + self.width, self.y + self.size * 0.25)


@dataclass
class Picture:
    """The shapes of one frame, back to front."""

    width: float
    height: float
    items: list[Rect | Polyline | Polygon | Text] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Picture({self.width:.0f}x{self.height:.0f}, {len(self.items)} items)"

    def texts(self, role: str | None = None) -> Iterator[Text]:
        """The texts, or those of one role ("node", "group", "header", "legend", ...)."""
        return (i for i in self.items if isinstance(i, Text) and role in (None, i.role))
