"""What the class grader leaves for nbgrader's own tools besides the scores: the autograded
notebooks formgrader opens, and per submission the timestamp and the answers left as released.

Called by :func:`autograder.grading.grade.grade` once every notebook is graded (or taken from
the resume cache): each graded learner's notebook is read and assembled again exactly as it was
graded (:func:`autograder.grading.assemble.assemble` is deterministic), so nothing but the run's
outputs has to be cached. The submission folder's files (``timestamp.txt`` and the others) are
used only in nbgrader's layout, ``SUBMISSIONS/STUDENT/UNIT/``: in an LMS zip's flat folder they
would be other learners' files.

Example::

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "timestamp.txt").write_text("2026-10-12 10:00:00.123456 UTC\\n")
    >>> submission_timestamp(folder)
    '2026-10-12 10:00:00.123456 UTC'
    >>> _ = (folder / "timestamp.txt").write_text("not a time")
    >>> submission_timestamp(folder) is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader import utils

from autograder.authoring.translation import TRANSLATIONS
from autograder.grading.assemble import assemble
from autograder.grading.notebook_reader import read_learner_notebook
from autograder.grading.results import GRADED, NotGradable, UnitResult
from autograder.layout import CourseLayout
from autograder.reporting.autograded import autograded_notebook, write_autograded
from autograder.reporting.gradebook import Submitted
from autograder.reporting.gradebook_cells import gradebook_cells

__all__ = ["UnitNotebooks", "nbgrader_records", "submission_timestamp"]

_TIMESTAMP_BYTES = 200


@dataclass(frozen=True)
class UnitNotebooks:
    """A unit's source and released notebooks, and its cells as the gradebook keeps them
    (``released`` is ``None`` and ``cells`` empty for a unit never released to ``course/``:
    its scores are recorded, but no autograded notebook can be written)."""

    source: nbformat.NotebookNode
    released: nbformat.NotebookNode | None
    cells: tuple[nbformat.NotebookNode, ...]
    translations: dict[str, nbformat.NotebookNode] = field(default_factory=dict)

    @classmethod
    def of(cls, layout: CourseLayout, unit: str) -> UnitNotebooks:
        """Read ``unit``'s notebooks; :class:`~autograder.reporting.gradebook_cells.
        CellsOutOfDate` when ``course/`` does not match ``solutions/``."""
        source = nbformat.read(layout.source_notebook(unit), as_version=4)
        if not layout.learner_notebook(unit).is_file():
            return cls(source, None, ())
        released = nbformat.read(layout.learner_notebook(unit), as_version=4)
        cells = gradebook_cells(source, released, name=f"{unit}.ipynb")
        translations = {
            language: nbformat.read(layout.learner_notebook(unit, language), as_version=4)
            for language in TRANSLATIONS
            if layout.learner_notebook(unit, language).is_file()
        }
        return cls(source, released, tuple(cells), translations)


def submission_timestamp(folder: Path) -> str | None:
    """The text of nbgrader's ``timestamp.txt`` in ``folder``; ``None`` when there is none or
    nbgrader could not read it as a time."""
    path = folder / "timestamp.txt"
    if not path.is_file() or path.is_symlink():
        return None
    try:
        with path.open("rb") as stream:
            text = stream.read(_TIMESTAMP_BYTES).decode("utf-8").strip()
        utils.parse_utc(text)
    except (OSError, UnicodeDecodeError, ValueError, OverflowError):
        return None
    return text or None


def nbgrader_records(
    results: Sequence[UnitResult],
    notebooks: Mapping[tuple[str, str], Path],
    units: Mapping[str, UnitNotebooks],
    *,
    submissions: Path | None,
    course: Path | None,
) -> tuple[dict[tuple[str, str], Submitted], list[str]]:
    """For each graded result whose notebook is in ``notebooks`` ((student, unit) -> path):
    write its autograded notebook into ``course`` (when given) and return what the gradebook
    keeps of the submission, with a line for each notebook that could not be written (the
    others are written all the same). ``submissions``: the submissions folder in nbgrader's
    layout (``None`` for an LMS zip), whose per-submission files are used."""
    kept, problems = {}, []
    for result in results:
        path = notebooks.get((result.student, result.unit))
        unit = units.get(result.unit)
        if result.status != GRADED or path is None or unit is None:
            continue
        if unit.released is None:
            if course is not None:
                problems.append(
                    f"{result.student} {result.unit}: no autograded notebook "
                    f"(course/{result.unit}/ was never released: run `make release`)"
                )
            continue
        folder = path.parent
        own = submissions is not None and folder == submissions / result.student / result.unit
        try:
            job = assemble(unit.source, read_learner_notebook(path))
            released = unit.translations.get(result.language, unit.released)
            notebook = autograded_notebook(unit.cells, released, job, result)
            if course is not None:
                write_autograded(course, result, notebook, folder if own else None)
        except (NotGradable, ValueError, OSError) as error:
            problems.append(f"{result.student} {result.unit}: no autograded notebook ({error})")
            continue
        kept[(result.student, result.unit)] = Submitted(
            timestamp=submission_timestamp(folder) if own else None,
            unanswered=_unanswered(notebook),
        )
    return kept, problems


def _unanswered(notebook: nbformat.NotebookNode) -> frozenset[str]:
    """The answer cells still as released (nbgrader's test: the checksum did not change)."""
    return frozenset(
        cell.metadata.nbgrader["grade_id"]
        for cell in notebook.cells
        if utils.is_solution(cell)
        and cell.metadata.nbgrader.get("checksum") == utils.compute_checksum(cell)
    )
