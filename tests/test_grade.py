"""Class grading end to end: a generated class of honest, partial and blank notebooks, one learner
per kind of attack and one per kind of bad input, graded in parallel in the sandbox; each gets
exactly the expected score or "not gradable" reason, and nothing is lost or modified."""

from __future__ import annotations

import csv
import hashlib
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.__main__ import main
from autograder.grading.grade import grade
from autograder.grading.results import GRADED, NOT_GRADABLE
from autograder.grading.sandbox import SandboxSettings, worker_command
from autograder.grading.worker_pool import Limits
from tests.conftest import HAS_SANDBOX, ROOT
from tests.grading_class import (
    FULL,
    REVIEWED,
    UNIT,
    Expected,
    build_class,
    solved_learner_notebook,
)

pytestmark = [
    pytest.mark.xdist_group("class-grading"),
    pytest.mark.skipif(
        not HAS_SANDBOX, reason="bubblewrap cannot run here; the attacks need the sandbox"
    ),
]
LIMITS = Limits(cell_seconds=10, notebook_seconds=120)


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    base = tmp_path_factory.mktemp("class")
    folder, out = base / "submitted", base / "graded"
    expected = build_class(folder, out=out)
    before = _digest(folder)
    progress = io.StringIO()
    results = grade(folder, out=out, root=ROOT, workers=2, limits=LIMITS, progress=progress)
    return {
        "folder": folder,
        "out": out,
        "expected": expected,
        "before": before,
        "results": {result.student: result for result in results},
        "progress": progress.getvalue(),
    }


def test_every_learner_gets_exactly_the_expected_result(graded_class):
    wrong = []
    for student, expected in sorted(graded_class["expected"].items()):
        result = graded_class["results"][student]
        if not _matches(result, expected):
            failures = [f"{i.grade_id}: {i.failures[-1]}" for i in result.items if i.failures]
            wrong.append(f"{student}: {result.status} {result.score} {result.reason} {failures}")
    assert not wrong, "\n".join(wrong)
    assert set(graded_class["results"]) == set(graded_class["expected"])


def _matches(result, expected: Expected) -> bool:
    if expected.score is None:
        return result.status == NOT_GRADABLE and expected.reason in result.reason
    notes = " ".join(result.notes)
    return result.status == GRADED and result.score == expected.score and expected.note in notes


def test_the_class_holds_every_kind_of_attack_and_bad_input(graded_class):
    kinds = {student.split("-")[0] for student in graded_class["expected"]}
    assert kinds == {"honest", "attack", "bad", "odd"}
    assert len(graded_class["expected"]) >= 40


def test_attacks_on_the_grading_machinery_are_listed_for_review(graded_class):
    """Issue 13: each attack on the worker, the checks or torch's classes is quoted in the
    report's review list; the honest notebooks are not."""
    results = graded_class["results"]
    assert [s for s in REVIEWED if not results[s].review] == []
    assert [s for s in results if s.startswith("honest") and results[s].review] == []
    report = (graded_class["out"] / "report.html").read_text(encoding="utf-8")
    review = report[report.index("For review") :]
    assert all(student in review for student in REVIEWED)
    assert "honest-solved" not in review


def test_submissions_are_never_modified(graded_class):
    assert _digest(graded_class["folder"]) == graded_class["before"]
    assert not (graded_class["out"] / "pwned.txt").exists()


def test_nothing_secret_is_in_reach_of_a_submission(graded_class):
    failures = " ".join(
        message
        for item in graded_class["results"]["attack-read-secrets"].items
        for message in item.failures
    )
    assert "nothing secret could be read" in failures


def test_grades_csv_has_one_row_per_learner_and_unit(graded_class):
    text = (graded_class["out"] / "grades.csv").read_text(encoding="utf-8")
    rows = {row["student"]: row for row in csv.DictReader(io.StringIO(text))}
    assert set(rows) == set(graded_class["expected"])
    assert rows["honest-solved"]["score"] == f"{FULL:g}"
    assert rows["honest-solved"]["status"] == "graded"
    assert rows["bad-empty"]["status"] == "not gradable"
    assert "empty" in rows["bad-empty"]["reason"]


def test_feedback_shows_hidden_test_messages(graded_class):
    page = graded_class["out"] / "feedback" / "honest-partial" / f"{UNIT}.html"
    text = page.read_text(encoding="utf-8")
    assert "sgd_step" in text and "Hint:" in text
    for student in graded_class["expected"]:
        assert (graded_class["out"] / "feedback" / student / f"{UNIT}.html").is_file()


def test_report_and_gradebook(graded_class):
    report = (graded_class["out"] / "report.html").read_text(encoding="utf-8")
    assert "WITHOUT a sandbox" not in report
    assert "classify_test" in report or "classify" in report
    with Gradebook(f"sqlite:///{graded_class['out'] / 'gradebook.db'}") as book:
        for student, result in graded_class["results"].items():
            if result.status == GRADED:
                assert book.find_submission(UNIT, student).score == result.score


