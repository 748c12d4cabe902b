"""Intake: every learner's notebook found in a folder or an LMS zip, every odd upload reported,
nothing written outside the scratch folder, the source never modified."""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import zipfile

import pytest

from autograder.grading.intake import (
    DEFAULT_FILENAME_REGEXP,
    MAX_ZIP_BYTES,
    MAX_ZIP_FILES,
    NO_UNIT,
    Submission,
    collect_submissions,
    is_safe_name,
)

UNITS = ("01_leaf_tensors", "02_retain_graph")
U1, U2 = UNITS
ONLY = "the grader runs only the notebook."
UNIT_LIST = f"`{U1}`, `{U2}`"
LINK = ", not a file or folder: the grader never follows links; submit the files themselves."


def make(root, files):
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


def snapshot(root):
    return {
        path: (path.read_bytes() if path.is_file() and not path.is_symlink() else None)
        for path in sorted(root.rglob("*"))
    }


def stand_in(name):
    return f"(unsafe name {hashlib.sha256(name.encode()).hexdigest()[:12]})"


def collect_folder(root, tmp_path):
    before = snapshot(root)
    rows = collect_submissions(root, units=UNITS, scratch=tmp_path / "scratch")
    assert snapshot(root) == before
    assert not (tmp_path / "scratch").exists()
    return rows


# --- a folder in nbgrader's layout -------------------------------------------------------------


def test_a_folder_gives_one_row_per_learner_and_unit_with_every_case_reported(tmp_path):
    root = make(
        tmp_path / "submitted",
        {
            f"ada/{U1}/{U1}.ipynb": "{}",
            f"ada/{U1}/timestamp.txt": "2024-05-01 10:00:00",
            f"ada/{U2}/my copy.ipynb": "{}",
            f"bob/{U1}/{U1}.ipynb": "{}",
            f"bob/{U1}/other.ipynb": "{}",
            f"bob/{U1}/data.csv": "1,2",
            f"bob/{U1}/helper.py": "x = 1",
            f"bob/{U1}/extra/more.txt": "",
            f"bob/{U1}/.ipynb_checkpoints/{U1}-checkpoint.ipynb": "{}",
            f"bob/{U1}/.DS_Store": "",
            f"bob/{U2}/a.ipynb": "{}",
            f"bob/{U2}/b.ipynb": "{}",
            f"cy/{U1}/notes.txt": "",
            "cy/99_bonus/99_bonus.ipynb": "{}",
            f"dee/{U1}.ipynb": "{}",
            f"dee/{U2}/{U2}.ipynb": "{}",
            f"dee/{U2}.ipynb": "{}",
            "dee/Untitled.ipynb": "{}",
            "dee/readme.txt": "",
            f"eve/{U1}/timestamp.txt": "",
            f"eve/{U1}.ipynb": "{}",
            f".hidden/{U1}/{U1}.ipynb": "{}",
            f".ipynb_checkpoints/{U1}.ipynb": "{}",
            "stray.ipynb": "{}",
            "README.md": "",
        },
    )
    (root / "fay" / U1).mkdir(parents=True)

    rows = collect_folder(root, tmp_path)

    assert rows == [
        Submission(
            stand_in(".hidden"),
            NO_UNIT,
            None,
            problem=(
                "the folder name `.hidden` cannot be used as a student id (it is hidden or holds "
                "unusual characters): rename the folder."
            ),
        ),
        Submission("ada", U1, root / f"ada/{U1}/{U1}.ipynb"),
        Submission(
            "ada",
            U2,
            root / f"ada/{U2}/my copy.ipynb",
            notes=(f"graded `my copy.ipynb`: the notebook should be named `{U2}.ipynb`.",),
        ),
        Submission(
            "bob",
            U1,
            root / f"bob/{U1}/{U1}.ipynb",
            notes=(
                f"ignored `other.ipynb`: only `{U1}.ipynb` is graded.",
                f"ignored `data.csv`, `extra/`, `helper.py`: {ONLY}",
            ),
        ),
        Submission(
            "bob",
            U2,
            None,
            problem=(
                f"`bob/{U2}/` holds 2 notebooks (`a.ipynb`, `b.ipynb`) and none is named "
                f"`{U2}.ipynb`, so the grader cannot tell which to grade: submit only `{U2}.ipynb`."
            ),
        ),
        Submission(
            "cy",
            U1,
            None,
            problem=(f"`cy/{U1}/` holds no notebook: submit `{U1}.ipynb`."),
            notes=(f"ignored `notes.txt`: {ONLY}",),
        ),
        Submission(
            "cy",
            "99_bonus",
            None,
            problem=(
                f"`99_bonus` is not a unit of this course (the units are {UNIT_LIST}): rename "
                "`cy/99_bonus/` to the unit's name and submit it again."
            ),
        ),
        Submission(
            "dee",
            U1,
            root / f"dee/{U1}.ipynb",
            notes=(
                f"graded `dee/{U1}.ipynb`, which belongs in `dee/{U1}/`.",
                f"ignored `readme.txt` in `dee/`: {ONLY}",
            ),
        ),
        Submission(
            "dee",
            U2,
            root / f"dee/{U2}/{U2}.ipynb",
            notes=(
                f"ignored `{U2}.ipynb` lying beside `dee/{U2}/`.",
                f"ignored `readme.txt` in `dee/`: {ONLY}",
            ),
        ),
        Submission(
            "dee",
            "Untitled",
            None,
            problem=(
                "`dee/Untitled.ipynb` is not in a unit folder and its name is no unit of this "
                f"course ({UNIT_LIST}): submit it as `UNIT/UNIT.ipynb`."
            ),
            notes=(f"ignored `readme.txt` in `dee/`: {ONLY}",),
        ),
        Submission(
            "eve",
            U1,
            root / f"eve/{U1}.ipynb",
            notes=(f"graded `eve/{U1}.ipynb`, which belongs in `eve/{U1}/`.",),
        ),
        Submission("fay", U1, None, problem=f"`fay/{U1}/` holds no notebook: submit `{U1}.ipynb`."),
        Submission(
            "stray.ipynb",
            NO_UNIT,
            None,
            problem=(
                "`stray.ipynb` lies directly in the submissions folder, not in a STUDENT/UNIT "
                "folder, so the grader cannot tell whose it is: move it to STUDENT/UNIT/UNIT.ipynb."
            ),
        ),
    ]


