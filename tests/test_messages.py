"""Torch's whole message reaches the learner, advice included, wrapped to a readable width:
in demo cells (shows_outcome), in check failures (call_learner) and nbgrader's Validate;
tests/test_predictions.py shows it in the class grader's feedback."""

from __future__ import annotations

import contextlib
import inspect
import io
import subprocess
import sys

import nbformat
import pytest
import torch

from autograder.checks import CheckFailed, call_learner, shows_outcome
from autograder.checks.messages import WIDTH, whole_message


def _shown(block) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), shows_outcome():
        block()
    return printed.getvalue()


def _non_leaf_grad():
    return (torch.ones(2, requires_grad=True) * 2).grad


def _backward_twice():
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_shows_outcome_prints_the_warnings_advice_and_the_errors_remedy():
    warning = _shown(_non_leaf_grad)
    error = _shown(_backward_twice)
    assert "use .retain_grad() on the non-leaf Tensor" in _flat(warning)
    assert "Specify retain_graph=True if you need to backward through the graph" in _flat(error)
    assert "Triggered internally" not in warning
    for text in (warning, error):
        assert len(text.splitlines()) > 1
        assert max(len(line) for line in text.splitlines()) <= WIDTH


def test_a_check_failure_quotes_torchs_whole_message():
    with pytest.raises(CheckFailed) as warned:
        call_learner("read_grad", _non_leaf_grad)
    with pytest.raises(CheckFailed) as raised:
        call_learner("train", _backward_twice)
    assert "use .retain_grad() on the non-leaf Tensor" in _flat(str(warned.value))
    assert "find what in your code made torch warn" in _flat(str(warned.value))
    assert "Specify retain_graph=True" in _flat(str(raised.value))


def test_only_the_source_location_is_left_out():
    message = "First. Second advice.\n  indented detail (Triggered internally at /x/y.cpp:3.)"
    assert whole_message(ValueError(message)) == "First. Second advice.\n  indented detail"


def test_nbgraders_validate_shows_the_whole_message_uncut(tmp_path):
    """Validate (the toolbar button, `nbgrader validate`) cuts each line at 87 characters."""
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(inspect.getsource(_backward_twice)),
            nbformat.v4.new_code_cell(
                "import torch\nfrom autograder.checks import call_learner\n"
                "call_learner('train', _backward_twice)"
            ),
        ]
    )
    notebook.cells[1].metadata["nbgrader"] = {
        "grade": True,
        "grade_id": "train_test",
        "locked": True,
        "points": 1,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }
    nbformat.write(notebook, tmp_path / "train.ipynb")
    shown = subprocess.run(
        [sys.executable, "-m", "nbgrader", "validate", "train.ipynb"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    error = shown[shown.rindex("\n    CheckFailed: ") :]
    assert "Specify retain_graph=True if you need to backward through the graph a second time" in (
        _flat(error)
    )
    assert "after calling backward." in error
    assert not any(line.endswith("...") for line in error.splitlines())
