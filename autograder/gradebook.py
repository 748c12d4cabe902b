"""Record class grades in nbgrader's gradebook, so formgrader, feedback and export work as usual.

Any SQLAlchemy URL nbgrader accepts: SQLite by default, PostgreSQL when several graders share
one gradebook.

Example::

    >>> import tempfile
    >>> from autograder.results import GRADED, ItemInfo, ItemResult, UnitResult
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

import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from autograder.results import GRADED, ItemInfo, UnitResult

__all__ = ["record_grades"]


def record_grades(
    url: str, results: Sequence[UnitResult], units: Mapping[str, Sequence[ItemInfo]]
) -> None:
    """Write each graded result's item scores as nbgrader auto scores (one notebook per unit,
    named like the unit); not-gradable results are left out, as nbgrader has no such state."""
    # nbgrader runs the `alembic` command that sits beside this interpreter to migrate the
    # database; put it on PATH even when the environment was not activated.
    tools = str(Path(sys.executable).parent)
    if tools not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([tools, os.environ.get("PATH", "")])
    with warnings.catch_warnings(), Gradebook(url) as book:
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's own session use
        for unit, infos in units.items():
            book.update_or_create_assignment(unit)
            book.update_or_create_notebook(unit, unit)
            for info in infos:
                book.update_or_create_grade_cell(
                    info.grade_id, unit, unit, max_score=info.max_points, cell_type="code"
                )
        for result in results:
            if result.status != GRADED or result.unit not in units:
                continue
            book.update_or_create_student(result.student)
            book.update_or_create_submission(result.unit, result.student)
            for item in result.items:
                grade = book.find_grade(item.grade_id, result.unit, result.unit, result.student)
                grade.auto_score = item.points
            book.db.commit()