def test_symbolic_links_are_never_followed(tmp_path):
    root = make(
        tmp_path / "submitted",
        {f"ada/{U1}/{U1}.ipynb": "{}", f"ada/{U2}/{U2}.ipynb": "{}", "secret/answers.ipynb": "{}"},
    )
    (root / "bob" / U1).mkdir(parents=True)
    (root / "bob" / U1 / f"{U1}.ipynb").symlink_to(root / f"ada/{U1}/{U1}.ipynb")
    (root / "bob" / U1 / "data.csv").symlink_to("/etc/hostname")
    (root / "bob" / U2).symlink_to(root / f"ada/{U2}")
    (root / "cy").mkdir()
    (root / "cy" / f"{U1}.ipynb").symlink_to(root / "secret/answers.ipynb")
    (root / "dan").symlink_to(root / "ada")

    rows = collect_folder(root, tmp_path)

    assert [row for row in rows if row.student != "ada" and row.student != "secret"] == [
        Submission(
            "bob",
            U1,
            None,
            problem=f"`{U1}.ipynb` is a symbolic link{LINK}",
            notes=(f"ignored `data.csv`: {ONLY}",),
        ),
        Submission("bob", U2, None, problem=f"`bob/{U2}` is a symbolic link{LINK}"),
        Submission("cy", U1, None, problem=f"`cy/{U1}.ipynb` is a symbolic link{LINK}"),
        Submission("dan", NO_UNIT, None, problem=f"`dan` is a symbolic link{LINK}"),
    ]


def test_an_unreadable_folder_is_a_problem_row_not_a_crash(tmp_path, monkeypatch):
    root = make(
        tmp_path / "submitted",
        {f"ada/{U1}/{U1}.ipynb": "{}", f"bob/{U1}/{U1}.ipynb": "{}", f"cy/{U1}/{U1}.ipynb": "{}"},
    )
    iterdir = type(root).iterdir

    def denied(folder):
        if folder.name in ("bob", U1) and folder.parent.name in ("submitted", "cy"):
            raise PermissionError(13, "Permission denied", str(folder))
        return iterdir(folder)

    monkeypatch.setattr(type(root), "iterdir", denied)
    rows = collect_submissions(root, units=UNITS, scratch=tmp_path / "scratch")

    assert rows == [
        Submission("ada", U1, root / f"ada/{U1}/{U1}.ipynb"),
        Submission("bob", NO_UNIT, None, problem="`bob/` cannot be read (Permission denied)."),
        Submission("cy", U1, None, problem=f"`cy/{U1}/` cannot be read (Permission denied)."),
    ]


