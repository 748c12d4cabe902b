"""Write ``grades.csv``: one row per learner and unit, safe to open in a spreadsheet.

Student ids, reasons and notes come from untrusted input, so a cell that a spreadsheet would
read as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a
leading apostrophe.

Example::

    >>> import tempfile, pathlib
    >>> from autograder.grading.results import GRADED, NOT_GRADABLE, ItemResult, UnitResult
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "grades.csv"
    >>> write_grades_csv(path, [
    ...     UnitResult("ada", "01_leaf_tensors", GRADED, max_score=3.0,
    ...                items=(ItemResult("a_test", 1.5, 3.0),)),
    ...     UnitResult("=bob", "01_leaf_tensors", NOT_GRADABLE,
    ...                reason="01_leaf_tensors.ipynb is empty: submit the saved notebook."),
    ... ])
    >>> print(path.read_text(), end="")
    student,unit,status,score,max_score,reason,notes
    '=bob,01_leaf_tensors,not gradable,,,01_leaf_tensors.ipynb is empty: submit the saved notebook.,
    ada,01_leaf_tensors,graded,1.5,3,,
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from autograder.atomic import write_text_atomic
from autograder.grading.results import GRADED, UnitResult
from autograder.reporting.points import format_points

__all__ = ["COLUMNS", "spreadsheet_safe", "write_grades_csv"]

COLUMNS = ("student", "unit", "status", "score", "max_score", "reason", "notes")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NOTE_SEPARATOR = "; "


def spreadsheet_safe(value: str) -> str:
    """``value`` with a leading apostrophe when a spreadsheet would run it as a formula.

    >>> spreadsheet_safe("=HYPERLINK(1)"), spreadsheet_safe("ada")
    ("'=HYPERLINK(1)", 'ada')
    """
    return f"'{value}" if value.startswith(_FORMULA_STARTS) else value


def write_grades_csv(path: Path, results: Sequence[UnitResult]) -> None:
    """Write one row per result to ``path`` (atomically), sorted by student then unit.

    A not-gradable row has an empty score and its reason; its ``max_score`` is empty unless
    the result carries one. Notes are joined with ``"; "``. Lines end with ``\\n``; UTF-8.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for result in sorted(results, key=lambda result: (result.student, result.unit)):
        writer.writerow(spreadsheet_safe(cell) for cell in _row(result))
    write_text_atomic(path, buffer.getvalue())


def _row(result: UnitResult) -> tuple[str, ...]:
    graded = result.status == GRADED
    score = format_points(result.score) if graded else ""
    max_score = format_points(result.max_score) if graded or result.max_score else ""
    notes = _NOTE_SEPARATOR.join(result.notes)
    return (result.student, result.unit, result.status, score, max_score, result.reason, notes)
