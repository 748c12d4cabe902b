"""A :class:`~gradgraph.picture.Picture` as a PNG (for GIF and PNG files), drawn with PIL
at any scale, in the same font the layout measured.

>>> from gradgraph.picture import Picture, Rect, Text
>>> picture = Picture(100, 40, [Rect(0, 0, 100, 40, "background", fill="white"),
...                             Text(5, 20, "x", 12, "node")])
>>> png = to_png(picture, scale=2.0)
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

from .fonts import font, runs
from .picture import Picture, Polygon, Polyline, Rect, Text

__all__ = ["to_image", "to_png"]


def _dashes(points: list[tuple[float, float]], on: float, off: float) -> list[list[tuple]]:
    """Split a polyline into dash segments."""
    segments, drawing, left = [], True, on
    current = [points[0]]
    for (ax, ay), (bx, by) in zip(points, points[1:], strict=False):
        length = ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5
        done = 0.0
        while length - done > left:
            done += left
            t = done / length
            p = (ax + (bx - ax) * t, ay + (by - ay) * t)
            if drawing:
                current.append(p)
                segments.append(current)
            current = [p]
            drawing, left = not drawing, off if drawing else on
        left -= length - done
        if drawing:
            current.append((bx, by))
    if drawing and len(current) > 1:
        segments.append(current)
    return segments


def to_image(picture: Picture, scale: float = 1.0) -> Image.Image:
    """``picture`` as an RGB image, ``scale`` pixels per picture pixel."""
    image = Image.new("RGB", (round(picture.width * scale), round(picture.height * scale)), "white")
    draw = ImageDraw.Draw(image)

    def s(points: tuple[tuple[float, float], ...]) -> list[tuple[float, float]]:
        return [(x * scale, y * scale) for x, y in points]

    for item in picture.items:
        if isinstance(item, Rect):
            box = (item.x0 * scale, item.y0 * scale, item.x1 * scale, item.y1 * scale)
            fill = None if item.fill == "none" else item.fill
            outline = None if item.stroke == "none" else item.stroke
            width = max(round(item.stroke_width * scale), 1) if outline else 0
            if item.dashed and outline:
                draw.rounded_rectangle(box, item.radius * scale, fill=fill)
                x0, y0, x1, y1 = box
                border = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
                for dash in _dashes(border, 5 * scale, 3 * scale):
                    draw.line(dash, fill=outline, width=width)
            else:
                draw.rounded_rectangle(box, item.radius * scale, fill=fill, outline=outline,
                                       width=width)  # fmt: skip
        elif isinstance(item, Polyline):
            width = max(round(item.width * scale), 1)
            pieces = (
                _dashes(s(item.points), 4 * scale, 3 * scale) if item.dashed else [s(item.points)]
            )
            for piece in pieces:
                draw.line(piece, fill=item.color, width=width, joint="curve")
        elif isinstance(item, Polygon):
            draw.polygon(s(item.points), fill=item.color)
        elif isinstance(item, Text):
            x = item.x * scale
            for piece, hangul in runs(item.text):  # Hangul in the Korean face (gradgraph.fonts)
                face = font(item.size * scale, item.bold, hangul)
                draw.text((x, item.y * scale), piece, fill=item.color, font=face, anchor="ls")
                x += face.getlength(piece)
            if item.struck:
                y = (item.y - item.size * 0.3) * scale
                draw.line([(item.x * scale, y), ((item.x + item.width) * scale, y)],
                          fill=item.color, width=max(round(scale), 1))  # fmt: skip
    return image


def to_png(picture: Picture, scale: float = 1.0) -> bytes:
    """PNG bytes of ``picture`` at ``scale``."""
    buffer = io.BytesIO()
    to_image(picture, scale).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()
