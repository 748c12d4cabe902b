"""A :class:`~gradgraph.picture.Picture` as SVG: crisp at any size, real text.

Each text is pinned to the width the layout measured (``textLength``), so whichever
font the viewer has, a label keeps to its box.

>>> from gradgraph.picture import Picture, Rect, Text
>>> picture = Picture(100, 40, [Rect(0, 0, 100, 40, "background", fill="white"),
...                             Text(5, 20, "x < y", 12, "node")])
>>> svg = to_svg(picture)
>>> svg.startswith("<svg") and "x &lt; y" in svg and 'textLength="' in svg
True
"""

from __future__ import annotations

import html

from .fonts import FAMILY, family
from .picture import Picture, Polygon, Polyline, Rect, Text

__all__ = ["to_svg"]


def _points(points: tuple[tuple[float, float], ...]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


def _item(item: Rect | Polyline | Polygon | Text) -> str:
    if isinstance(item, Rect):
        dash = ' stroke-dasharray="5 3"' if item.dashed else ""
        return (
            f'<rect x="{item.x0:.1f}" y="{item.y0:.1f}" width="{item.x1 - item.x0:.1f}" '
            f'height="{item.y1 - item.y0:.1f}" rx="{item.radius:g}" fill="{item.fill}" '
            f'stroke="{item.stroke}" stroke-width="{item.stroke_width:g}"{dash}/>'
        )
    if isinstance(item, Polyline):
        dash = ' stroke-dasharray="4 3"' if item.dashed else ""
        return (
            f'<polyline points="{_points(item.points)}" fill="none" stroke="{item.color}" '
            f'stroke-width="{item.width:g}" stroke-linejoin="round"{dash}/>'
        )
    if isinstance(item, Polygon):
        return f'<polygon points="{_points(item.points)}" fill="{item.color}"/>'
    weight = ' font-weight="bold"' if item.bold else ""
    strike = ' text-decoration="line-through"' if item.struck else ""
    face = family(item.text)
    face = "" if face == FAMILY else f' font-family="{html.escape(face)}"'
    return (
        f'<text x="{item.x:.1f}" y="{item.y:.1f}" font-size="{item.size:g}" fill="{item.color}"'
        f'{weight}{strike}{face} textLength="{item.width:.1f}" lengthAdjust="spacingAndGlyphs">'
        f"{html.escape(item.text)}</text>"
    )


def to_svg(picture: Picture, scale: float = 1.0) -> str:
    """The SVG document of ``picture``, displayed ``scale`` times its pixel size."""
    body = "".join(_item(item) for item in picture.items)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{picture.width * scale:.0f}" '
        f'height="{picture.height * scale:.0f}" '
        f'viewBox="0 0 {picture.width:.1f} {picture.height:.1f}" '
        f'font-family="{FAMILY}">{body}</svg>'
    )
