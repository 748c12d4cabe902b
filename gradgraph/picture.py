"""One frame as a list of shapes and texts in pixels, before it becomes SVG or PNG.

Every box is sized for the largest text it will show during the whole film (see
:class:`Film`), so boxes and texts never move; every state is drawn where it happens
and never by colour alone: a node that ran in backward is filled and its name starts
with ✓; its saved tensors ("saved 2 · 24 B"), freed ones ("freed 2 · 24 B", struck
through), the norm of what ``.grad`` holds ("grad 0.989"), the last hook fired on it
(⚑) and a failure (✗) are lines inside its box; the current event's node has a thick
outline. The legend lists only what the film uses.

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
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field

from .captions import format_bytes
from .events import Event, EventKind
from .fonts import text_width
from .layout import GraphLayout, build_graph, components, layout
from .scene import Scene, scenes

__all__ = ["Film", "Picture", "Rect", "Polyline", "Polygon", "Text"]

# Okabe-Ito, safe for the common colour-vision deficiencies.
ORANGE, GREEN, BLUE, VERMILLION, PURPLE, GREY, INK = (
    "#E69F00",
    "#009E73",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#8A8A8A",
    "#222222",
)
RAN_FILL, FAILED_FILL, GROUP_FILL = "#D9F2EA", "#FBE1D2", "#F3F3F3"
MARGIN = 12.0
PAD = 7.0  # inside a node box
TITLE, SMALL, HEADER = 12.5, 10.5, 13.5  # font sizes in pixels
LINE = 1.3  # line height, in font sizes
ARROW = (8.0, 4.0)  # arrowhead length and half width
MEMORY_HEIGHT = 64.0
MIN_WIDTH = 600.0
ROWS = ("saved", "grad", "hook", "failed")

# What a node class does, where its name does not say it plainly.
GLOSS = {
    "AccumulateGrad": "leaf",
    "TBackward0": "transpose (Wᵀ)",
    "AddmmBackward0": "x·Wᵀ + b",
    "MmBackward0": "matrix product",
    "MvBackward0": "matrix · vector",
    "BackwardHookFunctionBackward": "module hook point",
    "CloneBackward0": "copy",
    "ViewBackward0": "reshape",
    "ReshapeAliasBackward0": "reshape",
    "ExpandBackward0": "broadcast",
    "UnsafeViewBackward0": "reshape",
}


@dataclass(frozen=True, slots=True)
class Rect:
    x0: float
    y0: float
    x1: float
    y1: float
    role: str
    fill: str = "none"
    stroke: str = "none"
    stroke_width: float = 1.0
    radius: float = 0.0
    dashed: bool = False


@dataclass(frozen=True, slots=True)
class Polyline:
    points: tuple[tuple[float, float], ...]
    role: str
    color: str = GREY
    width: float = 1.3
    dashed: bool = False
    edge: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Polygon:
    points: tuple[tuple[float, float], ...]
    role: str
    color: str = GREY
    edge: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Text:
    """One line of text; ``(x, y)`` is the left end of its baseline."""

    x: float
    y: float
    text: str
    size: float
    role: str
    color: str = INK
    bold: bool = False
    struck: bool = False

    @property
    def width(self) -> float:
        return text_width(self.text, self.size, self.bold)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        return (self.x, self.y - self.size * 0.8, self.x + self.width, self.y + self.size * 0.25)


@dataclass
class Picture:
    """The shapes of one frame, back to front."""

    width: float
    height: float
    items: list[Rect | Polyline | Polygon | Text] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Picture({self.width:.0f}x{self.height:.0f}, {len(self.items)} items)"

    def texts(self, role: str | None = None) -> Iterator[Text]:
        """The texts, or those of one role ("node", "group", "header", "legend", ...)."""
        return (i for i in self.items if isinstance(i, Text) and role in (None, i.role))


def _shape(shape: tuple | None) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def _wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """Greedy word wrap by measured width."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size, bold) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines or [""]


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
        self.with_caption = with_caption
        self.subtitles = {g: self._subtitle(g) for g in self.graph.labels}
        self.rows = self._rows()
        self.layout: GraphLayout = layout(self.graph, self._sizes())
        self._component = components(self.graph)
        self.width = max(self.layout.width + 2 * MARGIN, MIN_WIDTH)
        self.legend = self._legend_items()
        self._header_lines = max((len(self._header(s)) for s in self.scenes), default=1)
        self._legend_rows = self._legend_layout()
        top = MARGIN + self._header_lines * HEADER * LINE + len(self._legend_rows) * SMALL * 1.9
        self.graph_origin = ((self.width - self.layout.width) / 2, top + 6)
        self.memory_top = self.graph_origin[1] + self.layout.height + 18
        self.height = self.memory_top + SMALL * 1.6 + MEMORY_HEIGHT + MARGIN
        self._peaks = self._running_peaks()

    def __repr__(self) -> str:
        return f"Film({len(self.events)} events, {self.layout!r})"

    def __len__(self) -> int:
        return len(self.events)

    # -- fixed for the film ------------------------------------------------------------

    def _subtitle(self, g: int) -> str:
        e = self.graph.nodes[g]
        if g in self.graph.folded:
            return "folded module"
        if e.details.get("leaf"):
            kind = "parameter" if e.details.get("parameter") else "leaf"
            return f"{kind} · {_shape(e.details.get('shape'))}"
        what = GLOSS.get(e.details.get("grad_fn") or e.name)
        if what is None:
            what = f"{e.details['op']}()" if e.details.get("op") else "operation"
        return f"{what} · {_shape(e.details.get('shape'))}"

    def _rows(self) -> dict[int, tuple[str, ...]]:
        """Which status lines each node's box keeps room for (it will need them)."""
        last = self.scenes[-1]
        has = {
            "saved": set(last.saved) | set(last.freed),
            "grad": set(last.grads),
            "hook": set(last.hooks),
            "failed": {s.failed for s in self.scenes if s.failed is not None},
        }
        return {g: tuple(r for r in ROWS if g in has[r]) for g in self.graph.labels}

    def node_lines(self, g: int, scene: Scene) -> list[tuple[str, str]]:
        """``(row, text)`` of each line of node ``g``'s box in ``scene``."""
        runs = scene.ran.get(g, 0)
        mark = "" if not runs else "✓ " if runs == 1 else f"✓×{runs} "
        lines = [("title", mark + self.graph.labels[g]), ("subtitle", self.subtitles[g])]
        for row in self.rows[g]:
            lines.append((row, self._row_text(row, g, scene)))
        return lines

    @staticmethod
    def _row_text(row: str, g: int, scene: Scene) -> str:
        if row == "saved":
            if g in scene.saved:
                n, nbytes = scene.saved[g]
                return f"saved {n} · {format_bytes(nbytes)}"
            if g in scene.freed:
                n, nbytes = scene.freed[g]
                return f"freed {n} · {format_bytes(nbytes)}"
            return ""
        if row == "grad":
            return f"grad {scene.grads[g]:.4g}" if g in scene.grads else ""
        if row == "hook":
            return f"⚑ {scene.hooks[g]}" if g in scene.hooks else ""
        return "✗ backward failed here" if scene.failed == g else ""

    def _sizes(self) -> dict[int, tuple[float, float]]:
        widths = {g: 0.0 for g in self.graph.labels}
        final = self.scenes[-1]
        seen = [s for s in self.scenes if s.current is not None] + [final]
        for scene in seen:
            for g in {scene.current} | (set(scene.present) if scene is final else set()):
                if g is None or g not in widths:
                    continue
                for row, text in self.node_lines(g, scene):
                    size, bold = (TITLE, True) if row == "title" else (SMALL, row != "subtitle")
                    widths[g] = max(widths[g], text_width(text, size, bold))
        runs = max(final.ran.values(), default=0)
        prefix = text_width("✓×2 " if runs > 1 else "✓ ", TITLE, True)
        return {
            g: (
                max(w, text_width(self.graph.labels[g], TITLE, True) + prefix) + 2 * PAD,
                2 * PAD + (TITLE + SMALL * (1 + len(self.rows[g]))) * LINE,
            )
            for g, w in widths.items()
        }

    def _legend_items(self) -> list[tuple[str, str]]:
        kinds = {e.kind for e in self.events}
        g = self.graph
        ops = set(g.labels) - g.leaves - g.folded - g.second_order
        wanted = [
            ("leaf", "leaf tensor (gets .grad)", bool(g.leaves)),
            ("op", "operation (grad_fn node)", bool(ops)),
            ("second", "made by backward (create_graph)", bool(g.second_order)),
            ("folded", "folded module", bool(g.folded)),
            ("group", "module", bool(self.layout.modules)),
            ("ran", "✓ ran in backward", EventKind.BACKWARD in kinds),
            ("edge", "→ forward; green: gradient went back", bool(g.edges)),
            ("now", "the current event", True),
        ]
        return [(key, text) for key, text, used in wanted if used]

    def _legend_layout(self) -> list[list[tuple[str, str, float]]]:
        rows: list[list[tuple[str, str, float]]] = [[]]
        x = MARGIN
        for key, text in self.legend:
            width = 22 + text_width(text, SMALL) + 14
            if x + width > self.width - MARGIN and rows[-1]:
                rows.append([])
                x = MARGIN
            rows[-1].append((key, text, x))
            x += width
        return rows

    def _header(self, scene: Scene) -> list[tuple[str, str]]:
        """``(style, text)`` lines above the legend: the step, the error, the caption."""
        call = ""
        if scene.call is not None:
            call = f"  ·  backward call {scene.call.number} of {scene.calls}: {scene.call.loss}"
        lines = [
            (
                "step",
                f"step {scene.step + 1} of {len(self.events)}  ·  "
                f"{scene.event.kind.value.upper()}{call}",
            )
        ]
        e = scene.event
        if e.kind is EventKind.ERROR:
            where = f" at {e.details['failed_node']}" if e.details.get("failed_node") else ""
            message = e.details["message"].split(". ")[0].strip()
            text = f"✗ {e.details['type']} in {e.details['op']}{where}: {message}"
            room = self.width - 2 * MARGIN
            lines += [("error", line) for line in _wrap(text, room, HEADER, bold=True)]
        if self.with_caption:
            room = self.width - 2 * MARGIN
            lines += [("caption", line) for line in _wrap(scene.caption, room, HEADER)]
        return lines

    def _running_peaks(self) -> list[int]:
        peaks, peak = [], 0
        for e in self.events:
            peak = max(peak, e.memory.saved_bytes, e.memory.allocator_bytes or 0)
            peaks.append(peak)
        return peaks

    # -- one frame -----------------------------------------------------------------------

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
        self._draw_header(picture, scene)
        self._draw_legend(picture)
        self._draw_modules(picture, scene)
        self._draw_edges(picture, scene)
        for g in sorted(scene.present):
            self._draw_node(picture, g, scene)
        self._draw_memory(picture, step)
        return picture

    def _draw_header(self, picture: Picture, scene: Scene) -> None:
        y = MARGIN + HEADER
        colours = {"step": (INK, True), "error": (VERMILLION, True), "caption": (INK, False)}
        for style, text in self._header(scene):
            colour, bold = colours[style]
            picture.items.append(Text(MARGIN, y, text, HEADER, "header", colour, bold))
            y += HEADER * LINE

    def _draw_legend(self, picture: Picture) -> None:
        y = MARGIN + self._header_lines * HEADER * LINE + SMALL * 1.2
        for row in self._legend_rows:
            for key, text, x in row:
                picture.items.extend(_swatch(key, x, y - SMALL * 0.85))
                picture.items.append(Text(x + 22, y, text, SMALL, "legend", "#444444"))
            y += SMALL * 1.9

    def _box(self, g: int) -> tuple[float, float, float, float]:
        (cx, cy), (w, h) = self.layout.positions[g], self.layout.sizes[g]
        ox, oy = self.graph_origin
        return (ox + cx - w / 2, oy + cy - h / 2, ox + cx + w / 2, oy + cy + h / 2)

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
                full = f"{module}  ⚑ {hook}"
                fits = text_width(full, SMALL, True) <= x1 - x0 - 12
                label = full if fits else f"{module} ⚑"
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

    def _draw_node(self, picture: Picture, g: int, scene: Scene) -> None:
        x0, y0, x1, y1 = self._box(g)
        graph = self.graph
        now, failed = g == scene.current, g == scene.failed
        stroke = ORANGE if g in graph.leaves else BLUE
        fill = FAILED_FILL if failed else RAN_FILL if scene.ran.get(g) else "white"
        picture.items.append(
            Rect(x0, y0, x1, y1, "node", fill=fill, stroke=VERMILLION if now or failed else stroke,
                 stroke_width=3.5 if now else 2.6 if g in graph.folded else 1.6,
                 radius=0 if g in graph.leaves else 7, dashed=g in graph.second_order)
        )  # fmt: skip
        y = y0 + PAD + TITLE
        looks = {
            "title": (TITLE, INK, True),
            "subtitle": (SMALL, "#555555", False),
            "saved": (SMALL, PURPLE, True),
            "grad": (SMALL, GREEN, True),
            "hook": (SMALL, VERMILLION, now),
            "failed": (SMALL, VERMILLION, True),
        }
        for row, text in self.node_lines(g, scene):
            size, colour, bold = looks[row]
            struck = row == "saved" and text.startswith("freed")
            if struck:
                colour, bold = GREY, False
            if text:
                picture.items.append(Text(x0 + PAD, y, text, size, "node", colour, bold, struck))
            y += (size if row != "title" else SMALL) * LINE

    def _draw_memory(self, picture: Picture, step: int) -> None:
        top, n = self.memory_top + SMALL * 1.6, len(self.events)
        left, right = MARGIN + 56, self.width - MARGIN
        bottom = top + MEMORY_HEIGHT - 16
        peak, unit = _binary_ceiling(self._peaks[step])
        axis = ((left, top), (left, bottom), (right, bottom))
        picture.items.append(Polyline(axis, "axis", GREY, 1))
        for value, label in ((0, "0"), (peak, _tick(peak, unit))):
            y = bottom - (bottom - top) * (value / peak if peak else 0)
            picture.items.append(Text(MARGIN, y + 4, label, SMALL * 0.95, "axis", "#555555"))

        def point(i: int, value: int) -> tuple[float, float]:
            x = left + (right - left) * (i + 1) / (n + 1)
            return (x, bottom - (bottom - top) * (value / peak if peak else 0))

        saved = [e.memory.saved_bytes for e in self.events[: step + 1]]
        line = [point(0, 0)]
        for i, value in enumerate(saved):
            line += [(point(i, value)[0], line[-1][1]), point(i, value)]
        picture.items.append(Polyline(tuple(line), "memory", PURPLE, 1.8))
        allocated = [e.memory.allocator_bytes for e in self.events[: step + 1]]
        if any(a is not None for a in allocated):
            picture.items.append(
                Polyline(tuple(point(i, a or 0) for i, a in enumerate(allocated)), "memory",
                         BLUE, 1.2, dashed=True)
            )  # fmt: skip
        x, y = point(step, saved[-1])
        picture.items.append(Polyline(((x, top), (x, bottom)), "cursor", VERMILLION, 1.5))
        now = f"held by saved tensors: {format_bytes(saved[-1])} now"
        if any(a is not None for a in allocated):
            now += f" (allocator, dashed: {format_bytes(allocated[-1] or 0)})"
        picture.items.append(Text(left, self.memory_top + SMALL, now, SMALL, "axis", PURPLE, True))


