"""The class grader writes what ``nbgrader autograde`` writes, so that formgrader's grading view,
manual grading, comments and ``nbgrader generate_feedback`` work on its results; manual points
and comments survive a second run.

Compared with plain nbgrader on the same notebooks (the ``graded`` fixture runs nbgrader's own
generate_assignment and autograde): the same gradebook cells (names, points, sources,
checksums), the same per-cell rows per submission (auto scores, needs_manual_grade, nbgrader's
"No response." comments) and autograded notebooks with the same graded cells.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.grading.grade import grade
from tests.conftest import HAS_SANDBOX, LAYOUT, ROOT, answer_rounds, solved_learner_notebook

UNIT = "04_freezing"
LEARNERS = ("learner", "learner-solved")
pytestmark = pytest.mark.xdist_group(UNIT)


def _variant(learner: str) -> nbformat.NotebookNode:
    if learner == "learner-solved":
        return solved_learner_notebook(UNIT)
    if learner == "wrong":
        wrong = next(iter(answer_rounds(UNIT, "wrong")[0].values()))
        return solved_learner_notebook(UNIT, {wrong.cell: wrong.code})
    return nbformat.read(LAYOUT.learner_notebook(UNIT), as_version=4)


def _submit(course, learners, timestamp="2026-10-12 10:00:00.000000 UTC"):
    for learner in learners:
        folder = course / "submitted" / learner / UNIT
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(_variant(learner), folder / f"{UNIT}.ipynb")
        (folder / "timestamp.txt").write_text(timestamp)


def _grade(course):
    return grade(
        course / "submitted",
        out=course / "graded",
        root=ROOT,
        workers=1,
        sandbox=HAS_SANDBOX,
        progress=None,
        nbgrader_course=course,
    )


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = tmp_path_factory.mktemp("nbgrader-course")
    _submit(course, LEARNERS)
    _grade(course)
    return course


def _cells(url):
    with Gradebook(url) as book:
        notebook = book.find_notebook(UNIT, UNIT)
        return (
            {c.name: (c.max_score, c.cell_type) for c in notebook.grade_cells},
            {c.name for c in notebook.solution_cells},
            {c.name: (c.cell_type, c.locked, c.source, c.checksum) for c in notebook.source_cells},
        )


def _rows(url, learner):
    with Gradebook(url) as book:
        notebook = book.find_submission_notebook(UNIT, UNIT, learner)
        grades = {g.name: (g.auto_score, g.needs_manual_grade) for g in notebook.grades}
        return grades, {c.name: c.auto_comment for c in notebook.comments}


def _nbgrader_workdir(graded, tmp_path_factory):
    graded(UNIT, "learner")  # runs plain nbgrader on the unit once per test process
    return tmp_path_factory.getbasetemp() / f"nbgrader-{UNIT}"


def test_the_gradebook_holds_the_cells_nbgrader_records(course, graded, tmp_path_factory):
    plain = _nbgrader_workdir(graded, tmp_path_factory)
    ours = _cells(f"sqlite:///{course / 'gradebook.db'}")
    assert ours == _cells(f"sqlite:///{plain / 'gradebook.db'}")
    assert ours[1], "formgrader's comments need the answer cells"


@pytest.mark.parametrize("learner", LEARNERS)
def test_each_submission_has_the_rows_nbgrader_autograde_writes(
    course, graded, tmp_path_factory, learner
):
    plain = _nbgrader_workdir(graded, tmp_path_factory)
    assert _rows(f"sqlite:///{course / 'gradebook.db'}", learner) == _rows(
        f"sqlite:///{plain / 'gradebook.db'}", learner
    )
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        submission = book.find_submission(UNIT, learner)
        assert str(submission.timestamp) == "2026-10-12 10:00:00"


@pytest.mark.parametrize("learner", LEARNERS)
def test_the_autograded_notebook_is_where_formgrader_looks(
    course, graded, tmp_path_factory, learner
):
    plain = _nbgrader_workdir(graded, tmp_path_factory)
    relative = f"autograded/{learner}/{UNIT}/{UNIT}.ipynb"
    ours = nbformat.read(course / relative, as_version=4)
    theirs = nbformat.read(plain / relative, as_version=4)
    nbformat.validate(ours)

    def graded_cells(notebook):
        return [
            (c.metadata.nbgrader["grade_id"], c.cell_type, c.metadata.nbgrader.get("checksum"),
             c.source if c.metadata.nbgrader.get("locked") else None)
            for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id")
        ]  # fmt: skip

    assert graded_cells(ours) == graded_cells(theirs)
    assert (course / relative).stat().st_mode & 0o777 == 0o444  # read-only, as nbgrader leaves it
    assert (course / relative).with_name("timestamp.txt").is_file()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        grades = {g.name: g for g in book.find_submission_notebook(UNIT, UNIT, learner).grades}
    for cell in ours.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in grades:
            failed = any(output.output_type == "error" for output in cell.outputs)
            assert failed == (grades[grade_id].auto_score == 0), grade_id
            assert "BEGIN HIDDEN TESTS" in cell.source or "HIDDEN" not in cell.source


def test_outputs_are_the_graders_run_not_what_the_learner_saved(tmp_path):
    """A submission that saved forged outputs ("all tests passed") shows what the grader's
    own run printed and decided: the learner's outputs are gone."""
    notebook = _variant("learner")
    forged = nbformat.v4.new_output("stream", name="stdout", text="✓ all tests passed: 20/20\n")
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [forged]
    folder = tmp_path / "submitted" / "mallory" / UNIT
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{UNIT}.ipynb")
    [result] = _grade(tmp_path)
    assert result.score == 0
    shown = (tmp_path / "autograded" / "mallory" / UNIT / f"{UNIT}.ipynb").read_text()
    assert "all tests passed" not in shown
    assert "Not passed" in shown and "the class grader: 0 of" in shown


