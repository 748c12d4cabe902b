"""Build the learner handout: one zip with course/ and what it needs, never the answer key.

The zip holds an explicit allow-list of the repository's top-level entries (the learner
notebooks, the support packages they import, the install files), under one folder
``autograd-course/``. Before anything is written every file is scanned: a notebook that still
holds an nbgrader solution or hidden-test marker, a marker line in any other file, or a
database (a gradebook) stops the build, naming the file. Entries are sorted and timestamps
fixed, so two builds of the same tree are byte-identical.

Example::

    >>> find_secret("course/01/01.ipynb", b'{"cells": [{"source": "### BEGIN HIDDEN TESTS"}]}')
    "has nbgrader's marker 'BEGIN HIDDEN TESTS' in cell 1: it is an instructor's source ..."
    >>> find_secret("autograder/authoring/source_check.py", b'_PAIRS = {"### BEGIN SOLUTION": 1}')
    >>> # (None: prose or code that names a marker is no leak)
    >>> build_handout(root=Path("."))  # doctest: +SKIP
    PosixPath('dist/autograd-course-handout.zip')
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

from autograder.atomic import write_bytes_atomic
from autograder.checks.first_predictions import RECORD_FILE

__all__ = ["DEFAULT_HANDOUT", "HANDOUT_ENTRIES", "HandoutError", "build_handout", "find_secret"]

DEFAULT_HANDOUT = Path("dist") / "autograd-course-handout.zip"
# What a learner needs: the notebooks, the packages they import (autograder.checks and
# autograder.checks.live, gradgraph; whole, as they hold no secret), and how to install them.
HANDOUT_ENTRIES = (
    "course",
    "autograder",
    "gradgraph",
    "pyproject.toml",
    "constraints.txt",
    "environment.yml",
    "Makefile",
    "README.md",
)
_OPTIONAL_ENTRIES = ("LICENSE",)
_FOLDER_IN_ZIP = "autograd-course"
_SKIPPED_FOLDERS = {"__pycache__", ".ipynb_checkpoints"}
_SKIPPED_SUFFIXES = (".egg-info", ".pyc")
_DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
# nbgrader finds its delimiters anywhere in a line of a notebook's cell.
_NOTEBOOK_MARKER = re.compile(r"(?:BEGIN|END) (?:SOLUTION|HIDDEN)[A-Z]*(?: TESTS?)?")
# Elsewhere the markers are named in prose and code (source_check.py, the README); only a line
# that starts with one as a comment is a leaked solution or hidden test.
_COMMENT_MARKER = re.compile(r"^\s*#+\s*(?:BEGIN|END)\s+(?:SOLUTION|HIDDEN)", re.MULTILINE)
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


class HandoutError(RuntimeError):
    """The handout cannot be built; the message names the file and what is wrong."""


def build_handout(*, root: Path, out: Path | None = None) -> Path:
    """Write the handout zip to ``out`` (default ``root/dist/autograd-course-handout.zip``)
    atomically, after checking every file it would hold, and return its path."""
    out = root / DEFAULT_HANDOUT if out is None else out
    files = dict(_collect(root))
    if not any(name.startswith("course/") and name.endswith(".ipynb") for name in files):
        raise HandoutError(f"{root / 'course'} holds no notebook: run `make release` first")
    for name, data in files.items():
        problem = find_secret(name, data)
        if problem is not None:
            raise HandoutError(f"{root / name} {problem}; the handout was not written")
    write_bytes_atomic(out, _zip(files))
    return out


def find_secret(name: str, data: bytes) -> str | None:
    """Why the file ``name`` (its path in the handout) with content ``data`` must not be handed
    out, or None when it may: a solution or hidden-test marker, or a database."""
    if name.endswith(_DATABASE_SUFFIXES):
        return "is a database (a gradebook?): learners must not get it"
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".ipynb"):
        return _notebook_secret(text)
    found = _COMMENT_MARKER.search(text)
    if found:
        line = text.count("\n", 0, found.start()) + 1
        return f"has an nbgrader marker on line {line}: a solution or hidden test leaked into it"
    return None


def _notebook_secret(text: str) -> str | None:
    try:
        notebook = json.loads(text)
    except ValueError as error:
        return f"is not a readable notebook ({error})"
    cells = notebook.get("cells", []) if isinstance(notebook, dict) else []
    places = [(f"cell {number}", cell) for number, cell in enumerate(cells, start=1)]
    for where, value in [*places, ("its metadata or outputs", notebook)]:
        for string in _strings(value):
            found = _NOTEBOOK_MARKER.search(string)
            if found:
                return (
                    f"has nbgrader's marker {found.group().strip()!r} in {where}: it is an "
                    "instructor's source notebook, not a learner's"
                )
    return None


def _collect(root: Path) -> Iterator[tuple[str, bytes]]:
    """``(path in the handout, content)`` for every file of the allow-list, sorted."""
    for entry in HANDOUT_ENTRIES + _OPTIONAL_ENTRIES:
        path = root / entry
        if not path.exists() and not path.is_symlink():
            if entry in _OPTIONAL_ENTRIES:
                continue
            raise HandoutError(f"{path} is missing: the handout needs it")
        yield from sorted(_files(root, path))


def _files(root: Path, path: Path) -> Iterator[tuple[str, bytes]]:
    if path.is_symlink():
        raise HandoutError(f"{path} is a symbolic link: the handout takes only plain files")
    if path.is_file():
        yield path.relative_to(root).as_posix(), path.read_bytes()
        return
    for child in path.iterdir():
        if not _skipped(child.name):
            yield from _files(root, child)


def _skipped(name: str) -> bool:
    """Caches, checkpoints, build metadata, hidden files (editor and atomic-write leftovers) and
    the record of first predictions a run of a notebook left (it may hold the answers)."""
    return (
        name in _SKIPPED_FOLDERS
        or name.startswith(".")
        or name.endswith(_SKIPPED_SUFFIXES)
        or name == RECORD_FILE
    )


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(f"{_FOLDER_IN_ZIP}/{name}", date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so that the permissions below are read
            info.external_attr = (0o100644 & 0xFFFF) << 16
            archive.writestr(info, files[name], compresslevel=9)
    return buffer.getvalue()
