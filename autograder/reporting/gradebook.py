"""Record class grades in nbgrader's gradebook, so formgrader, feedback and export work as usual.

Any SQLAlchemy URL nbgrader accepts: SQLite by default, PostgreSQL when several graders share
one gradebook. Graders may record at the same time: when two create the same row at once (the
tables of a new gradebook, a unit, a learner), the one whose insert loses takes the row the
other made and goes on.

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
from functools import partial
from pathlib import Path
from typing import TypeVar

from nbgrader.api import Gradebook, InvalidEntry
from sqlalchemy.exc import IntegrityError, ProgrammingError, SAWarning

from autograder.grading.results import GRADED, ItemInfo, UnitResult

__all__ = ["record_grades"]

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


def record_grades(
    url: str, results: Sequence[UnitResult], units: Mapping[str, Sequence[ItemInfo]]
) -> None:
    """Write each graded result's item scores as nbgrader auto scores (one notebook per unit,
    named like the unit); not-gradable results are left out, as nbgrader has no such state."""
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
            for result in results:
                if result.status == GRADED and result.unit in units:
                    _record_result(book, result)


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


def _record_result(book: Gradebook, result: UnitResult) -> None:
    _again_on_conflict(partial(book.update_or_create_student, result.student), book)
    _again_on_conflict(partial(book.update_or_create_submission, result.unit, result.student), book)
    for item in result.items:
        grade = book.find_grade(item.grade_id, result.unit, result.unit, result.student)
        grade.auto_score = item.points
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
