"""What each unit's variants get: under plain nbgrader, full marks for the solutions and zero
for the learner version as released; the class grader gives those exactly nbgrader's points,
takes from every kept wrong answer exactly its own item, and keeps full marks for every kept
alternative right answer. A Korean notebook is graded as the English one by both, and each
speaks Korean to its learner."""

from __future__ import annotations

import re

import nbformat
import pytest

from tests.conftest import (
    BASE_VARIANTS,
    KOREAN_VARIANTS,
    LAYOUT,
    UNITS,
    answer_rounds,
    graded_param,
    kept_answers,
    round_learner,
)


def _graded_cells(unit: str) -> dict[str, str]:
    """grade id -> ``"solution"`` or ``"test"`` for every nbgrader cell of the unit."""
    cells = {}
    for cell in nbformat.read(LAYOUT.source_notebook(unit), as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cells[meta["grade_id"]] = "solution"
        elif meta.get("grade"):
            cells[meta["grade_id"]] = "test"
    return cells


@pytest.mark.parametrize(("unit", "learner"), [graded_param(u, "solution") for u in UNITS])
def test_solution_gets_full_marks_and_runs_clean(graded, unit, learner):
    result = graded(unit, learner)
    assert result.errors() == {}
    assert result.scores == result.max_scores


@pytest.mark.parametrize(("unit", "learner"), [graded_param(u, "learner-solved") for u in UNITS])
def test_learner_version_solved_gets_full_marks(graded, unit, learner):
    """The hidden tests come back at grading time: solving the released notebook is enough."""
    result = graded(unit, learner)
    assert result.errors() == {}
    assert result.scores == result.max_scores


@pytest.mark.parametrize(("unit", "learner"), [graded_param(u, "learner") for u in UNITS])
def test_learner_version_scores_zero_and_only_exercises_fail(graded, unit, learner):
    result = graded(unit, learner)
    assert result.max_score > 0
    assert all(score == 0 for score in result.scores.values()), result.scores
    exercise_cells = set(_graded_cells(unit))
    stray_errors = {
        cell: error for cell, error in result.errors().items() if cell not in exercise_cells
    }
    assert stray_errors == {}, "cells outside the exercises fail in the released notebook"


@pytest.mark.parametrize(
    ("unit", "learner", "wrong", "round_"),
    [
        graded_param(
            unit, round_learner(number), wrong, round_, id=f"{unit}-wrong-{wrong.number:02d}"
        )
        for unit in UNITS
        for number, round_ in enumerate(answer_rounds(unit, "wrong"), start=1)
        for wrong in round_.values()
    ],
)
def test_wrong_answer_loses_exactly_its_item(class_graded, unit, learner, wrong, round_):
    result = class_graded(unit, learner)
    scores = {item.grade_id: item.points for item in result.items}
    lost_in_round = {item for other in round_.values() for item in other.loses}
    assert {item: scores[item] for item in wrong.loses} == dict.fromkeys(wrong.loses, 0.0), (
        f"{wrong.cell}: {wrong.why}"
    )
    kept = [item for item in result.items if item.grade_id not in lost_in_round]
    assert [item.grade_id for item in kept if not item.passed] == [], "another item lost points"


@pytest.mark.parametrize(
    ("unit", "learner", "right"),
    [
        graded_param(
            unit, round_learner(number, "right"), right, id=f"{unit}-right-{right.number:02d}"
        )
        for unit in UNITS
        for number, round_ in enumerate(answer_rounds(unit, "right"), start=1)
        for right in round_.values()
    ],
)
def test_right_answer_keeps_full_marks(class_graded, unit, learner, right):
    result = class_graded(unit, learner)
    assert result.status == "graded", result.reason
    lost = {item.grade_id: item.failures for item in result.items if not item.passed}
    assert lost == {}, f"{right.cell}: {right.why}"


@pytest.mark.parametrize("unit", UNITS)
def test_every_item_has_a_wrong_answer_that_loses_it_and_every_answer_a_right_one(unit):
    kinds = _graded_cells(unit)
    items = {grade_id for grade_id, kind in kinds.items() if kind == "test"}
    answers = {grade_id for grade_id, kind in kinds.items() if kind == "solution"}
    covered = {item for wrong in kept_answers(unit, "wrong") for item in wrong.loses}
    assert items - covered == set()
    assert {wrong.cell for wrong in kept_answers(unit, "wrong")} <= answers
    assert {right.cell for right in kept_answers(unit, "right")} == answers


@pytest.mark.parametrize(
    ("unit", "learner"),
    [graded_param(unit, learner) for unit in UNITS for learner in BASE_VARIANTS + KOREAN_VARIANTS],
)
def test_class_grader_gives_what_nbgrader_gives(graded, class_graded, unit, learner):
    ours = class_graded(unit, learner)
    assert ours.status == "graded", ours.reason
    assert {item.grade_id: item.points for item in ours.items} == graded(unit, learner).scores


_HANGUL = re.compile("[\uac00-\ud7a3]")


def _points(result) -> dict[str, float]:
    return {item.grade_id: item.points for item in result.items}


@pytest.mark.parametrize(("unit", "learner"), [graded_param(u, "ko") for u in UNITS])
def test_a_korean_notebook_is_graded_as_the_english_one_and_told_in_korean(
    graded, class_graded, tmp_path_factory, unit, learner
):
    english, korean = (
        class_graded(unit, round_learner(1)),
        class_graded(unit, f"ko-{round_learner(1)}"),
    )
    assert (english.language, korean.language) == ("en", "ko")
    assert _points(korean) == _points(english)
    assert graded(unit, f"ko-{round_learner(1)}").scores == _points(english)
    assert graded(unit, "ko-learner-solved").scores == graded(unit, "learner-solved").scores
    lost = [item for item in korean.items if not item.passed]
    assert lost, f"{unit}: the first round of wrong answers loses nothing?"
    for item in lost:
        for failure in item.failures:
            assert _HANGUL.search(failure), f"{unit} {item.grade_id}: not in Korean: {failure}"
    page = (
        tmp_path_factory.getbasetemp()
        / f"class-{unit}"
        / "graded"
        / "feedback"
        / f"ko-{round_learner(1)}"
        / f"{unit}.html"
    ).read_text(encoding="utf-8")
    assert '<html lang="ko">' in page and "내 피드백" in page
    # nbgrader's own autograde ran the notebook in a kernel that read its language too
    executed = graded(unit, f"ko-{round_learner(1)}").executed
    for cell in executed.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in {item.grade_id for item in lost}:
            shown = [o.get("evalue", "") for o in cell.outputs if o.output_type == "error"]
            assert shown and _HANGUL.search(shown[0]), f"{unit} {grade_id}: {shown}"
