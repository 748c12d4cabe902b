"""Refuse a unit whose solution does not give the same check records twice.

The class grader judges every learner's check against the same check of the solution's run
(:mod:`autograder.grading.scoring`), so each test cell's inputs must be reproducible. Before a
release, each unit's solution runs twice in the grader's own worker (no sandbox: it is the
instructor's code), as grading will run it; a test cell whose records differ, or a solution
that does not earn full marks there, stops the release naming the unit and the cell.

Example::

    >>> from pathlib import Path
    >>> check_reproducible(CourseLayout(Path(".")))  # doctest: +SKIP
"""

from __future__ import annotations

from functools import partial

import nbformat

from autograder.grading.reference import SolutionProblem, items, solution_references
from autograder.grading.sandbox import SandboxSettings
from autograder.grading.worker_pool import Limits, Worker, run_cells
from autograder.layout import CourseLayout

__all__ = ["NotReproducible", "check_reproducible"]


class NotReproducible(RuntimeError):
    """A unit's solution cannot be the grader's reference; the message names unit and cell."""


def check_reproducible(layout: CourseLayout, units: list[str] | None = None) -> None:
    """Run each unit's solution twice in a grading worker; raise :class:`NotReproducible` for
    the first unit whose test cells do not make the same records both times."""
    packages = [layout.root / "autograder", layout.root / "gradgraph"]
    worker = Worker(SandboxSettings(kind="none"), packages)
    run = partial(run_cells, worker, limits=Limits(), learner=False)
    try:
        for unit in units if units is not None else layout.units():
            source = nbformat.read(layout.source_notebook(unit), as_version=4)
            try:
                solution_references(source, items(source), run)
            except SolutionProblem as problem:
                raise NotReproducible(
                    f"{layout.source_notebook(unit)}: the solution cannot be the grader's "
                    f"reference:\n  {problem}"
                ) from problem
    finally:
        worker.stop()
