"""An ipywidgets player for a recording: play/pause, step, scrub, speed, reset.

One source of state: ``slider.value``, the current event. The Play widget is linked to
it, every button only changes it, and one observer shows the frame and caption for it
(frames are cached PNGs, so scrubbing back is instant).

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
from typing import Any

import ipywidgets as widgets

from .frames import FrameStore

__all__ = ["Player"]

_SPEEDS = [("0.5x", 1400), ("1x", 700), ("2x", 350), ("4x", 175)]


class Player:
    """Widget that replays the frames of a recording; display it in a notebook cell."""

    def __init__(self, frames: FrameStore) -> None:
        self.frames = frames
        last = len(frames) - 1
        self.slider = widgets.IntSlider(
            value=0,
            min=0,
            max=last,
            description="event",
            continuous_update=True,
            layout=widgets.Layout(width="95%"),
        )
        self.play = widgets.Play(value=0, min=0, max=last, interval=700, description="play/pause")
        self.speed = widgets.Dropdown(
            options=_SPEEDS, value=700, description="speed", layout=widgets.Layout(width="160px")
        )
        widgets.link((self.play, "value"), (self.slider, "value"))
        widgets.link((self.speed, "value"), (self.play, "interval"))
        self.back = widgets.Button(description="◀ step back")
        self.forward = widgets.Button(description="step ▶")
        self.restart = widgets.Button(description="reset")
        self.back.on_click(lambda _: self.step_back())
        self.forward.on_click(lambda _: self.step_forward())
        self.restart.on_click(lambda _: self.reset())
        self.image = widgets.Image(format="png")
        self.caption = widgets.HTML()
        self.slider.observe(self._show, names="value")
        self._show({"new": 0})
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.play, self.back, self.forward, self.restart, self.speed]),
                self.slider,
                self.image,
                self.caption,
            ]
        )

    def __repr__(self) -> str:
        return f"Player(step {self.slider.value}/{self.slider.max}, {self.frames!r})"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        """The live widget for JupyterLab, and the same animation as self-contained HTML: what
        nbconvert's HTML export shows, playing with no kernel."""
        from .export import to_html

        return {**self.widget._repr_mimebundle_(**kwargs), "text/html": to_html(self.frames)}

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
        step = change["new"]
        self.image.value = self.frames.frame(step)
        size = "1.6em" if self.frames.projector else "1.1em"
        text = html.escape(self.frames.scene(step).caption)
        self.caption.value = f"<div style='font-size:{size}; line-height:1.4'>{text}</div>"
