"""Save a recording's frames to a file: a GIF, or a PNG strip (the caption drawn in each
frame). The HTML page is :mod:`gradgraph.page`.

>>> import tempfile, torch, gradgraph
>>> from PIL import Image
>>> x = torch.ones(2, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> with tempfile.TemporaryDirectory() as folder:
...     with Image.open(rec.save(f"{folder}/film.gif")) as gif:
...         gif.n_frames == len(rec.events)
True
>>> rec.close()
"""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from .frames import FrameStore

__all__ = ["save"]

_STRIP_COLUMNS = 4


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
