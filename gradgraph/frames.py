"""Frames of one recording: laid out once, each drawn on first use, then cached.

The player and the HTML page show SVG frames (crisp at any size; the caption is text
beside them); GIF and PNG files get PNG frames with the caption drawn in. Scrubbing
back to a frame already drawn costs one dictionary lookup.

>>> import torch, gradgraph
>>> from gradgraph.frames import FrameStore
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> frames = FrameStore(rec.events); rec.close()
>>> svg = frames.svg(0)
>>> svg.startswith("<svg"), frames.svg(0) is svg
(True, True)
>>> frames.frame(0)[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .events import Event
from .film import Film
from .inspector import facts_timeline
from .layout import GraphLayout
from .picture import Picture
from .raster import to_png
from .scene import Scene
from .svg import to_svg

__all__ = ["FrameStore"]

PROJECTOR_SCALE = 1.5


class FrameStore:
    """The frames of ``events``; ValueError for an empty recording.

    ``projector``: everything 1.5 times larger; ``fold``: top-level modules drawn as one
    box each (every module is folded when the graph has more than 80 nodes).
    """

    def __init__(
        self, events: Sequence[Event], projector: bool = False, fold: Collection[str] = ()
    ) -> None:
        if not events:
            raise ValueError(
                "Nothing to show: the recording has no events. Run PyTorch code on tensors with "
                "requires_grad=True inside `with gradgraph.record() as rec:`, then call "
                "rec.play() (or rec.to_html(), rec.save(path)) after the block."
            )
        self.events = tuple(events)
        self.projector = projector
        self.fold = tuple(fold)
        self.scale = PROJECTOR_SCALE if projector else 1.0
        self.film = Film(self.events, fold=self.fold)
        self._file_film: Film | None = None
        self._svgs: dict[int, str] = {}
        self._pngs: dict[int, bytes] = {}
        self._facts: dict[int, list[tuple[int, str]]] = {}

    def __repr__(self) -> str:
        return f"FrameStore({len(self.events)} events, {len(self._svgs)} cached)"

    def __len__(self) -> int:
        return len(self.events)

    @property
    def graph(self) -> GraphLayout:
        """Where every node goes (fixed for the whole recording)."""
        return self.film.layout

    def scene(self, step: int) -> Scene:
        """The state shown at ``step``."""
        if not 0 <= step < len(self.events):
            self.film.picture(step)  # raises IndexError with the range
        return self.film.scenes[step]

    def picture(self, step: int) -> Picture:
        """The shapes and texts of ``step`` (what the picture checks inspect)."""
        return self.film.picture(step)

    def facts(self, g: int) -> list[tuple[int, str]]:
        """What the inspector says about displayed node ``g``: ``(step, facts)`` at each step
        where it changes (see :func:`gradgraph.inspector.facts_timeline`; cached)."""
        timeline = self._facts.get(g)
        if timeline is None:
            timeline = self._facts[g] = facts_timeline(self.film, g)
        return timeline

    def svg(self, step: int) -> str:
        """SVG of ``step``, for the player and the HTML page (drawn once, then cached)."""
        svg = self._svgs.get(step)
        if svg is None:
            svg = self._svgs[step] = to_svg(self.film.picture(step), self.scale)
        return svg

    def frame(self, step: int) -> bytes:
        """PNG bytes of ``step`` with its caption drawn in, for files (cached)."""
        png = self._pngs.get(step)
        if png is None:
            if self._file_film is None:
                self._file_film = Film(self.events, with_caption=True, fold=self.fold)
            png = self._pngs[step] = to_png(self._file_film.picture(step), self.scale)
        return png
