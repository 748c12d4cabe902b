"""One row of the class list that intake produces, and the small helpers every kind of intake
uses to name a problem or a note.

Example::

    >>> is_safe_name("ada"), is_safe_name("../ada")
    (True, False)
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.checks.first_predictions import RECORD_FILE
from autograder.grading.notebook_reader import NOTEBOOK_SUFFIX
from autograder.i18n import N_

__all__ = [
    "EXPECTED_FILES",
    "NO_UNIT",
    "IGNORED_FILES",
    "IGNORED_FILES_IN",
    "Submission",
    "is_notebook",
    "is_safe_name",
    "listed",
    "not_a_unit",
    "noted",
    "problem_row",
    "stand_in",
]

NO_UNIT = "(no unit)"
# What nbgrader's own collect puts beside each notebook, and the record of first predictions
# the notebook writes there: expected, never noted as extra.
EXPECTED_FILES = frozenset({"timestamp.txt", "submission_secret.txt", RECORD_FILE})
# Notes shown to the learner, kept in English and shown in the learner's language
# (autograder.i18n.gettext finds a filled template's translation).
IGNORED_FILES = N_("ignored {files}: the grader runs only the notebook.")
IGNORED_FILES_IN = N_("ignored {files} in `{student}/`: the grader runs only the notebook.")


@dataclass(frozen=True)
class Submission:
    """One learner's notebook for one unit: the file to grade, or why there is none.

    ``student`` and ``unit`` always pass :func:`is_safe_name`, so they can name the grader's
    output files, and no two submissions share both. A row that concerns no unit has unit
    :data:`NO_UNIT`; a name unsafe in a path (``.hidden``, a path from the zip, control
    characters) is replaced by a stable ``(unsafe name <digest>)``, and the problem quotes it.
    """

    student: str
    unit: str
    notebook: Path | None
    problem: str | None = None
    notes: tuple[str, ...] = ()


def is_safe_name(name: str) -> bool:
    """Whether ``name`` can name a file or folder as it is: not empty, not hidden (so neither
    ``.`` nor ``..``), no separator, no control character, no surrounding space.

    >>> [is_safe_name(name) for name in ["ada", "Ada L_12", "..", ".ada", "a/b", "a\\x00", " a"]]
    [True, True, False, False, False, False, False]
    """
    return (
        bool(name)
        and name == name.strip()
        and not name.startswith(".")
        and name.isprintable()
        and "/" not in name
        and "\\" not in name
        and len(name.encode("utf-8", "surrogateescape")) <= 255
    )


def is_notebook(name: str) -> bool:
    return name.lower().endswith(NOTEBOOK_SUFFIX)


def problem_row(student: str, unit: str, problem: str, notes: Iterable[str] = ()) -> Submission:
    """A row that cannot be graded; names unsafe in a path are replaced by a stable stand-in
    (the problem quotes the real name)."""
    return Submission(stand_in(student), stand_in(unit), None, problem=problem, notes=tuple(notes))


def stand_in(name: str) -> str:
    if is_safe_name(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"(unsafe name {digest})"


def noted(row: Submission, note: str) -> Submission:
    return replace(row, notes=(*row.notes, note))


def not_a_unit(name: str, units: Collection[str], fix: str) -> str:
    return (
        f"`{name}` is not a unit of this course (the units are {listed(sorted(units))}): "
        f"{fix} to the unit's name and submit it again."
    )


def listed(names: Iterable[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)
