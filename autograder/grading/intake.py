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

import re
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from autograder.grading.lms_zip import collect_zip_entries
from autograder.grading.notebook_reader import NOTEBOOK_SUFFIX
from autograder.grading.submission import (
    EXPECTED_FILES,
    IGNORED_FILES,
    IGNORED_FILES_IN,
    NO_UNIT,
    Submission,
    is_notebook,
    is_safe_name,
    listed,
    not_a_unit,
    noted,
    problem_row,
)
from autograder.grading.unzip import EXTRACTED, extract_zip
from autograder.i18n import N_

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
# Hidden folders Jupyter itself writes; any other hidden folder of learners is reported.
TOOL_FOLDERS = frozenset({".ipynb_checkpoints", ".virtual_documents"})
NO_LINKS = ", not a file or folder: the grader never follows links; submit the files themselves."


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
        entries = extract_zip(source, scratch, max_bytes=max_bytes, max_files=max_files)
        rows = collect_zip_entries(entries, scratch / EXTRACTED, units, pattern)
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
        if entry.name in TOOL_FOLDERS or (entry.name.startswith(".") and not entry.is_dir()):
            continue
        if entry.is_symlink() and entry.is_dir():
            problem = f"`{entry.name}` is a symbolic link{NO_LINKS}"
            rows.append(problem_row(entry.name, NO_UNIT, problem))
        elif entry.is_dir():
            rows.extend(_collect_student(entry, units))
        elif is_notebook(entry.name):
            rows.append(
                problem_row(
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
            problem_row(
                student,
                NO_UNIT,
                f"the folder name `{student}` cannot be used as a student id (it is hidden or "
                "holds unusual characters): rename the folder.",
            )
        ]
    try:
        entries = _visible(folder)
    except OSError as error:
        return [problem_row(student, NO_UNIT, f"`{student}/` cannot be read ({error.strerror}).")]
    folders = {entry.name: entry for entry in entries if entry.is_dir()}
    loose = {
        entry.name[: -len(NOTEBOOK_SUFFIX)]: entry
        for entry in entries
        if is_notebook(entry.name) and not entry.is_dir()
    }
    ignored = [
        entry.name for entry in entries if entry.name not in folders and not is_notebook(entry.name)
    ]
    rows = []
    for name in sorted(folders.keys() | loose.keys()):
        folder, beside = folders.get(name), loose.get(name)
        if folder is None:
            rows.append(_loose_notebook(student, name, beside, units))
        elif folder.is_symlink():
            rows.append(
                problem_row(student, name, f"`{student}/{name}` is a symbolic link{NO_LINKS}")
            )
        else:
            rows.append(_collect_unit(student, folder, units, beside))
    note = IGNORED_FILES_IN.format(files=listed(ignored), student=student)
    return [noted(row, note) for row in rows] if ignored else rows


def _loose_notebook(student: str, name: str, notebook: Path, units: Collection[str]) -> Submission:
    """The row for a notebook lying in a student folder where its unit folder should be."""
    where = f"`{student}/{notebook.name}`"
    if name not in units:
        return problem_row(
            student,
            name,
            f"{where} is not in a unit folder and its name is no unit of this course "
            f"({listed(sorted(units))}): submit it as `UNIT/UNIT.ipynb`.",
        )
    if notebook.is_symlink():
        return problem_row(student, name, f"{where} is a symbolic link{NO_LINKS}")
    note = N_("graded {where}, which belongs in `{student}/{unit}/`.").format(
        where=where, student=student, unit=name
    )
    return Submission(student, name, notebook, notes=(note,))


def _collect_unit(
    student: str, folder: Path, units: Collection[str], beside: Path | None
) -> Submission:
    """The row for one unit folder; ``beside`` is a notebook of the same name lying next to
    the folder, which stands in when the folder holds no notebook."""
    unit = folder.name
    where = f"`{student}/{unit}/`"
    beside_note = N_("ignored `{name}` lying beside {where}.")
    ignored_beside = [beside_note.format(name=beside.name, where=where)] if beside else []
    if unit not in units:
        problem = not_a_unit(unit, units, f"rename {where}")
        return problem_row(student, unit, problem, ignored_beside)
    try:
        entries = _visible(folder)
    except OSError as error:
        return problem_row(student, unit, f"{where} cannot be read ({error.strerror}).")
    notebooks = [entry for entry in entries if is_notebook(entry.name) and not entry.is_dir()]
    ignored = [
        entry.name + ("/" if entry.is_dir() else "")
        for entry in entries
        if entry not in notebooks and (entry.name not in EXPECTED_FILES or entry.is_symlink())
    ]
    notes = [IGNORED_FILES.format(files=listed(ignored))] if ignored else []
    if not notebooks and beside is not None:
        row = _loose_notebook(student, unit, beside, units)
        return replace(row, notes=(*row.notes, *notes))
    expected = unit + NOTEBOOK_SUFFIX
    named = [path for path in notebooks if path.name == expected]
    if named:
        chosen = named[0]
        others = [path.name for path in notebooks if path != chosen]
        if others:
            only = N_("ignored {files}: only `{expected}` is graded.")
            notes.insert(0, only.format(files=listed(others), expected=expected))
    elif len(notebooks) == 1:
        chosen = notebooks[0]
        renamed = N_("graded `{name}`: the notebook should be named `{expected}`.")
        notes.insert(0, renamed.format(name=chosen.name, expected=expected))
    elif notebooks:
        return problem_row(
            student,
            unit,
            f"{where} holds {len(notebooks)} notebooks ({listed(p.name for p in notebooks)}) and "
            f"none is named `{expected}`, so the grader cannot tell which to grade: submit only "
            f"`{expected}`.",
            [*notes, *ignored_beside],
        )
    else:
        return problem_row(student, unit, f"{where} holds no notebook: submit `{expected}`.", notes)
    notes += ignored_beside
    if chosen.is_symlink():
        return problem_row(student, unit, f"`{chosen.name}` is a symbolic link{NO_LINKS}", notes)
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
