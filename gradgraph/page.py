"""The self-contained HTML player: every frame embedded as an SVG, a few lines of plain
JavaScript, no kernel, no network.

It shows one recording, or several side by side under one slider (each column stays on its
last frame once its recording has ended). Under each frame, the node inspector says what
the player's *inspect* menu says: pick a node in the menu, or click its box in the picture.

>>> import torch, gradgraph
>>> x = torch.ones(2, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> page = rec.to_html(); rec.close()
>>> page.count("data:image/svg+xml;base64,") == len(rec.events)
True
>>> page.count('class="hit"')  # a clickable box over each node: x, ExpBackward0, SumBackward0
3
"""

from __future__ import annotations

import base64
import html
import itertools
import json
from collections.abc import Sequence
from typing import Any

from autograder.i18n import gettext as _

from . import wording as w
from .frames import FrameStore

__all__ = ["to_html"]

_ids = itertools.count()

_SCRIPT = """
(function () {
  var root = document.getElementById(%(id)s), captions = %(captions)s, facts = %(facts)s;
  var words = %(words)s, timer = null, shown = [];
  var columns = root.querySelectorAll(".gradgraph-column"), slider = root.querySelector("input");
  var button = root.querySelector(".play"), last = +slider.max;
  function inspect(column, c) {
    var picked = column.querySelector(".inspect").value, text = words.notMade;
    column.querySelectorAll(".hit").forEach(function (hit) {  // outline the picked box
      hit.style.outline = hit.getAttribute("data-node") === picked ? "2px dashed #0072B2" : "";
    });
    if (picked === "") { column.querySelector(".facts").textContent = ""; return; }
    facts[c][picked].forEach(function (change) {
      if (change[0] <= shown[c]) { text = change[1]; }
    });
    column.querySelector(".facts").textContent = text;
  }
  function show(i) {
    i = Math.max(0, Math.min(last, i));
    columns.forEach(function (column, c) {
      var k = Math.min(i, captions[c].length - 1);
      column.querySelectorAll("img").forEach(function (f, j) {
        f.style.display = j === k ? "block" : "none";
      });
      column.querySelector(".caption").textContent = captions[c][k];
      shown[c] = k;
      inspect(column, c);
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
  columns.forEach(function (column, c) {
    var menu = column.querySelector(".inspect");
    menu.onchange = function () { inspect(column, c); };
    column.querySelectorAll(".hit").forEach(function (hit) {
      hit.onclick = function () { menu.value = hit.getAttribute("data-node"); inspect(column, c); };
    });
  });
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
    buttons = {
        "play": _(w.CONTROL_PLAY),
        "back": _(w.CONTROL_BACK),
        "next": _(w.CONTROL_NEXT),
        "reset": _(w.CONTROL_RESET),
    }
    controls = "".join(
        f'<button class="{name}">{html.escape(label)}</button>' for name, label in buttons.items()
    )
    controls += f'<input type="range" min="0" max="{steps - 1}" value="0" style="width:60%">'
    captions = [[store.scene(i).caption for i in range(len(store))] for store in stores]
    script = _SCRIPT % {
        "id": json.dumps(element_id),
        "captions": _json(captions),
        "facts": _json([{g: store.facts(g) for g in store.film.graph.labels} for store in stores]),
        "words": _json(
            {
                "play": _(w.CONTROL_PLAY),
                "pause": _(w.CONTROL_PAUSE),
                "notMade": _(w.INSPECT_NOT_MADE),
            }
        ),
    }
    return (
        f'<div id="{element_id}" class="gradgraph-player"><div>{controls}</div>'
        f'<div style="display:flex;gap:1em;align-items:flex-start">{columns}</div>'
        f"<script>{script}</script></div>"
    )


def _json(value: Any) -> str:
    """``value`` as JSON that cannot end the page's script early."""
    return json.dumps(value).replace("</", "<\\/")


def _column(store: FrameStore, title: str | None, width: str) -> str:
    size = "1.6em" if store.projector else "1.1em"
    heading = (
        f'<div class="title" style="font-size:{size};font-weight:bold">{html.escape(title)}</div>'
        if title
        else ""
    )
    images = "".join(
        f'<img alt="{html.escape(_(w.FRAME_ALT).format(step=i + 1))}" '
        'style="display:none;max-width:100%" '
        f'src="data:image/svg+xml;base64,{_base64(store.svg(i).encode())}">'
        for i in range(len(store))
    )
    frames = (
        '<div class="frames" style="position:relative;display:inline-block;max-width:100%">'
        f"{images}{_hits(store)}</div>"
    )
    return (
        f'<div class="gradgraph-column" style="flex:1 1 {width};min-width:0">{heading}{frames}'
        f'<div class="caption" style="font-size:{size}"></div>{_inspector(store)}</div>'
    )


def _hits(store: FrameStore) -> str:
    """A clickable area over each node's box (positions are fixed for the whole film)."""
    film = store.film
    areas = []
    for g, label in film.graph.labels.items():
        x0, y0, x1, y1 = film.box(g)
        place = (
            f"left:{100 * x0 / film.width:.3f}%;top:{100 * y0 / film.height:.3f}%;"
            f"width:{100 * (x1 - x0) / film.width:.3f}%;"
            f"height:{100 * (y1 - y0) / film.height:.3f}%"
        )
        name = html.escape(_(w.INSPECT_HIT).format(name=label))
        areas.append(
            f'<div class="hit" data-node="{g}" role="button" aria-label="{name}" title="{name}" '
            f'style="position:absolute;{place};cursor:pointer"></div>'
        )
    return "".join(areas)


def _inspector(store: FrameStore) -> str:
    """The inspect menu (every node) and where its facts are shown."""
    option = _(w.INSPECT_OPTION)
    options = "".join(
        f'<option value="{g}">{html.escape(option.format(name=label, node=g))}</option>'
        for g, label in store.film.graph.labels.items()
    )
    return (
        f'<label class="inspector">{html.escape(_(w.INSPECT_LABEL))} <select class="inspect">'
        f'<option value="">{html.escape(_(w.INSPECT_PICK))}</option>{options}</select></label>'
        '<pre class="facts" style="font-size:0.9em;white-space:pre-wrap"></pre>'
    )


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
