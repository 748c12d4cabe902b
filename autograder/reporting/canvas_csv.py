"""``python -m autograder canvas-csv``: the gradebook's scores as a CSV that Canvas's gradebook
imports (Grades > Import).

Canvas's import format is its own gradebook export: the columns ``Student``, ``ID``, ``SIS User
ID``, ``SIS Login ID`` and ``Section``, then one column per assignment; the row after the header
holds ``Points Possible`` in the ``Student`` column and each assignment's points (Canvas's
Instructor Guide, "How do I import grades in the Gradebook?" and "How do I export grades in the
Gradebook?"). Canvas matches a learner by ``ID``, ``SIS User ID`` or ``SIS Login ID`` (only one
is needed) and an assignment column by its name, creating the assignment with the points of the
``Points Possible`` row when none has that name. A cell left empty changes nothing in Canvas.

The scores are the gradebook's final ones: the grader's, with what an instructor changed in
formgrader (manual points, extra credit). A unit with no graded notebook for a learner is left
empty, never written as 0: the grader's ``grades.csv`` says why it was not gradable.

Example::

    >>> import tempfile
    >>> from autograder.grading.results import GRADED, ItemInfo, ItemResult, UnitResult
    >>> from autograder.reporting.gradebook import record_grades
    >>> folder = Path(tempfile.mkdtemp())
    >>> url = f"sqlite:///{folder}/gradebook.db"
    >>> units = {"u1": (ItemInfo("a_test", 2.0, "A"),), "u2": (ItemInfo("b_test", 3.0, "B"),)}
    >>> record_grades(url, [UnitResult("ada", "u1", GRADED, items=(ItemResult("a_test", 2.0, 2.0),),
    ...                                max_score=2.0)], units)
    >>> print(write_canvas_csv(db_url=url, out=folder / "canvas.csv").read_text(), end="")
    Student,ID,SIS User ID,SIS Login ID,Section,u1,u2
    Points Possible,,,,,2,3
    ada,,,ada,,2,
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.atomic import write_text_atomic
from autograder.reporting.grades_csv import spreadsheet_safe
from autograder.reporting.points import format_points

__all__ = ["CANVAS_COLUMNS", "MATCH_COLUMNS", "CanvasCsvError", "write_canvas_csv"]

# Canvas's gradebook columns before the assignments, in its order.
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "Points Possible"
# The columns that can carry nbgrader's student id for Canvas to match the learner.
MATCH_COLUMNS = ("ID", "SIS User ID", "SIS Login ID")


class CanvasCsvError(ValueError):
    """The gradebook cannot be read, or the options are wrong; the message says which."""


def write_canvas_csv(*, db_url: str, out: Path, match: str = "SIS Login ID") -> Path:
    """Write the gradebook at ``db_url`` to ``out`` (atomically) in Canvas's import format, with
    nbgrader's student id in the ``match`` column (``SIS Login ID`` when learners log in to the
    hub with their institution login, ``ID`` for ids read from a Canvas zip). Returns ``out``."""
    if match not in MATCH_COLUMNS:
        raise CanvasCsvError(f"--match must be one of {', '.join(MATCH_COLUMNS)}, not {match!r}")
    units, learners = _read(db_url)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*CANVAS_COLUMNS, *units])
    writer.writerow([POINTS_POSSIBLE, "", "", "", "", *map(format_points, units.values())])
    for student, (name, scores) in sorted(learners.items()):
        ids = {column: student if column == match else "" for column in MATCH_COLUMNS}
        cells = [name, *ids.values(), ""]
        cells += [format_points(scores[unit]) if unit in scores else "" for unit in units]
        writer.writerow([spreadsheet_safe(cell) for cell in cells])
    write_text_atomic(out, buffer.getvalue())
    return out


def _read(db_url: str) -> tuple[dict[str, float], dict[str, tuple[str, dict[str, float]]]]:
    """``({unit: max score}, {student: (display name, {unit: score})})`` from the gradebook."""
    from nbgrader.api import Gradebook  # slow to import; only this verb needs it
    from sqlalchemy.exc import SQLAlchemyError

    if db_url.startswith("sqlite:///") and not Path(db_url.removeprefix("sqlite:///")).is_file():
        raise CanvasCsvError(f"no gradebook at {db_url.removeprefix('sqlite:///')}: grade first")
    try:
        with Gradebook(db_url) as book:
            units = {a.name: float(a.max_score) for a in sorted(book.assignments, key=_name)}
            learners = {}
            for student in book.students:
                scores = {s.assignment.name: float(s.score) for s in student.submissions}
                learners[student.id] = (_display(student), scores)
    except SQLAlchemyError as error:
        raise CanvasCsvError(f"cannot read the gradebook {db_url}: {error}") from error
    return units, learners


def _name(assignment: object) -> str:
    return str(getattr(assignment, "name", ""))


def _display(student: object) -> str:
    """Canvas's ``Student`` column: "Last, First" when nbgrader knows the names, else the id."""
    last, first = getattr(student, "last_name", None), getattr(student, "first_name", None)
    if last and first:
        return f"{last}, {first}"
    return str(last or first or getattr(student, "id", ""))
