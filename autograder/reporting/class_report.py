"""The class report: per unit the score distribution, per item the pass rate and the most
common failure messages, and the items to re-teach next lecture.

Numbers first, page second: :func:`summarise` turns results into :class:`UnitSummary` objects
(also what a one-screen summary can print); :func:`write_class_report` renders them into one
self-contained HTML page with an inline SVG histogram per unit.

Example::

    >>> from autograder.grading.results import GRADED, ItemInfo, ItemResult, UnitResult
    >>> units = {"01_leaf_tensors": [ItemInfo("grads_test", 2.0, "Who gets .grad")]}
    >>> right = ItemResult("grads_test", 2.0, 2.0)
    >>> wrong = ItemResult("grads_test", 0.0, 2.0, failures=("`x.grad` is None.",))
    >>> results = [UnitResult("ada", "01_leaf_tensors", GRADED, items=(right,)),
    ...            UnitResult("bob", "01_leaf_tensors", GRADED, items=(wrong,))]
    >>> [unit] = summarise(results, units)
    >>> unit.mean, unit.median, unit.items[0].pass_rate, unit.items[0].top_failures
    (1.0, 1.0, 0.5, (('`x.grad` is None.', 1),))
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder.atomic import write_text_atomic
from autograder.grading.results import GRADED, ItemInfo, ItemResult, UnitResult
from autograder.reporting.feedback import paired_items
from autograder.reporting.templating import render

__all__ = [
    "NO_MESSAGE",
    "RETEACH_COUNT",
    "TOP_MESSAGES",
    "ItemSummary",
    "UnitSummary",
    "reteach",
    "summarise",
    "write_class_report",
]

RETEACH_COUNT = 5
TOP_MESSAGES = 3
NO_MESSAGE = "(failed without a message)"
_MESSAGE_CHARS = 200
_MAX_BINS = 20
_CHART_WIDTH, _CHART_HEIGHT = 600, 160


@dataclass(frozen=True)
class ItemSummary:
    """One graded item across the class: how many were graded on it, how many passed, the
    most common first lines of its failure messages (each counted once per learner, longest
    cut to ``_MESSAGE_CHARS``), and its ``position`` in the notebook (from 0)."""

    unit: str
    grade_id: str
    title: str
    max_points: float
    graded: int
    passed: int
    top_failures: tuple[tuple[str, int], ...]
    position: int

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None


@dataclass(frozen=True)
class UnitSummary:
    """One unit across the class. ``items`` come re-teach first: lowest pass rate first, then
    in notebook order; ``not_gradable`` lists ``(student, reason)`` by student."""

    unit: str
    max_score: float
    scores: tuple[float, ...]
    not_gradable: tuple[tuple[str, str], ...]
    items: tuple[ItemSummary, ...]

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.scores) if self.scores else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.scores) if self.scores else None


@dataclass(frozen=True)
class _Bar:
    label: str
    range: str
    count: int
    x: float
    y: float
    width: float
    height: float


def summarise(
    results: Sequence[UnitResult], units: Mapping[str, Sequence[ItemInfo]]
) -> list[UnitSummary]:
    """One summary per unit: the units in ``units`` in their order, then any unit that only
    results name (e.g. a folder the intake could not match to a unit), sorted."""
    by_unit: dict[str, list[UnitResult]] = {unit: [] for unit in units}
    for result in sorted(results, key=lambda result: result.student):
        by_unit.setdefault(result.unit, []).append(result)
    named = list(units)
    order = named + sorted(set(by_unit) - set(named))
    return [_summarise_unit(unit, by_unit[unit], units.get(unit, ())) for unit in order]


def reteach(summaries: Sequence[UnitSummary], count: int = RETEACH_COUNT) -> list[ItemSummary]:
    """The ``count`` items with the lowest pass rate in the class (items everyone passed, or
    no one was graded on, are left out); ties go to the earlier unit and item."""
    failed = [
        (item.pass_rate, unit_index, item.position, item)
        for unit_index, summary in enumerate(summaries)
        for item in summary.items
        if item.pass_rate is not None and item.pass_rate < 1
    ]
    return [entry[-1] for entry in sorted(failed, key=lambda entry: entry[:3])[:count]]


def write_class_report(
    path: Path,
    results: Sequence[UnitResult],
    units: Mapping[str, Sequence[ItemInfo]],
    *,
    sandboxed: bool,
    title: str = "Class report",
    judged_inside: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """Write the class report to ``path`` (atomically). A banner says the class was graded
    WITHOUT a sandbox when ``sandboxed`` is False or any result says it was. The page lists
    the submissions to review (:attr:`UnitResult.review`) and, from ``judged_inside`` (unit
    and item -> check names), the checks judged inside the learner's process."""
    summaries = summarise(results, units)
    page = render(
        "class_report.html.j2",
        title=title,
        unsandboxed=not sandboxed or any(not result.sandboxed for result in results),
        learners=len({result.student for result in results}),
        graded=sum(result.status == GRADED for result in results),
        not_gradable=sum(result.status != GRADED for result in results),
        units=summaries,
        reteach=reteach(summaries),
        review=[result for result in results if result.review],
        judged_inside=dict(judged_inside or {}),
        histograms={summary.unit: _histogram(summary) for summary in summaries},
        chart_width=_CHART_WIDTH,
        chart_height=_CHART_HEIGHT,
    )
    write_text_atomic(path, page)


