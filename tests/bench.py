"""`make bench`: the benchmark table. Speed targets live here, never in timed tests.

Per unit: the wall time to execute the solution notebook in a fresh kernel on the CPU (kernel
start and the torch import included, best of three), the same for each translation of it (the
answer key with its markdown and messages translated, run where its kernel speaks that
language) and the ratio of the two (the runs interleaved), and the time to autograde one
submission with plain nbgrader. Then the figures of tests/bench_gradgraph.py (the graph
recorder) and tests/bench_grading.py (a class graded by plain nbgrader and by ours, side by
side).

    python -m tests.bench            # all units
    python -m tests.bench 01_leaf_tensors
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from autograder.authoring.plain_nbgrader import autograde
from autograder.authoring.translation import TRANSLATIONS, write_preview
from tests.conftest import LAYOUT, ROOT, UNITS

EXECUTE_TARGET_S = 8.0
# A translation speaks through catalogs looked up as it runs: it may cost a little, not more.
TRANSLATED_RATIO_TARGET = 1.1
REPEATS = 3


def _execute_seconds(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    return time.perf_counter() - started


def _autograde_seconds(unit: str) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        autograde(
            root=ROOT,
            unit=unit,
            submissions={"learner": LAYOUT.source_notebook(unit)},
            workdir=Path(scratch) / "course",
        )
        return time.perf_counter() - started


def _execution_seconds(unit: str) -> dict[str, float]:
    """Best of REPEATS executions of the answer key, English and each translation, the runs
    interleaved (English, then each language, REPEATS times) so that a machine slowing down
    or speeding up weighs on every language alike."""
    times: dict[str, list[float]] = {"en": [], **{language: [] for language in TRANSLATIONS}}
    with tempfile.TemporaryDirectory() as scratch:
        paths = {"en": LAYOUT.source_notebook(unit)}
        for language in TRANSLATIONS:
            paths[language] = write_preview(
                root=ROOT, unit=unit, language=language, out=Path(scratch)
            )
        for _ in range(REPEATS):
            for language, path in paths.items():
                times[language].append(_execute_seconds(path))
    return {language: min(seconds) for language, seconds in times.items()}


def unit_rows(unit: str) -> list[dict]:
    best = _execution_seconds(unit)
    rows = [
        {
            "name": f"{unit}: execute solution notebook, fresh kernel, CPU (best of {REPEATS})",
            "value": best["en"],
            "unit": "s",
            "target": f"<= {EXECUTE_TARGET_S:g}",
        }
    ]
    for language in TRANSLATIONS:
        rows += [
            {
                "name": f"{unit}: execute its {language} answer key, fresh kernel, CPU",
                "value": best[language],
                "unit": "s",
                "target": f"<= {EXECUTE_TARGET_S:g}",
            },
            {
                "name": f"{unit}: {language} / English execution time (runs interleaved)",
                "value": best[language] / best["en"],
                "unit": "x",
                "target": f"<= {TRANSLATED_RATIO_TARGET:g}",
            },
        ]
    rows.append(
        {
            "name": f"{unit}: autograde one submission with plain nbgrader (generate + autograde)",
            "value": _autograde_seconds(unit),
            "unit": "s",
            "target": "baseline",
        }
    )
    return rows


def companion_rows(name: str) -> list[dict]:
    """The rows of ``tests/NAME.py``'s ``measure()``: the recorder's and the grader's figures."""
    path = ROOT / "tests" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.measure()


def print_table(rows: list[dict]) -> None:
    width = max(len(row["name"]) for row in rows)
    print(f"{'benchmark':<{width}}  {'value':>10}  {'target':>10}  met")
    print("-" * (width + 30))
    for row in rows:
        value = row["value"]
        shown = (
            f"{value:.3g} {row['unit']}" if isinstance(value, float) else f"{value} {row['unit']}"
        )
        met = {True: "yes", False: "NO", None: "-"}[_met(row)]
        print(f"{row['name']:<{width}}  {shown:>10}  {row['target']:>10}  {met}")


def _met(row: dict) -> bool | None:
    """Read a target like '<= 5' against the value; None where the target is not a bound."""
    operator, _, bound = str(row["target"]).partition(" ")
    try:
        limit = float(bound)
    except ValueError:
        return None
    return {"<=": row["value"] <= limit, ">=": row["value"] >= limit}.get(operator)


def main(argv: list[str]) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the CPU figures are the ones with targets
    units = argv or UNITS
    rows = [row for unit in units for row in unit_rows(unit)]
    rows += companion_rows("bench_gradgraph") + companion_rows("bench_grading")
    print_table(rows)


if __name__ == "__main__":
    main(sys.argv[1:])
