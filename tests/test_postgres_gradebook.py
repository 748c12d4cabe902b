"""The gradebook on PostgreSQL, shared by two graders who record their learners at the same time.

The test starts a throw-away PostgreSQL server of its own (Debian's ``postgresql`` package:
``initdb`` and ``pg_ctl`` under ``/usr/lib/postgresql/*/bin``), reachable only through a unix
socket in a temporary folder, and skips when the server's programs are not installed.
"""

from __future__ import annotations

import glob
import itertools
import multiprocessing
import os
import pwd
import shutil
import subprocess
import tempfile
import traceback
from collections.abc import Iterator, Sequence
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from nbgrader.api import Gradebook, MissingEntry

from autograder.grading.results import GRADED, NOT_GRADABLE, ItemInfo, ItemResult, UnitResult
from autograder.reporting.gradebook import record_grades

# One server for the whole module, on one xdist worker.
pytestmark = pytest.mark.xdist_group("postgres")

UNITS: dict[str, tuple[ItemInfo, ...]] = {
    "01_leaf_tensors": (
        ItemInfo("grads_test", 3.0, "Who gets .grad"),
        ItemInfo("predict_leaf", 1.0, "Predict is_leaf"),
    ),
    "02_retain_graph": (
        ItemInfo("second_backward_test", 2.5, "Backward twice"),
        ItemInfo("predict_freed", 1.0, "Predict what is freed"),
        ItemInfo("retain_test", 2.0, "retain_graph"),
    ),
}
# Each learner's points per unit, in the order of UNITS' items; None: not gradable.
POINTS: dict[str, dict[str, tuple[float, ...] | None]] = {
    "ada": {"01_leaf_tensors": (3.0, 1.0), "02_retain_graph": (2.5, 1.0, 2.0)},
    "bo": {"01_leaf_tensors": (0.0, 1.0), "02_retain_graph": (1.5, 0.0, 0.5)},
    "cy": {"01_leaf_tensors": (3.0, 0.0), "02_retain_graph": None},
    "di": {"01_leaf_tensors": (1.5, 1.0), "02_retain_graph": (0.0, 0.0, 0.0)},
    "ed": {"01_leaf_tensors": None, "02_retain_graph": (2.5, 1.0, 0.25)},
    "flo": {"01_leaf_tensors": (0.0, 0.0), "02_retain_graph": (2.5, 0.0, 2.0)},
}
# How two graders share the work: each grades learners of their own in every unit, or each
# grades a unit of their own for every learner; (learners, units) for each grader.
SPLITS = {
    "by learner": ((("ada", "bo", "cy"), tuple(UNITS)), (("di", "ed", "flo"), tuple(UNITS))),
    "by unit": ((tuple(POINTS), ("01_leaf_tensors",)), (tuple(POINTS), ("02_retain_graph",))),
}


def _results(students: Sequence[str], units: Sequence[str]) -> list[UnitResult]:
    results = []
    for student in students:
        for unit in units:
            infos = UNITS[unit]
            points = POINTS[student][unit]
            maximum = sum(info.max_points for info in infos)
            if points is None:
                results.append(
                    UnitResult(student, unit, NOT_GRADABLE, reason="bad JSON", max_score=maximum)
                )
                continue
            items = tuple(
                ItemResult(info.grade_id, earned, info.max_points)
                for info, earned in zip(infos, points, strict=True)
            )
            results.append(UnitResult(student, unit, GRADED, items=items, max_score=maximum))
    return results


def _server_programs() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb is None:
        pytest.skip(
            "no PostgreSQL server programs (initdb, pg_ctl): install Debian's `postgresql` package"
        )
    return Path(initdb).parent


def _version(initdb: str) -> tuple[int, ...]:
    return tuple(int(part) for part in Path(initdb).parts[-3].split(".") if part.isdigit())


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A running PostgreSQL server's socket folder; its superuser is ``grader``, trusted."""
    programs = _server_programs()
    # PostgreSQL refuses to run as root: then the cluster belongs to the `postgres` account
    # that Debian's package creates. The folder is not under pytest's tmp_path, which only
    # root may enter.
    owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else pwd.getpwuid(os.geteuid())
    folder = Path(tempfile.mkdtemp(prefix="pg-"))
    os.chown(folder, owner.pw_uid, owner.pw_gid)
    data = folder / "data"

    def run(*command: str) -> None:
        subprocess.run(
            command,
            check=True,
            capture_output=True,
            user=owner.pw_uid,
            group=owner.pw_gid,
            extra_groups=[] if os.geteuid() == 0 else None,
            cwd=folder,
        )

    try:
        run(str(programs / "initdb"), "-D", str(data), "-U", "grader", "--auth=trust", "-E", "UTF8")
        settings = f"-k {folder} -c listen_addresses='' -c fsync=off -c full_page_writes=off"
        run(
            str(programs / "pg_ctl"),
            "start",
            "-w",
            "-D",
            str(data),
            "-l",
            str(folder / "log"),
            "-o",
            settings,
        )
        try:
            yield str(folder)
        finally:
            run(str(programs / "pg_ctl"), "stop", "-D", str(data), "-m", "immediate")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


