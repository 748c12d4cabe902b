"""Text drawn once by matplotlib and pasted into frames as pixels.

Agg spends milliseconds on every text it draws; a recording shows the same labels in
hundreds of frames. Each distinct text is rendered once into a sprite (premultiplied
colour and coverage) and alpha-blended into later frames.

>>> import numpy as np
>>> from gradgraph.sprites import TextSprites, paste
>>> sprites = TextSprites(dpi=80)
>>> label = sprites.get("ExpBackward0", size=9.0)
>>> label.width > label.height > 5, sprites.get("ExpBackward0", size=9.0) is label
(True, True)
>>> frame = np.full((50, 200, 4), 255, dtype=np.uint8)
>>> paste(frame, label, 100, 25, ha="center", va="center")
>>> bool((frame[..., :3] < 128).any())
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["Sprite", "TextSprites", "paste"]

_PAD = 2


@dataclass(frozen=True)
class Sprite:
    """A rendered text: colour times coverage (``ink``) and the background share kept."""

    ink: np.ndarray  # (height, width, 3) float32
    keep: np.ndarray  # (height, width, 1) float32, 1 - coverage

    def __repr__(self) -> str:
        return f"Sprite({self.width}x{self.height})"

    @property
    def width(self) -> int:
        return self.ink.shape[1]

    @property
    def height(self) -> int:
        return self.ink.shape[0]

    @classmethod
    def from_rgba(cls, rgba: np.ndarray) -> Sprite:
        coverage = rgba[..., 3:4].astype(np.float32) / 255.0
        return cls(ink=rgba[..., :3].astype(np.float32) * coverage, keep=1.0 - coverage)


class TextSprites:
    """Cache of rendered texts, keyed by text and look."""

    def __init__(self, dpi: int) -> None:
        self.dpi = dpi
        self._cache: dict[tuple, Sprite] = {}

    def __repr__(self) -> str:
        return f"TextSprites({len(self._cache)} cached, dpi={self.dpi})"

    def get(self, text: str, size: float, color: str = "black", weight: str = "normal") -> Sprite:
        """The sprite of ``text``, cropped to its ink (plus a small margin)."""
        key = (text, size, color, weight)
        sprite = self._cache.get(key)
        if sprite is None:
            sprite = self._cache[key] = self._render(text, size, color, weight)
        return sprite

    def _render(self, text: str, size: float, color: str, weight: str) -> Sprite:
        lines = text.split("\n")
        width_in = (max(len(line) for line in lines) * 0.75 + 2) * size / 72
        height_in = (len(lines) * 1.5 + 1) * size / 72
        fig = Figure(figsize=(width_in, height_in), dpi=self.dpi)
        fig.patch.set_alpha(0.0)
        fig.text(
            _PAD / (width_in * self.dpi),
            1 - _PAD / (height_in * self.dpi),
            text,
            fontsize=size,
            color=color,
            weight=weight,
            va="top",
            ha="left",
            linespacing=1.3,
        )
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        rows = np.flatnonzero(rgba[..., 3].any(axis=1))
        cols = np.flatnonzero(rgba[..., 3].any(axis=0))
        if rows.size == 0:
            return Sprite.from_rgba(np.zeros((1, 1, 4), dtype=np.uint8))
        return Sprite.from_rgba(
            rgba[
                max(rows[0] - _PAD, 0) : rows[-1] + _PAD + 1,
                max(cols[0] - _PAD, 0) : cols[-1] + _PAD + 1,
            ]
        )


def paste(
    frame: np.ndarray, sprite: Sprite, x: float, y: float, ha: str = "left", va: str = "top"
) -> None:
    """Alpha-blend ``sprite`` into ``frame`` (RGBA, opaque) at pixel ``(x, y)`` from the top left.

    ``ha`` in left/center/right and ``va`` in top/center/bottom say which point of the
    sprite lands on ``(x, y)``; whatever falls outside the frame is clipped.
    """
    h, w = sprite.height, sprite.width
    left = int(round(x - {"left": 0, "center": w / 2, "right": w}[ha]))
    top = int(round(y - {"top": 0, "center": h / 2, "bottom": h}[va]))
    fy0, fx0 = max(top, 0), max(left, 0)
    fy1, fx1 = min(top + h, frame.shape[0]), min(left + w, frame.shape[1])
    if fy0 >= fy1 or fx0 >= fx1:
        return
    rows, cols = slice(fy0 - top, fy1 - top), slice(fx0 - left, fx1 - left)
    dst = frame[fy0:fy1, fx0:fx1, :3]
    dst[...] = sprite.ink[rows, cols] + dst * sprite.keep[rows, cols]
