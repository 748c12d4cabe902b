"""The first prediction counts: recorded at its reveal, kept across kernel restarts, judged by
the grader from its own read of the record, and a changed prediction loses exactly its item."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.handout import HANDOUT_ENTRIES, build_handout
from autograder.authoring.plain_nbgrader import autograde
from autograder.authoring.release import release
from autograder.checks import CheckFailed, expect_first_prediction, reveal_prediction
from autograder.checks.evidence import describe
from autograder.checks.first_predictions import (
    RECORD_FILE,
    bind_first_prediction,
    read_first_predictions,
)
from autograder.checks.rules import judge
from autograder.grading.grade import grade
from autograder.grading.intake import collect_submissions
from autograder.grading.results import GRADED
from tests.conftest import ROOT

OUTCOMES = {True: "error", False: "fine"}


def _revealed(folder: Path, predicted: object, observed: object, **options: object) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        reveal_prediction("predict_x", predicted, observed, folder=folder, **options)
    return printed.getvalue()


@pytest.fixture
def in_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_reveal_compares_line_by_line_in_the_items_words(tmp_path):
    shown = _revealed(
        tmp_path,
        {"P": True, "Q": False},
        {"P": False, "Q": False},
        labels=OUTCOMES,
        why={"P": "P only reads a value."},
    )
    assert shown.splitlines() == [
        "P: you said error; torch: fine  ✗",
        "   P only reads a value.",
        "Q: you said fine; torch: fine  ✓",
        "1 of 2 right.",
    ]


def test_a_set_of_letters_gets_one_line_per_option(tmp_path):
    labels = {True: "gradient", False: "no gradient"}
    shown = _revealed(tmp_path, {"B"}, {"B", "C"}, labels=labels, why={"A": "a copy", "D": "x"})
    assert shown.splitlines() == [
        "A: you said no gradient; torch: no gradient  ✓",
        "   a copy",
        "B: you said gradient; torch: gradient  ✓",
        "C: you said no gradient; torch: gradient  ✗",
        "D: you said no gradient; torch: no gradient  ✓",
        "   x",
        "3 of 4 right.",
    ]


def test_the_first_reveal_is_recorded_once_and_a_change_is_named(tmp_path):
    _revealed(tmp_path, True, False, labels=OUTCOMES)
    again = _revealed(tmp_path, False, False, labels=OUTCOMES)
    assert again.splitlines()[0] == "you said fine; torch: fine  ✓"
    assert "Your first prediction was error; a prediction changed after its reveal" in again
    assert read_first_predictions(tmp_path).first("predict_x") == ["bool", True]
    assert "first prediction was" not in _revealed(tmp_path, True, False, labels=OUTCOMES)


def test_a_prediction_in_the_wrong_form_is_not_recorded(tmp_path):
    shown = _revealed(tmp_path, {"P": True}, {"P": True, "Q": False})
    assert "has the keys P; this item asks for the keys P, Q" in shown
    assert "Nothing was recorded" in shown
    assert not (tmp_path / RECORD_FILE).exists()


def test_expect_first_prediction_passes_without_a_record_and_on_the_first_value(in_folder):
    expect_first_prediction("predict_x", "predicted", "fine")
    _revealed(in_folder, "error", "fine")
    expect_first_prediction("predict_x", "predicted", "error")
    with pytest.raises(CheckFailed, match="a prediction changed after its reveal earns no points"):
        expect_first_prediction("predict_x", "predicted", "fine")


def test_the_record_survives_a_kernel_restart(tmp_path):
    """Two fresh interpreters stand for the kernel before and after a restart."""

    def fresh_kernel(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "from autograder.checks import *\n" + code],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )

    first = fresh_kernel("reveal_prediction('predict_x', {'A'}, {'A', 'B'})")
    assert first.returncode == 0, first.stderr
    second = fresh_kernel("expect_first_prediction('predict_x', 'guess', {'A', 'B'})")
    assert second.returncode != 0
    assert "your first prediction, recorded when you first ran its reveal cell, was {'A'}" in (
        second.stderr
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{nope", "is not valid JSON"),
        (b"[1, 2]", "does not map each item to its first prediction"),
        (b"\xff\xfe", "is not UTF-8 text"),
        (b'{"predict_x": ["tensor", {}]}', "holds no readable first prediction for `predict_x`"),
        (b'{"predict_x": ["bool", "yes"]}', "holds no readable first prediction for `predict_x`"),
    ],
)
def test_a_bad_record_file_is_named_and_counts_as_no_record(in_folder, content, problem):
    (in_folder / RECORD_FILE).write_bytes(content)
    found = read_first_predictions(in_folder)
    assert found.first("predict_x") is None
    assert any(RECORD_FILE in line and problem in line for line in found.problems)
    expect_first_prediction("predict_x", "predicted", "fine")  # no record: passes
    shown = _revealed(in_folder, "error", "fine")
    assert problem in " ".join(shown.split())
    assert read_first_predictions(in_folder).first("predict_x") == ["str", "error"]


def test_a_linked_record_file_is_never_followed(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"predict_x": ["bool", True]}))
    (tmp_path / RECORD_FILE).symlink_to(secret)
    found = read_first_predictions(tmp_path)
    assert found.text is None and found.first("predict_x") is None
    assert found.problems == (
        f"`{RECORD_FILE}` is a symbolic link, so it counts as no record of your first predictions.",
    )


def test_the_grader_judges_the_record_against_its_own_read(tmp_path):
    (tmp_path / RECORD_FILE).write_text(json.dumps({"predict_x": ["str", "error"]}))
    trusted = read_first_predictions(tmp_path)
    tampered = {
        "rule": "first_prediction",
        "grade_id": "predict_x",
        "name": "predicted",
        "value": ["str", "fine"],
        "first": ["str", "fine"],  # what a rewritten file in the sandbox said
        "hint": None,
    }
    assert judge(tampered) is None
    assert "earns no points" in judge(bind_first_prediction(tampered, trusted))
    other = {"rule": "expect", "condition": ["bool", True], "message": "m"}
    assert bind_first_prediction(other, trusted) == other


def test_writes_are_atomic(tmp_path, monkeypatch):
    replaced = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (replaced.append(Path(b)), real_replace(a, b)))
    _revealed(tmp_path, "error", "fine")
    assert replaced == [tmp_path / RECORD_FILE]
    assert sorted(path.name for path in tmp_path.iterdir()) == [RECORD_FILE]


# --- a unit of two predictions, graded by the class grader and by plain nbgrader -------------

UNIT = "01_tiny"
FIRST_LEAF = {"a": True, "b": True}  # the first prediction, changed after its reveal


def _code(source: str, **nbgrader: object) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    if nbgrader:
        cell.metadata["nbgrader"] = {
            "schema_version": 3,
            "task": False,
            "grade": False,
            "solution": False,
            "locked": False,
            **nbgrader,
        }
    return cell


def _answer(grade_id: str, code: str, solved: bool) -> nbformat.NotebookNode:
    source = f"### BEGIN SOLUTION\n{code}\n### END SOLUTION" if not solved else code
    return _code(source, grade_id=grade_id, solution=True)


def _test(grade_id: str, name: str, truth: str) -> nbformat.NotebookNode:
    return _code(
        f"print('Format OK.')\n### BEGIN HIDDEN TESTS\n"
        "from autograder.checks import expect_equal, expect_first_prediction\n"
        f"expect_first_prediction({grade_id!r}, {name!r}, {name})\n"
        f"expect_equal({name!r}, {name}, {truth})\n### END HIDDEN TESTS",
        grade_id=f"{grade_id}_test",
        grade=True,
        locked=True,
        points=1,
    )


def _tiny_unit(*, solved: bool = False, added: str | None = None) -> nbformat.NotebookNode:
    """Two predict items, each with a live reveal; ``solved``: as a learner submits it, with
    ``added`` a cell the learner put after the first answer."""
    cells = [
        _code("import torch\nfrom autograder.checks import reveal_prediction, shows_outcome"),
        _answer("predict_leaf", "predicted_leaf = {'a': True, 'b': False}", solved),
        _test("predict_leaf", "predicted_leaf", "{'a': True, 'b': False}"),
        _code(
            "a = torch.ones(1, requires_grad=True)\nb = a * 2\n"
            "reveal_prediction('predict_leaf', predicted_leaf, {'a': a.is_leaf, 'b': b.is_leaf},"
            " labels={True: 'leaf', False: 'not a leaf'})"
        ),
        _answer("predict_error", "predicted_error = 'error'", solved),
        _test("predict_error", "predicted_error", "'error'"),
        _code(
            "try:\n    torch.zeros(2).retain_grad()\n    observed = 'fine'\n"
            "except RuntimeError:\n    observed = 'error'\n"
            "reveal_prediction('predict_error', predicted_error, observed)"
        ),
    ]
    if added is not None:
        cells.insert(2, _code(added))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return notebook


def _record(**predictions: object) -> str:
    return json.dumps({grade_id: describe(value) for grade_id, value in predictions.items()})


TAMPER = (
    "import json\n"
    "open('first_predictions.json', 'w').write("
    f"{_record(predict_leaf={'a': True, 'b': False}, predict_error='error')!r})"
)

# An added cell that drops the first answer and then backwards twice.
CRASH = (
    "del predicted_leaf\n"
    "x = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny.backward()"
)

LEARNERS = {  # learner: (record file beside the notebook or None, added cell, score)
    "honest": (_record(predict_leaf={"a": True, "b": False}, predict_error="error"), None, 2.0),
    "no-record": (None, None, 2.0),
    "changed": (_record(predict_leaf=FIRST_LEAF, predict_error="error"), None, 1.0),
    "tampered": (_record(predict_leaf=FIRST_LEAF, predict_error="error"), TAMPER, 1.0),
    "bad-record": ("{not json", None, 2.0),
    "crashed": (None, CRASH, 1.0),
}


def _course(root: Path) -> Path:
    """A course folder holding only the tiny unit, and its learners' submissions."""
    (root / "solutions" / UNIT).mkdir(parents=True)
    nbformat.write(_tiny_unit(), root / "solutions" / UNIT / f"{UNIT}.ipynb")
    for learner, (record, added, _) in LEARNERS.items():
        folder = root / "submitted" / learner / UNIT
        folder.mkdir(parents=True)
        nbformat.write(_tiny_unit(solved=True, added=added), folder / f"{UNIT}.ipynb")
        if record is not None:
            (folder / RECORD_FILE).write_text(record)
    return root / "submitted"


