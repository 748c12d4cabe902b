"""The whole nbgrader exchange cycle for a small class, with the class grader in the middle:
release, fetch, work, submit, collect, ``make grade``'s grader, release feedback, fetch feedback.

Each learner is a real local account (``useradd``) with a home of their own, running nbgrader
under their own uid; the exchange is one shared folder, as on a multi-user server. Learners run
in a bubblewrap view of the system in which only the Python environment, their home and the
exchange are visible (the interpreter may live under ``/root``, which other accounts cannot
enter). Needs root, ``useradd`` and bubblewrap: skipped, saying why, elsewhere.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.grading.grade import grade
from autograder.grading.sandbox import system_mounts
from tests.conftest import LAYOUT, ROOT, answer_rounds, solved_learner_notebook

pytestmark = pytest.mark.xdist_group("exchange")
UNIT = "05_hooks"
COURSE = "autograd"
LEARNERS = ("ada", "alan", "grace")
_PREFIX = "agc-"  # local accounts made by this test, removed after it


@pytest.fixture(scope="module")
def accounts():
    """Real local accounts for the learners: name -> uid."""
    tools = ("useradd", "bwrap", "setpriv")
    if os.geteuid() != 0 or any(shutil.which(tool) is None for tool in tools):
        pytest.skip("needs root, useradd, bubblewrap and setpriv to run learner accounts")
    made = {}
    try:
        for learner in LEARNERS:
            name = _PREFIX + learner
            subprocess.run(["userdel", name], capture_output=True, check=False)
            subprocess.run(["useradd", "--no-create-home", name], check=True)
            made[name] = pwd.getpwnam(name).pw_uid
        yield made
    finally:
        for name in made:
            subprocess.run(["userdel", name], capture_output=True, check=False)


def _as_learner(uid: int, home: Path, exchange: Path, config: Path) -> list[str]:
    """The command prefix that runs as the learner's uid, in a view of the system where the
    Python environment is reachable (bubblewrap, as root, only for the mounts; ``setpriv`` then
    drops to the learner before nbgrader starts)."""
    view = ["bwrap", "--die-with-parent", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    mounts = system_mounts()
    visible = [*mounts, home, exchange, config]
    for parent in sorted({p for path in visible for p in path.parents if p != Path("/")}):
        view += ["--perms", "0755", "--dir", str(parent)]  # e.g. /root, which is 0700
    for path in mounts:
        view += ["--ro-bind", str(path), str(path)]
    for path in (home, exchange):
        view += ["--bind", str(path), str(path)]
    view += ["--ro-bind", str(config), str(config), "--chdir", str(home)]
    return [*view, "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


def _nbgrader(*arguments: str, cwd: Path, environment: dict[str, str], prefix=()) -> str:
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "nbgrader", *arguments],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"nbgrader {' '.join(arguments)} failed:\n{done.stderr}"
    return done.stderr + done.stdout


def _environment(home: Path, user: str, config: Path) -> dict[str, str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {
        "PATH": path,
        "HOME": str(home),
        "USER": user,
        "LOGNAME": user,
        "JUPYTER_CONFIG_PATH": str(config),
        "JUPYTER_PLATFORM_DIRS": "1",
        "LANG": "C.UTF-8",
    }


def _answers(learner: str) -> nbformat.NotebookNode:
    if learner == "ada":
        return solved_learner_notebook(UNIT)
    if learner == "alan":
        wrong = next(iter(answer_rounds(UNIT, "wrong")[0].values()))
        return solved_learner_notebook(UNIT, {wrong.cell: wrong.code})
    return nbformat.read(LAYOUT.learner_notebook(UNIT), as_version=4)


def test_the_exchange_cycle_with_the_class_grader(tmp_path, accounts):
    tmp_path.chmod(0o755)
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)
    config = tmp_path / "config"
    config.mkdir()
    (config / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {COURSE!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
    )
    instructor = tmp_path / "instructor"
    shutil.copytree(LAYOUT.source_notebook(UNIT).parent, instructor / "source" / UNIT)
    teacher = _environment(instructor, "teacher", config)
    _nbgrader("generate_assignment", UNIT, cwd=instructor, environment=teacher)
    _nbgrader("release_assignment", UNIT, cwd=instructor, environment=teacher)

    learners = [_PREFIX + learner for learner in LEARNERS]
    for learner in learners:
        home, uid = tmp_path / "home" / learner, accounts[learner]
        home.mkdir(parents=True)
        os.chown(home, uid, uid)
        environment = _environment(home, learner, config)
        prefix = _as_learner(uid, home, exchange, config)
        run = {"cwd": home, "environment": environment, "prefix": prefix}
        _nbgrader("fetch_assignment", UNIT, **run)
        fetched = home / UNIT / f"{UNIT}.ipynb"
        assert fetched.is_file() and fetched.stat().st_uid == uid
        nbformat.write(_answers(learner.removeprefix(_PREFIX)), fetched)
        _nbgrader("submit", UNIT, **run)

    _nbgrader("collect", UNIT, cwd=instructor, environment=teacher)
    submitted = instructor / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == learners
    results = grade(
        submitted,
        out=tmp_path / "graded",
        root=ROOT,
        db_url=f"sqlite:///{instructor / 'gradebook.db'}",
        nbgrader_course=instructor,
        progress=None,
    )
    scores = {result.student: (result.score, result.max_score) for result in results}
    full = scores[_PREFIX + "ada"][1]
    assert scores[_PREFIX + "ada"] == (full, full)
    assert scores[_PREFIX + "grace"] == (0.0, full)
    assert 0 < scores[_PREFIX + "alan"][0] < full
    with Gradebook(f"sqlite:///{instructor / 'gradebook.db'}") as book:
        assert {s: book.find_submission(UNIT, s).score for s in learners} == {
            s: score for s, (score, _) in scores.items()
        }

    _nbgrader("release_feedback", UNIT, cwd=instructor, environment=teacher)
    for learner in learners:
        home, uid = tmp_path / "home" / learner, accounts[learner]
        prefix = _as_learner(uid, home, exchange, config)
        environment = _environment(home, learner, config)
        _nbgrader("fetch_feedback", UNIT, cwd=home, environment=environment, prefix=prefix)
        [page] = (home / UNIT / "feedback").glob(f"*/{UNIT}.html")
        text = page.read_text(encoding="utf-8")
        assert learner in text and f"{scores[learner][0]:g}" in text
