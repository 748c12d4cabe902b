"""Find each learner's notebook for each unit in a class's submissions: a folder or an LMS zip.

:func:`collect_submissions` returns one :class:`Submission` per (student, unit), sorted: either
gradable (``notebook`` set) or with the ``problem`` that stops it being graded, plus ``notes``
on what did not. It never modifies the source, and one learner's odd upload never stops the
class: only a zip that cannot be read at all raises ``ValueError``.

**A folder** in nbgrader's ``submitted/`` layout, ``STUDENT/UNIT/UNIT.ipynb`` (nbgrader's
``timestamp.txt`` and ``submission_secret.txt`` beside the notebook are expected, and so is
``first_predictions.json``, the record of first predictions the notebook keeps there):

- A unit folder's one notebook is graded, with a note if it is not named ``UNIT.ipynb``. With
  several, ``UNIT.ipynb`` is graded and the others noted as ignored; if none is named so, the
  grader cannot tell which to grade (a problem). No notebook: a problem.
- Other files and folders are noted as ignored (the grader runs only the notebook). Hidden
  entries (``.ipynb_checkpoints``, ``.DS_Store``, ``.virtual_documents``) are skipped silently.
- A folder that is not a unit of the course is a problem row under its own name, so that the
  instructor sees it.
- A notebook lying directly in a student folder stands in for its unit's notebook when the unit
  folder has none (graded with a note), and is otherwise noted as ignored; one named after no
  unit is a problem row under its own name. Other files there are noted on each of the
  learner's rows.
- A notebook lying directly in the submissions folder is nobody's: a problem row whose student is
  the file's name and unit :data:`NO_UNIT`. Other files there belong to no learner and are ignored.
- Symbolic links are never followed (one could point at the solutions or at another learner's
  work): a linked notebook or folder is a problem, any other link is noted as ignored.
- A student folder whose name is unsafe as a path component (:func:`is_safe_name`), a hidden
  one included, is one problem row under that name, with unit :data:`NO_UNIT`; Jupyter's own
  ``.ipynb_checkpoints`` and ``.virtual_documents`` are skipped.

**A zip** (an LMS download; nbgrader ``zip_collect``'s conventions) is checked entry by entry
before anything is written: an absolute path or one that climbs out with ``..``, a symbolic link,
a path twice, more than ``max_files`` entries or more than ``max_bytes`` unpacked refuses the
whole zip (``ValueError``). It is extracted into ``scratch/extracted/`` (replaced on each call,
written in ``scratch/.extracting/`` first). ``__MACOSX/`` and hidden entries are skipped. Each
notebook's path in the zip goes to nbgrader's own ``FileNameCollectorPlugin`` with
``filename_regexp``, which reads ``student_id``, ``file_id`` and, if the regexp has it, a
``timestamp``; when every entry lies in one top folder and dropping it lets more notebooks
match (a zipped ``submitted/``), paths are matched without it.

The unit is the folder in ``file_id`` when there is one (nbgrader's layout), else its name:
``UNIT.ipynb``, a Canvas re-upload ``UNIT-1.ipynb``, or a copy ``UNIT (1).ipynb`` /
``UNIT-Copy1.ipynb`` (graded with a note). With several notebooks for one learner and unit, one
named after the unit is preferred, then the latest by the regexp's timestamp, Canvas's
attachment id (it grows with each upload), the ``-N`` suffix and the zip entry's time; a note
names the one graded and those ignored. A notebook the regexp cannot attribute is a problem row
whose student is its path in the zip and unit :data:`NO_UNIT`; one named after no unit is a
problem row under that name. Other files are noted as ignored on their learner's rows, and a
learner who sent only such files gets a problem row.

:data:`DEFAULT_FILENAME_REGEXP` reads nbgrader's layout and what Canvas and Moodle write (read in
their sources: Canvas's ``lib/content_zipper.rb``, Moodle's ``mod/assign``)::

    STUDENT/UNIT/UNIT.ipynb                               nbgrader
    NAME[_LATE]_USERID_ATTACHMENTID_UNIT[-N].ipynb        Canvas, "Download Submissions"
    [LATE_]anon_ANONID_ATTACHMENTID_UNIT[-N].ipynb        Canvas, anonymous grading
    Full Name_ID_assignsubmission_file_UNIT.ipynb         Moodle, "Download all submissions"
    Full Name_ID_assignsubmission_file[_]/UNIT.ipynb      Moodle, in folders

From an LMS name the student is the learner's id in the LMS (``anon_...`` under anonymous
grading), not the name part: names are not unique (two ``smithjohn`` would merge and one
learner's work would be lost), anonymous grading has none, and the LMS imports grades by id.
The regexp's ``upload_id`` group (Canvas's attachment id) orders re-uploads.

Example::

    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for path in ["ada/01_leaf_tensors/01_leaf_tensors.ipynb", "ada/02_retain_graph/x.ipynb",
    ...              "bob/01_leaf_tensors/notes.txt"]:
    ...     (root / "submitted" / path).parent.mkdir(parents=True, exist_ok=True)
    ...     _ = (root / "submitted" / path).write_text("{}")
    >>> units = ["01_leaf_tensors", "02_retain_graph"]
    >>> for row in collect_submissions(root / "submitted", units=units, scratch=root / "tmp"):
    ...     print(row.student, row.unit, row.notebook is not None, row.problem, *row.notes)
    ada 01_leaf_tensors True None
    ada 02_retain_graph True None graded `x.ipynb`: the notebook should be named \
`02_retain_graph.ipynb`.
    bob 01_leaf_tensors False `bob/01_leaf_tensors/` holds no notebook: submit \
`01_leaf_tensors.ipynb`. ignored `notes.txt`: the grader runs only the notebook.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import stat
import zipfile
import zlib
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path, PurePosixPath

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
from nbgrader.utils import parse_utc

from autograder.checks.predictions import RECORD_FILE
from autograder.grading.notebook_reader import NOTEBOOK_SUFFIX

__all__ = [
    "DEFAULT_FILENAME_REGEXP",
    "MAX_ZIP_BYTES",
    "MAX_ZIP_FILES",
    "NO_UNIT",
    "Submission",
    "collect_submissions",
    "is_safe_name",
]

MAX_ZIP_BYTES = 2 * 2**30
MAX_ZIP_FILES = 10_000
NO_UNIT = "(no unit)"

DEFAULT_FILENAME_REGEXP = r"""(?x)
    ^(?:(?P<lms>                                # an LMS file name starts with the learner's
        (?:[^/]+?_)??(?:LATE_)?                 # name (none if anonymous), Canvas's late flag
      )(?=(?:\d+|anon_[A-Za-z0-9]+)_(?:\d+_|assignsubmission_file))
    )?                                          # and the learner's id in the LMS
    (?P<student_id>(?(lms)(?:\d+|anon_[A-Za-z0-9]+)|[^/]+))
    (?(lms)                                     # then Canvas's attachment id or Moodle's plugin
        _(?:(?P<upload_id>\d+)_|assignsubmission_file_?/?)(?=[^/]+$)
      | /(?=[^/]+/[^/]+$)                       # or, in nbgrader's layout, STUDENT/UNIT/FILE
    )
    (?P<file_id>(?:[^/]+/)?[^/]+)$
