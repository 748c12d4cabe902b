"""The lines above the legend: the step, its kind and backward call, the error (if the
step is one), and for files (which have no text beside the frame) the caption.

>>> import torch, gradgraph
>>> from gradgraph.layout import build_graph
>>> from gradgraph.scene import scenes
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     loss = x.exp().sum()
...     loss.backward()
>>> events = rec.events; rec.close()
>>> header = Header(len(events), width=600, with_caption=False)
>>> header.lines(scenes(events, build_graph(events))[4])
[('step', 'step 5 of 9  ·  BACKWARD  ·  backward call 1 of 1: loss')]
"""

from __future__ import annotations

from .events import EventKind
from .fonts import wrap
from .picture import Picture, Text
from .scene import Scene
from .style import HEADER, INK, LINE, MARGIN, VERMILLION

__all__ = ["Header"]


class Header:
    """Header lines of a film of ``steps`` events in a frame ``width`` wide."""

    def __init__(self, steps: int, width: float, with_caption: bool) -> None:
        self.steps = steps
        self.width = width
        self.with_caption = with_caption

    def __repr__(self) -> str:
        return f"Header({self.steps} steps, {self.width:.0f} px)"

    def lines(self, scene: Scene) -> list[tuple[str, str]]:
        """``(style, text)`` lines above the legend: the step, the error, the caption."""
        call = ""
        if scene.call is not None:
            call = f"  ·  backward call {scene.call.number} of {scene.calls}: {scene.call.loss}"
        lines = [
            (
                "step",
                f"step {scene.step + 1} of {self.steps}  ·  {scene.event.kind.value.upper()}{call}",
            )
        ]
        e = scene.event
        room = self.width - 2 * MARGIN
        if e.kind is EventKind.ERROR:
            where = f" at {e.details['failed_node']}" if e.details.get("failed_node") else ""
            message = e.details["message"].split(". ")[0].strip()
            text = f"✗ {e.details['type']} in {e.details['op']}{where}: {message}"
            lines += [("error", line) for line in wrap(text, room, HEADER, bold=True)]
        if self.with_caption:
            lines += [("caption", line) for line in wrap(scene.caption, room, HEADER)]
        return lines

    def draw(self, picture: Picture, scene: Scene) -> None:
        """The header lines of ``scene`` from the frame's top margin down."""
        y = MARGIN + HEADER
        colours = {"step": (INK, True), "error": (VERMILLION, True), "caption": (INK, False)}
        for style, text in self.lines(scene):
            colour, bold = colours[style]
            picture.items.append(Text(MARGIN, y, text, HEADER, "header", colour, bold))
            y += HEADER * LINE