def test_an_unsafe_unit_folder_name_is_shown_by_a_stable_stand_in(tmp_path):
    root = make(tmp_path / "submitted", {"ada/bad\tname/x.ipynb": "{}"})

    rows = collect_folder(root, tmp_path)

    assert rows == [
        Submission(
            "ada",
            stand_in("bad\tname"),
            None,
            problem=(
                f"`bad\tname` is not a unit of this course (the units are {UNIT_LIST}): rename "
                "`ada/bad\tname/` to the unit's name and submit it again."
            ),
        )
    ]
    assert all(is_safe_name(row.student) and is_safe_name(row.unit) for row in rows)


def test_a_filename_regexp_is_refused_for_a_folder_and_a_missing_source_is_refused(tmp_path):
    with pytest.raises(ValueError, match="filename_regexp applies to a .zip download only"):
        collect_submissions(tmp_path, units=UNITS, scratch=tmp_path, filename_regexp="x")
    with pytest.raises(ValueError, match="is neither a folder of submissions"):
        collect_submissions(tmp_path / "nothing", units=UNITS, scratch=tmp_path)


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("ada", True),
        ("Ada Lovelace_12345", True),
        ("anon_x7Yq2", True),
        ("", False),
        (".", False),
        ("..", False),
        (".ada", False),
        ("a/b", False),
        ("a\\b", False),
        ("a\x00b", False),
        ("a\nb", False),
        (" ada", False),
        ("x" * 256, False),
    ],
)
def test_safe_names(name, safe):
    assert is_safe_name(name) is safe


# --- a zip from the LMS ------------------------------------------------------------------------


