"""Checks on the pictures themselves, on every recording the course's notebooks make.

Each solution notebook's code runs in this process up to its last ``record(`` cell, with
``gradgraph.record`` watched, so the recordings are exactly the course's; the programs of
tests/test_film_fidelity.py add every kind of hook (node hooks among them) and a
create_graph backward. On every frame of every one, under both layouts and in Korean too: no
text overlaps another text or a box it does not belong to, everything lies inside the frame,
and each drawn edge ends in an arrowhead at its user's box. The key frames of each are kept
as PNGs in ``artifacts/film/`` to look at.
"""

from __future__ import annotations

import contextlib
import io
import json
import linecache
import os
import shutil
import warnings
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest

import gradgraph
import gradgraph.layout
import gradgraph.recorder
from autograder.i18n import current_language, use_language
from gradgraph.frames import FrameStore
from gradgraph.picture import Picture, Polygon, Polyline, Rect, Text
from gradgraph.raster import to_png
from tests.conftest import LAYOUT, ROOT
from tests.test_film_fidelity import PROGRAMS, recorded

ARTIFACTS = ROOT / "artifacts" / "film"
TOUCH = 1.0  # pixels two boxes may share (a border line)


def _code_cells(unit: str) -> list[str]:
    notebook = json.loads(LAYOUT.source_notebook(unit).read_text(encoding="utf-8"))
    cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    last = max((i for i, src in enumerate(cells) if "record(" in src), default=-1)
    return [
        "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!")))
        for src in cells[: last + 1]
    ]


@contextlib.contextmanager
def _recordings_kept(kept: list[gradgraph.Recording]) -> Iterator[None]:
    real = gradgraph.recorder.record

    @contextlib.contextmanager
    def watched(*args, **kwargs):
        with real(*args, **kwargs) as rec:
            kept.append(rec)
            yield rec

    gradgraph.record = watched
    try:
        yield
    finally:
        gradgraph.record = real


def _run_unit(unit: str) -> list[gradgraph.Recording]:
    kept: list[gradgraph.Recording] = []
    namespace: dict = {"__name__": "__main__"}
    here = os.getcwd()
    os.chdir(LAYOUT.source_notebook(unit).parent)
    try:
        with _recordings_kept(kept), contextlib.redirect_stdout(io.StringIO()):
            for i, source in enumerate(_code_cells(unit)):
                name = f"<{unit} cell {i}>"
                # as IPython does: the cell's lines can be read back (the film quotes them)
                linecache.cache[name] = (len(source), None, source.splitlines(True), name)
                exec(compile(source, name, "exec"), namespace)  # noqa: S102
    finally:
        os.chdir(here)
    return [rec for rec in kept if len(rec)]


@pytest.fixture(scope="module")
def course_events() -> dict[str, list[tuple]]:
    events = {unit: [rec.events for rec in _run_unit(unit)] for unit in LAYOUT.units()}
    events["hooks"] = [recorded(program).events for program in PROGRAMS]
    return events


@pytest.fixture(
    scope="module", params=[("dot", "en"), ("grandalf", "en"), ("grandalf", "ko")], ids=str
)
def course_films(request, course_events) -> Iterator[dict[str, list[FrameStore]]]:
    """The course's films laid out by graphviz's dot (where installed) and by grandalf, and in
    Korean (every caption, label and box line translated, Hangul measured in its own face)."""
    engine, language = request.param
    if engine == "dot" and shutil.which("dot") is None:
        pytest.skip("graphviz's dot is not installed")
    with pytest.MonkeyPatch.context() as patch, use_language(language):
        if engine == "grandalf":
            patch.setattr(gradgraph.layout.shutil, "which", lambda name: None)
        films = {unit: [FrameStore(e) for e in events] for unit, events in course_events.items()}
        assert all(f.graph.engine == engine for fs in films.values() for f in fs)
        yield films


