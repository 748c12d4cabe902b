"""Put the class grader's feedback pages where nbgrader's ``release_feedback`` looks for them.

nbgrader releases ``COURSE/feedback/STUDENT/UNIT/NOTEBOOK.html`` to the exchange, keyed by the
``submission_secret.txt`` and ``timestamp.txt`` that ``nbgrader collect`` left beside each
submitted notebook. This copies each graded learner's page there with those two files, so that
``nbgrader release_feedback UNIT`` and the learners' ``nbgrader fetch_feedback`` work as usual.

Example::

    >>> import tempfile
    >>> from autograder.grading.results import GRADED, UnitResult
    >>> base = Path(tempfile.mkdtemp())
    >>> submitted = base / "submitted" / "ada" / "u1"
    >>> submitted.mkdir(parents=True)
    >>> for name, text in [("u1.ipynb", "{}"), ("timestamp.txt", "2026-12-01 10:00:00"),
    ...                    ("submission_secret.txt", "s3cret")]:
    ...     _ = (submitted / name).write_text(text)
    >>> page = base / "graded" / "feedback" / "ada" / "u1.html"
    >>> page.parent.mkdir(parents=True)
    >>> _ = page.write_text("<html>feedback</html>")
    >>> placed = place_feedback([UnitResult("ada", "u1", GRADED)],
    ...                         pages=base / "graded" / "feedback",
    ...                         submitted=base / "submitted", course=base)
    >>> sorted(p.name for p in placed[0].parent.iterdir())
    ['submission_secret.txt', 'timestamp.txt', 'u1.html']
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autograder.atomic import write_bytes_atomic
from autograder.grading.results import GRADED, UnitResult

__all__ = ["place_feedback"]

_KEYS = ("timestamp.txt", "submission_secret.txt")


def place_feedback(
    results: Sequence[UnitResult], *, pages: Path, submitted: Path, course: Path
) -> list[Path]:
    """Copy each graded result's page from ``pages/STUDENT/UNIT.html`` to
    ``course/feedback/STUDENT/UNIT/UNIT.html`` with the keys from ``submitted/STUDENT/UNIT/``;
    results whose submission has no keys (not collected by nbgrader) are skipped. Returns the
    pages placed."""
    placed = []
    for result in results:
        keys = submitted / result.student / result.unit
        if result.status != GRADED or not all((keys / key).is_file() for key in _KEYS):
            continue
        folder = course / "feedback" / result.student / result.unit
        for key in _KEYS:
            write_bytes_atomic(folder / key, (keys / key).read_bytes())
        page = folder / f"{result.unit}.html"
        write_bytes_atomic(page, (pages / result.student / f"{result.unit}.html").read_bytes())
        placed.append(page)
    return placed
