"""The course's translations: one PO catalog per language for each unit and each package.

English is written once, in ``solutions/`` and the packages' code. ``python -m autograder
translate`` brings every catalog in step with it (:func:`update_translations`);
:func:`translation_problems` says what a translator still has to do, naming the unit and the
cell or the package and line; ``make release`` builds each learner notebook's translations
(:func:`translated_learner_notebook`) into ``course/LANG/``.

Example::

    >>> from pathlib import Path
    >>> [catalog.label for catalog in course_catalogs(Path("."), "ko")][:3]
    ['autograder', 'gradgraph', 'unit 01_leaf_tensors']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.authoring.translation.catalog import catalog_problems, update_catalog
from autograder.authoring.translation.extract import Entry, library_messages, notebook_messages
from autograder.authoring.translation.notebooks import structure_differences, translated_notebook
from autograder.i18n import LANGUAGES
from autograder.i18n.catalogs import library_catalog, read_catalog_file, unit_catalog
from autograder.layout import CourseLayout

__all__ = [
    "TRANSLATIONS",
    "CourseCatalog",
    "course_catalogs",
    "structure_differences",
    "translated_learner_notebook",
    "translation_problems",
    "update_translations",
    "write_preview",
]

# Every language but the source's.
TRANSLATIONS = tuple(language for language in LANGUAGES if language != "en")
_PACKAGES = ("autograder", "gradgraph")


@dataclass(frozen=True)
class CourseCatalog:
    """One catalog: where it is, the English it translates, and its name in messages."""

    path: Path
    entries: list[Entry]
    label: str
    source: str = ""


def course_catalogs(root: Path, language: str) -> list[CourseCatalog]:
    """The packages' catalogs, then each unit's, for ``language`` under the repository ``root``."""
    layout = CourseLayout(root)
    catalogs = [
        CourseCatalog(library_catalog(package, language), library_messages(root / package), package)
        for package in _PACKAGES
    ]
    for unit in layout.units():
        notebook = nbformat.read(layout.source_notebook(unit), as_version=4)
        catalogs.append(
            CourseCatalog(
                unit_catalog(root, unit, language),
                notebook_messages(notebook),
                f"unit {unit}",
                f"{unit}.ipynb",
            )
        )
    return catalogs


def update_translations(*, root: Path) -> list[Path]:
    """Bring every catalog of every translation in step with the English; the paths written."""
    written = []
    for language in TRANSLATIONS:
        for catalog in course_catalogs(root, language):
            update_catalog(
                catalog.path, catalog.entries, language, label=catalog.label, source=catalog.source
            )
            written.append(catalog.path)
    return written


def translation_problems(*, root: Path) -> list[str]:
    """What is missing, stale or broken in any translation, one line each, each naming its
    language and its unit and cell (or package and line)."""
    problems = []
    for language in TRANSLATIONS:
        for catalog in course_catalogs(root, language):
            problems += [
                f"[{language}] {problem}"
                for problem in catalog_problems(catalog.path, catalog.entries, label=catalog.label)
            ]
    return problems


def translated_learner_notebook(
    root: Path, unit: str, language: str, english: nbformat.NotebookNode
) -> nbformat.NotebookNode:
    """The learner notebook ``english`` of ``unit`` in ``language``, from the unit's catalog."""
    path = unit_catalog(root, unit, language)
    return translated_notebook(
        english,
        unit,
        language,
        markdown=read_catalog_file(path, markdown=True),
        messages=read_catalog_file(path),
    )


def write_preview(*, root: Path, unit: str, language: str, out: Path) -> Path:
    """Write ``unit``'s source notebook (solutions and hidden tests included) in ``language``
    to ``out/LANG/UNIT/UNIT.ipynb``, for a translator to run and read; the path written."""
    layout = CourseLayout(root)
    source = nbformat.read(layout.source_notebook(unit), as_version=4)
    notebook = translated_learner_notebook(root, unit, language, source)
    target = out / language / unit / f"{unit}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    return target
