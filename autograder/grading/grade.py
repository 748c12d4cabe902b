"""Grade a whole class: ``python -m autograder grade SUBMISSIONS --out OUT [--workers N]``.

The steps, in order, and why in that order:

1. collect the submissions (a folder in nbgrader's layout or an LMS zip) without touching them;
2. run each unit's own solution through the same sandbox: it must earn full marks, and it gives
   the reference for every test cell (the hidden checks and tolerances a real answer meets);
3. grade every submission in parallel, one sandboxed worker per core; each result is saved to
   ``OUT/.results`` as soon as it is known, keyed by the submission's and the unit's content, so
   an interrupted run resumes and a second run gives the same grades;
4. with ``--nbgrader-course``, write nbgrader's ``autograded/`` notebooks there (from the
   learners' notebooks and the outputs of the graded run, cached with the results);
5. write ``grades.csv``, ``feedback/STUDENT/UNIT.html``, ``report.html`` and the gradebook
   (the course's own ``gradebook.db`` with ``--nbgrader-course``, unless ``--db`` names one).
"""

from __future__ import annotations

import hashlib
import os
import queue
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TextIO

import nbformat

from autograder.checks.first_predictions import (
    FirstPredictions,
    bind_first_prediction,
    read_first_predictions,
)
from autograder.grading.assemble import assemble
from autograder.grading.intake import Submission, collect_submissions
from autograder.grading.languages import UnitLanguage, unit_languages
from autograder.grading.notebook_reader import read_learner_notebook
from autograder.grading.reference import SolutionProblem, solution_references
from autograder.grading.results import GRADED, NOT_GRADABLE, ItemInfo, NotGradable, UnitResult
from autograder.grading.resume import cache_key, cached, save
from autograder.grading.review import review_notes
from autograder.grading.sandbox import SandboxSettings, find_sandbox
from autograder.grading.scoring import Reference, judged_in_notebook, score_items
from autograder.grading.summary import format_rate, summary
from autograder.grading.worker_pool import CellOutcome, Limits, Worker, WorkerFailed, run_cells
from autograder.i18n import notebook_language, use_language
from autograder.layout import CourseLayout
from autograder.reporting.class_report import write_class_report
from autograder.reporting.feedback import write_feedback
from autograder.reporting.gradebook import Submitted, record_grades
from autograder.reporting.gradebook_cells import CellsOutOfDate
from autograder.reporting.grades_csv import write_grades_csv
from autograder.reporting.nbgrader_feedback import place_feedback
from autograder.reporting.nbgrader_records import UnitNotebooks, nbgrader_records

__all__ = ["GradingError", "grade"]


class GradingError(RuntimeError):
    """The class cannot be graded at all (a broken solution, no sandbox, unreadable input)."""


@dataclass(frozen=True)
class _Unit:
    name: str
    digest: str
    notebooks: UnitNotebooks
    languages: dict[str, UnitLanguage]

    @property
    def source(self) -> nbformat.NotebookNode:
        return self.notebooks.source

    @property
    def infos(self) -> tuple[ItemInfo, ...]:
        """The unit's items, titled in English."""
        return self.languages["en"].infos


class _Workers:
    """A fixed set of sandboxed workers lent to grading threads one at a time."""

    def __init__(self, count: int, settings: SandboxSettings, packages: list[Path]) -> None:
        self._all = [Worker(settings, packages) for _ in range(count)]
        self._free: queue.Queue[Worker] = queue.Queue()
        for worker in self._all:
            self._free.put(worker)

    def run(self, function: Callable[[Worker], UnitResult]) -> UnitResult:
        worker = self._free.get()
        try:
            return function(worker)
        finally:
            self._free.put(worker)

    def stop(self) -> None:
        for worker in self._all:
            worker.stop()


def _reference(unit: _Unit, limits: Limits, worker: Worker) -> dict[str, Reference]:
    try:
        # Once: make release has run each solution twice and refused what is not reproducible.
        run = partial(run_cells, worker, limits=limits, learner=False)
        return solution_references(unit.source, unit.infos, run, twice=False)
    except SolutionProblem as problem:
        raise GradingError(
            f"the solution of {unit.name} cannot be the reference in the grader, so no "
            f"submission can be graded against it:\n  {problem}"
        ) from problem