def _binary_ceiling(value: int) -> tuple[int, int]:
    """The smallest 1, 2, 4, 8... times B, KiB or MiB at or above ``value``, and the unit."""
    unit = 1 if value < 1024 else 1024 if value < 2**20 else 2**20
    top = 1
    while top * unit < value:
        top *= 2
    return top * unit, unit


def _tick(value: int, unit: int) -> str:
    return f"{value // unit} {({1: 'B', 1024: 'KiB', 2**20: 'MiB'})[unit]}"


def _swatch(key: str, x: float, y: float) -> list[Rect | Polyline | Polygon]:
    w, h = 16.0, 10.0
    looks = {
        "leaf": dict(stroke=ORANGE, stroke_width=1.6),
        "op": dict(stroke=BLUE, stroke_width=1.6, radius=3),
        "second": dict(stroke=BLUE, stroke_width=1.6, radius=3, dashed=True),
        "folded": dict(stroke=BLUE, stroke_width=2.6, radius=3),
        "group": dict(fill=GROUP_FILL, stroke="#BBBBBB", radius=3),
        "ran": dict(fill=RAN_FILL, stroke=BLUE, stroke_width=1.6, radius=3),
        "now": dict(stroke=VERMILLION, stroke_width=3, radius=3),
    }
    if key == "edge":
        return [
            Polyline(((x, y + h / 2), (x + w - 6, y + h / 2)), "legend", GREY, 1.3),
            Polygon(((x + w, y + h / 2), (x + w - 6, y + 1), (x + w - 6, y + h - 1)), "legend"),
        ]
    return [Rect(x, y, x + w, y + h, "legend", **looks[key])]