def test_progress_is_reported(graded_class):
    lines = graded_class["progress"].splitlines()
    total = len(graded_class["expected"])
    assert any(line.startswith(f"{total}/{total} graded") for line in lines)
    assert any(line.startswith(f"Graded {total - 8} of {total} notebooks") for line in lines)


def test_a_second_run_resumes_and_gives_the_same_grades(graded_class):
    cache = graded_class["out"] / ".results"
    for student in ("honest-solved", "honest-partial", "bad-empty"):
        (cache / student / f"{UNIT}.json").unlink()
    progress = io.StringIO()
    again = grade(
        graded_class["folder"],
        out=graded_class["out"],
        root=ROOT,
        workers=2,
        limits=LIMITS,
        progress=progress,
    )
    assert {r.student: r for r in again} == graded_class["results"]
    regraded = [line for line in progress.getvalue().splitlines() if " graded, " in line]
    assert len(regraded) == 3


def test_an_lms_zip_is_graded(tmp_path):
    archive = tmp_path / "submissions.zip"
    solved = nbformat.writes(solved_learner_notebook(UNIT))
    blank = (ROOT / "course" / UNIT / f"{UNIT}.ipynb").read_text(encoding="utf-8")
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr(f"ada_12345_67890_{UNIT}.ipynb", blank)
        zipped.writestr(f"ada_12345_67891_{UNIT}-1.ipynb", solved)
        zipped.writestr(f"grace_LATE_22222_33333_{UNIT}.ipynb", blank)
    results = grade(
        archive, out=tmp_path / "out", root=ROOT, workers=1, limits=LIMITS, progress=None
    )
    scores = {result.student: result.score for result in results}
    assert scores == {"12345": FULL, "22222": 0.0}, "learners are known by their LMS id"
    ada = next(result for result in results if result.student == "12345")
    assert any(f"{UNIT}-1.ipynb" in note for note in ada.notes), ada.notes