def _grade_one(
    submission: Submission,
    unit: _Unit,
    references: dict[str, Reference],
    limits: Limits,
    sandboxed: bool,
    worker: Worker,
) -> UnitResult:
    base = {
        "student": submission.student,
        "unit": submission.unit,
        "notes": submission.notes,
        "sandboxed": sandboxed,
        "max_score": sum(i.max_points for i in unit.infos),
    }
    try:
        if submission.problem is not None or submission.notebook is None:
            raise NotGradable(submission.problem or "no notebook was submitted")
        learner = read_learner_notebook(submission.notebook)
    except NotGradable as reason:
        return UnitResult(status=NOT_GRADABLE, reason=str(reason), **base)
    firsts = read_first_predictions(submission.notebook.parent)
    speaks = unit.languages.get(notebook_language(learner.metadata), unit.languages["en"])
    try:
        job = assemble(unit.source, learner)
        cells = [cell.message() for cell in job.cells]
        outcomes = run_cells(worker, cells, limits, files={**firsts.files(), **speaks.files})
        with use_language(speaks.language, messages=speaks.messages):
            scored = score_items(unit.infos, job, _bound_to(firsts, outcomes), references)
    except WorkerFailed:
        raise
    except Exception as error:  # one notebook the grader cannot handle must not stop the class
        reason = (
            f"the grader could not process this notebook ({type(error).__name__}: {error}); "
            "the instructor should report it"
        )
        return UnitResult(status=NOT_GRADABLE, reason=reason, **base)
    notes = base["notes"] + job.notes + firsts.problems
    review = review_notes(job, outcomes, references, unit.source)
    return UnitResult(
        status=GRADED,
        items=scored,
        review=review,
        outputs=_shown(outcomes),
        language=speaks.language,
        **{**base, "notes": notes},
    )


def _shown(outcomes: dict[int, CellOutcome]) -> dict[str, list[str]]:
    """What each cell printed and raised, for the autograded notebook (display only)."""
    return {
        str(index): [*outcome.output, outcome.error or ""]
        for index, outcome in sorted(outcomes.items())
        if any(outcome.output) or outcome.error
    }


def _bound_to(firsts: FirstPredictions, outcomes: dict[int, CellOutcome]) -> dict[int, CellOutcome]:
    """The outcomes with every first-prediction check judged against the grader's own read of
    the record, so that a record rewritten while the notebook ran changes nothing."""
    return {
        index: replace(
            outcome, records=tuple(bind_first_prediction(r, firsts) for r in outcome.records)
        )
        for index, outcome in outcomes.items()
    }


