"""Export a recording's frames: a self-contained HTML player, a GIF, or a PNG strip.

The HTML player shows one recording, or several side by side under one slider (each
column stays on its last frame once its recording has ended).

>>> import torch, gradgraph
>>> x = torch.ones(2, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> page = rec.to_html(); rec.close()
>>> page.count("data:image/svg+xml;base64,") == len(rec.events)
True
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import json
from collections.abc import Sequence
from pathlib import Path

from PIL import Image

from . import wording as w
from .frames import FrameStore

__all__ = ["save", "to_html"]

_ids = itertools.count()
_STRIP_COLUMNS = 4

_SCRIPT = """
(function () {
  var root = document.getElementById(%(id)s), captions = %(captions)s, timer = null;
  var words = %(words)s;
  var columns = root.querySelectorAll(".gradgraph-column"), slider = root.querySelector("input");
  var button = root.querySelector(".play"), last = +slider.max;
  function show(i) {
    i = Math.max(0, Math.min(last, i));
    columns.forEach(function (column, c) {
      var k = Math.min(i, captions[c].length - 1);
      column.querySelectorAll("img").forEach(function (f, j) {
        f.style.display = j === k ? "block" : "none";
      });
      column.querySelector(".caption").textContent = captions[c][k];
    });
    slider.value = i;
  }
  function stop() { clearInterval(timer); timer = null; button.textContent = words.play; }
  button.onclick = function () {
    if (timer) { stop(); return; }
    this.textContent = words.pause;
    timer = setInterval(function () {
      if (+slider.value >= last) { stop(); } else { show(+slider.value + 1); }
    }, 700);
  };
  root.querySelector(".back").onclick = function () { show(+slider.value - 1); };
  root.querySelector(".next").onclick = function () { show(+slider.value + 1); };
  root.querySelector(".reset").onclick = function () { stop(); show(0); };
  slider.oninput = function () { show(+slider.value); };
  show(0);
})();
"""


def to_html(*stores: FrameStore, titles: Sequence[str] = ()) -> str:
    """An HTML fragment with every frame embedded (base64 SVG) and a few lines of JS.

    Several stores are shown side by side, one column each, headed by ``titles``.
    """
    element_id = f"gradgraph-{next(_ids)}"
    steps = max(len(store) for store in stores)
    width = f"{100 / len(stores):.4g}%"
    columns = "".join(
        _column(store, title, width)
        for store, title in itertools.zip_longest(stores, titles[: len(stores)])
    )
    captions = json.dumps(
        [[store.scene(i).caption for i in range(len(store))] for store in stores]
    ).replace("</", "<\\/")
    buttons = {
        "play": w.CONTROL_PLAY,
        "back": w.CONTROL_BACK,
        "next": w.CONTROL_NEXT,
        "reset": w.CONTROL_RESET,
    }
    controls = (
        "".join(
            f'<button class="{name}">{html.escape(label)}</button>'
            for name, label in buttons.items()
        )
        + f'<input type="range" min="0" max="{steps - 1}" value="0" style="width:60%">'
    )
    words = json.dumps({"play": w.CONTROL_PLAY, "pause": w.CONTROL_PAUSE})
    script = _SCRIPT % {"id": json.dumps(element_id), "captions": captions, "words": words}
    return (
        f'<div id="{element_id}" class="gradgraph-player"><div>{controls}</div>'
        f'<div style="display:flex;gap:1em;align-items:flex-start">{columns}</div>'
        f"<script>{script}</script></div>"
    )


def _column(store: FrameStore, title: str | None, width: str) -> str:
    size = "1.6em" if store.projector else "1.1em"
    heading = (
        f'<div class="title" style="font-size:{size};font-weight:bold">{html.escape(title)}</div>'
        if title
        else ""
    )
    images = "".join(
        f'<img alt="{html.escape(w.FRAME_ALT.format(step=i + 1))}" '
        'style="display:none;max-width:100%" '
        f'src="data:image/svg+xml;base64,{_base64(store.svg(i).encode())}">'
        for i in range(len(store))
    )
    return (
        f'<div class="gradgraph-column" style="flex:1 1 {width};min-width:0">{heading}{images}'
        f'<div class="caption" style="font-size:{size}"></div></div>'
    )


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def save(store: FrameStore, path: str | Path) -> Path:
    """Write a GIF (``.gif``, 700 ms a frame) or a PNG strip (``.png``, frames in rows of 4)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in {".gif", ".png"}:
        raise ValueError(
            f"cannot save a recording to {str(path)!r}: use a .gif (animation) or .png (strip) path"
        )
    images = [Image.open(io.BytesIO(store.frame(i))).convert("RGB") for i in range(len(store))]
    if suffix == ".gif":
        images[0].save(path, save_all=True, append_images=images[1:], duration=700, loop=0)
    else:
        _strip(images).save(path)
    return path


def _strip(images: list[Image.Image]) -> Image.Image:
    width, height = images[0].size
    columns = min(_STRIP_COLUMNS, len(images))
    rows = -(-len(images) // columns)
    sheet = Image.new("RGB", (columns * width, rows * height), "white")
    for i, image in enumerate(images):
        sheet.paste(image, ((i % columns) * width, (i // columns) * height))
    return sheet
