"""Draw one frame of a recording with matplotlib (Agg), as PNG bytes.

Static parts (legend, memory plot) are drawn once; each frame restores them, blits the
moving shapes (edges, node markers, the current-event ring, the memory cursor) and
pastes text sprites. Drawing happens on the main thread only.

State is never shown by colour alone: leaves are squares, operations circles,
second-order nodes diamonds, folded modules hexagons; a node that ran in backward is
filled and its label starts with a check mark; saved tensors are a text badge
("2 saved"); gradients are written on the leaf ("grad 2.75"); the current event's node
has a thick ring and a "now" arrow. Colours come from the Okabe-Ito palette.

>>> import torch, gradgraph
>>> from gradgraph.layout import layout
>>> from gradgraph.scene import scene_at
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> events = rec.events; rec.close()
>>> graph = layout(events)
>>> painter = Painter(events, graph, Style.choose(projector=False, columns=graph.size[0]))
>>> render_frame(painter, scene_at(events, graph, 0))[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
True
"""

from __future__ import annotations

import io
import re
import textwrap
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator
from PIL import Image

from .captions import format_bytes
from .events import Event, EventKind
from .layout import GraphLayout
from .scene import Scene
from .sprites import TextSprites, paste

__all__ = ["Painter", "Style", "render_frame"]

# Okabe-Ito, safe for the common colour-vision deficiencies.
ORANGE, GREEN, BLUE, VERMILLION, PURPLE, GREY = (
    "#E69F00",
    "#009E73",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#999999",
)
LEGEND = (
    "square leaf · circle op · diamond 2nd-order · hexagon module · "
    "hollow: waiting · filled + ✓: ran in backward"
)
MARKERS = "shDo"
CROWDED = 20  # above this many displayed nodes, labels drop the "Backward0" suffix
MIN_FONT = 5.0


@dataclass(frozen=True)
class Style:
    """Figure size (inches), resolution and type sizes of the frames."""

    width: float = 8.0
    height: float = 6.0
    dpi: int = 80
    font: float = 9.0
    caption_chars: int = 95

    @classmethod
    def choose(cls, projector: bool, columns: float) -> Style:
        """Large type for a projector; a wider figure for a graph of many columns."""
        base = (
            cls(width=10.0, height=7.5, dpi=96, font=15.0, caption_chars=62) if projector else cls()
        )
        widen = min(max(columns * 0.5 / base.width, 1.0), 1.6)
        return replace(
            base, width=base.width * widen, caption_chars=int(base.caption_chars * widen)
        )