def test_the_class_grader_takes_a_changed_prediction_s_points_and_says_why(tmp_path):
    submitted = _course(tmp_path)
    out = tmp_path / "graded"
    results = {
        result.student: result
        for result in grade(
            submitted, out=out, root=tmp_path, workers=1, sandbox=False, progress=None
        )
    }
    for learner, (_, _, score) in LEARNERS.items():
        assert results[learner].status == GRADED, results[learner].reason
        assert results[learner].score == score, (learner, results[learner].items)
    for learner in ("changed", "tampered"):
        items = {item.grade_id: item for item in results[learner].items}
        assert items["predict_error_test"].passed
        assert "a prediction changed after its reveal earns no points" in " ".join(
            items["predict_leaf_test"].failures
        )
        page = (out / "feedback" / learner / f"{UNIT}.html").read_text()
        assert "your first prediction, recorded when you first ran its reveal cell" in page
    crashed = " ".join(results["crashed"].items[0].failures)
    assert "Specify retain_graph=True if you need to backward" in " ".join(crashed.split())
    assert not any(RECORD_FILE in note for note in results["honest"].notes)
    assert any(
        RECORD_FILE in note and "counts as no record" in note
        for note in results["bad-record"].notes
    )


def test_plain_nbgrader_takes_a_changed_prediction_s_points(tmp_path):
    _course(tmp_path / "course")
    learners = ("honest", "changed", "no-record")
    folders = {name: tmp_path / "course" / "submitted" / name / UNIT for name in learners}
    results = autograde(
        root=tmp_path / "course",
        unit=UNIT,
        submissions={name: folder / f"{UNIT}.ipynb" for name, folder in folders.items()},
        beside={name: sorted(folder.glob(RECORD_FILE)) for name, folder in folders.items()},
        workdir=tmp_path / "nbgrader",
    )
    assert results["honest"].score == results["no-record"].score == 2.0
    assert results["changed"].scores == {"predict_leaf_test": 0.0, "predict_error_test": 1.0}
    assert "a prediction changed after its reveal earns no points" in " ".join(
        results["changed"].errors().values()
    )


