"""`make release`: course/ is exactly what nbgrader generates from solutions/, and a broken
source notebook fails the release with a message naming the notebook and the cell."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.source_check import (
    SourceNotebookError,
    check_source_notebook,
    find_problems,
)
from tests.conftest import LAYOUT, ROOT, UNITS

pytestmark = pytest.mark.xdist_group("release")


def test_course_is_what_release_generates_now():
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "release", "--check", "--root", str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_learner_notebooks_hold_no_solution_and_no_hidden_test():
    for unit in UNITS:
        text = LAYOUT.learner_notebook(unit).read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text
        assert "HIDDEN TESTS" not in text


def _course_copy(tmp_path: Path) -> Path:
    """A scratch repository with the real config and unit 01's source notebook."""
    unit = UNITS[0]
    (tmp_path / "autograder").mkdir()
    shutil.copy(LAYOUT.nbgrader_config, tmp_path / "autograder")
    (tmp_path / "solutions" / unit).mkdir(parents=True)
    shutil.copy(LAYOUT.source_notebook(unit), tmp_path / "solutions" / unit)
    (tmp_path / "course" / unit).mkdir(parents=True)
    shutil.copy(LAYOUT.learner_notebook(unit), tmp_path / "course" / unit)
    return tmp_path


def _edit_source(root: Path, edit) -> Path:
    path = root / "solutions" / UNITS[0] / f"{UNITS[0]}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    edit(notebook)
    nbformat.write(notebook, path)
    return path


def _solution_cells(notebook):
    return [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution")]


def _break_marker(notebook):
    cell = _solution_cells(notebook)[1]
    cell.source = cell.source.replace("### END SOLUTION", "### END SOLUTON")


def _duplicate_grade_id(notebook):
    first, second = _solution_cells(notebook)[:2]
    second.metadata["nbgrader"]["grade_id"] = first.metadata["nbgrader"]["grade_id"]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (_break_marker, "has no matching '### END SOLUTION'"),
        (_duplicate_grade_id, "duplicate grade_id, also used by cell"),
    ],
)
def test_broken_source_fails_release_naming_file_and_cell(tmp_path, edit, expected):
    root = _course_copy(tmp_path)
    path = _edit_source(root, edit)
    learner_before = (root / "course").joinpath(UNITS[0], f"{UNITS[0]}.ipynb").read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "release", "--root", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert str(path) in result.stderr
    assert "cell " in result.stderr and "(grade_id '" in result.stderr
    assert expected in result.stderr
    after = (root / "course").joinpath(UNITS[0], f"{UNITS[0]}.ipynb").read_bytes()
    assert after == learner_before, "a failed release must leave course/ untouched"


def _notebook(*cells):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = list(cells)
    return notebook


def _cell(source, **nbgrader):
    cell = nbformat.v4.new_code_cell(source)
    if nbgrader:
        cell.metadata["nbgrader"] = nbgrader
    return cell


SOLUTION = {"solution": True, "grade": False, "grade_id": "ex", "locked": False}
TEST = {"solution": False, "grade": True, "grade_id": "ex_test", "locked": True, "points": 1}


@pytest.mark.parametrize(
    ("cells", "problem"),
    [
        ([_cell("### END SOLUTION", **SOLUTION)], "closes nothing"),
        ([_cell("x = 1", **SOLUTION)], "would hand learners the answer"),
        ([_cell("## BEGIN SOLUTION\nx = 1\n### END SOLUTION", **SOLUTION)], "looks like a marker"),
        ([_cell("### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS", **SOLUTION)], "only allowed"),
        ([_cell("assert True", **{**TEST, "points": 0})], "positive points"),
        ([_cell("assert True", **{**TEST, "locked": False})], "must be locked"),
        ([_cell("assert True", **{**TEST, "grade_id": "a b"})], "letters, digits"),
        ([_cell("### BEGIN SOLUTION\n### BEGIN SOLUTION", **SOLUTION)], "opens inside"),
    ],
)
def test_source_check_names_each_problem(cells, problem):
    problems = list(find_problems(_notebook(*cells)))
    assert any(problem in line and line.startswith("cell 1") for line in problems), problems


def test_source_check_accepts_every_unit_and_rejects_unreadable_files(tmp_path):
    for unit in UNITS:
        check_source_notebook(LAYOUT.source_notebook(unit))
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(SourceNotebookError, match="broken.ipynb: not a readable notebook"):
        check_source_notebook(broken)


def _unseeded_test(notebook):
    test = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade"))
    test.source = "import time\nfrom autograder.checks import expect\n" + test.source
    test.source += '\nexpect(True, f"drawn at {time.time_ns()}")'
    return test.metadata["nbgrader"]["grade_id"]


def test_release_refuses_a_test_cell_whose_solution_run_is_not_reproducible(tmp_path):
    """Issue 13: learners are judged against the solution's run, so the release runs each
    solution twice in the grader and names the test cell whose records differ."""
    root = _course_copy(tmp_path)
    grade_ids = []
    _edit_source(root, lambda notebook: grade_ids.append(_unseeded_test(notebook)))
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "release", "--check", "--root", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert f"{grade_ids[0]} (cell " in result.stderr
    assert "differs between two runs" in result.stderr
