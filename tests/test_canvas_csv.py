"""``python -m autograder canvas-csv`` writes the gradebook in the format Canvas's gradebook
import reads (its own export's layout, documented in Canvas's Instructor Guide, "How do I import
grades in the Gradebook?"): ``Student, ID, SIS User ID, SIS Login ID, Section``, one column per
assignment, then a ``Points Possible`` row; final scores, manual changes included."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook

from autograder.grading.results import GRADED, ItemInfo, ItemResult, UnitResult
from autograder.reporting.canvas_csv import CanvasCsvError, write_canvas_csv
from autograder.reporting.gradebook import record_grades
from tests.conftest import ROOT

UNITS = {
    "01_leaf_tensors": (ItemInfo("a_test", 2.0, "A"), ItemInfo("b_test", 3.0, "B")),
    "02_retain_graph": (ItemInfo("c_test", 4.0, "C"),),
}


def _result(student, unit, *points):
    infos = UNITS[unit]
    items = tuple(
        ItemResult(i.grade_id, p, i.max_points) for i, p in zip(infos, points, strict=True)
    )
    total = sum(i.max_points for i in infos)
    return UnitResult(student, unit, GRADED, items=items, max_score=total)


@pytest.fixture
def gradebook(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    results = [
        _result("ada", "01_leaf_tensors", 2.0, 3.0),
        _result("ada", "02_retain_graph", 0.0),
        _result("=cmd|calc", "01_leaf_tensors", 0.0, 3.0),
        _result("grace", "01_leaf_tensors", 2.0, 0.0),
    ]
    record_grades(url, results, UNITS)
    with Gradebook(url) as book:
        book.update_or_create_student("grace", first_name="Grace", last_name="Hopper")
        grade = book.find_grade("b_test", "01_leaf_tensors", "01_leaf_tensors", "grace")
        grade.manual_score = 1.5  # an instructor's change in formgrader
        book.db.commit()
    return url


def _rows(path):
    with path.open(newline="", encoding="utf-8") as stream:
        return list(csv.reader(stream))


def test_the_header_and_points_possible_rows_are_canvas_s(gradebook, tmp_path):
    rows = _rows(write_canvas_csv(db_url=gradebook, out=tmp_path / "canvas.csv"))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "01_leaf_tensors", "02_retain_graph"]  # fmt: skip
    assert rows[1] == ["Points Possible", "", "", "", "", "5", "4"]
    assert all(len(row) == len(rows[0]) for row in rows)


def test_each_learner_has_the_final_score_and_blank_where_nothing_was_graded(gradebook, tmp_path):
    rows = _rows(write_canvas_csv(db_url=gradebook, out=tmp_path / "canvas.csv"))
    by_login = {row[3]: row for row in rows[2:]}
    assert by_login["ada"] == ["ada", "", "", "ada", "", "5", "0"]
    # grace: the grader gave 2 + 0, the instructor changed b_test to 1.5; no unit 02 graded
    assert by_login["grace"] == ["Hopper, Grace", "", "", "grace", "", "3.5", ""]
    # a cell a spreadsheet would run as a formula is quoted
    assert by_login["'=cmd|calc"][0] == "'=cmd|calc"


def test_the_student_id_can_go_to_canvas_s_own_id_column(gradebook, tmp_path):
    rows = _rows(write_canvas_csv(db_url=gradebook, out=tmp_path / "c.csv", match="ID"))
    assert {row[1] for row in rows[2:]} == {"ada", "'=cmd|calc", "grace"}
    assert {row[3] for row in rows[2:]} == {""}
    with pytest.raises(CanvasCsvError, match="--match must be one of"):
        write_canvas_csv(db_url=gradebook, out=tmp_path / "c.csv", match="Email")


def test_the_verb_names_a_bad_gradebook_and_leaves_the_old_csv(tmp_path):
    out = tmp_path / "canvas.csv"
    out.write_text("kept\n")
    broken = tmp_path / "broken.db"
    broken.write_text("this is not a database")
    missing = f"sqlite:///{tmp_path}/no.db"
    for url, says in [(f"sqlite:///{broken}", "broken.db"), (missing, "no.db")]:
        done = subprocess.run(
            [sys.executable, "-m", "autograder", "canvas-csv", "--db", url, "--out", str(out)],
            cwd=ROOT, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 1 and says in done.stderr, done.stderr
        assert out.read_text() == "kept\n"


def test_the_verb_writes_the_file(gradebook, tmp_path):
    out = tmp_path / "canvas.csv"
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "canvas-csv", "--db", gradebook, "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _rows(out)[1][0] == "Points Possible"
