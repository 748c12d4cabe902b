"""The player's state, frame rendering and exports of gradgraph, without a browser."""

from __future__ import annotations

import html
import io
import json
import re
import shutil
import subprocess
import threading

import pytest
import torch
from PIL import Image

import gradgraph
import gradgraph.frames
from gradgraph import EventKind
from gradgraph.frames import FrameStore
from gradgraph.inspector import node_facts
from gradgraph.player import Player

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def recording() -> gradgraph.Recording:
    """(x * w).exp().sum(): backward with retain_graph, backward, and a failing backward."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -0.5, 0.25], requires_grad=True)
    with gradgraph.record(names={"x": x, "w": w}) as rec:
        loss = (x * w).exp().sum()
        loss.backward(retain_graph=True)
        loss.backward()
        with pytest.raises(RuntimeError):
            loss.backward()
    rec.close()
    return rec


@pytest.fixture(scope="module")
def events(recording) -> tuple:
    return recording.events


def index_of(events, kind: EventKind, name: str) -> int:
    return next(e.index for e in events if e.kind is kind and e.name == name)


def test_player_steps_back_forward_reset_and_stays_in_bounds(recording, events):
    player = recording.play()
    assert player.slider.value == 0 and player.slider.max == len(events) - 1
    player.step_back()
    assert player.slider.value == 0
    player.step_forward()
    player.step_forward()
    assert player.slider.value == 2
    player.step_back()
    assert player.slider.value == 1
    player.slider.value = player.slider.max
    player.step_forward()
    assert player.slider.value == player.slider.max
    player.play.playing = True
    player.reset()
    assert player.slider.value == 0 and player.play.playing is False


def test_play_widget_and_speed_share_the_single_step_state(recording):
    player = recording.play()
    player.play.value = 5  # what the Play widget does on each tick
    assert player.slider.value == 5
    player.slider.value = 7
    assert player.play.value == 7
    player.speed.value = 175
    assert player.play.interval == 175
    assert bytes(player.image.value) == player.frames.svg(7).encode()


def test_caption_and_frame_follow_the_slider(recording, events):
    player = recording.play()
    step = index_of(events, EventKind.SAVED, "ExpBackward0")
    player.slider.value = step
    assert "ExpBackward0 saved its result (3 floats, 12 B): the derivative of exp is exp." in (
        player.caption.value
    )
    assert bytes(player.image.value).startswith(b"<svg")
    freed = index_of(events, EventKind.FREED, "ExpBackward0")
    player.slider.value = freed
    assert "ExpBackward0 freed its result" in player.caption.value
    player.slider.value = len(events) - 1
    assert "Trying to backward through the graph a second time" in player.caption.value
    bundle = player._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    # what nbconvert's HTML export shows: every frame, playable with no kernel
    assert bundle["text/html"].count("data:image/svg+xml;base64,") == len(events)
    assert 'class="gradgraph-player"' in bundle["text/html"]


def test_scene_shows_saved_badges_until_freed_and_grads_on_leaves(events):
    store = FrameStore(events)
    exp_node = next(e.node for e in events if e.kind is EventKind.NODE and e.name == "ExpBackward0")
    x_node = next(e.node for e in events if e.kind is EventKind.NODE and e.name == "x")
    saved_at = index_of(events, EventKind.SAVED, "ExpBackward0")
    freed_at = index_of(events, EventKind.FREED, "ExpBackward0")
    assert exp_node not in store.scene(saved_at - 1).saved
    assert store.scene(saved_at).saved[exp_node] == (1, 12)
    assert store.scene(freed_at - 1).saved[exp_node] == (1, 12)
    assert exp_node not in store.scene(freed_at).saved
    assert store.scene(freed_at).freed[exp_node] == (1, 12)  # marked as freed, not vanished
    first_grad = index_of(events, EventKind.GRAD, "x")
    assert x_node not in store.scene(first_grad - 1).grads
    assert store.scene(first_grad).grads[x_node] == pytest.approx(
        events[first_grad].details["norm"]
    )
    second_grad = [e.index for e in events if e.kind is EventKind.GRAD and e.name == "x"][1]
    held = events[second_grad].details["accumulated_norm"]  # what .grad holds: 2x the first
    assert store.scene(second_grad).grads[x_node] == pytest.approx(held)
    assert held == pytest.approx(2 * events[first_grad].details["norm"])
    failed_at = index_of(events, EventKind.ERROR, "RuntimeError")
    assert events[failed_at].node == exp_node
    assert store.scene(failed_at - 1).ran[exp_node] == 3  # the third pass started it...
    assert store.scene(failed_at).ran[exp_node] == 2  # ...and it raised: it ran twice
    assert store.scene(failed_at).failed == exp_node


def test_frames_are_svgs_and_pngs_cached_and_differ_between_steps(events, monkeypatch):
    store = FrameStore(events)
    calls = []
    real = gradgraph.frames.to_svg
    monkeypatch.setattr(gradgraph.frames, "to_svg", lambda *a: calls.append(1) or real(*a))
    first, second = store.svg(0), store.svg(1)
    assert first.startswith("<svg") and first != second
    assert store.svg(0) is first and len(calls) == 2  # scrubbing back draws nothing
    png = store.frame(0)
    assert png.startswith(PNG_SIGNATURE) and store.frame(0) is png
    width, height = Image.open(io.BytesIO(png)).size
    projector = FrameStore(events, projector=True)
    assert Image.open(io.BytesIO(projector.frame(0))).size == (
        round(width * 1.5),
        round(height * 1.5),
    )
    assert f'width="{store.film.width * 1.5:.0f}"' in projector.svg(0)


def test_layout_is_fixed_for_the_whole_recording(events):
    store = FrameStore(events)
    nodes = {e.node for e in events if e.kind is EventKind.NODE}
    assert set(store.graph.positions) == nodes  # every node placed before the first frame
    assert store.scene(0).present == {0}


def test_frames_are_drawn_while_a_workers_backward_only_logs(events):
    in_backward, main_drew = threading.Event(), threading.Event()

    def pause_backward(grad):
        in_backward.set()
        main_drew.wait(timeout=30)

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with gradgraph.record(names={"x": x}) as rec:
        loss = x.exp().sum()
        loss.register_hook(pause_backward)
    worker = threading.Thread(target=loss.backward, name="autograd-like-worker")
    worker.start()
    assert in_backward.wait(timeout=30)
    player = Player(FrameStore(events))  # drawn while the worker's backward is paused inside a hook
    player.step_forward()
    main_drew.set()
    worker.join()
    rec.close()
    backward_threads = {e.thread for e in rec.events if e.kind is EventKind.BACKWARD}
    assert backward_threads == {"autograd-like-worker"}  # the worker's hooks only logged
    assert rec.play().frames.svg(0).startswith("<svg")


def test_html_export_holds_every_frame_and_needs_no_kernel(recording, events):
    page = recording.to_html()
    assert page.count('src="data:image/svg+xml;base64,') == len(events)
    assert "<script>" in page and "setInterval" in page
    assert "http://" not in page and "https://" not in page
    for button in ("play", "back", "next", "reset"):
        assert f'class="{button}"' in page
    assert f'max="{len(events) - 1}"' in page


def test_save_gif_and_png_strip(recording, events, tmp_path):
    gif = recording.save(tmp_path / "graph.gif")
    with Image.open(gif) as image:
        assert image.n_frames == len(events)
    strip = recording.save(tmp_path / "graph.PNG")
    width, height = Image.open(io.BytesIO(FrameStore(events).frame(0))).size
    rows = -(-len(events) // 4)
    with Image.open(strip) as image:
        assert image.size == (4 * width, rows * height)
    with pytest.raises(ValueError, match="graph.jpg"):
        recording.save(tmp_path / "graph.jpg")


def test_empty_recording_cannot_be_played_or_exported(tmp_path):
    with gradgraph.record() as rec:
        torch.ones(2).sum()
    with pytest.raises(ValueError, match="Nothing to show.*requires_grad=True"):
        rec.play()
    with pytest.raises(ValueError, match="Nothing to show"):
        rec.to_html()
    with pytest.raises(ValueError, match="Nothing to show"):
        rec.save(tmp_path / "empty.gif")
    assert not (tmp_path / "empty.gif").exists()


def test_large_graphs_fold_by_module():
    blocks = [torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh()) for _ in range(20)]
    net = torch.nn.Sequential(*blocks)
    with gradgraph.record() as rec:
        net(torch.rand(2, 4)).sum().backward()
    rec.close()
    nodes = [e for e in rec.events if e.kind is EventKind.NODE]
    assert len(nodes) > 80
    graph = FrameStore(rec.events).graph
    assert len(graph.positions) <= 25
    assert graph.labels[graph.group_of[nodes[0].node]] == "0 (5 nodes)"


def test_the_inspector_tells_what_a_node_saved_and_where_its_gradient_goes(recording, events):
    player = recording.play()
    column = player.columns[0]
    mul = next(g for g, label in column.frames.graph.labels.items() if label == "MulBackward0")
    column.inspect.value = mul
    assert "not made yet" in column.facts.value  # step 1: only x exists
    player.slider.value = index_of(events, EventKind.SAVED, "ExpBackward0")
    facts = html.unescape(column.facts.value)
    assert "'other' 3 (torch.float32, 12 B, cpu)" in facts and "'self' 3" in facts
    assert "freed" not in facts and "goes next to: x, w" in facts and "(x * w)" in facts
    player.slider.value = index_of(events, EventKind.FREED, "MulBackward0")
    assert "freed" in column.facts.value


def test_a_module_folds_into_one_box_on_request(full_and_frozen):
    full, _ = full_and_frozen
    unfolded = full.play().frames.graph
    folded = full.play(fold=("0",)).frames.graph
    assert len(folded.positions) < len(unfolded.positions)
    assert "0 (4 nodes)" in folded.labels.values()
    assert any(
        "folded module" in t.text
        for t in full.play(fold=("0",)).frames.picture(len(full) - 1).texts()
    )


NODE_HARNESS = """
const el = () => ({style: {}, textContent: "", value: "0"});
const column = (n, nodes) => {
  const imgs = Array.from({length: n}, () => ({style: {}})), caption = el(), facts = el();
  const menu = {...el(), value: ""};
  const hits = nodes.map((g) => ({style: {}, getAttribute: (name) => String(g)}));
  const parts = {".caption": caption, ".facts": facts, ".inspect": menu};
  const all = {"img": imgs, ".hit": hits};
  return {imgs, caption, facts, menu, hits, querySelectorAll: (s) => all[s],
          querySelector: (s) => parts[s]};
};
const columns = %(lengths)s.map((n, c) => column(n, %(nodes)s[c]));
const parts = {".play": el(), ".back": el(), ".next": el(), ".reset": el(),
               "input": {...el(), max: String(Math.max(...%(lengths)s) - 1)}};
