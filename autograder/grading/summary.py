"""What grading prints: a progress line as each notebook finishes, and the one-screen summary
at the end.

Example::

    >>> format_rate(done=30, total=40, elapsed=12.0)
    '30/40 graded, 2.5/s, about 4 s left'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autograder.grading.results import GRADED, UnitResult
from autograder.grading.sandbox import SandboxSettings

__all__ = ["format_rate", "summary"]

_LISTED = 10  # not-gradable notebooks named in the summary; grades.csv lists them all


def format_rate(*, done: int, total: int, elapsed: float) -> str:
    """One progress line: how many, how fast, how long still."""
    rate = done / elapsed if elapsed > 0 else 0.0
    left = (total - done) / rate if rate > 0 else float("nan")
    tail = f", about {left:.0f} s left" if rate > 0 and done < total else ""
    return f"{done}/{total} graded, {rate:.1f}/s{tail}"


def summary(
    results: Sequence[UnitResult], settings: SandboxSettings, elapsed: float, out: Path
) -> str:
    """The one-screen summary printed at the end."""
    graded = [r for r in results if r.status == GRADED]
    lines = [
        f"Graded {len(graded)} of {len(results)} notebooks in {elapsed:.1f} s "
        f"({len(results) - len(graded)} not gradable).",
    ]
    for unit in sorted({r.unit for r in graded}):
        scores = [r.score for r in graded if r.unit == unit]
        top = max(r.max_score for r in graded if r.unit == unit)
        lines.append(
            f"  {unit}: mean {sum(scores) / len(scores):.1f} / {top:g} over {len(scores)} learners"
        )
    refused = [r for r in results if r.status != GRADED]
    for result in refused[:_LISTED]:
        lines.append(f"  not gradable: {result.student}/{result.unit}: {result.reason}")
    if len(refused) > _LISTED:
        lines.append(f"  ... and {len(refused) - _LISTED} more not gradable: see grades.csv")
    if not settings.isolated:
        lines.append("WARNING: graded WITHOUT a sandbox: learner code ran with your rights.")
    lines.append(f"Written: {out / 'grades.csv'}, {out / 'report.html'}, {out / 'feedback'}/")
    return "\n".join(lines)
