"""Decide each item's points in the trusted grader, from plain data only.

An item earns its points when its test cell finished, every check record it sent passes
:func:`autograder.checks.rules.judge` here (with the tolerances the instructor's solution run used),
and its hidden part made exactly the checks the solution's hidden part made. The last rule
catches a submission that skips or swallows checks; the first two make a patched ``torch``,
a forged comparison or an always-equal object in the learner's process worthless.

Example::

    >>> from autograder.grading.worker_pool import CellOutcome
    >>> passed = {"rule": "expect", "condition": ["bool", True], "message": "m"}
    >>> reference = Reference.from_outcome(CellOutcome(0, True, records=(passed,), hidden_from=0))
    >>> check_cell(CellOutcome(0, True, records=(), hidden_from=0), reference)
    ['the hidden tests made 0 of their 1 checks: something in the notebook stopped them.']
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autograder.checks.rules import judge
from autograder.grading.assemble import Job
from autograder.grading.results import ItemInfo, ItemResult
from autograder.grading.worker_pool import CellOutcome

__all__ = ["Reference", "check_cell", "score_items"]

_LOOSEST_TOLERANCE = 1e-2


def _signature(record: Mapping[str, Any]) -> str:
    return json.dumps([record.get("rule"), record.get("name") or record.get("message")])


def _hidden_checks(outcome: CellOutcome) -> Counter[str]:
    """The checks the test cell's hidden part made (all of them when it has no split)."""
    start = outcome.hidden_from if outcome.hidden_from is not None else len(outcome.records)
    return Counter(_signature(record) for record in outcome.records[start:])


@dataclass(frozen=True)
class Reference:
    """What the instructor's solution did in one test cell: the hidden checks it made, and the
    tolerances of its tensor checks."""

    hidden: Counter[str] = field(default_factory=Counter)
    tolerances: dict[str, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def from_outcome(cls, outcome: CellOutcome) -> Reference:
        hidden = _hidden_checks(outcome)
        tolerances: dict[str, tuple[float, float]] = {}
        for record in outcome.records:
            if record.get("rule") == "tensor":
                tolerance = (float(record["rtol"]), float(record["atol"]))
                known = tolerances.get(_signature(record), tolerance)
                tolerances[_signature(record)] = (
                    min(known[0], tolerance[0]),
                    min(known[1], tolerance[1]),
                )
        return cls(hidden, tolerances)


def _bounded(record: Mapping[str, Any], reference: Reference) -> dict[str, Any]:
    """The record with tolerances no looser than the solution's (a learner cannot widen them)."""
    if record.get("rule") != "tensor":
        return dict(record)
    rtol, atol = reference.tolerances.get(
        _signature(record), (_LOOSEST_TOLERANCE, _LOOSEST_TOLERANCE)
    )
    return {
        **record,
        "rtol": min(float(record.get("rtol", rtol)), rtol),
        "atol": min(float(record.get("atol", atol)), atol),
    }


def check_cell(outcome: CellOutcome, reference: Reference) -> list[str]:
    """The failure messages of one test cell; empty when it passes."""
    failures = [m for r in outcome.records if (m := judge(_bounded(r, reference))) is not None]
    if not outcome.ok and outcome.error and outcome.error not in failures:
        failures.append(outcome.error)
    if not failures:
        made = _hidden_checks(outcome)
        if made != reference.hidden:
            failures.append(
                f"the hidden tests made {sum(made.values())} of their "
                f"{sum(reference.hidden.values())} checks: something in the notebook stopped them."
            )
    return failures


def score_items(
    infos: Sequence[ItemInfo],
    job: Job,
    outcomes: Mapping[int, CellOutcome],
    references: Mapping[str, Reference],
) -> tuple[ItemResult, ...]:
    """Points and failure messages for each item, with the errors of the answer cells that
    precede an item's test shown first."""
    results = []
    answer_errors: list[str] = []
    for cell in job.cells:
        outcome = outcomes.get(cell.index)
        if cell.origin in ("answer", "added") and outcome is not None and not outcome.ok:
            answer_errors.append(f"your code in cell {cell.index + 1} raised {outcome.error}")
        if cell.origin != "test":
            continue
        failures = (
            ["the test did not run"]
            if outcome is None
            else check_cell(outcome, references[cell.grade_id])
        )
        if failures:
            failures = answer_errors + failures
        answer_errors = []
        info = next(i for i in infos if i.grade_id == cell.grade_id)
        points = 0.0 if failures else info.max_points
        results.append(ItemResult(cell.grade_id, points, info.max_points, tuple(failures)))
    return tuple(results)
