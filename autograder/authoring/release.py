"""Generate the learner notebooks in course/ from the source notebooks in solutions/.

nbgrader does the conversion (solutions cleared, hidden tests removed, cells locked and
checksummed); each translation of a learner notebook is then built from it and the unit's
catalog (:mod:`autograder.authoring.translation`) into course/LANG/. This module checks the
sources first (their form, then that each solution run twice in the grader makes the same
check records: :mod:`autograder.authoring.reproducible`), generates into a scratch folder and
only then replaces course/ file by file with atomic renames, so an error leaves course/
untouched.

Example::

    >>> from pathlib import Path
    >>> stale = release(root=Path("."), check=True)  # doctest: +SKIP
    >>> stale                                        # doctest: +SKIP
    []
"""

from __future__ import annotations

import filecmp
import os
import shutil
import tempfile
from pathlib import Path

import nbformat
from traitlets.config import PyFileConfigLoader

from autograder.authoring.reproducible import NotReproducible, check_reproducible
from autograder.authoring.source_check import check_source_notebook
from autograder.authoring.translation import TRANSLATIONS, translated_learner_notebook
from autograder.checks.first_predictions import RECORD_FILE
from autograder.layout import CourseLayout

__all__ = ["ReleaseError", "release"]


class ReleaseError(RuntimeError):
    """nbgrader could not generate a unit; the message says which and why."""


def release(*, root: Path, check: bool = False, reproducible: bool = True) -> list[Path]:
    """Regenerate ``course/`` from ``solutions/`` under ``root``.

    With ``check=True`` nothing is written: the return value lists the files of ``course/``
    that differ from what would be generated (empty when course/ is up to date). Otherwise
    the return value lists the files written or removed. ``reproducible=False`` skips running
    the solutions (for a tree without the grader's packages).
    """
    layout = CourseLayout(root.resolve())
    units = layout.units()
    for unit in units:
        check_source_notebook(layout.source_notebook(unit))
    if reproducible:
        try:
            check_reproducible(layout, units)
        except NotReproducible as problem:
            raise ReleaseError(str(problem)) from problem
    with tempfile.TemporaryDirectory(prefix=".release-", dir=layout.root) as scratch:
        generated = Path(scratch)
        for unit in units:
            _generate(layout, unit, generated)
            _translate(layout, unit, generated)
        changes = _differences(generated, layout.course)
        if not check:
            _apply(changes, generated, layout.course)
    return [layout.course / relative for relative in changes]


def _generate(layout: CourseLayout, unit: str, destination: Path) -> None:
    # Imported here: nbgrader takes seconds to import, and only this step needs it.
    from nbgrader.converters import GenerateAssignment
    from nbgrader.converters.base import NbGraderException
    from nbgrader.coursedir import CourseDirectory

    config = PyFileConfigLoader(
        layout.nbgrader_config.name, path=str(layout.nbgrader_config.parent)
    ).load_config()
    config.CourseDirectory.root = str(layout.root)
    config.CourseDirectory.release_directory = str(destination)
    config.CourseDirectory.assignment_id = unit
    config.GenerateAssignment.force = True
    config.GenerateAssignment.no_database = True
    config.SaveCells.enabled = False
    converter = GenerateAssignment(coursedir=CourseDirectory(config=config), config=config)
    try:
        converter.start()
    except NbGraderException as error:
        raise ReleaseError(f"nbgrader could not generate {unit}: {error}") from error


def _translate(layout: CourseLayout, unit: str, generated: Path) -> None:
    """Each translation of the unit's generated learner notebook, beside it in ``LANG/``."""
    english = nbformat.read(generated / unit / f"{unit}.ipynb", as_version=4)
    for language in TRANSLATIONS:
        notebook = translated_learner_notebook(layout.root, unit, language, english)
        target = generated / language / unit / f"{unit}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)


def _tree(folder: Path) -> set[Path]:
    """The files under ``folder``, less the records of first predictions that running a
    notebook writes beside it: never released (one left in solutions/ holds the answers), never
    removed from course/ (one there is a learner's)."""
    if not folder.is_dir():
        return set()
    return {
        path.relative_to(folder)
        for path in folder.rglob("*")
        if path.is_file() and path.name != RECORD_FILE
    }


def _differences(generated: Path, course: Path) -> list[Path]:
    new, old = _tree(generated), _tree(course)
    changed = {
        relative
        for relative in new & old
        if not filecmp.cmp(generated / relative, course / relative, shallow=False)
    }
    return sorted(changed | (new ^ old))


def _apply(changes: list[Path], generated: Path, course: Path) -> None:
    for relative in changes:
        source, target = generated / relative, course / relative
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            staged = target.with_name(f".{target.name}.tmp")
            shutil.copyfile(source, staged)
            os.replace(staged, target)
        else:
            target.unlink()
    for folder in sorted(course.rglob("*"), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