_DATABASES = itertools.count(1)


def _create_database(server: str, *, template: str = "template1") -> str:
    """A new database on the server, a copy of ``template``: its name."""
    import psycopg

    name = f"gradebook_{next(_DATABASES)}"
    with psycopg.connect(host=server, user="grader", dbname="postgres", autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
    return name


def _url(server: str, database: str) -> str:
    return f"postgresql+psycopg://grader@/{database}?host={server}"


@pytest.fixture(scope="module")
def empty_gradebook(server: str) -> str:
    """The name of a database holding a gradebook with no unit and no learner yet, to copy."""
    name = _create_database(server)
    record_grades(_url(server, name), [], {})
    return name


def _grade(start: Barrier, errors: Queue, url: str, results: list[UnitResult]) -> None:
    """One grader: wait until the other is ready too, then record its grades, as
    ``python -m autograder grade`` does at the end (with every unit of the course)."""
    try:
        start.wait(timeout=60)
        record_grades(url, results, UNITS)
    except BaseException:
        errors.put(traceback.format_exc())
        raise


def _two_graders_at_once(url: str, split: str) -> None:
    """Two grader processes that record their share of the class at the same moment. They are
    forked, so that they start at once, without importing nbgrader again."""
    context = multiprocessing.get_context("fork")
    start = context.Barrier(2)
    errors = context.Queue()
    graders = [
        context.Process(target=_grade, args=(start, errors, url, _results(students, units)))
        for students, units in SPLITS[split]
    ]
    for grader in graders:
        grader.start()
    for grader in graders:
        grader.join(timeout=120)
        if grader.is_alive():
            grader.kill()
            grader.join()
    failures = [errors.get(timeout=5) for grader in graders if grader.exitcode != 0]
    assert [grader.exitcode for grader in graders] == [0, 0], "\n".join(failures)


def _gradebook_contents(url: str) -> dict:
    """Every score in the gradebook: per (unit, learner) the submission's score and maximum and
    each item's auto score and maximum; and how many rows of each kind there are."""
    with Gradebook(url) as book:
        scores = {}
        for unit in UNITS:
            for student in POINTS:
                try:
                    submission = book.find_submission(unit, student)
                except MissingEntry:
                    continue
                notebook = submission.notebooks[0]
                scores[unit, student] = (
                    submission.score,
                    submission.max_score,
                    {grade.name: (grade.auto_score, grade.max_score) for grade in notebook.grades},
                )
        counts = {
            "assignments": len(book.assignments),
            "notebooks": sum(len(assignment.notebooks) for assignment in book.assignments),
            "grade cells": sum(len(a.notebooks[0].grade_cells) for a in book.assignments),
            "students": len(book.students),
            "submissions": sum(len(a.submissions) for a in book.assignments),
        }
    return {"scores": scores, "counts": counts}


def _expected() -> dict:
    scores = {}
    for student, units in POINTS.items():
        for unit, points in units.items():
            if points is None:
                continue
            infos = UNITS[unit]
            grades = {
                info.grade_id: (earned, info.max_points)
                for info, earned in zip(infos, points, strict=True)
            }
            maximum = sum(info.max_points for info in infos)
            scores[unit, student] = (sum(points), maximum, grades)
    counts = {
        "assignments": 2,
        "notebooks": 2,
        "grade cells": 5,
        "students": 6,
        "submissions": 10,
    }
    return {"scores": scores, "counts": counts}


def test_two_graders_at_once_make_a_new_gradebook_and_record_every_score_once(server):
    url = _url(server, _create_database(server))
    _two_graders_at_once(url, "by learner")
    contents = _gradebook_contents(url)
    assert contents == _expected()
    assert contents["scores"]["02_retain_graph", "ed"] == (
        3.75,
        5.5,
        {
            "second_backward_test": (2.5, 2.5),
            "predict_freed": (1.0, 1.0),
            "retain_test": (0.25, 2.0),
        },
    )
    assert ("02_retain_graph", "cy") not in contents["scores"]  # not gradable: left out
    # Both again, at once: nothing is added twice and no score changes.
    _two_graders_at_once(url, "by learner")
    assert _gradebook_contents(url) == _expected()


@pytest.mark.parametrize("attempt", range(4))
def test_two_graders_at_once_add_the_same_units_and_learners(server, empty_gradebook, attempt):
    # The usual start: formgrader or `nbgrader db` made the gradebook before grading began; then
    # each grader takes a unit, and both add the units' rows and the same learners at once. The
    # race is lost or won by milliseconds: a few attempts make sure both ways are taken.
    url = _url(server, _create_database(server, template=empty_gradebook))
    _two_graders_at_once(url, "by unit")
    assert _gradebook_contents(url) == _expected()
