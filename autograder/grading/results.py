"""What class grading found: plain, frozen data that the reports read and the resume cache keeps.

Example::

    >>> item = ItemResult("grads_test", points=0.0, max_points=3.0,
    ...                   failures=("`x.grad` is None.",))
    >>> result = UnitResult("ada", "01_leaf_tensors", GRADED, items=(item,), max_score=3.0)
    >>> result.score, result.max_score
    (0.0, 3.0)
    >>> UnitResult.from_json(result.to_json()) == result
    True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["GRADED", "NOT_GRADABLE", "ItemInfo", "ItemResult", "NotGradable", "UnitResult"]

GRADED = "graded"
NOT_GRADABLE = "not gradable"


class NotGradable(Exception):
    """A submission that cannot be graded; the message is the reason shown to the instructor
    and the learner (it names the file and says what is wrong)."""


@dataclass(frozen=True)
class ItemInfo:
    """One graded item of a unit, as the instructor's source notebook defines it."""

    grade_id: str
    max_points: float
    title: str


@dataclass(frozen=True)
class ItemResult:
    """One graded item of one submission: the points it earned and, when it lost some, why."""

    grade_id: str
    points: float
    max_points: float
    failures: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.points >= self.max_points


@dataclass(frozen=True)
class UnitResult:
    """One learner's notebook of one unit: graded item by item, or not gradable with a reason.

    ``notes`` are remarks that did not stop grading (e.g. "two notebooks were submitted; the
    newer one was graded"); ``review``: what the instructor should look at (code that reaches
    for grading internals, what the grader put back or voided; see
    :mod:`autograder.grading.review`), never shown as a verdict; ``sandboxed`` is False only
    when the instructor explicitly allowed grading without isolation; ``outputs``: what each
    cell of the graded run printed and the error it raised, by the cell's index in the job
    (``[stdout, stderr, error]``, cells that showed nothing left out), for the autograded
    notebook, display only; ``language``: the language of the learner's notebook, which its
    failure messages and feedback speak.
    """

    student: str
    unit: str
    status: str
    reason: str = ""
    items: tuple[ItemResult, ...] = ()
    max_score: float = 0.0
    notes: tuple[str, ...] = ()
    review: tuple[str, ...] = ()
    sandboxed: bool = True
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    outputs: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)
    language: str = "en"

    @property
    def score(self) -> float:
        return float(sum(item.points for item in self.items))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UnitResult:
        fields = dict(data)
        fields["items"] = tuple(
            ItemResult(**{**item, "failures": tuple(item["failures"])}) for item in data["items"]
        )
        fields["notes"] = tuple(data.get("notes", ()))
        fields["review"] = tuple(data.get("review", ()))
        fields["outputs"] = dict(data.get("outputs", {}))
        return cls(**fields)
