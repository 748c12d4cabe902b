"""Check an instructor's source notebook before nbgrader sees it, naming the notebook and cell.

nbgrader reports a broken ``### BEGIN SOLUTION`` marker or a duplicate grade id late and
without saying where; this check says exactly which file and cell, and lists every problem.

Example::

    >>> import nbformat
    >>> notebook = nbformat.v4.new_notebook()
    >>> notebook.cells = [nbformat.v4.new_code_cell("### BEGIN SOLUTION\\nx = 1")]
    >>> notebook.cells[0].metadata["nbgrader"] = {"solution": True, "grade": False,
    ...                                           "grade_id": "x", "locked": False}
    >>> for problem in find_problems(notebook):
    ...     print(problem)
    cell 1 (grade_id 'x'): '### BEGIN SOLUTION' on line 1 has no matching '### END SOLUTION'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import nbformat

__all__ = ["SourceNotebookError", "check_source_notebook", "find_problems"]

_GRADE_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_MARKER_PAIRS = {
    "### BEGIN SOLUTION": ("### END SOLUTION", "solution"),
    "### BEGIN HIDDEN TESTS": ("### END HIDDEN TESTS", "grade"),
}
_END_MARKERS = {end for end, _ in _MARKER_PAIRS.values()}
_MARKER_WORDS = re.compile(r"\b(BEGIN|END)\s+(SOLUTIONS?|HIDDEN\s+TESTS?)\b", re.IGNORECASE)


class SourceNotebookError(ValueError):
    """A source notebook cannot be released; the message names the file, cells and problems."""


def check_source_notebook(path: Path) -> nbformat.NotebookNode:
    """Read ``path`` and return it, or raise :class:`SourceNotebookError` listing every problem."""
    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as error:  # nbformat raises several kinds for unreadable files
        raise SourceNotebookError(f"{path}: not a readable notebook ({error})") from error
    problems = list(find_problems(notebook))
    if problems:
        listed = "\n".join(f"  {problem}" for problem in problems)
        raise SourceNotebookError(f"{path}: {len(problems)} problem(s)\n{listed}")
    return notebook


def find_problems(notebook: nbformat.NotebookNode) -> Iterator[str]:
    """Yield one line per problem: broken markers, bad or duplicate grade ids, missing points."""
    seen_ids: dict[str, int] = {}
    for number, cell in enumerate(notebook.cells, start=1):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        where = f"cell {number}" + (
            f" (grade_id {meta['grade_id']!r})" if "grade_id" in meta else ""
        )
        for problem in _cell_problems(cell, meta):
            yield f"{where}: {problem}"
        grade_id = meta.get("grade_id")
        if grade_id is None:
            continue
        if grade_id in seen_ids:
            yield f"{where}: duplicate grade_id, also used by cell {seen_ids[grade_id]}"
        seen_ids.setdefault(grade_id, number)


def _cell_problems(cell: nbformat.NotebookNode, meta: dict) -> Iterator[str]:
    yield from _marker_problems(cell.source, meta)
    if not meta:
        return
    grade_id = meta.get("grade_id")
    if not isinstance(grade_id, str) or not _GRADE_ID.match(grade_id):
        yield f"grade_id {grade_id!r} must be letters, digits, '_' or '-'"
    if meta.get("grade"):
        points = meta.get("points")
        if not isinstance(points, int | float) or isinstance(points, bool) or points <= 0:
            yield f"a graded cell needs positive points, found {points!r}"
        if not meta.get("solution") and not meta.get("locked"):
            yield "a test cell must be locked, or a learner could edit the test"
    if (
        meta.get("solution")
        and cell.cell_type == "code"
        and "### BEGIN SOLUTION" not in cell.source
    ):
        yield "a solution cell without '### BEGIN SOLUTION' would hand learners the answer"


def _marker_problems(source: str, meta: dict) -> Iterator[str]:
    open_marker: tuple[str, int] | None = None
    for line_number, line in enumerate(source.splitlines(), start=1):
        text = line.strip()
        if text in _MARKER_PAIRS:
            if open_marker is not None:
                opened, opened_at = open_marker
                yield f"{text!r} on line {line_number} opens inside {opened!r} (line {opened_at})"
            open_marker = (text, line_number)
            role = _MARKER_PAIRS[text][1]
            if not meta.get(role):
                yield f"{text!r} on line {line_number} is only allowed in a cell marked {role}"
        elif text in _END_MARKERS:
            if open_marker is None or _MARKER_PAIRS[open_marker[0]][0] != text:
                yield f"{text!r} on line {line_number} closes nothing"
            else:
                open_marker = None
        elif _MARKER_WORDS.search(text) and text.startswith("#"):
            yield f"line {line_number} looks like a marker but is not one exactly: {text!r}"
    if open_marker is not None:
        end = _MARKER_PAIRS[open_marker[0]][0]
        yield f"{open_marker[0]!r} on line {open_marker[1]} has no matching {end!r}"
