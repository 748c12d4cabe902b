"""Export a recording's frames: a self-contained HTML player, a GIF, or a PNG strip.

>>> import torch, gradgraph
>>> x = torch.ones(2, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> page = rec.to_html(); rec.close()
>>> page.count("data:image/png;base64,") == len(rec.events)
True
"""

from __future__ import annotations

import base64
import io
import itertools
import json
from pathlib import Path

from PIL import Image

from .frames import FrameStore

__all__ = ["save", "to_html"]

_ids = itertools.count()
_STRIP_COLUMNS = 4

_SCRIPT = """
(function () {
  var root = document.getElementById(%(id)s), captions = %(captions)s, timer = null;
  var frames = root.querySelectorAll("img"), slider = root.querySelector("input");
  var label = root.querySelector(".caption"), button = root.querySelector(".play");
  function show(i) {
    i = Math.max(0, Math.min(frames.length - 1, i));
    frames.forEach(function (f, k) { f.style.display = k === i ? "block" : "none"; });
    slider.value = i; label.textContent = captions[i];
  }
  function stop() { clearInterval(timer); timer = null; button.textContent = "play"; }
  button.onclick = function () {
    if (timer) { stop(); return; }
    this.textContent = "pause";
    timer = setInterval(function () {
      if (+slider.value >= frames.length - 1) { stop(); } else { show(+slider.value + 1); }
    }, 700);
  };
  root.querySelector(".back").onclick = function () { show(+slider.value - 1); };
  root.querySelector(".next").onclick = function () { show(+slider.value + 1); };
  root.querySelector(".reset").onclick = function () { stop(); show(0); };
  slider.oninput = function () { show(+slider.value); };
  show(0);
})();
"""


def to_html(store: FrameStore) -> str:
    """An HTML fragment with every frame embedded (base64 PNG) and a few lines of JS."""
    element_id = f"gradgraph-{next(_ids)}"
    images = "".join(
        f'<img alt="step {i + 1}" style="display:none;max-width:100%" '
        f'src="data:image/png;base64,{base64.b64encode(store.frame(i)).decode("ascii")}">'
        for i in range(len(store))
    )
    captions = json.dumps([store.scene(i).caption for i in range(len(store))]).replace("</", "<\\/")
    size = "1.6em" if store.projector else "1.1em"
    controls = (
        '<button class="play">play</button><button class="back">◀ step back</button>'
        '<button class="next">step ▶</button><button class="reset">reset</button>'
        f'<input type="range" min="0" max="{len(store) - 1}" value="0" style="width:60%">'
    )
    script = _SCRIPT % {"id": json.dumps(element_id), "captions": captions}
    return (
        f'<div id="{element_id}" class="gradgraph-player"><div>{controls}</div>{images}'
        f'<div class="caption" style="font-size:{size}"></div><script>{script}</script></div>'
    )


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
