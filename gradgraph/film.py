"""A whole recording as a film: what is fixed for every frame (graph, layout, frame size,
legend), then one :class:`~gradgraph.picture.Picture` per step.

>>> import torch, gradgraph
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> events = rec.events; rec.close()
>>> film = Film(events)
>>> picture = film.picture(len(events) - 1)
>>> [t.text for t in picture.texts("node") if t.text.startswith(("✓", "grad", "freed"))]
['✓ x', 'grad 4.708', '✓ ExpBackward0', 'freed 1 · 12 B', '✓ SumBackward0']
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from autograder.i18n import gettext as _

from . import wording as w
from .captions import hook_kind
from .events import Event
from .fonts import text_width
from .header import Header
from .layout import GraphLayout, build_graph, components, layout
from .legend import Legend, legend_items
from .memorystrip import MemoryStrip
from .nodebox import NodeBoxes
from .picture import Picture, Polygon, Polyline, Rect, Text
from .scene import Scene, scenes
from .style import (
    ARROW,
    GREEN,
    GREY,
    GROUP_FILL,
    HEADER,
    LINE,
    MARGIN,
    MIN_WIDTH,
    SMALL,
    VERMILLION,
)

__all__ = ["Film"]


class Film:
    """Everything fixed for a whole recording: graph, layout, frame size; then one
    :class:`Picture` per step. ``with_caption``: draw the caption into the frame (for
    GIF and PNG files, which have no text beside them)."""

    def __init__(
        self,
        events: Sequence[Event],
        with_caption: bool = False,
        fold: Collection[str] = (),
        max_nodes: int = 80,
    ) -> None:
        self.events = tuple(events)
        self.graph = build_graph(self.events, max_nodes=max_nodes, fold=fold)
        self.scenes = scenes(self.events, self.graph)
        self.boxes = NodeBoxes(self.graph, self.scenes)
        self.layout: GraphLayout = layout(self.graph, self.boxes.sizes())
        self._component = components(self.graph)
        self.width = max(self.layout.width + 2 * MARGIN, MIN_WIDTH)
        self.header = Header(len(self.events), self.width, with_caption)
        self.legend = Legend(legend_items(self.events, self.layout), self.width)
        header_lines = max((len(self.header.lines(s)) for s in self.scenes), default=1)
        self._legend_top = MARGIN + header_lines * HEADER * LINE
        top = self._legend_top + self.legend.height
        self.graph_origin = ((self.width - self.layout.width) / 2, top + 6)
        self.memory = MemoryStrip(
            self.events, self.width, self.graph_origin[1] + self.layout.height + 18
        )
        self.height = self.memory.top + self.memory.height + MARGIN

    def __repr__(self) -> str:
        return f"Film({len(self.events)} events, {self.layout!r})"

    def __len__(self) -> int:
        return len(self.events)

    def picture(self, step: int) -> Picture:
        """The frame after ``events[step]``."""
        if not 0 <= step < len(self.events):
            raise IndexError(
                f"step {step} is outside the recording's {len(self.events)} events "
                f"(0..{len(self.events) - 1})"
            )
        scene = self.scenes[step]
        picture = Picture(self.width, self.height)
        picture.items.append(Rect(0, 0, self.width, self.height, "background", fill="white"))
        self.header.draw(picture, scene)
        self.legend.draw(picture, self._legend_top)
        self._draw_modules(picture, scene)
        self._draw_edges(picture, scene)
        for g in sorted(scene.present):
            self.boxes.draw(picture, g, self.box(g), scene)
        self.memory.draw(picture, step)
        return picture

    def box(self, g: int) -> tuple[float, float, float, float]:
        """Node ``g``'s box in the frame: left, top, right, bottom (the same at every step)."""
        (cx, cy), (width, height) = self.layout.positions[g], self.layout.sizes[g]
        ox, oy = self.graph_origin
        left, top = ox + cx - width / 2, oy + cy - height / 2
        return (left, top, left + width, top + height)

    def _draw_modules(self, picture: Picture, scene: Scene) -> None:
        ox, oy = self.graph_origin
        frames = sorted(
            self.layout.modules.items(), key=lambda m: -(m[1][2] - m[1][0]) * (m[1][3] - m[1][1])
        )
        for (module, component), (x0, y0, x1, y1) in frames:
            members = [
                g
                for g, m in self.graph.module_of.items()
                if m == module and self._component[g] == component
            ]
            if not any(g in scene.present for g in members):
                continue
            now = scene.current_module == module
            picture.items.append(
                Rect(ox + x0, oy + y0, ox + x1, oy + y1, "group", fill=GROUP_FILL,
                     stroke=VERMILLION if now else "#BBBBBB", stroke_width=3 if now else 1,
                     radius=6)
            )  # fmt: skip
            label = module
            hook = scene.module_hooks.get(module)
            if hook is not None:
                full = _(w.MODULE_HOOK).format(module=module, kind=hook_kind(hook))
                fits = text_width(full, SMALL, True) <= x1 - x0 - 12
                label = full if fits else _(w.MODULE_HOOK_SHORT).format(module=module)
            colour = VERMILLION if now else "#555555"
            picture.items.append(Text(ox + x0 + 6, oy + y0 + SMALL + 3, label, SMALL, "group",
                                      colour, True))  # fmt: skip

    def _draw_edges(self, picture: Picture, scene: Scene) -> None:
        ox, oy = self.graph_origin
        for (a, b), route in self.layout.routes.items():
            if a not in scene.present or b not in scene.present:
                continue
            back = scene.ran.get(b, 0) > 0
            colour, width = (GREEN, 2.2) if back else (GREY, 1.3)
            points = [(ox + x, oy + y) for x, y in route]
            (px, py), (tx, ty) = points[-2], points[-1]
            length = math.hypot(tx - px, ty - py) or 1.0
            ux, uy = (tx - px) / length, (ty - py) / length
            base = (tx - ux * ARROW[0], ty - uy * ARROW[0])
            picture.items.append(Polyline((*points[:-1], base), "edge", colour, width, edge=(a, b)))
            left = (base[0] - uy * ARROW[1], base[1] + ux * ARROW[1])
            right = (base[0] + uy * ARROW[1], base[1] - ux * ARROW[1])
            picture.items.append(Polygon(((tx, ty), left, right), "arrowhead", colour, edge=(a, b)))
