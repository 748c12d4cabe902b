"""What grading needs of each language a unit is taught in.

A translated notebook is graded exactly like the English one (same cells, items and points);
only what the learner reads changes. For each language the grader keeps the unit's messages
(hidden tests' included, to phrase the failures it judges outside the sandbox), the items
titled in that language (the feedback page's headings), and what the sandbox is given so that
the checks print in the learner's language: a notebook stub beside the run that names the
language and carries only the released notebook's own messages, never a hidden test's.

Example::

    >>> from autograder.layout import CourseLayout
    >>> layout = CourseLayout(Path("."))
    >>> source = nbformat.read(layout.source_notebook("01_leaf_tensors"), as_version=4)
    >>> released = nbformat.read(layout.learner_notebook("01_leaf_tensors"), as_version=4)
    >>> languages = unit_languages(Path("."), "01_leaf_tensors", source, released)
    >>> sorted(languages), languages["en"].files
    (['en', 'ko'], {})
    >>> languages["ko"].infos[0].title
    '✏️ 연습 1 — 예측 (1점)'
    >>> list(languages["ko"].files)
    ['01_leaf_tensors.ipynb']
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.authoring.translation import TRANSLATIONS, translated_learner_notebook
from autograder.grading.assemble import items
from autograder.grading.results import ItemInfo
from autograder.i18n import Messages
from autograder.i18n.catalogs import NOTEBOOK_KEY, read_catalog_file, unit_catalog

__all__ = ["UnitLanguage", "unit_languages"]


@dataclass(frozen=True)
class UnitLanguage:
    """One language of a unit: its messages, its items' titles, the sandbox's files, and a
    digest of its catalog (a changed translation changes the feedback, so it re-grades)."""

    language: str
    messages: Messages
    infos: tuple[ItemInfo, ...]
    files: dict[str, str]
    digest: str


def unit_languages(
    root: Path,
    unit: str,
    source: nbformat.NotebookNode,
    released: nbformat.NotebookNode | None,
) -> dict[str, UnitLanguage]:
    """English (the source) and each translation of ``unit`` of the course at ``root``, from
    its source notebook and its released one (``None``: never released, no sandbox stub)."""
    languages = {"en": UnitLanguage("en", Messages({}), items(source), {}, "")}
    for language in TRANSLATIONS:
        catalog = unit_catalog(root, unit, language)
        titled = translated_learner_notebook(root, unit, language, source)
        stub = {}
        if released is not None:
            own = translated_learner_notebook(root, unit, language, released)
            stub = {f"{unit}.ipynb": _stub(own.metadata[NOTEBOOK_KEY])}
        languages[language] = UnitLanguage(
            language,
            Messages(read_catalog_file(catalog)),
            items(titled),
            stub,
            hashlib.sha256(catalog.read_bytes()).hexdigest() if catalog.is_file() else "",
        )
    return languages


def _stub(course: dict) -> str:
    """A notebook with no cells whose metadata names the language and the visible messages:
    what the checks in the sandbox read to speak it (:func:`autograder.i18n.current_language`)."""
    notebook = nbformat.v4.new_notebook(metadata={NOTEBOOK_KEY: course})
    return json.dumps(notebook, ensure_ascii=False)