const root = {querySelectorAll: () => columns, querySelector: (s) => parts[s]};
global.document = {getElementById: () => root};
let ticks = [];
global.setInterval = (f) => { ticks.push(f); return 1; };
global.clearInterval = () => { ticks = []; };
%(script)s
const shown = () => columns.map((c) => c.imgs.findIndex((i) => i.style.display === "block"));
const out = [shown(), columns[0].caption.textContent];
parts[".next"].onclick(); out.push(shown());
parts[".back"].onclick(); parts[".back"].onclick(); out.push(shown());
parts["input"].value = "2"; parts["input"].oninput(); out.push(shown());
parts[".play"].onclick.call(parts[".play"]); out.push(parts[".play"].textContent);
ticks[0](); out.push(shown());
parts[".reset"].onclick(); out.push(shown(), parts[".play"].textContent, ticks.length);
parts["input"].value = parts["input"].max; parts["input"].oninput(); out.push(shown());
const first = columns[0];
first.hits[first.hits.length - 1].onclick();
out.push(first.menu.value, first.facts.textContent, first.hits.map((h) => h.style.outline !== ""));
parts[".reset"].onclick(); out.push(first.facts.textContent);
first.menu.value = ""; first.menu.onchange(); out.push(first.facts.textContent);
console.log(JSON.stringify(out));
"""


def _run_page_script(page: str, lengths: list[int], nodes: list[list[int]]) -> list:
    """Run the page's script against a stand-in for the page: ``lengths`` frames and the
    displayed ``nodes`` (one clickable box each) of each column."""
    (script,) = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    program = NODE_HARNESS % {
        "lengths": json.dumps(lengths),
        "nodes": json.dumps(nodes),
        "script": script,
    }
    result = subprocess.run(["node", "-e", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_html_export_script_plays_steps_scrubs_resets_and_inspects(recording, events):
    store = FrameStore(events)
    nodes = list(store.film.graph.labels)
    out = _run_page_script(recording.to_html(), [len(events)], [nodes])
    first_caption = store.scene(0).caption
    last = len(events) - 1
    assert out[:11] == [[0], first_caption, [1], [0], [2], "pause", [3], [0], "play", 0, [last]]
    picked, facts, outlined, at_start, unpicked = out[11:]
    assert picked == str(nodes[-1])  # clicking a box picks its node, at the last step
    assert outlined == [g == nodes[-1] for g in nodes]  # and outlines its box
    assert facts == node_facts(store.film, nodes[-1], last) and "SumBackward0" in facts
    assert at_start == "not made yet at this step"  # back to step 1: the sum is not made yet
    assert unpicked == ""


@pytest.fixture(scope="module")
def full_and_frozen() -> tuple[gradgraph.Recording, gradgraph.Recording]:
    """The same two-layer model, once whole and once with its first layer frozen."""
    recordings = []
    for frozen in (False, True):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
        net[0].requires_grad_(not frozen)
        with gradgraph.record() as rec:
            net(torch.rand(2, 3)).sum().backward()
        rec.close()
        recordings.append(rec)
    return recordings[0], recordings[1]


def test_side_by_side_steps_both_recordings_with_one_slider(full_and_frozen):
    full, frozen = full_and_frozen
    assert len(full) > len(frozen)
    player = gradgraph.side_by_side(full, frozen, titles=("full", "frozen"))
    assert player.slider.max == len(full) - 1 and len(player.columns) == 2
    left, right = player.columns
    assert "full" in player.widget.children[2].children[0].children[0].value
    player.slider.value = 1
    assert bytes(left.image.value) == left.frames.svg(1).encode()
    assert bytes(right.image.value) == right.frames.svg(1).encode()
    player.slider.value = player.slider.max  # the shorter recording stays on its last frame
    assert bytes(right.image.value) == right.frames.svg(len(frozen) - 1).encode()
    assert html.escape(right.frames.scene(len(frozen) - 1).caption) in right.caption.value
    bundle = player._repr_mimebundle_()
    assert bundle["text/html"].count("data:image/svg+xml;base64,") == len(full) + len(frozen)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_side_by_side_html_export_keeps_the_shorter_column_on_its_last_frame(full_and_frozen):
    full, frozen = full_and_frozen
    page = gradgraph.side_by_side(full, frozen, titles=("full", "frozen")).to_html()
    assert page.count('class="gradgraph-column"') == 2 and ">frozen</div>" in page
    nodes = [list(r.play().frames.film.graph.labels) for r in (full, frozen)]
    out = _run_page_script(page, [len(full), len(frozen)], nodes)
    assert out[0] == [0, 0] and out[10] == [len(full) - 1, len(frozen) - 1]


def test_side_by_side_needs_a_recording():
    with pytest.raises(ValueError, match="at least one recording"):
        gradgraph.side_by_side()
