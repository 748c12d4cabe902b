"""Decide each item's points in the trusted grader, from plain data only.

A learner's test cell is judged check by check against the same test cell of the solution's
run, on the same (seeded) inputs. A check is known by its place: its position in the cell, its
rule and the name it tests; never by a message, whose numbers may differ. The learner's run
sends only what it computed from the learner's answer (the *actual* evidence); the right answer
(the expected value, the allowed choices, the tolerances) comes from the solution's record of
that check. So a patched ``torch``, a forged comparison or an always-equal object in the
learner's process cannot move the bar. A check the solution's run declared with
``answer_may_differ=True`` keeps the learner run's own expected value and is listed as judged
inside the learner's process. An item earns its points when its test cell finished, made
exactly the solution's checks, each passing, and the worker saw nothing change under it.

Example::

    >>> from autograder.grading.worker_pool import CellOutcome
    >>> solution = {"rule": "equal", "name": "n", "actual": ["int", 3], "expected": ["int", 3]}
    >>> reference = Reference.from_outcome(CellOutcome(0, True, records=(solution,)))
    >>> check_cell(CellOutcome(0, True, records=({"rule": "equal", "name": "n",
    ...     "actual": ["int", 2], "expected": ["int", 2]},)), reference)
    ['`n` is 2; expected 3.']
    >>> check_cell(CellOutcome(0, True, records=()), reference)
    ['the test made 0 of its 1 checks: something in the notebook stopped them.']
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.checks.records import EXPECTED_FIELDS
from autograder.checks.rules import judge
from autograder.grading.assemble import Job
from autograder.grading.results import ItemInfo, ItemResult
from autograder.grading.worker_pool import CellOutcome
from autograder.i18n import gettext as _

__all__ = ["Reference", "check_cell", "first_difference", "judged_in_notebook", "score_items"]

Record = Mapping[str, Any]


def _place(record: Record) -> tuple[Any, Any]:
    return record.get("rule"), record.get("name")


@dataclass(frozen=True)
class Reference:
    """What the instructor's solution did in one test cell: every check record, in order, and
    what the worker had to put back before it (an honest notebook's own doing)."""

    records: tuple[Record, ...] = ()
    put_back: tuple[str, ...] = ()

    @classmethod
    def from_outcome(cls, outcome: CellOutcome) -> Reference:
        return cls(tuple(outcome.records), outcome.put_back)


def first_difference(first: Sequence[Record], second: Sequence[Record]) -> str | None:
    """Where two runs of the same test cell differ (``None`` when every record is the same).

    >>> first_difference([{"rule": "expect", "condition": ["bool", True]}],
    ...                  [{"rule": "expect", "condition": ["bool", False]}])
    "check 1 ('expect') differs between two runs"
    """
    for number, (a, b) in enumerate(zip(first, second, strict=False), start=1):
        if json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
            return f"check {number} ({a.get('name') or a.get('rule')!r}) differs between two runs"
    if len(first) != len(second):
        return f"one run made {len(first)} checks, the other {len(second)}"
    return None


def judged_in_notebook(reference: Reference) -> list[str]:
    """The names of the checks the solution declared ``answer_may_differ``."""
    return [str(r.get("name")) for r in reference.records if r.get("may_differ")]


def _against_solution(record: Record, solution: Record) -> dict[str, Any]:
    """The learner's record with the right answer taken from the solution's record."""
    if solution.get("may_differ"):
        return dict(record)
    fields = EXPECTED_FIELDS.get(solution["rule"], ())
    trusted = {key: solution[key] for key in fields if key in solution}
    return {**record, **trusted}


def check_cell(outcome: CellOutcome, reference: Reference) -> list[str]:
    """The failure messages of one test cell; empty when it passes."""
    failures = list(outcome.voided)
    for number, record in enumerate(outcome.records):
        if number >= len(reference.records) or _place(record) != _place(reference.records[number]):
            failures.append(
                _(
                    "check {number} of the test is not the one the solution's run made there: "
                    "something in the notebook changed what the test does."
                ).format(number=number + 1)
            )
            break
        message = judge(_against_solution(record, reference.records[number]))
        if message is not None:
            failures.append(message)
    if not outcome.ok and outcome.error and outcome.error not in failures:
        failures.append(outcome.error)
    if not failures and len(outcome.records) != len(reference.records):
        failures.append(
            _(
                "the test made {made} of its {total} checks: something in the notebook stopped "
                "them."
            ).format(made=len(outcome.records), total=len(reference.records))
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
            raised = _("your code in cell {cell} raised {error}")
            answer_errors.append(raised.format(cell=cell.index + 1, error=outcome.error))
        if cell.origin != "test":
            continue
        failures = (
            [_("the test did not run")]
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
