"""Collect the submissions of an LMS zip (Canvas, Moodle, nbgrader's own layout inside a zip):
match each extracted file's name with nbgrader's ``FileNameCollectorPlugin``, keep each
learner's newest upload of each unit, and note the extra files.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
from nbgrader.utils import parse_utc

from autograder.grading.notebook_reader import NOTEBOOK_SUFFIX
from autograder.grading.submission import (
    EXPECTED_FILES,
    IGNORED_FILES,
    NO_UNIT,
    Submission,
    is_notebook,
    is_safe_name,
    listed,
    not_a_unit,
    noted,
    problem_row,
    stand_in,
)
from autograder.grading.unzip import ZipEntry
from autograder.i18n import N_

__all__ = ["collect_zip_entries"]

# The collector logs each name its regexp does not match; the problem rows already say so.
_COLLECTOR_LOG = logging.getLogger(f"{__name__}.collector")
_COLLECTOR_LOG.addHandler(logging.NullHandler())
_COLLECTOR_LOG.propagate = False
_MACOS_FOLDER = "__MACOSX"
# What an LMS appends to a re-upload (Canvas: UNIT-1.ipynb), or to a copy the learner made.
_SUFFIX = re.compile(r"(?P<base>.+?)(?:-(?P<reupload>\d+)|(?P<copy> \(\d+\)|-Copy\d*))")


@dataclass(frozen=True)
class _Candidate:
    """A notebook from the zip, attributed to a learner and a unit."""

    student: str
    unit: str
    path: str
    file: Path
    renamed: bool
    order: tuple[object, ...]
    problem: str | None = None
    notes: tuple[str, ...] = ()


def collect_zip_entries(
    entries: list[ZipEntry], root: Path, units: Collection[str], pattern: re.Pattern[str]
) -> list[Submission]:
    entries = [entry for entry in entries if _wanted(entry.path)]
    top = _top_folder_to_skip(entries, pattern)
    collector = FileNameCollectorPlugin(named_regexp=pattern.pattern, log=_COLLECTOR_LOG)
    candidates: dict[tuple[str, str], list[_Candidate]] = defaultdict(list)
    extras: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    rows: list[Submission] = []
    for entry in entries:
        matched = entry.path[len(top) :]
        if not is_notebook(matched):
            for student, unit, name in _extra_file(matched, pattern):
                extras[student, unit].append(name)
            continue
        info = collector.collect(matched)
        if not info or not info.get("student_id") or not info.get("file_id"):
            rows.append(
                problem_row(
                    entry.path,
                    NO_UNIT,
                    f"`{entry.path}` in the zip has a name the grader cannot read, so it cannot "
                    "tell whose notebook it is: rename it, or give a filename_regexp that reads "
                    "it.",
                )
            )
            continue
        candidate = _candidate(entry, info, root, units)
        candidates[candidate.student, candidate.unit].append(candidate)
    rows.extend(_chosen(group) for _, group in sorted(candidates.items()))
    return _with_extras(rows, extras, units)


def _wanted(path: str) -> bool:
    """Whether a zip entry is worth a look: not hidden (``.ipynb_checkpoints``), not macOS's
    ``__MACOSX`` copies."""
    return not any(
        part.startswith(".") or part == _MACOS_FOLDER for part in PurePosixPath(path).parts
    )


def _top_folder_to_skip(entries: list[ZipEntry], pattern: re.Pattern[str]) -> str:
    """``"TOP/"`` when every entry lies in folder TOP and more notebooks match without it (a
    zipped ``submitted/`` folder); else ``""`` (a single learner's ``STUDENT/UNIT/...``)."""
    paths = [PurePosixPath(entry.path) for entry in entries]
    tops = {path.parts[0] for path in paths}
    if len(tops) != 1 or any(len(path.parts) < 2 for path in paths):
        return ""
    top = f"{tops.pop()}/"
    notebooks = [entry.path for entry in entries if is_notebook(entry.path)]
    with_top = sum(bool(pattern.match(path)) for path in notebooks)
    without_top = sum(bool(pattern.match(path[len(top) :])) for path in notebooks)
    return top if without_top > with_top else ""


def _candidate(
    entry: ZipEntry, info: dict[str, object], root: Path, units: Collection[str]
) -> _Candidate:
    student = str(info["student_id"])
    file_id = PurePosixPath(str(info["file_id"]))
    stem = file_id.name[: -len(NOTEBOOK_SUFFIX)] if is_notebook(file_id.name) else file_id.name
    unit, reupload, renamed = _unit_of(file_id, stem, units)
    timestamp, notes = _timestamp(info.get("timestamp"), entry.path)
    upload = info.get("upload_id")
    order = (
        timestamp or datetime.min,
        int(upload) if isinstance(upload, str) and upload.isdigit() else -1,
        reupload,
        entry.date_time,
        entry.path,
    )
    problem = None
    if not is_safe_name(student):
        problem = (
            f"`{student}`, the student id read from `{entry.path}`, cannot be used as one (it is "
            "hidden or holds unusual characters): rename the file."
        )
    elif unit not in units and len(file_id.parts) > 1:
        problem = not_a_unit(unit, units, f"rename the folder `{unit}`")
    elif unit not in units:
        problem = (
            f"`{file_id.name}` is not named after a unit of this course "
            f"({listed(sorted(units))}): name the notebook `UNIT.ipynb` and submit it again."
        )
    file = root / entry.path
    return _Candidate(student, unit, entry.path, file, renamed, order, problem, notes)


def _unit_of(file_id: PurePosixPath, stem: str, units: Collection[str]) -> tuple[str, int, bool]:
    """(unit, re-upload number, renamed) for a file id: in nbgrader's layout its folder names
    the unit; otherwise its name does, perhaps with an LMS re-upload or copy suffix."""
    if len(file_id.parts) > 1:
        unit = file_id.parts[-2]
        return unit, 0, stem != unit
    if stem in units:
        return stem, 0, False
    suffixed = _SUFFIX.fullmatch(stem)
    if suffixed and suffixed["base"] in units:
        reupload = int(suffixed["reupload"]) if suffixed["reupload"] else 0
        return suffixed["base"], reupload, suffixed["copy"] is not None
    return stem, 0, False


def _timestamp(value: object, path: str) -> tuple[datetime | None, tuple[str, ...]]:
    if not isinstance(value, str) or not value:
        return None, ()
    try:
        return parse_utc(value), ()
    except (ValueError, OverflowError):
        return None, (f"the time `{value}` in `{path}` could not be read and was not used.",)


def _chosen(group: list[_Candidate]) -> Submission:
    """The submission of one learner for one unit: the newest notebook named after the unit,
    else the newest."""
    chosen = max(group, key=lambda candidate: (not candidate.renamed, candidate.order))
    others = listed(sorted(candidate.path for candidate in group if candidate is not chosen))
    notes = list(chosen.notes)
    if chosen.problem is not None:
        notes += [f"also submitted {others}."] if others else []
        return problem_row(chosen.student, chosen.unit, chosen.problem, notes)
    expected = f"`{chosen.unit}{NOTEBOOK_SUFFIX}`"
    if others:
        which = "the latest" if chosen.renamed else f"the latest named {expected}"
        notes.insert(
            0,
            f"{len(group)} notebooks were submitted for `{chosen.unit}`: graded "
            f"`{chosen.path}`, {which}, and ignored {others}.",
        )
    if chosen.renamed:
        name = PurePosixPath(chosen.path).name
        renamed = N_("graded `{name}`: the notebook should be named {expected}.")
        notes.append(renamed.format(name=name, expected=expected))
    return Submission(chosen.student, chosen.unit, chosen.file, notes=tuple(notes))


def _extra_file(path: str, pattern: re.Pattern[str]) -> list[tuple[str, str | None, str]]:
    """[(student, unit folder or None, name)] for a file that is not a notebook, when the regexp
    can tell whose it is; nbgrader's ``timestamp.txt`` and ``submission_secret.txt`` in a unit
    folder are expected."""
    match = pattern.match(path)
    if not match or not match["student_id"] or not match["file_id"]:
        return []
    file_id = PurePosixPath(match["file_id"])
    unit = file_id.parts[-2] if len(file_id.parts) > 1 else None
    if unit is not None and file_id.name in EXPECTED_FILES:
        return []
    return [(match["student_id"], unit, file_id.name)]


def _with_extras(
    rows: list[Submission], extras: dict[tuple[str, str | None], list[str]], units: Collection[str]
) -> list[Submission]:
    """Note each ignored file on its learner's row for its unit, or on all the learner's rows
    when it names no unit; files with no such row become a problem row saying so."""
    by_key = {(row.student, row.unit): row for row in rows}
    for (student, unit), names in sorted(extras.items(), key=lambda item: repr(item[0])):
        note = IGNORED_FILES.format(files=listed(names))
        shown = stand_in(student), None if unit is None else stand_in(unit)
        targets = [key for key in by_key if key[0] == shown[0] and shown[1] in (None, key[1])]
        for key in targets:
            by_key[key] = noted(by_key[key], note)
        if targets:
            continue
        if unit is None:
            row = problem_row(student, NO_UNIT, "no notebook was submitted.", [note])
        elif unit not in units:
            row = problem_row(student, unit, not_a_unit(unit, units, f"rename `{unit}`"), [note])
        else:
            row = problem_row(student, unit, f"no notebook was submitted for `{unit}`.", [note])
        by_key[row.student, row.unit] = row
    return list(by_key.values())


# --- shared ------------------------------------------------------------------------------------
