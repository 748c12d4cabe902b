"""Benchmark rows for class grading: the same generated class graded with plain nbgrader
(``nbgrader generate_assignment`` + ``autograde``, serial, no isolation) and with ours (parallel,
sandboxed), side by side, and the floor a fresh interpreter per notebook would pay.

The class is honest work only (every unit's solved, blank and kept-wrong-answer notebooks), so
that plain nbgrader can be run on it safely: at least 40 notebooks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder.authoring.plain_nbgrader import autograde
from autograder.grading.grade import grade
from tests.conftest import LAYOUT, ROOT, UNITS, answer_rounds, solved_learner_notebook

TARGET_RATIO = 1.8
MIN_NOTEBOOKS = 40
# Wrong-answer rounds per unit in the class: a class the size of a real one (about 45), however
# many wrong answers the units keep
WRONG_ROUNDS_PER_UNIT = 5


def class_notebooks() -> dict[str, dict[str, nbformat.NotebookNode]]:
    """unit -> learner -> notebook: solved, blank and the first WRONG_ROUNDS_PER_UNIT
    wrong-answer rounds, topped up with solved copies until the class holds at least
    MIN_NOTEBOOKS notebooks."""
    notebooks: dict[str, dict[str, nbformat.NotebookNode]] = {}
    for unit in UNITS:
        learners = {
            "solved": solved_learner_notebook(unit),
            "blank": nbformat.read(LAYOUT.learner_notebook(unit), as_version=4),
        }
        rounds = answer_rounds(unit, "wrong")[:WRONG_ROUNDS_PER_UNIT]
        for number, round_ in enumerate(rounds, start=1):
            answers = {cell: wrong.code for cell, wrong in round_.items()}
            learners[f"wrong-{number}"] = solved_learner_notebook(unit, answers)
        notebooks[unit] = learners
    copy = 0
    while sum(map(len, notebooks.values())) < MIN_NOTEBOOKS:
        unit = UNITS[copy % len(UNITS)]
        copy += 1
        notebooks[unit][f"solved-copy-{copy}"] = solved_learner_notebook(unit)
    return notebooks


def _plain_nbgrader_seconds(notebooks, scratch: Path) -> float:
    started = time.perf_counter()
    for unit, learners in notebooks.items():
        autograde(root=ROOT, unit=unit, submissions=learners, workdir=scratch / f"plain-{unit}")
    return time.perf_counter() - started


def _ours_seconds(notebooks, scratch: Path) -> float:
    folder = scratch / "submitted"
    for unit, learners in notebooks.items():
        for learner, notebook in learners.items():
            path = folder / learner / unit / f"{unit}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, path)
    started = time.perf_counter()
    grade(folder, out=scratch / "graded", root=ROOT, progress=None)
    return time.perf_counter() - started


def _fresh_interpreter_seconds() -> float:
    """Start Python and import torch, best of three: what every notebook pays when each gets a
    fresh kernel."""
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        timings.append(time.perf_counter() - started)
    return min(timings)


def measure() -> list[dict]:
    notebooks = class_notebooks()
    count = sum(map(len, notebooks.values()))
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as scratch:
        plain = _plain_nbgrader_seconds(notebooks, Path(scratch))
        ours = _ours_seconds(notebooks, Path(scratch))
    floor = _fresh_interpreter_seconds()
    return [
        {
            "name": f"class of {count} notebooks: plain nbgrader autograde (serial, no isolation)",
            "value": plain,
            "unit": "s",
            "target": "baseline",
        },
        {
            "name": f"class of {count} notebooks: ours ({cores} workers, bubblewrap sandbox)",
            "value": ours,
            "unit": "s",
            "target": "baseline",
        },
        {
            "name": "speed-up of ours over plain nbgrader",
            "value": plain / ours,
            "unit": "x",
            "target": f">= {TARGET_RATIO:g}",
        },
        {"name": "ours: wall time per notebook", "value": ours / count, "unit": "s", "target": "-"},
        {
            "name": "plain nbgrader: wall time per notebook",
            "value": plain / count,
            "unit": "s",
            "target": "-",
        },
        {
            "name": "floor avoided: fresh Python + import torch, per notebook (best of 3)",
            "value": floor,
            "unit": "s",
            "target": "-",
        },
    ]