class Painter:
    """A persistent figure for one recording: background drawn once, moving parts blitted."""

    def __init__(self, events: Sequence[Event], graph: GraphLayout, style: Style) -> None:
        self.events, self.graph, self.style = events, graph, style
        self.fig = Figure(figsize=(style.width, style.height), dpi=style.dpi)
        self.canvas = FigureCanvasAgg(self.fig)
        self.sprites = TextSprites(style.dpi)
        self.fig.text(0.02, 0.925, LEGEND, fontsize=style.font * 0.75, color="#444444")
        self.graph_ax = self.fig.add_axes((0.06, 0.33, 0.9, 0.56))
        self.memory_ax = self.fig.add_axes((0.1, 0.06, 0.86, 0.13))
        self.height_px = int(self.fig.bbox.height)
        self._setup_graph_axes()
        self.node_pixels = {g: self.pixel(*xy) for g, xy in graph.positions.items()}
        self._setup_memory_axes()
        self.canvas.draw()
        self.background = self.canvas.copy_from_bbox(self.fig.bbox)

    def __repr__(self) -> str:
        return f"Painter({self.graph!r}, {self.sprites!r})"

    def pixel(self, x: float, y: float) -> tuple[float, float]:
        """Data point of the graph axes -> (column, row) from the frame's top left."""
        px, py = self.graph_ax.transData.transform((x, y))
        return px, self.height_px - py

    def points(self, pt: float) -> float:
        """Typographic points -> pixels."""
        return pt * self.style.dpi / 72

    def _setup_graph_axes(self) -> None:
        ax, graph = self.graph_ax, self.graph
        ax.set_axis_off()
        xs = [x for x, _ in graph.positions.values()] or [0.0]
        ys = [y for _, y in graph.positions.values()] or [0.0]
        ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
        ax.set_ylim(min(ys) - 0.6, max(ys) + 0.6)
        width, height = graph.size
        crowd = max(width / 7.0, height / 6.0, 1.0)
        self.marker_size = 260 * (self.style.font / 9.0) ** 2 / crowd
        self._fit_labels(self.style.font)
        self.edges = LineCollection([], colors=GREY, linewidths=1.0, zorder=1, animated=True)
        ax.add_collection(self.edges)
        self.markers = {
            m: ax.scatter(
                [], [], s=self.marker_size, marker=m, linewidths=2.0, zorder=2, animated=True
            )
            for m in MARKERS
        }
        self.ring = ax.scatter(
            [],
            [],
            s=self.marker_size * 2.2,
            marker="o",
            facecolors="none",
            edgecolors=VERMILLION,
            linewidths=3,
            zorder=3,
            animated=True,
        )

    def _fit_labels(self, wanted: float) -> None:
        """Pick the label size so that neighbouring columns' labels do not overlap.

        When labels are too wide for one column, odd columns put theirs one line lower.
        """
        short = len(self.graph.positions) > CROWDED
        self.labels = {
            g: (re.sub(r"Backward\d*$", "", label) or label) if short else label
            for g, label in self.graph.labels.items()
        }
        column_px = abs(self.pixel(1.0, 0.0)[0] - self.pixel(0.0, 0.0)[0])
        longest = max(self.labels.values(), key=len, default="")
        width_px = self.sprites.get(f"✓×2 {longest}", wanted).width + self.points(wanted)
        self.stagger = width_px > column_px
        room = column_px * (2 if self.stagger else 1)
        self.font = max(min(wanted, wanted * room / width_px), MIN_FONT)

    def _setup_memory_axes(self) -> None:
        ax, events, font = self.memory_ax, self.events, self.style.font
        steps = range(1, len(events) + 1)  # numbered like the caption: 1..n
        ax.step(
            steps,
            [e.memory.saved_bytes for e in events],
            where="post",
            color=PURPLE,
            linewidth=1.5,
            label="held by saved tensors",
        )
        allocator = [e.memory.allocator_bytes for e in events]
        if any(a is not None for a in allocator):
            ax.step(
                steps,
                [a or 0 for a in allocator],
                where="post",
                color=BLUE,
                linewidth=1.0,
                linestyle="--",
                label="allocator",
            )
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(int(v))))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(0.5, len(events) + 0.5)
        ax.set_xlabel("event", fontsize=font * 0.8, labelpad=1)
        ax.tick_params(labelsize=font * 0.75)
        ax.legend(loc="upper left", fontsize=font * 0.7, frameon=False)
        self.cursor = ax.axvline(0, color=VERMILLION, linewidth=1.5, animated=True)
        (self.cursor_dot,) = ax.plot(
            [], [], marker="v", color=VERMILLION, markersize=7, animated=True
        )


