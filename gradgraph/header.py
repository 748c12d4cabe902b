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

from autograder.i18n import gettext as _

from . import wording as w
from .captions import first_sentence
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
        e = scene.event
        room = self.width - 2 * MARGIN
        step = {"step": scene.step + 1, "steps": self.steps, "kind": _(w.EVENT_KINDS[e.kind.value])}
        if scene.call is None:
            text = _(w.HEADER_STEP).format(**step)
        else:
            call = {"call": scene.call.number, "calls": scene.calls, "loss": scene.call.loss}
            text = _(w.HEADER_STEP_IN_CALL).format(**step, **call)
        lines = [("step", line) for line in wrap(text, room, HEADER, bold=True)]
        if e.kind is EventKind.ERROR:
            d = e.details
            error = {"error": d["type"], "op": d["op"], "message": first_sentence(d["message"])}
            if d.get("failed_node"):
                text = _(w.HEADER_ERROR_AT).format(node=d["failed_node"], **error)
            else:
                text = _(w.HEADER_ERROR).format(**error)
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