def test_the_record_beside_the_notebook_is_expected_not_an_extra_file(tmp_path):
    submitted = _course(tmp_path)
    (submitted / "honest" / UNIT / "notes.txt").write_text("mine")
    rows = collect_submissions(submitted, units=[UNIT], scratch=tmp_path / "scratch")
    honest = next(row for row in rows if row.student == "honest")
    assert honest.notes == ("ignored `notes.txt`: the grader runs only the notebook.",)


def test_release_neither_ships_nor_removes_a_record(tmp_path):
    """A run of the solution leaves its answers in a record: never released; a learner's
    record in course/ is left alone."""
    _course(tmp_path)
    (tmp_path / "autograder").mkdir()
    shutil.copyfile(
        ROOT / "autograder" / "nbgrader_config.py", tmp_path / "autograder" / "nbgrader_config.py"
    )
    (tmp_path / "solutions" / UNIT / RECORD_FILE).write_text(_record(predict_error="error"))
    release(root=tmp_path)
    mine = tmp_path / "course" / UNIT / RECORD_FILE
    assert (tmp_path / "course" / UNIT / f"{UNIT}.ipynb").is_file()
    assert not mine.exists()
    mine.write_text(_record(predict_error="fine"))
    assert release(root=tmp_path, check=True) == []
    release(root=tmp_path)
    assert mine.read_text() == _record(predict_error="fine")


def test_the_handout_leaves_a_record_out(tmp_path):
    root = tmp_path / "repo"
    for entry in HANDOUT_ENTRIES:
        (root / entry).parent.mkdir(parents=True, exist_ok=True)
        if "." in entry or entry == "Makefile":
            (root / entry).write_text(entry)
    for folder in ("course/01_a", "autograder", "gradgraph"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "kept.txt").write_text("kept")
    nbformat.write(nbformat.v4.new_notebook(), root / "course" / "01_a" / "01_a.ipynb")
    (root / "course" / "01_a" / RECORD_FILE).write_text(_record(predict_error="error"))
    with zipfile.ZipFile(build_handout(root=root, out=tmp_path / "handout.zip")) as archive:
        names = archive.namelist()
    assert "autograd-course/course/01_a/01_a.ipynb" in names
    assert not any(name.endswith(RECORD_FILE) for name in names)
