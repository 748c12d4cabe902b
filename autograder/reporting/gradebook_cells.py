"""The cells of a unit as nbgrader's gradebook keeps them, for formgrader and the gradebook.

``nbgrader generate_assignment`` records each graded, answer and locked cell (its source, type,
lock and checksum) in the gradebook *before* it clears the hidden tests, and ``nbgrader
autograde`` puts those cells back into every submission. This rebuilds that list from the two
notebooks the course already has: the released notebook (``course/``), with each test cell's
source taken from the source notebook (``solutions/``, hidden tests included), checksummed with
nbgrader's own function.

Example::

    >>> from nbformat.v4 import new_code_cell, new_notebook
    >>> def cell(source, **nbgrader):
    ...     return new_code_cell(source, metadata={"nbgrader": {"grade_id": "t", **nbgrader}})
    >>> meta = dict(grade=True, solution=False, locked=True, points=2)
    >>> source = new_notebook(cells=[cell("assert x\\n### BEGIN HIDDEN TESTS\\nassert y\\n"
    ...                                   "### END HIDDEN TESTS", **meta)])
    >>> released = new_notebook(cells=[cell("assert x", **meta)])
    >>> [kept] = gradebook_cells(source, released, name="t.ipynb")
    >>> kept.source.splitlines()[-2], len(kept.metadata.nbgrader.checksum)
    ('assert y', 32)
"""

from __future__ import annotations

import copy

import nbformat
from nbgrader import utils

__all__ = ["CellsOutOfDate", "gradebook_cells", "kept_in_gradebook"]


class CellsOutOfDate(ValueError):
    """The released notebook does not match its source (``course/`` is out of date)."""


def kept_in_gradebook(cell: nbformat.NotebookNode) -> bool:
    """Whether nbgrader records ``cell`` in the gradebook (a graded, answer, task or locked
    cell)."""
    return bool(
        utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell)
        or utils.is_task(cell)
    )  # fmt: skip


def gradebook_cells(
    source: nbformat.NotebookNode, released: nbformat.NotebookNode, *, name: str
) -> list[nbformat.NotebookNode]:
    """Every cell of the unit as the gradebook keeps it, in order: the released cell, with the
    source's text for a test cell (a graded cell that is no answer), each recorded cell
    checksummed. ``name`` (the unit's notebook) is named when the two notebooks do not match."""
    if [c.cell_type for c in source.cells] != [c.cell_type for c in released.cells]:
        raise CellsOutOfDate(
            f"{name}: the released notebook in course/ does not match its source in solutions/ "
            "(their cells differ); run `make release`"
        )
    cells = []
    for original, shipped in zip(source.cells, released.cells, strict=True):
        cell = copy.deepcopy(shipped)
        if utils.is_grade(cell) and not utils.is_solution(cell):
            cell.source = original.source
        if kept_in_gradebook(cell):
            cell.metadata.nbgrader["checksum"] = utils.compute_checksum(cell)
        cells.append(cell)
    return cells