"""

# The collector logs each name its regexp does not match; the problem rows already say so.
_COLLECTOR_LOG = logging.getLogger(f"{__name__}.collector")
_COLLECTOR_LOG.addHandler(logging.NullHandler())
_COLLECTOR_LOG.propagate = False
# What nbgrader's own collect puts beside each notebook, and the record of first predictions
# the notebook writes there: expected, never noted as extra.
_EXPECTED_FILES = frozenset({"timestamp.txt", "submission_secret.txt", RECORD_FILE})
_EXTRACTED = "extracted"
_EXTRACTING = ".extracting"
_MACOS_FOLDER = "__MACOSX"
# Hidden folders Jupyter itself writes; any other hidden folder of learners is reported.
_TOOL_FOLDERS = frozenset({".ipynb_checkpoints", ".virtual_documents"})
# What an LMS appends to a re-upload (Canvas: UNIT-1.ipynb), or to a copy the learner made.
_SUFFIX = re.compile(r"(?P<base>.+?)(?:-(?P<reupload>\d+)|(?P<copy> \(\d+\)|-Copy\d*))")
_NO_LINKS = ", not a file or folder: the grader never follows links; submit the files themselves."
_ONLY_NOTEBOOK = "the grader runs only the notebook."


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


def collect_submissions(
    source: Path,
    *,
    units: Collection[str],
    scratch: Path,
    filename_regexp: str | None = None,
    max_bytes: int = MAX_ZIP_BYTES,
    max_files: int = MAX_ZIP_FILES,
) -> list[Submission]:
    """Every (student, unit) in ``source``, a folder in nbgrader's layout or a ``.zip`` from the
    LMS (extracted into ``scratch``), sorted by (student, unit); the rules are in the module's
    docstring. ``filename_regexp``, ``max_bytes`` and ``max_files`` apply to a zip only."""
    if source.is_dir():
        if filename_regexp is not None:
            raise ValueError(
                f"`{source}` is a folder in nbgrader's layout; filename_regexp applies to a .zip "
                "download only"
            )
        rows = _collect_folder(source, units)
    elif source.is_file() and source.suffix.lower() == ".zip":
        pattern = _checked_pattern(filename_regexp or DEFAULT_FILENAME_REGEXP)
        entries = _extract_zip(source, scratch, max_bytes=max_bytes, max_files=max_files)
        rows = _collect_zip_entries(entries, scratch / _EXTRACTED, units, pattern)
    else:
        raise ValueError(
            f"`{source}` is neither a folder of submissions (STUDENT/UNIT/UNIT.ipynb) nor a .zip "
            "downloaded from the LMS"
        )
    return sorted(rows, key=lambda row: (row.student, row.unit))


# --- a folder in nbgrader's layout -------------------------------------------------------------


def _collect_folder(root: Path, units: Collection[str]) -> list[Submission]:
    rows = []
    for entry in sorted(root.iterdir()):
        if entry.name in _TOOL_FOLDERS or (entry.name.startswith(".") and not entry.is_dir()):
            continue
        if entry.is_symlink() and entry.is_dir():
            problem = f"`{entry.name}` is a symbolic link{_NO_LINKS}"
            rows.append(_problem(entry.name, NO_UNIT, problem))
        elif entry.is_dir():
            rows.extend(_collect_student(entry, units))
        elif _is_notebook(entry.name):
            rows.append(
                _problem(
                    entry.name,
                    NO_UNIT,
                    f"`{entry.name}` lies directly in the submissions folder, not in a "
                    "STUDENT/UNIT folder, so the grader cannot tell whose it is: move it to "
                    "STUDENT/UNIT/UNIT.ipynb.",
                )
            )
    return rows


def _collect_student(folder: Path, units: Collection[str]) -> list[Submission]:
    student = folder.name
    if not is_safe_name(student):
        return [
            _problem(
                student,
                NO_UNIT,
                f"the folder name `{student}` cannot be used as a student id (it is hidden or "
                "holds unusual characters): rename the folder.",
            )
        ]
    try:
        entries = _visible(folder)
    except OSError as error:
        return [_problem(student, NO_UNIT, f"`{student}/` cannot be read ({error.strerror}).")]
    folders = {entry.name: entry for entry in entries if entry.is_dir()}
    loose = {
        entry.name[: -len(NOTEBOOK_SUFFIX)]: entry
        for entry in entries
        if _is_notebook(entry.name) and not entry.is_dir()
    }
    ignored = [
        entry.name
        for entry in entries
        if entry.name not in folders and not _is_notebook(entry.name)
    ]
    rows = []
    for name in sorted(folders.keys() | loose.keys()):
        folder, beside = folders.get(name), loose.get(name)
        if folder is None:
            rows.append(_loose_notebook(student, name, beside, units))
        elif folder.is_symlink():
            rows.append(
                _problem(student, name, f"`{student}/{name}` is a symbolic link{_NO_LINKS}")
            )
        else:
            rows.append(_collect_unit(student, folder, units, beside))
    note = f"ignored {_names(ignored)} in `{student}/`: {_ONLY_NOTEBOOK}"
    return [_noted(row, note) for row in rows] if ignored else rows


def _loose_notebook(student: str, name: str, notebook: Path, units: Collection[str]) -> Submission:
    """The row for a notebook lying in a student folder where its unit folder should be."""
    where = f"`{student}/{notebook.name}`"
    if name not in units:
        return _problem(
            student,
            name,
            f"{where} is not in a unit folder and its name is no unit of this course "
            f"({_names(sorted(units))}): submit it as `UNIT/UNIT.ipynb`.",
        )
    if notebook.is_symlink():
        return _problem(student, name, f"{where} is a symbolic link{_NO_LINKS}")
    note = f"graded {where}, which belongs in `{student}/{name}/`."
    return Submission(student, name, notebook, notes=(note,))


def _collect_unit(
    student: str, folder: Path, units: Collection[str], beside: Path | None
) -> Submission:
    """The row for one unit folder; ``beside`` is a notebook of the same name lying next to
    the folder, which stands in when the folder holds no notebook."""
    unit = folder.name
    where = f"`{student}/{unit}/`"
    ignored_beside = [f"ignored `{beside.name}` lying beside {where}."] if beside else []
    if unit not in units:
        return _problem(student, unit, _not_a_unit(unit, units, f"rename {where}"), ignored_beside)
    try:
        entries = _visible(folder)
    except OSError as error:
        return _problem(student, unit, f"{where} cannot be read ({error.strerror}).")
    notebooks = [entry for entry in entries if _is_notebook(entry.name) and not entry.is_dir()]
    ignored = [
        entry.name + ("/" if entry.is_dir() else "")
        for entry in entries
        if entry not in notebooks and (entry.name not in _EXPECTED_FILES or entry.is_symlink())
    ]
    notes = [f"ignored {_names(ignored)}: {_ONLY_NOTEBOOK}"] if ignored else []
    if not notebooks and beside is not None:
        row = _loose_notebook(student, unit, beside, units)
        return replace(row, notes=(*row.notes, *notes))
    expected = unit + NOTEBOOK_SUFFIX
    named = [path for path in notebooks if path.name == expected]
    if named:
        chosen = named[0]
        others = [path.name for path in notebooks if path != chosen]
        if others:
            notes.insert(0, f"ignored {_names(others)}: only `{expected}` is graded.")
    elif len(notebooks) == 1:
        chosen = notebooks[0]
        notes.insert(0, f"graded `{chosen.name}`: the notebook should be named `{expected}`.")
    elif notebooks:
        return _problem(
            student,
            unit,
            f"{where} holds {len(notebooks)} notebooks ({_names(p.name for p in notebooks)}) and "
            f"none is named `{expected}`, so the grader cannot tell which to grade: submit only "
            f"`{expected}`.",
            [*notes, *ignored_beside],
        )
    else:
        return _problem(student, unit, f"{where} holds no notebook: submit `{expected}`.", notes)
    notes += ignored_beside
    if chosen.is_symlink():
        return _problem(student, unit, f"`{chosen.name}` is a symbolic link{_NO_LINKS}", notes)
    return Submission(student, unit, chosen, notes=tuple(notes))


def _visible(folder: Path) -> list[Path]:
    """The entries of ``folder``, sorted, without hidden ones (``.ipynb_checkpoints``...)."""
    return sorted(entry for entry in folder.iterdir() if not entry.name.startswith("."))


# --- a zip from the LMS ------------------------------------------------------------------------


def _checked_pattern(regexp: str) -> re.Pattern[str]:
    try:
        pattern = re.compile(regexp)
    except re.error as error:
        raise ValueError(f"filename_regexp {regexp!r} is not a valid regexp: {error}") from None
    missing = {"student_id", "file_id"} - pattern.groupindex.keys()
    if missing:
        raise ValueError(
            f"filename_regexp {regexp!r} lacks the named groups {sorted(missing)}: nbgrader's "
            "collector needs (?P<student_id>...) and (?P<file_id>...)"
        )
    return pattern


@dataclass(frozen=True)
class _Entry:
    """A file extracted from the zip: its path there and the entry's time."""

    path: str
    date_time: tuple[int, int, int, int, int, int]


