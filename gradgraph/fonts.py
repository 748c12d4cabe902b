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

__all__ = ["FAMILY", "font", "text_width"]

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