def test_grading_refuses_to_run_without_a_sandbox(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    code = main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--root", str(ROOT)])
    assert code == 1
    assert "bubblewrap" in capsys.readouterr().err


def test_grading_without_a_sandbox_says_so_loudly(tmp_path):
    folder = tmp_path / "submitted"
    path = folder / "ada" / UNIT / f"{UNIT}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(solved_learner_notebook(UNIT), path)
    progress = io.StringIO()
    results = grade(
        folder, out=tmp_path / "out", root=ROOT, sandbox=False, limits=LIMITS, progress=progress
    )
    assert [(r.score, r.sandboxed) for r in results] == [(FULL, False)]
    assert "WITHOUT a sandbox" in progress.getvalue()
    assert "WITHOUT a sandbox" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


def _graded_in_turn(tmp_path: Path, last_cells: dict[str, str]) -> list:
    """Grade a solved notebook per student, each ending with its own extra cell, in the order
    given, by one worker (so that each submission meets what the one before left)."""
    folder = tmp_path / "submitted"
    for student, code in last_cells.items():
        path = folder / student / UNIT / f"{UNIT}.ipynb"
        path.parent.mkdir(parents=True)
        notebook = solved_learner_notebook(UNIT)
        notebook.cells.append(nbformat.v4.new_code_cell(code))
        nbformat.write(notebook, path)
    return grade(folder, out=tmp_path / "out", root=ROOT, workers=1, limits=LIMITS, progress=None)


def test_nothing_a_submission_leaves_in_tmp_reaches_the_next_one(tmp_path):
    """One worker grades both in turn: the first leaves a file in the sandbox's /tmp beside its
    scratch folder, and the second must not find it there."""
    cells = {
        "ada": "open('/tmp/left-behind.txt', 'w').write('from ada')",
        "bob": "import os\nprint('found:', os.path.exists('/tmp/left-behind.txt'))",
    }
    results = _graded_in_turn(tmp_path, cells)
    assert [(r.student, r.score) for r in results] == [("ada", FULL), ("bob", FULL)]
    shown = " ".join(" ".join(parts) for parts in results[1].outputs.values())
    assert "found: False" in shown, shown


_HOPPERS = """
import os, time
from autograder.grading.sandbox_worker import _kill_strays, _living_strays
left = []
for round_ in range(3):
    child = os.fork()
    if child == 0:
        os.setsid()
        for _ in range(60):
            if os.fork() == 0:
                os.setsid()  # out of the submission's process group
                while True:  # fork, and let the parent go: a new pid each time
                    if os.fork():
                        os._exit(0)
        time.sleep(30)
        os._exit(0)
    time.sleep(0.3)
    _kill_strays(child)
    os.waitpid(child, 0)
    time.sleep(0.1)
    left.append(len(_living_strays()))
print(left)
"""


def test_no_process_of_a_submission_outlives_it():
    """Processes that hop from pid to pid (fork, and the parent exits), outside the submission's
    process group, outlive a kill of what one read of /proc listed; a survivor would read the
    next submission's cells from the worker's input. The worker's kill reaches them all."""
    command = worker_command(SandboxSettings(), packages=[ROOT / "autograder"])[:-3]
    run = subprocess.run(
        [*command, sys.executable, "-c", _HOPPERS], capture_output=True, text=True, timeout=120
    )
    assert run.stdout.strip() == "[0, 0, 0]", run.stdout + run.stderr[-2000:]


# A test cell that hands the notebook's function one of its own (here as an argument; in the
# course, a saved-tensor hook, a module class or a backward hook): that function's globals and
# builtins are the test's, and the notebook's code must not change what the test reads there.
_HANDS_OVER = """
from autograder.checks import call_learner, expect
_ran_backward = False
def _callback():
    return None
_answer = call_learner("solve", solve, _callback)
expect(len(_answer) == 3 and bool(_ran_backward), "solve never ran backward")
"""
_MEDDLERS = {
    "a name the test binds, rebound while its function runs": """
def solve(callback):
    callback.__globals__["_ran_backward"] = True
    return [0, 0, 0]
""",
    "a name the test never binds, added to hide a builtin": """
def solve(callback):
    callback.__globals__["len"] = lambda value: 3
    return [0]
""",
    "a builtin of the test's own": """
def solve(callback):
    callback.__builtins__["len"] = lambda value: 3
    callback.__globals__["_ran_backward"] = True
    callback.__globals__["_ran_backward"] = False  # (changed back: rebound while the call ran)
    return [0]
""",
    "a name the test never binds, rebound after the call, from a comparison": """
class _Sly(list):
    def __init__(self, callback):
        super().__init__([0, 0, 0])
        self.callback = callback
    def __len__(self):  # the test asks for the length after the call returned
        self.callback.__globals__["bool"] = lambda value: True
        return 3
def solve(callback):
    return _Sly(callback)
""",
}
_HONEST_SOLVE = """
def solve(callback):
    callback()
    return [1, 2, 3]
"""


def test_no_notebook_changes_a_tests_own_globals_or_builtins():
    """What a test's own function hands over (its globals, its builtins) stays the test's:
    code of the notebook's that changes anything there voids the item, whether it rebinds a
    name the test binds while the test's function is in its hands, adds a name that hides a
    builtin, changes a builtin of the test's own, or rebinds a name later from a method the
    test calls; an honest function that merely calls what it is given voids nothing."""
    from autograder.grading.worker_pool import Worker, run_cells

    worker = Worker(SandboxSettings(), [ROOT / "autograder", ROOT / "gradgraph"])
    try:
        voided = {}
        for kind, answer in {**_MEDDLERS, "honest": _HONEST_SOLVE}.items():
            cells = [
                {"index": 0, "origin": "course", "source": "import torch", "hidden": ""},
                {"index": 1, "origin": "answer", "source": answer, "hidden": ""},
                {"index": 2, "origin": "test", "source": _HANDS_OVER, "hidden": ""},
            ]
            outcome = run_cells(worker, cells, LIMITS)[2]
            voided[kind] = outcome.voided
        honest = voided.pop("honest")
        assert honest == (), honest
        assert [kind for kind, reasons in voided.items() if not reasons] == [], voided
        assert all("the test's own globals or builtins" in r[0] for r in voided.values()), voided
    finally:
        worker.stop()


_LEAVES_BEHIND = """
import os
for folder in ["/dev/shm", "/dev", "/tmp/.cache", "/tmp/.config"]:
    try:
        with open(os.path.join(folder, "left-behind.txt"), "w") as note:
            note.write("from ada")
    except OSError:
        pass
for number in range(8):  # the sandbox's /tmp filled to its limit, inside a folder it kept
    try:
        with open(f"/tmp/.cache/filler-{number}", "wb") as filler:
            filler.write(b"x" * 60 * 2**20)
    except OSError:
        break
"""
_FINDS = """
import os
paths = ["/dev/shm/left-behind.txt", "/dev/left-behind.txt", "/tmp/.cache/left-behind.txt",
         "/tmp/.config/left-behind.txt", "/tmp/.cache/filler-0"]
print("found:", [path for path in paths if os.path.exists(path)])
with open("room.bin", "wb") as room:  # room in the sandbox's /tmp for this submission's files
    room.write(b"x" * 2**20)
"""


def test_nothing_a_submission_leaves_anywhere_reaches_the_next_one(tmp_path):
    """Beside /tmp's own new entries: what a submission writes inside the folders /tmp held
    before the first one (caches), in /dev/shm or in /dev itself, and the room it takes there,
    must not reach the next submission the same worker grades (nor can /dev grow without
    bound: it is memory)."""
    results = _graded_in_turn(tmp_path, {"ada": _LEAVES_BEHIND, "bob": _FINDS})
    assert [(r.student, r.score) for r in results] == [("ada", FULL), ("bob", FULL)]
    shown = results[1].outputs
    assert any("found: []" in parts[0] for parts in shown.values()), shown
    assert not any(parts[2] for parts in shown.values()), shown