def _extract_zip(archive: Path, scratch: Path, *, max_bytes: int, max_files: int) -> list[_Entry]:
    """Check every entry of ``archive``, then extract its files into ``scratch/extracted``."""
    staging, final = scratch / _EXTRACTING, scratch / _EXTRACTED
    try:
        with zipfile.ZipFile(archive) as zipped:
            plan = _extraction_plan(archive, zipped.infolist(), max_bytes, max_files)
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            for path, info in plan.items():
                _extract_one(zipped, info, staging / path)
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise ValueError(
            f"`{archive}` cannot be read as a zip ({error}): download it again from the LMS"
        ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)
    return [_Entry(path, info.date_time) for path, info in plan.items()]


def _extraction_plan(
    archive: Path, infos: list[zipfile.ZipInfo], max_bytes: int, max_files: int
) -> dict[str, zipfile.ZipInfo]:
    """The files to extract by normalised path, sorted; refuses the whole zip if one entry
    could land outside the extraction folder or the zip exceeds the limits."""
    refused = f"`{archive}` is refused:"
    if len(infos) > max_files:
        raise ValueError(f"{refused} it holds {len(infos)} entries, more than {max_files}")
    total = sum(info.file_size for info in infos)
    if total > max_bytes:
        raise ValueError(f"{refused} it unpacks to {total} bytes, more than {max_bytes}")
    plan: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename.replace("\\", "/")
        parts = [part for part in name.split("/") if part not in ("", ".")]
        if name.startswith("/") or re.match(r"[A-Za-z]:", name) or ".." in parts:
            raise ValueError(f"{refused} entry `{info.filename}` points outside the zip's folder")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ValueError(f"{refused} entry `{info.filename}` is a symbolic link")
        if info.is_dir() or not parts:
            continue
        path = "/".join(parts)
        if path in plan:
            raise ValueError(f"{refused} it holds `{path}` twice")
        plan[path] = info
    folders = {str(parent) for path in plan for parent in PurePosixPath(path).parents}
    clashes = sorted(folders & plan.keys())
    if clashes:
        raise ValueError(f"{refused} `{clashes[0]}` is both a file and a folder in it")
    return dict(sorted(plan.items()))


