"""Write what ``nbgrader autograde`` writes for each graded notebook, from the class grader's run.

formgrader opens ``COURSE/autograded/STUDENT/UNIT/UNIT.ipynb`` to show a submission, and
``nbgrader generate_feedback`` renders it for the learner. This builds that notebook the way
nbgrader's autograde does (its ``OverwriteCells``: every cell nbgrader keeps in the gradebook
comes back as the instructor wrote it, hidden tests included, with the gradebook's checksum; the
learner's answers and added cells stay), and fills in what the grader's sandboxed run printed.
Those outputs are for display only: the points come from the grader's own judgement
(:mod:`autograder.grading.scoring`), which each test cell's last output states. The other files
of the submission folder (``timestamp.txt``, ``submission_secret.txt``,
``first_predictions.json``) are copied beside the notebook, and everything is made read-only,
as nbgrader does.

Example::

    >>> from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
    >>> from autograder.grading.assemble import assemble
    >>> from autograder.grading.results import GRADED, ItemResult, UnitResult
    >>> test = new_code_cell("assert x == 1", metadata={"nbgrader": {
    ...     "grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "x_test"}})
    >>> source = new_notebook(cells=[new_markdown_cell("# x"), new_code_cell("x = 1"), test])
    >>> job = assemble(source, source)
    >>> result = UnitResult("ada", "u1", GRADED, items=(ItemResult("x_test", 1.0, 1.0),),
    ...                     outputs={"0": ["set\\n", "", ""]})
    >>> notebook = autograded_notebook(source.cells, source, job, result)
    >>> [cell.cell_type for cell in notebook.cells]
    ['markdown', 'code', 'code']
    >>> notebook.cells[1].outputs[0].text
    'set\\n'
    >>> notebook.cells[2].outputs[-1].text
    '✓ The class grader: 1 of 1 points.\\n'
"""

from __future__ import annotations

import copy
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_output

from autograder.atomic import write_text_atomic
from autograder.grading.assemble import Cell, Job
from autograder.grading.results import ItemResult, UnitResult
from autograder.i18n import N_, use_language
from autograder.i18n import gettext as _

__all__ = ["autograded_notebook", "write_autograded"]

# What the autograded notebook says in each test cell's last output (shown in formgrader and in
# nbgrader's feedback): the class grader's decision, never the learner process's.
# In the learner's language where shown (autograder.i18n.gettext).
PASSED = N_("✓ The class grader: {points:g} of {max_points:g} points.\n")
NOT_PASSED = N_("Not passed")
NOT_PASSED_VALUE = N_("the class grader: {points:g} of {max_points:g} points")
NOT_RUN = N_("The class grader did not run this cell.")
# nbgrader's autograde leaves its output read-only (``Autograde.permissions``, 444).
_READ_ONLY = 0o444
_ERROR_NAME = re.compile(r"^([A-Za-z_][\w.]*): ")


def autograded_notebook(
    cells: Sequence[nbformat.NotebookNode],
    released: nbformat.NotebookNode,
    job: Job,
    result: UnitResult,
) -> nbformat.NotebookNode:
    """The autograded notebook of ``result``: ``cells`` (the unit's cells as the gradebook keeps
    them, :func:`autograder.reporting.gradebook_cells.gradebook_cells`) with the learner's
    answers and added cells from ``job`` (the cells the grader ran) in their places, each run
    cell with its outputs, each test cell ending on the grader's decision; ``released`` (the
    learner's release, in the learner's language) gives the notebook's metadata and the words
    of its markdown cells; the decisions speak ``result.language``."""
    words = {cell.get("id"): cell.source for cell in released.cells if cell.cell_type == "markdown"}
    cells = [_in_words(cell, words) for cell in cells]
    items = {item.grade_id: item for item in result.items}
    made: list[nbformat.NotebookNode] = []
    shown = 0  # source cells before this position are in `made` already
    for ran in job.cells:
        if ran.position is not None:
            made += [copy.deepcopy(cell) for cell in cells[shown : ran.position]]
            shown = ran.position + 1
        with use_language(result.language):
            made.append(_ran_cell(ran, cells, items, result.outputs.get(str(ran.index))))
    made += [copy.deepcopy(cell) for cell in cells[shown:]]
    notebook = nbformat.v4.new_notebook(cells=made, metadata=copy.deepcopy(released.metadata))
    notebook.nbformat_minor = max(released.get("nbformat_minor", 5), 5)
    nbformat.validate(notebook)
    return notebook


