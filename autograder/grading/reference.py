"""The solution's own run of a unit: the reference every learner's test cell is judged against.

The solution runs through the same worker as the learners, with the same seeds, and must
earn full marks. Run ``twice`` (as ``make release`` does), each test cell must make the very
same records both times; a test cell whose records differ draws inputs that are not
reproducible (unseeded randomness, the clock, a dict of ids), so no learner could be judged
against it, and the unit is refused, naming the cell.

Example::

    >>> from autograder.grading.worker_pool import CellOutcome
    >>> record = {"rule": "expect", "condition": ["bool", True], "message": "m"}
    >>> twice = lambda cells: {0: CellOutcome(0, True, records=(record,))}
    >>> import nbformat
    >>> from nbformat.v4 import new_code_cell, new_notebook
    >>> test = new_code_cell("expect(True, 'm')")
    >>> test.metadata["nbgrader"] = {"grade": True, "grade_id": "t", "points": 1}
    >>> source = new_notebook(cells=[test])
    >>> references = solution_references(source, items(source), twice)
    >>> references["t"].records == (record,)
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import nbformat

from autograder.grading.assemble import assemble, items
from autograder.grading.results import ItemInfo
from autograder.grading.scoring import Reference, first_difference, score_items
from autograder.grading.worker_pool import CellOutcome

__all__ = ["SolutionProblem", "items", "solution_references"]

Run = Callable[[Sequence[dict[str, Any]]], Mapping[int, CellOutcome]]


class SolutionProblem(RuntimeError):
    """The solution cannot serve as the reference; the message names the cells and why."""


def solution_references(
    source: nbformat.NotebookNode, infos: Sequence[ItemInfo], run: Run, *, twice: bool = True
) -> dict[str, Reference]:
    """Run the solution with ``run`` (cells -> outcomes), ``twice`` to check that it is
    reproducible, and return each test cell's reference, or raise :class:`SolutionProblem`."""
    job = assemble(source, source)
    cells = [cell.message() for cell in job.cells]
    first = run(cells)
    second = run(cells) if twice else first
    tests = [cell for cell in job.cells if cell.origin == "test" and cell.grade_id is not None]
    references = {cell.grade_id: Reference.from_outcome(first[cell.index]) for cell in tests}
    problems = [
        f"{cell.grade_id} (cell {cell.index + 1}): {difference}; seed its inputs "
        "(torch.Generator().manual_seed(...)) or declare the check answer_may_differ=True"
        for cell in tests
        if (difference := first_difference(first[cell.index].records, second[cell.index].records))
    ]
    scored = score_items(infos, job, first, references)
    problems += [f"{item.grade_id}: {item.failures[-1]}" for item in scored if not item.passed]
    if problems:
        raise SolutionProblem("\n  ".join(problems))
    return references
