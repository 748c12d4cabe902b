"""Shared fixtures: the repository's layout, and nbgrader's verdict on each unit's variants."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.plain_nbgrader import GradedNotebook, autograde
from autograder.grading.grade import grade
from autograder.grading.results import UnitResult
from autograder.grading.sandbox import SandboxUnavailable, find_sandbox
from autograder.layout import CourseLayout

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = CourseLayout(ROOT)
UNITS = LAYOUT.units()
_MARKERS = {"### BEGIN SOLUTION", "### END SOLUTION"}


@dataclass(frozen=True)
class KeptAnswer:
    """An answer kept as test data: a plausible wrong one must lose exactly the points in
    ``loses``; an alternative right one (``loses`` empty) must keep full marks."""

    unit: str
    number: int
    cell: str
    code: str
    why: str
    loses: tuple[str, ...]


ANSWER_KINDS = ("wrong", "right")


@functools.cache
def kept_answers(unit: str, kind: str) -> tuple[KeptAnswer, ...]:
    """The unit's ``[[wrong]]`` entries in tests/wrong_answers/ or ``[[right]]`` entries in
    tests/right_answers/, in file order. A wrong answer loses ``<cell>_test`` unless it names
    its ``loses``; a right answer loses nothing, and may not say otherwise."""
    if kind not in ANSWER_KINDS:
        raise ValueError(f"kind must be one of {ANSWER_KINDS}, not {kind!r}")
    path = ROOT / "tests" / f"{kind}_answers" / f"{unit}.toml"
    entries = tomllib.loads(path.read_text(encoding="utf-8")).get(kind, []) if path.exists() else []
    answers = []
    for number, entry in enumerate(entries, start=1):
        if kind == "right" and "loses" in entry:
            raise ValueError(f"{path}: right answer {number} ({entry['cell']}) names `loses`")
        default = [f"{entry['cell']}_test"] if kind == "wrong" else []
        answers.append(
            KeptAnswer(
                unit=unit,
                number=number,
                cell=entry["cell"],
                code=entry["code"].strip("\n"),
                why=entry["why"],
                loses=tuple(entry.get("loses", default)),
            )
        )
    return tuple(answers)


@functools.cache
def answer_rounds(unit: str, kind: str) -> tuple[dict[str, KeptAnswer], ...]:
    """The unit's kept answers of one kind packed into as few submissions as possible: each
    round puts at most one of them into each answer cell. Items are independent, so a round of
    wrong answers must lose exactly the items they name, and a round of right ones nothing; it
    costs one notebook instead of one per answer.
    """
    rounds: list[dict[str, KeptAnswer]] = []
    for answer in kept_answers(unit, kind):
        free = next((r for r in rounds if answer.cell not in r), None)
        if free is None:
            free = {}
            rounds.append(free)
        free[answer.cell] = answer
    return tuple(rounds)


def round_learner(number: int, kind: str = "wrong") -> str:
    """The learner id of the submission that holds round ``number`` (from 1) of ``kind``."""
    return f"{kind}-round-{number}"


def solved_learner_notebook(unit: str, replace: dict[str, str] | None = None, language: str = "en"):
    """The released learner notebook (in ``language``) with every exercise solved as in
    solutions/, except the cells in ``replace`` (grade id -> code), which get that code
    instead."""
    solutions = {
        cell.metadata["nbgrader"]["grade_id"]: "\n".join(
            line for line in cell.source.splitlines() if line.strip() not in _MARKERS
        )
        for cell in nbformat.read(LAYOUT.source_notebook(unit), as_version=4).cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }
    notebook = nbformat.read(LAYOUT.learner_notebook(unit, language), as_version=4)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = (replace or {}).get(grade_id, solutions[grade_id])
    return notebook


BASE_VARIANTS = ("solution", "learner", "learner-solved")
# The Korean learner notebook, solved and with the first round of wrong answers: plain nbgrader
# and the class grader must grade it exactly as the English one.
KOREAN_VARIANTS = ("ko-learner-solved", f"ko-{round_learner(1)}")


def _has_sandbox() -> bool:
    try:
        find_sandbox()
    except SandboxUnavailable:
        return False
    return True


# The kept variants are our own honest notebooks: where bubblewrap is missing they are graded
# without it (the attack tests in test_grade.py are skipped there instead).
HAS_SANDBOX = _has_sandbox()


@functools.cache
def _variants(unit: str) -> dict[str, object]:
    variants: dict[str, object] = {
        "solution": LAYOUT.source_notebook(unit),
        "learner": LAYOUT.learner_notebook(unit),
        "learner-solved": solved_learner_notebook(unit),
    }
    for kind in ANSWER_KINDS:
        for number, round_ in enumerate(answer_rounds(unit, kind), start=1):
            replacements = {cell: answer.code for cell, answer in round_.items()}
            variants[round_learner(number, kind)] = solved_learner_notebook(unit, replacements)
            if (kind, number) == ("wrong", 1):
                variants[f"ko-{round_learner(1)}"] = solved_learner_notebook(
                    unit, replacements, "ko"
                )
    variants["ko-learner-solved"] = solved_learner_notebook(unit, language="ko")
    return variants


@functools.cache
def _graded_unit(unit: str, workdir: Path) -> dict[str, GradedNotebook]:
    """Plain nbgrader on the three base variants: the wrong-answer rounds go through the class
    grader, which the suite proves gives nbgrader's points on these."""
    plain = BASE_VARIANTS + KOREAN_VARIANTS
    base = {name: variant for name, variant in _variants(unit).items() if name in plain}
    return autograde(root=ROOT, unit=unit, submissions=base, workdir=workdir)


def _lookup(tmp_path_factory, prefix: str, grade_unit):
    """``lookup(unit, learner)``: ``grade_unit``'s result for that variant, each unit graded
    once per test process, in its own folder."""

    def lookup(unit: str, learner: str):
        return grade_unit(unit, tmp_path_factory.getbasetemp() / f"{prefix}-{unit}")[learner]

    return lookup


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """``graded(unit, learner)``: what plain nbgrader gave that variant of the unit."""
    return _lookup(tmp_path_factory, "nbgrader", _graded_unit)


@functools.cache
def _class_graded_unit(unit: str, workdir: Path) -> dict[str, UnitResult]:
    folder = workdir / "submitted"
    for learner, variant in _variants(unit).items():
        path = folder / learner / unit / f"{unit}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(variant, Path):
            path.write_bytes(variant.read_bytes())
        else:
            nbformat.write(variant, path)
    results = grade(
        folder, out=workdir / "graded", root=ROOT, workers=1, sandbox=HAS_SANDBOX, progress=None
    )
    return {result.student: result for result in results}


@pytest.fixture(scope="session")
def class_graded(tmp_path_factory):
    """``class_graded(unit, learner)``: what our class grader gave that variant of the unit."""
    return _lookup(tmp_path_factory, "class", _class_graded_unit)


def graded_param(unit: str, learner: str, *more: object, id: str | None = None):
    """A pytest param grouped by unit, so that one xdist worker grades each unit once."""
    return pytest.param(
        unit, learner, *more, id=id or f"{unit}-{learner}", marks=pytest.mark.xdist_group(unit)
    )
