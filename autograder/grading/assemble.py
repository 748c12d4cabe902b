"""Build the cells to grade: the instructor's source notebook, with the learner's answers put in.

Every instructor cell (setup, demonstrations, locked cells, and test cells with their hidden
part) comes from the instructor's source, whatever the learner's copy holds: editing or deleting
a test does nothing. From the learner's notebook come only the answer cells, found by their
nbgrader ``grade_id``, and the code cells the learner added (those that match no instructor
cell), each run after the instructor cell it followed. IPython magics and shell escapes in
learner cells are left out (the grader runs plain Python) and noted.

Example::

    >>> import nbformat
    >>> from nbformat.v4 import new_code_cell, new_notebook
    >>> def cell(source, **nbgrader):
    ...     made = new_code_cell(source)
    ...     if nbgrader:
    ...         made.metadata["nbgrader"] = nbgrader
    ...     return made
    >>> source = new_notebook(cells=[
    ...     cell("import torch"),
    ...     cell("### BEGIN SOLUTION\\nx = 1\\n### END SOLUTION", grade_id="x", solution=True),
    ...     cell("assert x == 1\\n### BEGIN HIDDEN TESTS\\nassert x > 0\\n### END HIDDEN TESTS",
    ...          grade_id="x_test", grade=True, points=2, locked=True)])
    >>> learner = new_notebook(cells=[cell("import torch"), cell("x = 2", grade_id="x"),
    ...                               cell("%timeit x\\ny = x")])
    >>> job = assemble(source, learner)
    >>> [(c.origin, c.source, c.hidden) for c in job.cells]  # doctest: +NORMALIZE_WHITESPACE
    [('course', 'import torch', ''), ('answer', 'x = 2', ''),
     ('added', 'pass  # %timeit x   (not run by the grader)\\ny = x', ''),
     ('test', 'assert x == 1', 'assert x > 0')]
    >>> items(source)
    (ItemInfo(grade_id='x_test', max_points=2.0, title='x_test'),)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import nbformat

from autograder.grading.results import ItemInfo
from autograder.i18n import N_

__all__ = ["Cell", "Job", "assemble", "items"]

_HIDDEN = re.compile(
    r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*\n(.*?)^[ \t]*### END HIDDEN TESTS[ \t]*$\n?",
    re.MULTILINE | re.DOTALL,
)
_MAGIC = re.compile(r"^([ \t]*)([%!].*)$", re.MULTILINE)
_HEADING = re.compile(r"^#+\s+(.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Cell:
    """One code cell to run: ``origin`` is ``course`` (the instructor's), ``answer`` (the
    learner's answer cell), ``added`` (a cell the learner added) or ``test``; a test's
    ``hidden`` part runs right after its visible ``source``; ``position``: the index, in the
    source notebook, of the cell this one stands for (``None`` for an added cell)."""

    index: int
    origin: str
    source: str
    grade_id: str | None = None
    hidden: str = ""
    position: int | None = None

    def message(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "origin": self.origin,
            "source": self.source,
            "hidden": self.hidden,
        }


@dataclass(frozen=True)
class Job:
    cells: tuple[Cell, ...]
    notes: tuple[str, ...]


def _nbgrader(cell: nbformat.NotebookNode) -> dict[str, Any]:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def items(source: nbformat.NotebookNode) -> tuple[ItemInfo, ...]:
    """The graded items of a source notebook, in order, titled by the heading above them."""
    found = []
    title = None
    for cell in source.cells:
        if cell.cell_type == "markdown" and (headings := _HEADING.findall(cell.source)):
            title = headings[-1].strip()
        meta = _nbgrader(cell)
        if meta.get("grade") and cell.cell_type == "code":
            grade_id = meta["grade_id"]
            found.append(ItemInfo(grade_id, float(meta["points"]), title or grade_id))
            title = None
    return tuple(found)


def _without_magics(source: str) -> tuple[str, bool]:
    changed = _MAGIC.sub(r"\1pass  # \2   (not run by the grader)", source)
    return changed, changed != source


def assemble(source: nbformat.NotebookNode, learner: nbformat.NotebookNode) -> Job:
    """The cells to grade ``learner`` against ``source`` (see the module's description)."""
    instructor_ids = {_nbgrader(c).get("grade_id") for c in source.cells} - {None}
    answer_ids = {
        _nbgrader(c)["grade_id"]
        for c in source.cells
        if _nbgrader(c).get("solution") and not _nbgrader(c).get("grade")
    }
    instructor_sources = {c.source for c in source.cells if c.cell_type == "code"}
    answers: dict[str, str] = {}
    added_after: dict[str | None, list[str]] = {}
    anchor: str | None = None
    for cell in learner.cells:
        if cell.cell_type != "code":
            continue
        grade_id = _nbgrader(cell).get("grade_id")
        if grade_id in instructor_ids and grade_id not in answers:
            anchor = grade_id
            if grade_id in answer_ids:
                answers[grade_id] = cell.source
        elif cell.source in instructor_sources:
            anchor = cell.source
        elif cell.source.strip():
            added_after.setdefault(anchor, []).append(cell.source)
    notes: list[str] = []
    missing: list[str] = []
    cells: list[Cell] = []

    def add(
        origin: str,
        text: str,
        grade_id: str | None = None,
        hidden: str = "",
        position: int | None = None,
    ) -> None:
        if origin in ("answer", "added"):
            text, had_magic = _without_magics(text)
            if had_magic:
                notes.append(N_("IPython magics and shell commands (% or !) were not run."))
        cells.append(Cell(len(cells), origin, text, grade_id, hidden, position))

    for text in added_after.get(None, []):
        add("added", text)
    for position, cell in enumerate(source.cells):
        if cell.cell_type != "code":
            continue
        meta = _nbgrader(cell)
        grade_id = meta.get("grade_id")
        if meta.get("solution") and not meta.get("grade"):
            if grade_id in answers:
                add("answer", answers[grade_id], grade_id, position=position)
            elif added_after:
                missing.append(grade_id)
            else:
                missing_note = N_("The answer cell `{grade_id}` is missing from the notebook.")
                notes.append(missing_note.format(grade_id=grade_id))
        elif meta.get("grade"):
            hidden = "\n".join(match.group(1) for match in _HIDDEN.finditer(cell.source))
            visible = _HIDDEN.sub("", cell.source).rstrip("\n")
            add("test", visible, grade_id, hidden.rstrip("\n"), position)
        else:
            add("course", cell.source, grade_id, position=position)
        for text in added_after.get(grade_id or cell.source, []):
            add("added", text)
    if missing:
        unrecognised = N_(
            "No answer cell was recognised for {cells} (their nbgrader metadata is missing or "
            "changed); the notebook's own code cells were run in their places instead."
        )
        notes.append(unrecognised.format(cells=", ".join(f"`{m}`" for m in missing)))
    return Job(tuple(cells), tuple(dict.fromkeys(notes)))
