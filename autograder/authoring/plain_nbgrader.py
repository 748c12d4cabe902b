"""Grade notebooks with plain ``nbgrader autograde``, exactly as an instructor would.

The course's tests use it to prove what nbgrader itself gives each notebook (solutions get
full marks, learner versions zero, each kept wrong answer loses its item), and ``make bench``
uses it as the baseline. It works in a scratch course folder and never touches the repository.

Example::

    >>> from pathlib import Path
    >>> notebook = Path("course/01_leaf_tensors/01_leaf_tensors.ipynb")
    >>> results = autograde(root=Path("."), unit="01_leaf_tensors",  # doctest: +SKIP
    ...                     submissions={"ada": notebook}, workdir=Path("/tmp/grading"))
    >>> results["ada"].score, results["ada"].max_score  # doctest: +SKIP
    (0.0, 19.0)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.layout import CourseLayout

__all__ = ["GradedNotebook", "NbgraderFailed", "autograde"]


class NbgraderFailed(RuntimeError):
    """An nbgrader command failed; the message holds its command line and log."""


@dataclass(frozen=True)
class GradedNotebook:
    """What nbgrader gave one submission: per-item scores and the executed notebook."""

    scores: Mapping[str, float]
    max_scores: Mapping[str, float]
    executed: nbformat.NotebookNode

    @property
    def score(self) -> float:
        return sum(self.scores.values())

    @property
    def max_score(self) -> float:
        return sum(self.max_scores.values())

    def errors(self) -> dict[str, str]:
        """``{cell id: "ErrorName: message"}`` for every executed cell that raised."""
        return {
            cell.get("id", str(number)): f"{output.ename}: {output.evalue}"
            for number, cell in enumerate(self.executed.cells)
            if cell.cell_type == "code"
            for output in cell.outputs
            if output.output_type == "error"
        }


def autograde(
    *,
    root: Path,
    unit: str,
    submissions: Mapping[str, Path | nbformat.NotebookNode],
    workdir: Path,
    timeout: int = 60,
    beside: Mapping[str, Sequence[Path]] | None = None,
) -> dict[str, GradedNotebook]:
    """Grade ``submissions`` (learner id -> notebook file or object) of one ``unit``;
    ``beside`` (learner id -> files) is copied next to that learner's notebook, as nbgrader's
    submit carries the assignment folder (the record of first predictions, say).

    Runs ``nbgrader generate_assignment`` on the unit's source notebook, then one
    ``nbgrader autograde`` over every submission, in ``workdir`` (emptied first).
    """
    layout = CourseLayout(root.resolve())
    if workdir.exists():
        shutil.rmtree(workdir)
    source = workdir / "source" / unit
    source.mkdir(parents=True)
    shutil.copyfile(layout.source_notebook(unit), source / f"{unit}.ipynb")
    for learner, notebook in submissions.items():
        target = workdir / "submitted" / learner / unit / f"{unit}.ipynb"
        target.parent.mkdir(parents=True)
        if isinstance(notebook, Path):
            shutil.copyfile(notebook, target)
        else:
            nbformat.write(notebook, target)
        for extra in (beside or {}).get(learner, ()):
            shutil.copyfile(extra, target.parent / extra.name)

    common = [f"--CourseDirectory.root={workdir}", f"--ExecutePreprocessor.timeout={timeout}"]
    _nbgrader(["generate_assignment", unit, "--force", *common], workdir)
    _nbgrader(["autograde", unit, "--create", "--force", *common], workdir)
    return _read_gradebook(workdir, unit, list(submissions))


def _nbgrader(arguments: list[str], workdir: Path) -> None:
    command = [sys.executable, "-m", "nbgrader", *arguments]
    environment = {
        **os.environ,
        # nbgrader runs `alembic` from PATH: put this interpreter's scripts first.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        # Only the scratch folder: an nbgrader_config.py elsewhere must not leak in.
        "JUPYTER_CONFIG_PATH": str(workdir),
    }
    finished = subprocess.run(
        command, cwd=workdir, env=environment, capture_output=True, text=True, check=False
    )
    if finished.returncode != 0:
        raise NbgraderFailed(f"{' '.join(command)} exited {finished.returncode}\n{finished.stderr}")


def _read_gradebook(workdir: Path, unit: str, learners: list[str]) -> dict[str, GradedNotebook]:
    from nbgrader.api import Gradebook  # slow to import; only grading needs it

    results = {}
    with Gradebook(f"sqlite:///{workdir / 'gradebook.db'}") as gradebook:
        for learner in learners:
            submission = gradebook.find_submission_notebook(unit, unit, learner)
            grades = {grade.name: grade for grade in submission.grades}
            executed = nbformat.read(
                workdir / "autograded" / learner / unit / f"{unit}.ipynb", as_version=4
            )
            results[learner] = GradedNotebook(
                scores={name: float(grade.score) for name, grade in grades.items()},
                max_scores={name: float(grade.max_score) for name, grade in grades.items()},
                executed=executed,
            )
    return results
