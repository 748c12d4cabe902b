"""The memory strip under the graph: the bytes held by saved tensors from the first step
to the present one (never the future), with its peak so far on a round binary tick.

>>> binary_ceiling(200), binary_ceiling(3000), binary_ceiling(5 * 2**20)
((256, 1), (4096, 1024), (8388608, 1048576))
>>> tick(4096, 1024)
'4 KiB'
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.i18n import gettext as _

from . import wording as w
from .captions import format_bytes
from .events import Event
from .picture import Picture, Polyline, Text
from .style import BLUE, GREY, MARGIN, MEMORY_HEIGHT, PURPLE, SMALL, VERMILLION

__all__ = ["MemoryStrip", "binary_ceiling", "tick"]


class MemoryStrip:
    """The strip of ``events`` in a frame ``width`` wide, its label line at ``top``."""

    def __init__(self, events: Sequence[Event], width: float, top: float) -> None:
        self.events = events
        self.width = width
        self.top = top
        self.peaks: list[int] = []
        peak = 0
        for e in events:
            peak = max(peak, e.memory.saved_bytes, e.memory.allocator_bytes or 0)
            self.peaks.append(peak)

    def __repr__(self) -> str:
        return f"MemoryStrip({len(self.events)} steps, top {self.top:.0f})"

    @property
    def height(self) -> float:
        return SMALL * 1.6 + MEMORY_HEIGHT

    def draw(self, picture: Picture, step: int) -> None:
        """The strip up to ``step``, with a cursor at ``step``."""
        top, n = self.top + SMALL * 1.6, len(self.events)
        left, right = MARGIN + 56, self.width - MARGIN
        bottom = top + MEMORY_HEIGHT - 16
        peak, unit = binary_ceiling(self.peaks[step])
        axis = ((left, top), (left, bottom), (right, bottom))
        picture.items.append(Polyline(axis, "axis", GREY, 1))
        for value, label in ((0, "0"), (peak, tick(peak, unit))):
            y = bottom - (bottom - top) * (value / peak if peak else 0)
            picture.items.append(Text(MARGIN, y + 4, label, SMALL * 0.95, "axis", "#555555"))

        def point(i: int, value: int) -> tuple[float, float]:
            x = left + (right - left) * (i + 1) / (n + 1)
            return (x, bottom - (bottom - top) * (value / peak if peak else 0))

        saved = [e.memory.saved_bytes for e in self.events[: step + 1]]
        line = [point(0, 0)]
        for i, value in enumerate(saved):
            line += [(point(i, value)[0], line[-1][1]), point(i, value)]
        picture.items.append(Polyline(tuple(line), "memory", PURPLE, 1.8))
        allocated = [e.memory.allocator_bytes for e in self.events[: step + 1]]
        if any(a is not None for a in allocated):
            picture.items.append(
                Polyline(tuple(point(i, a or 0) for i, a in enumerate(allocated)), "memory",
                         BLUE, 1.2, dashed=True)
            )  # fmt: skip
        x, y = point(step, saved[-1])
        picture.items.append(Polyline(((x, top), (x, bottom)), "cursor", VERMILLION, 1.5))
        if any(a is not None for a in allocated):
            now = _(w.MEMORY_NOW_ALLOCATOR).format(
                size=format_bytes(saved[-1]), allocated=format_bytes(allocated[-1] or 0)
            )
        else:
            now = _(w.MEMORY_NOW).format(size=format_bytes(saved[-1]))
        picture.items.append(Text(left, self.top + SMALL, now, SMALL, "axis", PURPLE, True))


def binary_ceiling(value: int) -> tuple[int, int]:
    """The smallest 1, 2, 4, 8... times B, KiB or MiB at or above ``value``, and the unit."""
    unit = 1 if value < 1024 else 1024 if value < 2**20 else 2**20
    top = 1
    while top * unit < value:
        top *= 2
    return top * unit, unit


def tick(value: int, unit: int) -> str:
    """``value`` in whole ``unit``s: ``"4 KiB"``."""
    return _(w.TICK_UNITS[unit]).format(n=value // unit)