def _bbox(item: Rect | Polyline | Polygon | Text) -> tuple[float, float, float, float]:
    if isinstance(item, Text):
        return item.bbox
    if isinstance(item, Rect):
        return (item.x0, item.y0, item.x1, item.y1)
    xs, ys = zip(*item.points, strict=True)
    return (min(xs), min(ys), max(xs), max(ys))


def _overlaps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise: do boxes of ``a`` and ``b`` (rows of left, top, right, bottom) overlap?"""
    return (
        (a[:, None, 0] < b[None, :, 2] - TOUCH)
        & (b[None, :, 0] < a[:, None, 2] - TOUCH)
        & (a[:, None, 1] < b[None, :, 3] - TOUCH)
        & (b[None, :, 1] < a[:, None, 3] - TOUCH)
    )


def picture_problems(picture: Picture) -> list[str]:
    """What is wrong with one frame (empty: nothing)."""
    problems = []
    for item in picture.items:
        x0, y0, x1, y1 = _bbox(item)
        if x0 < -TOUCH or y0 < -TOUCH or x1 > picture.width + TOUCH or y1 > picture.height + TOUCH:
            problems.append(f"outside the frame: {item}")
    texts = [t for t in picture.texts() if t.text]
    boxes = [r for r in picture.items if isinstance(r, Rect) and r.role == "node"]
    text_boxes = np.array([t.bbox for t in texts]).reshape(-1, 4)
    node_boxes = np.array([_bbox(r) for r in boxes]).reshape(-1, 4)
    clash = _overlaps(text_boxes, text_boxes)
    np.fill_diagonal(clash, False)
    for i, j in zip(*np.nonzero(np.triu(clash)), strict=True):
        problems.append(f"text on text: {texts[i].text!r} and {texts[j].text!r}")
    for i, j in zip(*np.nonzero(_overlaps(text_boxes, node_boxes)), strict=True):
        t, (bx0, by0, bx1, by1) = texts[i], node_boxes[j]
        tx0, ty0, tx1, ty1 = t.bbox
        inside = bx0 <= tx0 and tx1 <= bx1 and by0 <= ty0 and ty1 <= by1
        if not (t.role == "node" and inside):
            problems.append(f"text on a node: {t.text!r}")
    edges = {i.edge: i for i in picture.items if isinstance(i, Polyline) and i.role == "edge"}
    heads = {i.edge: i for i in picture.items if isinstance(i, Polygon) and i.role == "arrowhead"}
    for edge, line in edges.items():
        head = heads.get(edge)
        if head is None:
            problems.append(f"edge {edge} has no arrowhead")
        elif np.hypot(*np.subtract(head.points[1:], line.points[-1]).mean(axis=0)) > 1.0:
            problems.append(f"edge {edge}: its arrowhead is not at its end")
    return problems


def test_every_frame_of_every_course_recording_reads_cleanly(course_films):
    problems = []
    for unit, films in course_films.items():
        assert films, f"{unit} made no recording"
        for k, film in enumerate(films):
            for step in range(len(film)):
                problems += [f"{unit} #{k} step {step + 1}: {p}" for p in picture_problems(
                    film.picture(step))]  # fmt: skip
    assert not problems, f"{len(problems)} problems, the first:\n" + "\n".join(problems[:10])


def test_edges_end_on_the_box_of_the_node_that_used_them(course_films):
    for films in course_films.values():
        for film in films:
            layout = film.graph
            for (a, b), route in layout.routes.items():
                (bx, by), (_, bh) = layout.positions[b], layout.sizes[b]
                assert route[-1] == pytest.approx((bx, by - bh / 2)), (a, b)


def test_key_frames_are_kept_as_pngs(course_films):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for unit, films in course_films.items():
        engine = films[0].graph.engine if films else ""
        if current_language() != "en":
            engine += f"-{current_language()}"
        for k, film in enumerate(films):
            kinds = [e.kind.value for e in film.events]
            keys = {"forward": kinds.index("backward") - 1 if "backward" in kinds else None}
            for kind in ("backward", "freed", "hook", "error"):
                keys[kind] = kinds.index(kind) if kind in kinds else None
            node_hooks = [e.index for e in film.events if e.details.get("target") == "node"]
            keys["node-hook"] = node_hooks[0] if node_hooks else None
            keys["last"] = len(kinds) - 1
            for name, step in keys.items():
                if step is not None and step >= 0:
                    path = ARTIFACTS / f"{unit}-{k}-{name}-{engine}.png"
                    path.write_bytes(to_png(film.picture(step)))
                    assert path.stat().st_size > 1000


@pytest.fixture
def font_lookups():
    """gradgraph.fonts with its cached lookups cleared, before the test and after it."""
    from gradgraph import fonts

    caches = (fonts._korean_entries, fonts._hangul_file, fonts.font, fonts.text_width)
    for cache in caches:
        cache.cache_clear()
    yield fonts
    for cache in caches:
        cache.cache_clear()


def test_a_korean_face_missing_from_matplotlibs_cached_font_list_is_found_all_the_same(
    monkeypatch, font_lookups
):
    """matplotlib lists the system's fonts once, in a cache file: a Korean font installed
    after that (fonts-nanum after a first plot) must still draw Hangul, not boxes."""
    from matplotlib import font_manager

    fonts = font_lookups
    installed = {
        font_manager.ttfFontProperty(font_manager.get_font(path)).name
        for path in font_manager.findSystemFonts()
        if path.lower().endswith((".ttf", ".otf"))
    }
    if not installed & set(fonts.HANGUL_FACES):
        pytest.skip("no Korean face is installed (the README: apt-get install fonts-nanum)")
    stale = [e for e in font_manager.fontManager.ttflist if e.name not in fonts.HANGUL_FACES]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", stale)  # as before the install
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "no Korean font is installed"
        regular, bold = fonts._hangul_file(False), fonts._hangul_file(True)
        width = fonts.text_width("역전파", 13)
    assert regular is not None and bold is not None and regular != bold
    assert width != 3 * 13  # measured in the Korean face, not one em a syllable


def test_where_the_systems_fonts_cannot_be_listed_hangul_is_measured_one_em_wide(
    monkeypatch, font_lookups
):
    """A grading sandbox refuses the subprocess (fc-list) that lists the system's fonts: the
    film still draws, measuring Hangul one em a syllable, with the warning to install one."""
    from matplotlib import font_manager

    def refused(*args, **kwargs):
        raise RuntimeError("the grading sandbox does not allow subprocess.Popen")

    fonts = font_lookups
    stale = [e for e in font_manager.fontManager.ttflist if e.name not in fonts.HANGUL_FACES]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", stale)
    monkeypatch.setattr(font_manager, "findSystemFonts", refused)
    with pytest.warns(UserWarning, match="no Korean font is installed"):
        width = fonts.text_width("역전파", 13)
    assert width == 3 * 13


def test_the_saved_badges_add_up_to_the_memory_strip(course_events):
    """What the boxes say they hold is what the strip says is held, on every frame: a storage
    two nodes save shows on one of them, and moves to the other when the first lets it go."""
    moved = 0
    for unit, recordings in course_events.items():
        for k, events in enumerate(recordings):
            film = FrameStore(events)
            for step, event in enumerate(events):
                scene = film.scene(step)
                shown = sum(nbytes for _, nbytes in scene.saved.values())
                assert shown == event.memory.saved_bytes, (unit, k, step + 1, scene.saved)
                held = {}
                for e in events[: step + 1]:
                    if e.kind is gradgraph.EventKind.SAVED:
                        held.setdefault(e.node, []).append(e.details["storage"])
                    elif e.kind is gradgraph.EventKind.FREED:
                        held[e.node].remove(e.details["storage"])
                counts = Counter()
                for node, storages in held.items():
                    counts[film.graph.group_of[node]] += len(storages)
                assert {g: n for g, (n, _) in scene.saved.items()} == +counts, (unit, k, step)
                moved += any(
                    e.kind is gradgraph.EventKind.FREED and not e.details["released"]
                    for e in events[: step + 1]
                )
    assert moved, "no course recording frees a tensor whose storage another node still holds"