def _extract_one(zipped: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> None:
    """Copy one entry. zipfile never returns more than the entry declares (the sizes are
    checked before), and an entry that lies about its size fails its CRC check."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipped.open(info) as source, target.open("xb") as sink:
        shutil.copyfileobj(source, sink)


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


def _collect_zip_entries(
    entries: list[_Entry], root: Path, units: Collection[str], pattern: re.Pattern[str]
) -> list[Submission]:
    entries = [entry for entry in entries if _wanted(entry.path)]
    top = _top_folder_to_skip(entries, pattern)
    collector = FileNameCollectorPlugin(named_regexp=pattern.pattern, log=_COLLECTOR_LOG)
    candidates: dict[tuple[str, str], list[_Candidate]] = defaultdict(list)
    extras: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    rows: list[Submission] = []
    for entry in entries:
        matched = entry.path[len(top) :]
        if not _is_notebook(matched):
            for student, unit, name in _extra_file(matched, pattern):
                extras[student, unit].append(name)
            continue
        info = collector.collect(matched)
        if not info or not info.get("student_id") or not info.get("file_id"):
            rows.append(
                _problem(
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


def _top_folder_to_skip(entries: list[_Entry], pattern: re.Pattern[str]) -> str:
    """``"TOP/"`` when every entry lies in folder TOP and more notebooks match without it (a
    zipped ``submitted/`` folder); else ``""`` (a single learner's ``STUDENT/UNIT/...``)."""
    paths = [PurePosixPath(entry.path) for entry in entries]
    tops = {path.parts[0] for path in paths}
    if len(tops) != 1 or any(len(path.parts) < 2 for path in paths):
        return ""
    top = f"{tops.pop()}/"
    notebooks = [entry.path for entry in entries if _is_notebook(entry.path)]
    with_top = sum(bool(pattern.match(path)) for path in notebooks)
    without_top = sum(bool(pattern.match(path[len(top) :])) for path in notebooks)
    return top if without_top > with_top else ""


def _candidate(
    entry: _Entry, info: dict[str, object], root: Path, units: Collection[str]
) -> _Candidate:
    student = str(info["student_id"])
    file_id = PurePosixPath(str(info["file_id"]))
    stem = file_id.name[: -len(NOTEBOOK_SUFFIX)] if _is_notebook(file_id.name) else file_id.name
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
        problem = _not_a_unit(unit, units, f"rename the folder `{unit}`")
    elif unit not in units:
        problem = (
            f"`{file_id.name}` is not named after a unit of this course "
            f"({_names(sorted(units))}): name the notebook `UNIT.ipynb` and submit it again."
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
    others = _names(sorted(candidate.path for candidate in group if candidate is not chosen))
    notes = list(chosen.notes)
    if chosen.problem is not None:
        notes += [f"also submitted {others}."] if others else []
        return _problem(chosen.student, chosen.unit, chosen.problem, notes)
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
        notes.append(f"graded `{name}`: the notebook should be named {expected}.")
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
    if unit is not None and file_id.name in _EXPECTED_FILES:
        return []
    return [(match["student_id"], unit, file_id.name)]


def _with_extras(
    rows: list[Submission], extras: dict[tuple[str, str | None], list[str]], units: Collection[str]
) -> list[Submission]:
    """Note each ignored file on its learner's row for its unit, or on all the learner's rows
    when it names no unit; files with no such row become a problem row saying so."""
    by_key = {(row.student, row.unit): row for row in rows}
    for (student, unit), names in sorted(extras.items(), key=lambda item: repr(item[0])):
        note = f"ignored {_names(names)}: {_ONLY_NOTEBOOK}"
        shown = _stand_in(student), None if unit is None else _stand_in(unit)
        targets = [key for key in by_key if key[0] == shown[0] and shown[1] in (None, key[1])]
        for key in targets:
            by_key[key] = _noted(by_key[key], note)
        if targets:
            continue
        if unit is None:
            row = _problem(student, NO_UNIT, "no notebook was submitted.", [note])
        elif unit not in units:
            row = _problem(student, unit, _not_a_unit(unit, units, f"rename `{unit}`"), [note])
        else:
            row = _problem(student, unit, f"no notebook was submitted for `{unit}`.", [note])
        by_key[row.student, row.unit] = row
    return list(by_key.values())


# --- shared ------------------------------------------------------------------------------------


def _is_notebook(name: str) -> bool:
    return name.lower().endswith(NOTEBOOK_SUFFIX)


def _problem(student: str, unit: str, problem: str, notes: Iterable[str] = ()) -> Submission:
    """A row that cannot be graded; names unsafe in a path are replaced by a stable stand-in
    (the problem quotes the real name)."""
    return Submission(
        _stand_in(student), _stand_in(unit), None, problem=problem, notes=tuple(notes)
    )


def _stand_in(name: str) -> str:
    if is_safe_name(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"(unsafe name {digest})"


def _noted(row: Submission, note: str) -> Submission:
    return replace(row, notes=(*row.notes, note))


def _not_a_unit(name: str, units: Collection[str], fix: str) -> str:
    return (
        f"`{name}` is not a unit of this course (the units are {_names(sorted(units))}): "
        f"{fix} to the unit's name and submit it again."
    )


def _names(names: Iterable[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)
