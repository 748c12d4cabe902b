"""The one typeface of the film (DejaVu Sans, shipped with matplotlib) and its metrics.

Layout measures every text with the same font that the PNG frames draw it in; the SVG
frames pin each text to that measured width (``textLength``), so no viewer's font can
make a label run into its neighbour.

>>> from gradgraph.fonts import font, text_width
>>> text_width("AddmmBackward0", 13) == font(13).getlength("AddmmBackward0")
True
>>> text_width("x", 13, bold=True) > text_width("x", 13)
True
"""

from __future__ import annotations

import functools
from pathlib import Path

import matplotlib
from PIL import ImageFont

__all__ = ["FAMILY", "font", "text_width", "wrap"]

FAMILY = "DejaVu Sans, Verdana, Arial, sans-serif"
_FILES = Path(matplotlib.get_data_path()) / "fonts" / "ttf"


@functools.cache
def font(size: float, bold: bool = False) -> ImageFont.FreeTypeFont:
    """The film's font at ``size`` pixels."""
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(str(_FILES / name), size=size)


@functools.cache
def text_width(text: str, size: float, bold: bool = False) -> float:
    """Advance width of ``text`` in pixels at ``size`` (one line)."""
    return font(size, bold).getlength(text)


def wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """``text`` as it is where it fits in ``width`` pixels, else greedy word wrap into lines
    at most that wide (a longer word keeps a line of its own).

    >>> wrap("saved its result", text_width("saved its", 13), 13)
    ['saved its', 'result']
    >>> wrap("step 1  ·  NODE", 300, 13)
    ['step 1  ·  NODE']
    """
    if text_width(text, size, bold) <= width:
        return [text]
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size, bold) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines or [""]
