"""Frames of one recording: laid out once, each drawn on first use, then cached as PNG.

Scrubbing back to a frame already drawn costs one dictionary lookup.

>>> import torch, gradgraph
>>> from gradgraph.frames import FrameStore
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> frames = FrameStore(rec.events); rec.close()
>>> png = frames.frame(0)
>>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", frames.frame(0) is png
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence

from . import render
from .events import Event
from .layout import layout
from .scene import Scene, scene_at

__all__ = ["FrameStore"]


class FrameStore:
    """The frames of ``events``; ValueError for an empty recording."""

    def __init__(self, events: Sequence[Event], projector: bool = False) -> None:
        if not events:
            raise ValueError(
                "Nothing to show: the recording has no events. Run PyTorch code on tensors with "
                "requires_grad=True inside `with gradgraph.record() as rec:`, then call "
                "rec.play() (or rec.to_html(), rec.save(path)) after the block."
            )
        self.events = tuple(events)
        self.graph = layout(self.events)
        self.projector = projector
        self.style = render.Style.choose(projector, self.graph.size[0])
        self._painter: render.Painter | None = None
        self._frames: dict[int, bytes] = {}

    def __repr__(self) -> str:
        return f"FrameStore({len(self.events)} events, {len(self._frames)} cached)"

    def __len__(self) -> int:
        return len(self.events)

    def scene(self, step: int) -> Scene:
        """The state shown at ``step``."""
        return scene_at(self.events, self.graph, step)

    def frame(self, step: int) -> bytes:
        """PNG bytes of ``step`` (drawn on first use, then cached)."""
        png = self._frames.get(step)
        if png is None:
            if self._painter is None:
                self._painter = render.Painter(self.events, self.graph, self.style)
            png = self._frames[step] = render.render_frame(self._painter, self.scene(step))
        return png
