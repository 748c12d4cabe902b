"""The film's colours and measures, in pixels: one place, so every part of a frame agrees.

Colours are Okabe-Ito's, safe for the common colour-vision deficiencies; no state is told
by colour alone (each also has a mark or a line of text).

>>> from gradgraph.style import LINE, SMALL, TITLE
>>> round(TITLE * LINE, 2)  # the height of a box's title line
16.25
>>> SMALL < TITLE
True
"""

from __future__ import annotations

__all__ = [
    "ARROW",
    "BLUE",
    "FAILED_FILL",
    "GREEN",
    "GREY",
    "GROUP_FILL",
    "HEADER",
    "INK",
    "LINE",
    "MARGIN",
    "MEMORY_HEIGHT",
    "MIN_WIDTH",
    "ORANGE",
    "PAD",
    "PURPLE",
    "RAN_FILL",
    "SMALL",
    "TITLE",
    "VERMILLION",
]

ORANGE, GREEN, BLUE, VERMILLION, PURPLE, GREY, INK = (
    "#E69F00",
    "#009E73",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#8A8A8A",
    "#222222",
)
RAN_FILL, FAILED_FILL, GROUP_FILL = "#D9F2EA", "#FBE1D2", "#F3F3F3"
MARGIN = 12.0
PAD = 7.0  # inside a node box
TITLE, SMALL, HEADER = 12.5, 10.5, 13.5  # font sizes in pixels
LINE = 1.3  # line height, in font sizes
ARROW = (8.0, 4.0)  # arrowhead length and half width
MEMORY_HEIGHT = 64.0
MIN_WIDTH = 600.0