def render_frame(painter: Painter, scene: Scene) -> bytes:
    """Draw ``scene`` with ``painter``; return PNG bytes. RuntimeError off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError(
            "gradgraph draws only on the main thread (hooks may run on autograd's worker "
            f"thread); render_frame was called from {threading.current_thread().name!r}"
        )
    painter.canvas.restore_region(painter.background)
    _blit_shapes(painter, scene)
    frame = np.asarray(painter.canvas.buffer_rgba())
    _paste_texts(painter, scene, frame)
    buffer = io.BytesIO()
    Image.fromarray(frame, "RGBA").convert("RGB").save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def _marker(g: int, graph: GraphLayout) -> str:
    if g in graph.folded:
        return "h"
    if g in graph.leaves:
        return "s"
    return "D" if g in graph.second_order else "o"


def _blit_shapes(painter: Painter, scene: Scene) -> None:
    graph, present = painter.graph, scene.present
    painter.edges.set_segments(
        [
            (graph.positions[a], graph.positions[b])
            for a, b in graph.edges
            if a in present and b in present
        ]
    )
    for marker, artist in painter.markers.items():
        nodes = [g for g in present if _marker(g, graph) == marker]
        artist.set_offsets(np.array([graph.positions[g] for g in nodes]).reshape(-1, 2))
        artist.set_facecolors([GREEN if scene.ran.get(g) else "white" for g in nodes])
        artist.set_edgecolors([ORANGE if g in graph.leaves else BLUE for g in nodes])
    current = [graph.positions[scene.current]] if scene.current in present else []
    painter.ring.set_offsets(np.array(current).reshape(-1, 2))
    painter.cursor.set_xdata([scene.step + 1, scene.step + 1])
    painter.cursor_dot.set_data([scene.step + 1], [scene.event.memory.saved_bytes])
    for artist in (
        painter.edges,
        *painter.markers.values(),
        painter.ring,
        painter.cursor,
        painter.cursor_dot,
    ):
        painter.fig.draw_artist(artist)


def _label(painter: Painter, g: int, runs: int) -> str:
    return ("" if not runs else "✓ " if runs == 1 else f"✓×{runs} ") + painter.labels[g]


def _paste_texts(painter: Painter, scene: Scene, frame: np.ndarray) -> None:
    sprites, font, style = painter.sprites, painter.font, painter.style
    gap = painter.points(font * 1.3)
    for g in scene.present:
        column, _ = painter.graph.positions[g]
        x, y = painter.node_pixels[g]
        weight = "bold" if g == scene.current else "normal"
        lower = gap if painter.stagger and int(column) % 2 else 0.0
        paste(
            frame,
            sprites.get(_label(painter, g, scene.ran.get(g, 0)), font, "black", weight),
            x,
            y + gap + lower,
            ha="center",
            va="top",
        )
        if scene.saved.get(g):
            paste(
                frame,
                sprites.get(f"{scene.saved[g]} saved", font * 0.9, PURPLE, "bold"),
                x + gap * 0.8,
                y - gap * 0.4,
                ha="left",
                va="bottom",
            )
        if scene.grads.get(g) is not None and g not in painter.graph.folded:
            paste(
                frame,
                sprites.get(f"grad {scene.grads[g]:.3g}", font * 0.9, GREEN, "bold"),
                x,
                y - gap,
                ha="center",
                va="bottom",
            )
    if scene.current in scene.present:
        x, y = painter.node_pixels[scene.current]
        tag = "hook fired →" if scene.event.kind is EventKind.HOOK else "now →"
        paste(
            frame,
            sprites.get(tag, font, VERMILLION, "bold"),
            x - gap * 1.4,
            y,
            ha="right",
            va="center",
        )
    # Texts are split so that most are cached: the kind, the caption (the same for every
    # node of a kind), and a short step counter that changes every frame.
    title = sprites.get(scene.event.kind.value.upper(), style.font * 1.3, "black", "bold")
    paste(frame, title, painter.points(12), painter.points(6))
    counter = f"step {scene.step + 1} of {len(painter.events)}"
    paste(
        frame,
        sprites.get(counter, style.font * 1.1, "#444444"),
        painter.points(12) + title.width + painter.points(style.font),
        painter.points(6) + title.height,
        va="bottom",
    )
    is_error = scene.event.kind is EventKind.ERROR
    caption = textwrap.fill(("✗ " if is_error else "") + scene.caption, style.caption_chars)
    colour, weight = (VERMILLION, "bold") if is_error else ("black", "normal")
    paste(
        frame,
        sprites.get(caption, style.font * 1.1, colour, weight),
        painter.points(12),
        frame.shape[0] * 0.69,
    )
    memory = f"memory: {format_bytes(scene.event.memory.saved_bytes)} saved"
    paste(
        frame,
        sprites.get(memory, style.font * 0.85),
        frame.shape[1] - painter.points(12),
        frame.shape[0] * 0.80,
        ha="right",
        va="bottom",
    )