def _summarise_unit(unit: str, results: list[UnitResult], infos: Sequence[ItemInfo]) -> UnitSummary:
    graded = [result for result in results if result.status == GRADED]
    paired = [paired_items(result, infos) for result in graded]
    items = [
        _summarise_item(unit, position, info, [pairs[position][1] for pairs in paired])
        for position, info in enumerate(infos)
    ]
    items.sort(key=lambda item: (item.pass_rate is None, item.pass_rate or 0.0, item.position))
    return UnitSummary(
        unit=unit,
        max_score=float(sum(info.max_points for info in infos)),
        scores=tuple(sorted(result.score for result in graded)),
        not_gradable=tuple((r.student, r.reason) for r in results if r.status != GRADED),
        items=tuple(items),
    )


def _summarise_item(
    unit: str, position: int, info: ItemInfo, results: list[ItemResult]
) -> ItemSummary:
    messages: Counter[str] = Counter()
    for item in results:
        if not item.passed:
            messages.update({_first_line(failure) for failure in item.failures} or {NO_MESSAGE})
    top = sorted(messages.items(), key=lambda entry: (-entry[1], entry[0]))[:TOP_MESSAGES]
    return ItemSummary(
        unit=unit,
        grade_id=info.grade_id,
        title=info.title,
        max_points=info.max_points,
        graded=len(results),
        passed=sum(item.passed for item in results),
        top_failures=tuple(top),
        position=position,
    )


def _first_line(message: str) -> str:
    line = message.strip().split("\n", 1)[0].strip() or NO_MESSAGE
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 1] + "…"


def _histogram(summary: UnitSummary) -> list[_Bar]:
    """Bars of one point each (wider when the unit is worth more than ``_MAX_BINS`` points),
    the last one closed so that full marks land in it."""
    if not summary.scores:
        return []
    step = max(1, math.ceil(summary.max_score / _MAX_BINS))
    bins = max(int(summary.max_score // step) + 1, int(max(summary.scores) // step) + 1)
    counts = Counter(min(int(score // step), bins - 1) for score in summary.scores)
    tallest = max(counts.values())
    width = _CHART_WIDTH / bins
    bars = []
    for index in range(bins):
        low, high = index * step, (index + 1) * step
        height = (_CHART_HEIGHT - 20) * counts[index] / tallest
        bars.append(
            _Bar(
                label=str(low),
                range=f"{low} or more" if index == bins - 1 else f"{low} to under {high}",
                count=counts[index],
                x=round(index * width + 1, 2),
                y=round(_CHART_HEIGHT - height, 2),
                width=round(width - 2, 2),
                height=round(height, 2),
            )
        )
    return bars