def make_zip(path, entries):
    """``entries``: name -> content, or name -> (content, date_time)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, content in entries.items():
            text, when = content if isinstance(content, tuple) else (content, (2024, 5, 1, 9, 0, 0))
            info = zipfile.ZipInfo(name, date_time=when)
            info.compress_type = zipfile.ZIP_DEFLATED
            zipped.writestr(info, text)
    return path


def collect_zip(archive, tmp_path, **options):
    before = archive.read_bytes()
    rows = collect_submissions(archive, units=UNITS, scratch=tmp_path / "scratch", **options)
    assert archive.read_bytes() == before
    assert sorted(path.name for path in (tmp_path / "scratch").iterdir()) == ["extracted"]
    return rows


def test_a_zipped_submitted_folder_is_read_like_the_folder(tmp_path):
    archive = make_zip(
        tmp_path / "class.zip",
        {
            f"submitted/ada/{U1}/{U1}.ipynb": "{}",
            f"submitted/ada/{U1}/timestamp.txt": "2024-05-01 10:00:00",
            f"submitted/ada/{U2}/my copy.ipynb": "{}",
            f"submitted/bob/{U1}/{U1}.ipynb": "{}",
            f"submitted/bob/{U1}/data.csv": "1,2",
            f"submitted/bob/{U1}/.ipynb_checkpoints/{U1}-checkpoint.ipynb": "{}",
            f"submitted/cy/{U1}/notes.txt": "",
            "submitted/cy/99_bonus/99_bonus.ipynb": "{}",
            f"__MACOSX/submitted/ada/{U1}/._{U1}.ipynb": "",
            "submitted/dan/": "",
            "submitted/dan/bonus/data.csv": "",
        },
    )
    extracted = tmp_path / "scratch" / "extracted" / "submitted"

    rows = collect_zip(archive, tmp_path)

    assert rows == [
        Submission("ada", U1, extracted / f"ada/{U1}/{U1}.ipynb"),
        Submission(
            "ada",
            U2,
            extracted / f"ada/{U2}/my copy.ipynb",
            notes=(f"graded `my copy.ipynb`: the notebook should be named `{U2}.ipynb`.",),
        ),
        Submission(
            "bob", U1, extracted / f"bob/{U1}/{U1}.ipynb", notes=(f"ignored `data.csv`: {ONLY}",)
        ),
        Submission(
            "cy",
            U1,
            None,
            problem=f"no notebook was submitted for `{U1}`.",
            notes=(f"ignored `notes.txt`: {ONLY}",),
        ),
        Submission(
            "cy",
            "99_bonus",
            None,
            problem=(
                f"`99_bonus` is not a unit of this course (the units are {UNIT_LIST}): rename the "
                "folder `99_bonus` to the unit's name and submit it again."
            ),
        ),
        Submission(
            "dan",
            "bonus",
            None,
            problem=(
                f"`bonus` is not a unit of this course (the units are {UNIT_LIST}): rename "
                "`bonus` to the unit's name and submit it again."
            ),
            notes=(f"ignored `data.csv`: {ONLY}",),
        ),
    ]
    assert (extracted / f"ada/{U1}/{U1}.ipynb").read_text() == "{}"


def test_a_zip_of_one_learner_without_a_top_folder_keeps_the_learner(tmp_path):
    archive = make_zip(tmp_path / "ada.zip", {f"ada/{U1}/{U1}.ipynb": "{}"})

    rows = collect_zip(archive, tmp_path)

    assert rows == [
        Submission("ada", U1, tmp_path / "scratch" / "extracted" / f"ada/{U1}/{U1}.ipynb")
    ]


def test_a_canvas_download_is_read_by_learner_id(tmp_path):
    archive = make_zip(
        tmp_path / "submissions.zip",
        {
            f"lovelaceada_123_456_{U1}.ipynb": "{}",
            f"lovelaceada_LATE_123_789_{U1}-1.ipynb": "{}",
            "lovelaceada_123_790_data.csv": "",
            f"smithjohn_200_300_{U1}.ipynb": "{}",
            f"smithjohn_201_301_{U1}.ipynb": "{}",
            f"anon_x7Yq2_555_{U2}.ipynb": "{}",
            f"LATE_anon_Q9r_556_{U2}.ipynb": "{}",
            "turingalan_300_400_my copy.ipynb": "{}",
            f"turingalan_300_401_{U2} (1).ipynb": "{}",
            "hopperg_500_600_report.pdf": "",
            "random.ipynb": "{}",
        },
    )
    extracted = tmp_path / "scratch" / "extracted"

    rows = collect_zip(archive, tmp_path)

    assert rows == [
        Submission(
            "123",
            U1,
            extracted / f"lovelaceada_LATE_123_789_{U1}-1.ipynb",
            notes=(
                f"2 notebooks were submitted for `{U1}`: graded `lovelaceada_LATE_123_789_{U1}-1"
                f".ipynb`, the latest named `{U1}.ipynb`, and ignored `lovelaceada_123_456_{U1}"
                ".ipynb`.",
                f"ignored `data.csv`: {ONLY}",
            ),
        ),
        Submission("200", U1, extracted / f"smithjohn_200_300_{U1}.ipynb"),
        Submission("201", U1, extracted / f"smithjohn_201_301_{U1}.ipynb"),
        Submission(
            "300",
            U2,
            extracted / f"turingalan_300_401_{U2} (1).ipynb",
            notes=(
                f"graded `turingalan_300_401_{U2} (1).ipynb`: the notebook should be named "
                f"`{U2}.ipynb`.",
            ),
        ),
        Submission(
            "300",
            "my copy",
            None,
            problem=(
                f"`my copy.ipynb` is not named after a unit of this course ({UNIT_LIST}): name the "
                "notebook `UNIT.ipynb` and submit it again."
            ),
        ),
        Submission(
            "500",
            NO_UNIT,
            None,
            problem="no notebook was submitted.",
            notes=(f"ignored `report.pdf`: {ONLY}",),
        ),
        Submission("anon_Q9r", U2, extracted / f"LATE_anon_Q9r_556_{U2}.ipynb"),
        Submission("anon_x7Yq2", U2, extracted / f"anon_x7Yq2_555_{U2}.ipynb"),
        Submission(
            "random.ipynb",
            NO_UNIT,
            None,
            problem=(
                "`random.ipynb` in the zip has a name the grader cannot read, so it cannot tell "
                "whose notebook it is: rename it, or give a filename_regexp that reads it."
            ),
        ),
    ]


def test_a_canvas_download_inside_one_top_folder(tmp_path):
    archive = make_zip(tmp_path / "c.zip", {f"course-hw1 submissions/adal_12_34_{U1}.ipynb": "{}"})

    rows = collect_zip(archive, tmp_path)

    path = tmp_path / "scratch" / "extracted" / f"course-hw1 submissions/adal_12_34_{U1}.ipynb"
    assert rows == [Submission("12", U1, path)]


def test_a_moodle_download_flat_or_in_folders(tmp_path):
    archive = make_zip(
        tmp_path / "moodle.zip",
        {
            f"Ada Lovelace_12345_assignsubmission_file_{U1}.ipynb": "{}",
            f"Alan Turing_777_assignsubmission_file/{U1}.ipynb": "{}",
            f"Grace Hopper_778_assignsubmission_file_/{U2}.ipynb": "{}",
            "Grace Hopper_778_assignsubmission_onlinetext_/onlinetext.html": "",
        },
    )
    extracted = tmp_path / "scratch" / "extracted"

    rows = collect_zip(archive, tmp_path)

    assert rows == [
        Submission("12345", U1, extracted / f"Ada Lovelace_12345_assignsubmission_file_{U1}.ipynb"),
        Submission("777", U1, extracted / f"Alan Turing_777_assignsubmission_file/{U1}.ipynb"),
        Submission("778", U2, extracted / f"Grace Hopper_778_assignsubmission_file_/{U2}.ipynb"),
    ]


def test_the_latest_by_the_regexps_timestamp_wins_over_entry_time_and_name(tmp_path):
    regexp = r".*_(?P<student_id>\w+)_attempt_(?P<timestamp>[0-9\-]+)_(?P<file_id>\w+)"
    archive = make_zip(
        tmp_path / "attempts.zip",
        {
            f"ps1_ada_attempt_2024-05-02-09-00-00_{U1}.ipynb": ("{}", (2024, 1, 1, 0, 0, 0)),
            f"ps1_ada_attempt_2024-05-01-09-00-00_{U1}.ipynb": ("{}", (2024, 12, 1, 0, 0, 0)),
            f"ps1_bob_attempt_2024-99-99-00-00-00_{U1}.ipynb": "{}",
        },
    )
    extracted = tmp_path / "scratch" / "extracted"

    rows = collect_zip(archive, tmp_path, filename_regexp=regexp)

    assert rows == [
        Submission(
            "ada",
            U1,
            extracted / f"ps1_ada_attempt_2024-05-02-09-00-00_{U1}.ipynb",
            notes=(
                f"2 notebooks were submitted for `{U1}`: graded `ps1_ada_attempt_2024-05-02-09-00-"
                f"00_{U1}.ipynb`, the latest named `{U1}.ipynb`, and ignored `ps1_ada_attempt_2024-"
                f"05-01-09-00-00_{U1}.ipynb`.",
            ),
        ),
        Submission(
            "bob",
            U1,
            extracted / f"ps1_bob_attempt_2024-99-99-00-00-00_{U1}.ipynb",
            notes=(
                "the time `2024-99-99-00-00-00` in "
                f"`ps1_bob_attempt_2024-99-99-00-00-00_{U1}.ipynb` could not be read and was not "
                "used.",
            ),
        ),
    ]


def test_several_notebooks_in_a_unit_folder_prefer_the_unit_name_then_the_newest_entry(tmp_path):
    archive = make_zip(
        tmp_path / "class.zip",
        {
            f"ada/{U1}/{U1}.ipynb": ("{}", (2024, 1, 1, 0, 0, 0)),
            f"ada/{U1}/newer copy.ipynb": ("{}", (2024, 6, 1, 0, 0, 0)),
            f"bob/{U1}/a.ipynb": ("{}", (2024, 6, 1, 0, 0, 0)),
            f"bob/{U1}/b.ipynb": ("{}", (2024, 1, 1, 0, 0, 0)),
        },
    )
    extracted = tmp_path / "scratch" / "extracted"

    rows = collect_zip(archive, tmp_path)

    assert rows == [
        Submission(
            "ada",
            U1,
            extracted / f"ada/{U1}/{U1}.ipynb",
            notes=(
                f"2 notebooks were submitted for `{U1}`: graded `ada/{U1}/{U1}.ipynb`, the latest "
                f"named `{U1}.ipynb`, and ignored `ada/{U1}/newer copy.ipynb`.",
            ),
        ),
        Submission(
            "bob",
            U1,
            extracted / f"bob/{U1}/a.ipynb",
            notes=(
                f"2 notebooks were submitted for `{U1}`: graded `bob/{U1}/a.ipynb`, the latest, "
                f"and ignored `bob/{U1}/b.ipynb`.",
                f"graded `a.ipynb`: the notebook should be named `{U1}.ipynb`.",
            ),
        ),
    ]


def test_an_unsafe_student_id_from_a_custom_regexp_is_a_problem_row(tmp_path):
    archive = make_zip(tmp_path / "x.zip", {f"bad\tid__{U1}.ipynb": "{}"})

    rows = collect_zip(archive, tmp_path, filename_regexp=r"(?P<student_id>[^_]+)__(?P<file_id>.+)")

    assert rows == [
        Submission(
            stand_in("bad\tid"),
            U1,
            None,
            problem=(
                f"`bad\tid`, the student id read from `bad\tid__{U1}.ipynb`, cannot be used as one "
                "(it is hidden or holds unusual characters): rename the file."
            ),
        )
    ]


def test_running_again_gives_the_same_rows_and_a_fresh_extraction(tmp_path):
    archive = make_zip(tmp_path / "c.zip", {f"adal_12_34_{U1}.ipynb": "{}"})
    first = collect_zip(archive, tmp_path)
    stale = tmp_path / "scratch" / "extracted" / "stale.ipynb"
    stale.write_text("{}")

    assert collect_zip(archive, tmp_path) == first
    assert not stale.exists()


@pytest.mark.parametrize(
    ("regexp", "message"),
    [
        ("(?P<student_id>", "is not a valid regexp"),
        (r"(?P<student_id>\w+)_(?P<name>.+)", r"lacks the named groups \['file_id'\]"),
    ],
)
def test_a_bad_regexp_is_refused_before_anything_is_extracted(tmp_path, regexp, message):
    archive = make_zip(tmp_path / "c.zip", {f"adal_12_34_{U1}.ipynb": "{}"})

    with pytest.raises(ValueError, match=message):
        collect_submissions(archive, units=UNITS, scratch=tmp_path / "s", filename_regexp=regexp)
    assert not (tmp_path / "s").exists()


def test_the_default_regexp_is_documented_and_the_limits_are_as_stated():
    assert DEFAULT_FILENAME_REGEXP.startswith("(?x)")
    assert (MAX_ZIP_BYTES, MAX_ZIP_FILES) == (2 * 2**30, 10_000)


def crafted_zip(path, names_and_attrs):
    with zipfile.ZipFile(path, "w") as zipped:
        for name, attr in names_and_attrs:
            info = zipfile.ZipInfo(name)
            info.external_attr = attr
            zipped.writestr(info, "{}")
    return path


@pytest.mark.parametrize(
    ("entries", "reason"),
    [
        ([("../evil.ipynb", 0)], "entry `../evil.ipynb` points outside the zip's folder"),
        ([("ada/../../e.ipynb", 0)], "entry `ada/../../e.ipynb` points outside the zip's folder"),
        ([("..\\evil.ipynb", 0)], "entry `..\\evil.ipynb` points outside the zip's folder"),
        ([("/tmp/evil.ipynb", 0)], "entry `/tmp/evil.ipynb` points outside the zip's folder"),
        ([("C:/evil.ipynb", 0)], "entry `C:/evil.ipynb` points outside the zip's folder"),
        ([("link.ipynb", (stat.S_IFLNK | 0o777) << 16)], "entry `link.ipynb` is a symbolic link"),
        ([("a.ipynb", 0), ("./a.ipynb", 0)], "it holds `a.ipynb` twice"),
        ([("a", 0), ("a/b.ipynb", 0)], "`a` is both a file and a folder in it"),
    ],
    ids=["parent", "nested-parent", "backslash", "absolute", "drive", "symlink", "twice", "clash"],
)
def test_a_zip_that_could_write_outside_the_scratch_folder_is_refused(tmp_path, entries, reason):
    archive = crafted_zip(tmp_path / "evil.zip", entries)
    scratch = tmp_path / "deep" / "scratch"

    with pytest.raises(ValueError) as caught:
        collect_submissions(archive, units=UNITS, scratch=scratch)

    assert str(caught.value) == f"`{archive}` is refused: {reason}"
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["evil.zip"]


def test_a_zip_bomb_is_refused_by_its_size_and_its_file_count(tmp_path):
    archive = make_zip(tmp_path / "bomb.zip", {"zeros.ipynb": "0" * 5_000_000})
    many = make_zip(tmp_path / "many.zip", {f"f{number}.txt": "" for number in range(11)})

    with pytest.raises(ValueError) as big:
        collect_submissions(archive, units=UNITS, scratch=tmp_path / "s", max_bytes=1_000_000)
    with pytest.raises(ValueError) as numerous:
        collect_submissions(many, units=UNITS, scratch=tmp_path / "s", max_files=10)

    assert archive.stat().st_size < 50_000
    assert (
        str(big.value) == f"`{archive}` is refused: it unpacks to 5000000 bytes, more than 1000000"
    )
    assert str(numerous.value) == f"`{many}` is refused: it holds 11 entries, more than 10"
    assert not (tmp_path / "s").exists()


def test_an_entry_that_unpacks_to_more_than_it_declares_is_refused(tmp_path):
    data = bytearray(make_zip(tmp_path / "honest.zip", {"a.ipynb": "x" * 100_000}).read_bytes())
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 10)  # the uncompressed size it declares
    archive = tmp_path / "liar.zip"
    archive.write_bytes(bytes(data))

    with pytest.raises(ValueError) as caught:
        collect_submissions(archive, units=UNITS, scratch=tmp_path / "s", max_bytes=1000)

    assert str(caught.value) == (
        f"`{archive}` cannot be read as a zip (Bad CRC-32 for file 'a.ipynb'): download it again "
        "from the LMS"
    )
    assert sorted(path.name for path in (tmp_path / "s").iterdir()) == []


def test_a_file_that_is_not_a_readable_zip_is_refused_naming_it(tmp_path):
    not_zip = tmp_path / "download.zip"
    not_zip.write_bytes(b"<html>session expired</html>")
    good = make_zip(tmp_path / "good.zip", {f"adal_12_34_{U1}.ipynb": "{" + "x" * 1000 + "}"})
    damaged = tmp_path / "damaged.zip"
    data = bytearray(good.read_bytes())
    data[60:70] = b"\xff" * 10
    damaged.write_bytes(bytes(data))
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(good.read_bytes()[:-30])

    for archive in (not_zip, damaged, truncated):
        with pytest.raises(ValueError) as caught:
            collect_submissions(archive, units=UNITS, scratch=tmp_path / "s")
        assert str(caught.value).startswith(f"`{archive}` cannot be read as a zip (")
        assert str(caught.value).endswith("): download it again from the LMS")
        assert not (tmp_path / "s" / "extracted").exists()
        assert not (tmp_path / "s" / ".extracting").exists()


def test_nothing_is_left_half_extracted_when_a_zip_fails_midway(tmp_path):
    archive = make_zip(tmp_path / "c.zip", {f"adal_12_34_{U1}.ipynb": "{}"})
    collect_zip(archive, tmp_path)
    extracted = tmp_path / "scratch" / "extracted"
    kept = sorted(os.listdir(extracted))
    damaged = tmp_path / "damaged.zip"
    data = bytearray(
        make_zip(tmp_path / "big.zip", {"a.ipynb": "{" + "x" * 5000 + "}"}).read_bytes()
    )
    data[45:60] = b"\x00" * 15
    damaged.write_bytes(bytes(data))

    with pytest.raises(ValueError):
        collect_submissions(damaged, units=UNITS, scratch=tmp_path / "scratch")

    assert sorted(os.listdir(extracted)) == kept
    assert not (tmp_path / "scratch" / ".extracting").exists()


def test_what_nbgrader_collect_writes_beside_a_notebook_is_expected(tmp_path):
    root = make(
        tmp_path / "submitted",
        {
            f"ada/{U1}/{U1}.ipynb": "{}",
            f"ada/{U1}/timestamp.txt": "2024-05-01 10:00:00",
            f"ada/{U1}/submission_secret.txt": "0123abcd",
        },
    )
    [row] = collect_folder(root, tmp_path)
    assert (row.student, row.unit, row.problem, row.notes) == ("ada", U1, None, ())