def _in_words(cell: nbformat.NotebookNode, words: dict[str, str]) -> nbformat.NotebookNode:
    """A markdown cell in the words of the release with the same cell id; others as they are."""
    if cell.cell_type != "markdown" or cell.get("id") not in words:
        return cell
    translated = copy.deepcopy(cell)
    translated.source = words[cell.id]
    return translated


def _ran_cell(
    ran: Cell,
    cells: Sequence[nbformat.NotebookNode],
    items: dict[str, ItemResult],
    shown: list[str] | None,
) -> nbformat.NotebookNode:
    if ran.position is None:
        cell = new_code_cell(ran.source)
        cell.id = f"added-{ran.index}"
    else:
        cell = copy.deepcopy(cells[ran.position])
        if ran.origin == "answer":
            cell.source = ran.source
    cell.execution_count = ran.index + 1
    stdout, stderr, error = shown or ("", "", "")
    cell.outputs = [
        new_output("stream", name=name, text=text)
        for name, text in (("stdout", stdout), ("stderr", stderr))
        if text
    ]
    if ran.origin == "test" and ran.grade_id in items:
        cell.outputs.append(_decision(items[ran.grade_id]))
    elif error:
        cell.outputs.append(_error(error))
    return cell


def _decision(item: ItemResult) -> nbformat.NotebookNode:
    """The grader's decision on one item, as the test cell's last output: nbgrader reads an
    error output as a failed test, so a lost item shows as one."""
    figures = {"points": item.points, "max_points": item.max_points}
    if item.passed:
        return new_output("stream", name="stdout", text=_(PASSED).format(**figures))
    lines = [line for failure in item.failures for line in failure.splitlines()]
    return new_output(
        "error",
        ename=_(NOT_PASSED),
        evalue=_(NOT_PASSED_VALUE).format(**figures),
        traceback=lines or [_(NOT_RUN)],
    )


def _error(text: str) -> nbformat.NotebookNode:
    named = _ERROR_NAME.match(text)
    ename = named.group(1) if named else "Error"
    evalue = text[named.end() :] if named else text
    return new_output("error", ename=ename, evalue=evalue, traceback=text.splitlines())


def write_autograded(
    course: Path, result: UnitResult, notebook: nbformat.NotebookNode, submitted: Path | None
) -> Path:
    """Write ``notebook`` to ``course/autograded/STUDENT/UNIT/UNIT.ipynb`` with the other plain
    files of the ``submitted`` folder beside it (hidden files, links and notebooks left out), all
    read-only as nbgrader leaves them. Returns the notebook's path."""
    folder = course / "autograded" / result.student / result.unit
    folder.mkdir(parents=True, exist_ok=True)
    if submitted is not None and submitted.is_dir():
        for path in sorted(submitted.iterdir()):
            plain = path.is_file() and not path.is_symlink()
            if plain and not path.name.startswith(".") and path.suffix != ".ipynb":
                _replace_read_only(path, folder / path.name)
    target = folder / f"{result.unit}.ipynb"
    write_text_atomic(target, nbformat.writes(notebook) + "\n")
    os.chmod(target, _READ_ONLY)
    return target


def _replace_read_only(source: Path, target: Path) -> None:
    staged = target.with_name(f".{target.name}.tmp")
    shutil.copyfile(source, staged)
    os.chmod(staged, _READ_ONLY)
    os.replace(staged, target)
