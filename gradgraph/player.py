"""An ipywidgets player for recordings: play/pause, step, scrub, speed, reset.

One source of state: ``slider.value``, the current event. The Play widget is linked to
it, every button only changes it, and one observer shows the frame and caption for it
(frames are cached SVGs, so scrubbing back is instant). Under each frame, ``inspect``
picks a node: what it saved, the source line that made it, where its gradient goes next.
Several recordings can share one player, side by side (see :func:`gradgraph.side_by_side`);
each column stays on its last frame once its recording has ended.

>>> import torch, gradgraph
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> player = rec.play(); rec.close()
>>> player.step_forward(); player.slider.value
1
>>> player.caption.value
"<div ...>exp() made ExpBackward0 (output 3) at `x.exp().sum().backward()`.</div>"
>>> player.reset(); player.slider.value
0
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from autograder.i18n import gettext as _

from . import wording as w
from .frames import FrameStore
from .inspector import facts_at

__all__ = ["Player"]

_SPEEDS = [("0.5x", 1400), ("1x", 700), ("2x", 350), ("4x", 175)]


class _Column:
    """The frame, title and caption of one recording in a player."""

    def __init__(self, frames: FrameStore, title: str | None, width: str) -> None:
        self.frames = frames
        self.size = "1.6em" if frames.projector else "1.1em"
        self.image = widgets.Image(format="svg+xml", layout=widgets.Layout(max_width="100%"))
        self.caption = widgets.HTML()
        nodes = frames.film.graph.labels
        self.inspect = widgets.Dropdown(
            options=[(_(w.INSPECT_PICK), None)]
            + [(_(w.INSPECT_OPTION).format(name=label, node=g), g) for g, label in nodes.items()],
            description=_(w.INSPECT_LABEL),
            layout=widgets.Layout(width="320px"),
        )
        self.facts = widgets.HTML()
        self.step = 0
        self.inspect.observe(lambda _: self._show_facts(), names="value")
        parts: list[widgets.Widget] = [self.image, self.caption, self.inspect, self.facts]
        if title:
            heading = f"<b style='font-size:{self.size}'>{html.escape(title)}</b>"
            parts.insert(0, widgets.HTML(heading))
        self.box = widgets.VBox(parts, layout=widgets.Layout(width=width))

    def show(self, step: int) -> None:
        self.step = step = min(step, len(self.frames) - 1)
        self.image.value = self.frames.svg(step).encode()
        text = html.escape(self.frames.scene(step).caption)
        self.caption.value = f"<div style='font-size:{self.size}; line-height:1.4'>{text}</div>"
        self._show_facts()

    def _show_facts(self) -> None:
        """The inspector's facts about the picked node at the current step."""
        g = self.inspect.value
        facts = None if g is None else facts_at(self.frames.facts(g), self.step)
        if facts is None:
            self.facts.value = "" if g is None else f"<i>{html.escape(_(w.INSPECT_NOT_MADE))}</i>"
            return
        facts = html.escape(facts)
        self.facts.value = f"<pre style='font-size:0.9em; white-space:pre-wrap'>{facts}</pre>"


class Player:
    """Widget that replays the frames of one or more recordings; display it in a notebook cell.

    ``titles`` head the columns when several stores are shown side by side.
    """

    def __init__(self, *stores: FrameStore, titles: Sequence[str] = ()) -> None:
        if not stores:
            raise ValueError("a Player needs at least one recording's frames")
        last = max(len(store) for store in stores) - 1
        width = f"{100 / len(stores):.4g}%"
        self.titles = tuple(titles[: len(stores)])
        self.columns = [
            _Column(store, self.titles[i] if i < len(self.titles) else None, width)
            for i, store in enumerate(stores)
        ]
        self.frames = stores[0]
        self.image, self.caption = self.columns[0].image, self.columns[0].caption
        self.slider = widgets.IntSlider(
            value=0,
            min=0,
            max=last,
            description=_(w.CONTROL_EVENT),
            continuous_update=True,
            layout=widgets.Layout(width="95%"),
        )
        self.play = widgets.Play(
            value=0, min=0, max=last, interval=700, description=_(w.CONTROL_PLAY_PAUSE)
        )
        self.speed = widgets.Dropdown(
            options=_SPEEDS,
            value=700,
            description=_(w.CONTROL_SPEED),
            layout=widgets.Layout(width="160px"),
        )
        widgets.link((self.play, "value"), (self.slider, "value"))
        widgets.link((self.speed, "value"), (self.play, "interval"))
        self.back = widgets.Button(description=_(w.CONTROL_BACK))
        self.forward = widgets.Button(description=_(w.CONTROL_NEXT))
        self.restart = widgets.Button(description=_(w.CONTROL_RESET))
        self.back.on_click(lambda _: self.step_back())
        self.forward.on_click(lambda _: self.step_forward())
        self.restart.on_click(lambda _: self.reset())
        self.slider.observe(self._show, names="value")
        self._show({"new": 0})
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.play, self.back, self.forward, self.restart, self.speed]),
                self.slider,
                widgets.HBox([column.box for column in self.columns]),
            ]
        )

    def __repr__(self) -> str:
        stores = ", ".join(repr(column.frames) for column in self.columns)
        return f"Player(step {self.slider.value}/{self.slider.max}, {stores})"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """The live widget for JupyterLab, and the same animation as self-contained HTML: what
        nbconvert's HTML export shows, playing with no kernel."""
        return {**self.widget._repr_mimebundle_(**kwargs), "text/html": self.to_html()}

    def to_html(self) -> str:
        """The same player as a self-contained HTML fragment (see ``gradgraph.export``)."""
        from .page import to_html

        return to_html(*(column.frames for column in self.columns), titles=self.titles)

    def step_forward(self) -> None:
        """Show the next event (stays on the last one)."""
        self.slider.value = min(self.slider.value + 1, self.slider.max)

    def step_back(self) -> None:
        """Show the previous event (stays on the first one)."""
        self.slider.value = max(self.slider.value - 1, 0)

    def reset(self) -> None:
        """Stop playing and go back to the first event."""
        self.play.playing = False
        self.slider.value = 0

    def _show(self, change: dict) -> None:
        for column in self.columns:
            column.show(change["new"])
