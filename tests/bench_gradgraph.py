"""Benchmark figures of gradgraph. `python tests/bench_gradgraph.py` prints the table;
tests/bench.py (`make bench`) calls `measure()`.

Speed targets live here, never in timed tests.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

import gradgraph
from gradgraph.frames import FrameStore

REPEATS = 300  # a median of 40 moved by 0.1x or more between runs on a 2-core machine
BATCH = 64


def _seconds(run: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> float:
    started = clock()
    run()
    return clock() - started


def _mlp() -> torch.nn.Module:
    """The course's canonical 3-layer MLP: MNIST-sized input, 128 and 64 hidden units."""
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(784, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 10),
    )


def recording_overhead(clock: Callable[[], float] = time.perf_counter) -> float:
    """Median time of fwd+bwd inside record() over the median time without it, interleaved."""
    net, inputs = _mlp(), torch.rand(BATCH, 784)

    def plain() -> None:
        net(inputs).pow(2).mean().backward()

    def recorded() -> None:
        with gradgraph.record() as rec:
            net(inputs).pow(2).mean().backward()
        rec.close()

    plain(), recorded()  # warm up
    plain_times, recorded_times = [], []
    for _ in range(REPEATS):
        plain_times.append(_seconds(plain, clock))
        recorded_times.append(_seconds(recorded, clock))
    return statistics.median(recorded_times) / statistics.median(plain_times)


def recording_overhead_cpu() -> float:
    """The same ratio in CPU time with one intra-op thread: steady on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return recording_overhead(time.process_time)
    finally:
        torch.set_num_threads(threads)


def sixty_node_recording() -> gradgraph.Recording:
    """12 Linear layers with Tanh between them, then a sum: 60 graph nodes, fwd and bwd."""
    torch.manual_seed(0)
    layers = [layer for _ in range(12) for layer in (torch.nn.Linear(4, 4), torch.nn.Tanh())]
    net = torch.nn.Sequential(*layers[:-1])
    with gradgraph.record() as rec:
        net(torch.rand(2, 4)).sum().backward()
    rec.close()
    nodes = sum(e.kind is gradgraph.EventKind.NODE for e in rec.events)
    assert nodes == 60, f"expected a 60-node graph, got {nodes}"
    return rec


def frame_times(events: tuple[gradgraph.Event, ...]) -> dict[str, float]:
    """First frame (layout and film set up), median new frame while playing through (the
    SVG the player shows), median cached fetch, and one PNG frame (for files)."""
    store = FrameStore(events)
    first = _seconds(lambda: FrameStore(events).svg(0))
    wall, cpu = [], []
    for i in range(len(events)):
        started_wall, started_cpu = time.perf_counter(), time.thread_time()
        store.svg(i)
        wall.append(time.perf_counter() - started_wall)
        cpu.append(time.thread_time() - started_cpu)
    cached = [_seconds(lambda i=i: store.svg(i)) for i in range(len(events))]
    png = statistics.median(_seconds(lambda i=i: store.frame(i)) for i in range(1, 11))
    return {
        "first": first,
        "new": statistics.median(wall),
        "new_cpu": statistics.median(cpu),
        "cached": statistics.median(cached),
        "png": png,
    }


def play_seconds(recording: gradgraph.Recording) -> float:
    """From play() to the widget existing (layout, figure, first frame)."""
    return _seconds(lambda: recording.play().widget)


def measure() -> list[dict]:
    """Rows of name, value, unit, target."""
    recording = sixty_node_recording()
    frames = frame_times(recording.events)
    return [
        {
            "name": f"recording overhead (MLP 784-128-64-10, batch {BATCH}, fwd+bwd)",
            "value": recording_overhead(),
            "unit": "x",
            "target": "<= 2",
        },
        {
            "name": "recording overhead, same MLP, CPU time, 1 intra-op thread",
            "value": recording_overhead_cpu(),
            "unit": "x",
            "target": "<= 2",
        },
        {
            "name": "render one new frame, 60-node graph (median over a play-through), wall",
            "value": frames["new"] * 1000,
            "unit": "ms",
            "target": "<= 50",
        },
        {
            "name": "render one new frame, 60-node graph, CPU time of the drawing thread",
            "value": frames["new_cpu"] * 1000,
            "unit": "ms",
            "target": "<= 50",
        },
        {
            "name": "render the first frame, 60-node graph (layout and film set up)",
            "value": frames["first"] * 1000,
            "unit": "ms",
            "target": "<= 150",
        },
        {
            "name": "render one PNG frame for a file, 60-node graph (median)",
            "value": frames["png"] * 1000,
            "unit": "ms",
            "target": "baseline",
        },
        {
            "name": "fetch a cached frame (median)",
            "value": frames["cached"] * 1e6,
            "unit": "us",
            "target": "<= 1000",
        },
        {
            "name": "play() to widget, 60-node graph",
            "value": play_seconds(recording),
            "unit": "s",
            "target": "<= 1",
        },
    ]


def main() -> None:
    rows = measure()
    width = max(len(row["name"]) for row in rows)
    print(f"{'benchmark':<{width}}  {'value':>10}  unit  target")
    for row in rows:
        print(f"{row['name']:<{width}}  {row['value']:>10.3g}  {row['unit']:<4}  {row['target']}")


if __name__ == "__main__":
    main()
