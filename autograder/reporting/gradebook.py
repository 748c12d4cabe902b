"""Record class grades in nbgrader's gradebook, so formgrader, feedback and export work as usual.

Any SQLAlchemy URL nbgrader accepts: SQLite by default, PostgreSQL when several graders share
one gradebook. Graders may record at the same time: when two create the same row at once (the
tables of a new gradebook, a unit, a learner), the one whose insert loses takes the row the
other made and goes on.

Given the unit's cells (:func:`autograder.reporting.gradebook_cells.gradebook_cells`), it
writes the rows ``nbgrader generate_assignment`` and ``nbgrader autograde`` write: the graded,
answer and source cells with their checksums; per submission its timestamp, a ``Grade`` per
graded cell (``auto_score`` from the grader) and a ``Comment`` per answer cell (nbgrader's
``No response.`` for an answer left as released). What an instructor set in formgrader stays:
manual scores, extra credit and comments are never written here. A manual score is flagged
for review again (``needs_manual_grade``) only when the grader's own score under it changed,
where ``nbgrader autograde`` flags every manual score on each run.

Example::

    >>> import tempfile
    >>> from autograder.grading.results import GRADED, ItemInfo, ItemResult, UnitResult
    >>> url = f"sqlite:///{tempfile.mkdtemp()}/gradebook.db"
    >>> infos = {"u1": (ItemInfo("a_test", 2.0, "A"),)}
    >>> result = UnitResult("ada", "u1", GRADED, items=(ItemResult("a_test", 2.0, 2.0),),
    ...                     max_score=2.0)
    >>> record_grades(url, [result], infos)
    >>> from nbgrader.api import Gradebook
    >>> with Gradebook(url) as book:
    ...     book.find_submission("u1", "ada").score
    2.0
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

import nbformat
from nbgrader import utils
from nbgrader.api import Comment, Grade, Gradebook, InvalidEntry, SubmittedNotebook
from sqlalchemy.exc import IntegrityError, ProgrammingError, SAWarning

from autograder.grading.results import GRADED, ItemInfo, UnitResult
from autograder.reporting.gradebook_cells import kept_in_gradebook

__all__ = ["Submitted", "record_grades"]

# nbgrader's own automatic comment on an answer cell left as it was released (SaveAutoGrades).
NO_RESPONSE = "No response."

# What losing a race for a row raises: a unique key taken meanwhile (nbgrader wraps it in
# InvalidEntry), or, while a new gradebook's tables are made, a table or type that now exists.
_CONFLICTS = (InvalidEntry, IntegrityError, ProgrammingError)
# A lost race leaves the row committed by the winner, so the next try finds it: one nbgrader call
# needs two tries at most, however many graders there are; opening a new gradebook needs three
# (its tables and nbgrader's version table, then nbgrader's course row).
_ATTEMPTS = 3
# nbgrader logs every rolled-back insert, with its traceback, on this logger: a lost race is
# expected and tried again, and a call that still fails raises the error itself.
_NBGRADER_LOG = logging.getLogger("tornado.application")
_ROLLBACK = "Rolling back session due to database error"
_Made = TypeVar("_Made")


@dataclass(frozen=True)
class Submitted:
    """What the gradebook keeps of one submission besides its scores: nbgrader's timestamp (the
    text of ``timestamp.txt``) and the answer cells left as released."""

    timestamp: str | None = None
    unanswered: frozenset[str] = frozenset()


def record_grades(
    url: str,
    results: Sequence[UnitResult],
    units: Mapping[str, Sequence[ItemInfo]],
    *,
    cells: Mapping[str, Sequence[nbformat.NotebookNode]] | None = None,
    submitted: Mapping[tuple[str, str], Submitted] | None = None,
) -> None:
    """Write each graded result's item scores as nbgrader auto scores (one notebook per unit,
    named like the unit); not-gradable results are left out, as nbgrader has no such state.
    ``cells``: per unit, its cells as the gradebook keeps them, to record the answer and source
    cells too (formgrader's grading view needs them); ``submitted``: per (student, unit), the
    submission's timestamp and unanswered cells."""
    # nbgrader runs the `alembic` command that sits beside this interpreter to stamp a new
    # database; put it on PATH even when the environment was not activated.
    tools = str(Path(sys.executable).parent)
    if tools not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([tools, os.environ.get("PATH", "")])
    with warnings.catch_warnings(), _quiet_rollbacks():
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's own session use
        with _again_on_conflict(partial(_ClosingGradebook, url)) as book:
            for unit, infos in units.items():
                _record_unit(book, unit, infos)
                for cell in (cells or {}).get(unit, ()):
                    if kept_in_gradebook(cell):
                        _record_cell(book, unit, cell)
            for result in results:
                if result.status == GRADED and result.unit in units:
                    about = (submitted or {}).get((result.student, result.unit), Submitted())
                    _record_result(book, result, about)


class _ClosingGradebook(Gradebook):
    """nbgrader's gradebook, which releases its connection when opening it fails half-way (two
    graders creating a new gradebook's tables at once)."""

    def __init__(self, url: str) -> None:
        try:
            super().__init__(url)
        except BaseException:
            if hasattr(self, "db"):
                self.close()
            raise


def _record_unit(book: Gradebook, unit: str, infos: Sequence[ItemInfo]) -> None:
    _again_on_conflict(partial(book.update_or_create_assignment, unit), book)
    _again_on_conflict(partial(book.update_or_create_notebook, unit, unit), book)
    for info in infos:
        _again_on_conflict(
            partial(
                book.update_or_create_grade_cell,
                info.grade_id,
                unit,
                unit,
                max_score=info.max_points,
                cell_type="code",
            ),
            book,
        )


def _record_cell(book: Gradebook, unit: str, cell: nbformat.NotebookNode) -> None:
    """One cell's rows, as nbgrader's ``SaveCells`` writes them."""
    name, kind = cell.metadata.nbgrader["grade_id"], cell.cell_type
    points = float(cell.metadata.nbgrader.get("points", 0) or 0)
    if utils.is_grade(cell):
        make = book.update_or_create_grade_cell
        _again_on_conflict(partial(make, name, unit, unit, max_score=points, cell_type=kind), book)
    if utils.is_solution(cell):
        _again_on_conflict(partial(book.update_or_create_solution_cell, name, unit, unit), book)
    if utils.is_task(cell):
        make = book.update_or_create_task_cell
        _again_on_conflict(partial(make, name, unit, unit, max_score=points, cell_type=kind), book)
    source = {
        "cell_type": kind,
        "locked": utils.is_locked(cell),
        "source": cell.source,
        "checksum": cell.metadata.nbgrader.get("checksum"),
    }
    _again_on_conflict(partial(book.update_or_create_source_cell, name, unit, unit, **source), book)


def _record_result(book: Gradebook, result: UnitResult, about: Submitted) -> None:
    _again_on_conflict(partial(book.update_or_create_student, result.student), book)
    when = {"timestamp": about.timestamp} if about.timestamp else {}
    make = partial(book.update_or_create_submission, result.unit, result.student, **when)
    _again_on_conflict(make, book)
    notebook = book.find_submission_notebook(result.unit, result.unit, result.student)
    _again_on_conflict(partial(_complete, book, notebook), book)
    for item in result.items:
        grade = book.find_grade(item.grade_id, result.unit, result.unit, result.student)
        if grade.manual_score is None:
            grade.needs_manual_grade = False
        elif grade.auto_score is not None and grade.auto_score != item.points:
            grade.needs_manual_grade = True  # the grader changed its mind under a manual score
        grade.auto_score = item.points
    for comment in notebook.comments:
        answered = comment.name not in about.unanswered
        comment.auto_comment = None if answered else NO_RESPONSE
    book.db.commit()


def _complete(book: Gradebook, notebook: SubmittedNotebook) -> None:
    """Give a submission made before some of its unit's cells were recorded (by an earlier
    version of the grader) the grade and comment rows nbgrader gives every new one."""
    graded = {grade.cell_id for grade in notebook.grades}
    commented = {comment.cell_id for comment in notebook.comments}
    for cell in [*notebook.notebook.grade_cells, *notebook.notebook.task_cells]:
        if cell.id not in graded:
            book.db.add(Grade(cell_id=cell.id, notebook=notebook))
    for cell in [*notebook.notebook.solution_cells, *notebook.notebook.task_cells]:
        if cell.id not in commented:
            book.db.add(Comment(cell_id=cell.id, notebook=notebook))
    book.db.commit()


def _again_on_conflict(make: Callable[[], _Made], book: Gradebook | None = None) -> _Made:
    """Call ``make``, which finds a row or else creates it; when another grader creates the same
    row first, roll back and call it again, which then finds that row."""
    for _ in range(_ATTEMPTS - 1):
        try:
            return make()
        except _CONFLICTS:
            if book is not None:
                book.db.rollback()
    return make()


@contextmanager
def _quiet_rollbacks() -> Iterator[None]:
    """Keep nbgrader's log of rolled-back inserts off the screen while grades are recorded."""

    def keep(record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(_ROLLBACK)

    _NBGRADER_LOG.addFilter(keep)
    try:
        yield
    finally:
        _NBGRADER_LOG.removeFilter(keep)
