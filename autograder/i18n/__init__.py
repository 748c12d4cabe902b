"""The course in more than one language: which language a run speaks, and its words.

English is the source of every text; :mod:`autograder.i18n.catalogs` says where the
translations are. A run speaks the language of the notebook it serves:

- the class grader and the tests say so explicitly, with :func:`use_language`;
- a notebook's kernel reads its notebook (the one in its working directory, which is where
  JupyterLab, nbgrader's Validate and ``nbgrader autograde`` run it): a translated notebook
  names its language in its metadata; the environment variable :data:`LANGUAGE_VARIABLE`
  overrides that.

Two lookups serve the two kinds of text:

- :func:`gettext` for the packages' own words, written in the code as format strings and
  filled by the caller: ``gettext("`{name}` is {actual}.").format(name=..., actual=...)``;
- :func:`translate` for a text a notebook's code made (a hint, an explanation), found in the
  unit's messages, whose f-string templates match finished text
  (:class:`~autograder.i18n.messages.Messages`).

Both return the English text unchanged when the language is English or no translation exists.

Example::

    >>> with use_language("ko"):
    ...     print(gettext("Hint: {hint}").format(hint="detach it."))
    힌트: detach it.
    >>> print(gettext("Hint: {hint}").format(hint="detach it."))
    Hint: detach it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from autograder.i18n.catalogs import (
    NOTEBOOK_KEY,
    course_root,
    library_catalog,
    read_catalog_file,
    unit_catalog,
)
from autograder.i18n.messages import Messages

__all__ = [
    "LANGUAGES",
    "N_",
    "LANGUAGE_VARIABLE",
    "Messages",
    "current_language",
    "gettext",
    "load_catalogs",
    "notebook_language",
    "translate",
    "use_language",
]

# The course's languages, English first (the source), each with its own name.
LANGUAGES = {"en": "English", "ko": "한국어"}
LANGUAGE_VARIABLE = "AUTOGRAD_COURSE_LANG"
_PACKAGES = ("autograder", "gradgraph")
_MAX_NOTEBOOK_BYTES = 8 * 2**20
_UNIT_NAME = re.compile(r"\d\d_[a-z0-9_]+")


@dataclass(frozen=True)
class _Speaking:
    language: str
    messages: Messages


_chosen: ContextVar[_Speaking | None] = ContextVar("autograder_i18n_language", default=None)


@contextmanager
def use_language(language: str, *, messages: Messages | None = None) -> Iterator[None]:
    """Speak ``language`` inside the block, with ``messages`` as the unit's translations
    (default: none, so notebook texts stay English).

    >>> with use_language("ko"):
    ...     current_language()
    'ko'
    """
    if language not in LANGUAGES:
        raise ValueError(f"unknown course language {language!r}; known: {', '.join(LANGUAGES)}")
    token = _chosen.set(_Speaking(language, messages or Messages({})))
    try:
        yield
    finally:
        _chosen.reset(token)


def current_language() -> str:
    """The language this run speaks now (see the module's description)."""
    return _speaking().language


def gettext(message: str) -> str:
    """The packages' translation of ``message`` into the current language, else ``message``.

    ``message`` is a format string from the code, or a text already formatted from one (a
    record's reason, made in a learner's run and shown by the grader): its template's
    translation, filled with what it held.
    """
    language = current_language()
    if language == "en":
        return message
    found = _library(language).lookup(message)
    return message if found is None else found


def N_(message: str) -> str:  # noqa: N802 (gettext's name for it, which extractors know)
    """``message`` itself: marks a text that is made here in English and translated with
    :func:`gettext` where it is shown (a record carries English; the grader shows it)."""
    return message


def translate(text: str) -> str:
    """The unit's translation of ``text``, a text a notebook's code made, else ``text``."""
    speaking = _speaking()
    if speaking.language == "en" or not text:
        return text
    found = speaking.messages.lookup(text)
    return text if found is None else found


def load_catalogs() -> None:
    """Read the packages' catalogs of every language now (the grading worker does, before any
    learner code runs, so that nothing is read or imported while it runs)."""
    for language in LANGUAGES:
        if language != "en":
            _library(language).lookup("")


def notebook_language(metadata: dict) -> str:
    """The language a notebook's metadata names (English when it names none or an unknown one).

    >>> notebook_language({NOTEBOOK_KEY: {"language": "ko"}}), notebook_language({})
    ('ko', 'en')
    """
    course = metadata.get(NOTEBOOK_KEY)
    language = course.get("language") if isinstance(course, dict) else None
    return language if language in LANGUAGES else "en"


def _speaking() -> _Speaking:
    chosen = _chosen.get()
    return (
        chosen
        if chosen is not None
        else _from_notebook(Path.cwd(), os.environ.get(LANGUAGE_VARIABLE))
    )


@cache
def _library(language: str) -> Messages:
    translations: dict[str, str] = {}
    for package in _PACKAGES:
        translations.update(read_catalog_file(library_catalog(package, language)))
    return Messages(translations)


@cache
def _from_notebook(folder: Path, override: str | None) -> _Speaking:
    """What the notebook in ``folder`` speaks: its language, its visible messages and, where
    the course's source is installed beside these packages (an instructor's machine), all of
    its unit's messages."""
    metadata, unit = _notebook_metadata(folder)
    language = override if override in LANGUAGES else notebook_language(metadata)
    if language == "en":
        return _Speaking("en", Messages({}))
    course = metadata.get(NOTEBOOK_KEY, {})
    visible = course.get("messages") if isinstance(course, dict) else None
    messages = Messages(visible if isinstance(visible, dict) else {})
    if unit is not None:
        messages = messages.merged(
            Messages(read_catalog_file(unit_catalog(course_root(), unit, language)))
        )
    return _Speaking(language, messages)


def _notebook_metadata(folder: Path) -> tuple[dict, str | None]:
    """The metadata of the first notebook in ``folder`` that names a course language (the one
    named after the folder first, as a unit's notebook is), and its unit; else ``({}, None)``."""
    try:
        candidates = sorted(folder.glob("*.ipynb"), key=lambda p: (p.stem != folder.name, p.name))
    except OSError:
        return {}, None
    for path in candidates:
        try:
            if path.stat().st_size > _MAX_NOTEBOOK_BYTES:
                continue
            metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(metadata, dict) and isinstance(metadata.get(NOTEBOOK_KEY), dict):
            unit = metadata[NOTEBOOK_KEY].get("unit")
            named = isinstance(unit, str) and _UNIT_NAME.fullmatch(unit) is not None
            return metadata, unit if named else None
    return {}, None