def test_manual_points_and_comments_survive_a_second_run(tmp_path):
    _submit(tmp_path, ["learner-solved"])
    _grade(tmp_path)
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as book:
        notebook = book.find_submission_notebook(UNIT, UNIT, "learner-solved")
        grade_, comment = notebook.grades[0], notebook.comments[0]
        graded_cell, commented_cell = grade_.name, comment.name
        grade_.manual_score, grade_.extra_credit = 0.5, 1.0
        comment.manual_comment = "Good, but say why requires_grad_ is enough."
        book.db.commit()
    _grade(tmp_path)  # the same notebook: taken from the resume cache
    marks = _marks(url, graded_cell, commented_cell)
    assert (marks["manual_score"], marks["extra_credit"]) == (0.5, 1.0)
    assert marks["needs_manual_grade"] is False
    assert marks["manual_comment"].startswith("Good, but")

    # The learner resubmits a worse notebook: the manual score stays, flagged for review.
    shutil.rmtree(tmp_path / "submitted")
    _submit(tmp_path, ["learner-solved"])
    worse = _variant("learner")
    nbformat.write(worse, tmp_path / "submitted" / "learner-solved" / UNIT / f"{UNIT}.ipynb")
    _grade(tmp_path)
    marks = _marks(url, graded_cell, commented_cell)
    assert (marks["auto_score"], marks["manual_score"]) == (0, 0.5)
    assert marks["needs_manual_grade"] is True
    assert marks["manual_comment"].startswith("Good, but")
    assert marks["auto_comment"] == "No response."


def _marks(url: str, graded_cell: str, commented_cell: str) -> dict:
    """The learner-solved submission's marks on one graded and one commented cell."""
    with Gradebook(url) as book:
        grade_ = book.find_grade(graded_cell, UNIT, UNIT, "learner-solved")
        comment = book.find_comment(commented_cell, UNIT, UNIT, "learner-solved")
        return {
            "auto_score": grade_.auto_score,
            "manual_score": grade_.manual_score,
            "extra_credit": grade_.extra_credit,
            "needs_manual_grade": grade_.needs_manual_grade,
            "manual_comment": comment.manual_comment,
            "auto_comment": comment.auto_comment,
        }


def test_nbgrader_generate_feedback_renders_the_graders_notebook(course):
    """formgrader's "generate feedback" button runs this command on the autograded notebooks,
    with the hub's nbgrader settings: the page shows the grader's decisions, never a hidden
    test's code."""
    config = course / "nbgrader_config.py"
    hub = (ROOT / "docs" / "deploy" / "one-server" / "nbgrader_config.py").read_text()
    config.write_text(f"{hub}\nc.CourseDirectory.root = {str(course)!r}\n")
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_feedback", UNIT, "--force"],
        cwd=course,
        env={"PATH": f"{sys.prefix}/bin:/usr/bin:/bin", "JUPYTER_CONFIG_PATH": str(course)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    page = (course / "feedback" / "learner-solved" / UNIT / f"{UNIT}.html").read_text()
    full = sum(float(c.metadata["nbgrader"].get("points", 0)) for c in _variant("learner").cells
               if c.metadata.get("nbgrader", {}).get("grade"))  # fmt: skip
    assert f"Score: {full:.1f} / {full:.1f}" in page
    items = _cells(f"sqlite:///{course / 'gradebook.db'}")[0]
    assert page.count("✓ The class grader") == len(items)
    assert "HIDDEN TESTS" not in page and "expect_first_prediction" not in page