def grade(
    submissions: Path,
    *,
    out: Path,
    root: Path,
    workers: int | None = None,
    sandbox: bool = True,
    db_url: str | None = None,
    limits: Limits | None = None,
    progress: TextIO | None = sys.stderr,
    nbgrader_course: Path | None = None,
) -> list[UnitResult]:
    """Grade every submission under ``submissions`` (a folder or a zip) into ``out``.

    ``nbgrader_course``: an nbgrader course folder whose ``submitted/`` was graded: its
    ``autograded/`` notebooks are written for formgrader, its ``gradebook.db`` is the gradebook
    unless ``db_url`` names another, and the feedback pages are also placed in its ``feedback/``
    for ``nbgrader release_feedback``."""
    started = time.monotonic()
    limits = limits or Limits()
    settings = find_sandbox() if sandbox else SandboxSettings(kind="none")
    layout = CourseLayout(root)
    course_units = layout.units()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="autograder-intake-") as scratch:
        collected = collect_submissions(submissions, units=course_units, scratch=Path(scratch))
        units = {}
        for name in sorted({s.unit for s in collected} & set(course_units)):
            path = layout.source_notebook(name)
            try:
                notebooks = UnitNotebooks.of(layout, name)
            except CellsOutOfDate as error:
                raise GradingError(str(error)) from error
            languages = unit_languages(root, name, notebooks.source, notebooks.released)
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            digest += "".join(language.digest for language in languages.values())
            units[name] = _Unit(name, digest, notebooks, languages)
        count = max(1, min(workers or os.cpu_count() or 1, len(collected) or 1))
        pool = _Workers(count, settings, [root / "autograder", root / "gradgraph"])
        try:
            with ThreadPoolExecutor(count) as threads:
                reference_jobs = {
                    name: threads.submit(pool.run, partial(_reference, unit, limits))
                    for name, unit in units.items()
                }
                references = {name: job.result() for name, job in reference_jobs.items()}
                results = _grade_all(
                    collected,
                    units,
                    references,
                    pool,
                    threads,
                    settings,
                    limits,
                    out,
                    progress,
                    started,
                )
        finally:
            pool.stop()
        submitted, problems = nbgrader_records(
            results,
            {(s.student, s.unit): s.notebook for s in collected if s.notebook is not None},
            {name: unit.notebooks for name, unit in units.items()},
            submissions=submissions if submissions.is_dir() else None,
            course=nbgrader_course,
        )
    for problem in problems if progress is not None else ():
        print(problem, file=progress)
    if nbgrader_course is not None and db_url is None:
        db_url = f"sqlite:///{(nbgrader_course / 'gradebook.db').resolve()}"
    judged_inside = {
        f"{name} {grade_id}": judged_in_notebook(reference)
        for name, unit_references in references.items()
        for grade_id, reference in unit_references.items()
        if judged_in_notebook(reference)
    }
    _write_outputs(results, units, out, db_url, settings, judged_inside, submitted)
    if nbgrader_course is not None and submissions.is_dir():
        place_feedback(
            results, pages=out / "feedback", submitted=submissions, course=nbgrader_course
        )
    if progress is not None:
        print(summary(results, settings, time.monotonic() - started, out), file=progress)
    return results


def _grade_all(
    collected: Sequence[Submission],
    units: dict[str, _Unit],
    references: dict[str, dict[str, Reference]],
    pool: _Workers,
    threads: ThreadPoolExecutor,
    settings: SandboxSettings,
    limits: Limits,
    out: Path,
    progress: TextIO | None,
    started: float,
) -> list[UnitResult]:
    results: list[UnitResult] = []
    pending = {}

    def keep(result: UnitResult, cache: Path, key: str) -> None:
        save(cache, key, result)
        results.append(result)
        if progress is not None:
            elapsed = time.monotonic() - started
            line = format_rate(done=len(results), total=len(collected), elapsed=elapsed)
            print(line, file=progress, flush=True)

    for submission in collected:
        unit = units.get(submission.unit)
        key = cache_key(submission, unit.digest if unit else None, settings.kind)
        cache = out / ".results" / submission.student / f"{submission.unit}.json"
        if (saved := cached(cache, key)) is not None:
            results.append(saved)
        elif unit is None:  # not a unit of the course: nothing to run
            refused = UnitResult(
                submission.student,
                submission.unit,
                NOT_GRADABLE,
                reason=submission.problem or "unknown unit",
                notes=submission.notes,
                sandboxed=settings.isolated,
            )
            keep(refused, cache, key)
        else:
            grade_it = partial(
                _grade_one, submission, unit, references[unit.name], limits, settings.isolated
            )
            pending[threads.submit(pool.run, grade_it)] = (cache, key)
    for future in as_completed(pending):
        keep(future.result(), *pending[future])
    return sorted(results, key=lambda r: (r.student, r.unit))


def _write_outputs(
    results: Sequence[UnitResult],
    units: dict[str, _Unit],
    out: Path,
    db_url: str | None,
    settings: SandboxSettings,
    judged_inside: dict[str, list[str]],
    submitted: dict[tuple[str, str], Submitted],
) -> None:
    infos = {name: unit.infos for name, unit in units.items()}
    titled = {
        name: {language: spoken.infos for language, spoken in unit.languages.items()}
        for name, unit in units.items()
    }
    write_grades_csv(out / "grades.csv", results)
    write_feedback(out / "feedback", results, infos, titled=titled)
    write_class_report(
        out / "report.html",
        results,
        infos,
        sandboxed=settings.isolated,
        judged_inside=judged_inside,
    )
    record_grades(
        db_url or f"sqlite:///{(out / 'gradebook.db').resolve()}",
        results,
        infos,
        cells={name: unit.notebooks.cells for name, unit in units.items()},
        submitted=submitted,
    )
