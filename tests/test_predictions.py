"""The first prediction counts: recorded at its reveal, kept across kernel restarts, judged by
the grader from its own read of the record, and a changed prediction loses exactly its item."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.checks import CheckFailed, expect_first_prediction, reveal_prediction
from autograder.checks.predictions import (
    RECORD_FILE,
    bind_first_prediction,
    read_first_predictions,
)
from autograder.checks.rules import judge

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
