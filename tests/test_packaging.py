"""The project's own promises about its files: one list of packages, clean notebooks, lint."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.authoring.translation import TRANSLATIONS
from autograder.i18n.catalogs import NOTEBOOK_KEY
from tests.conftest import LAYOUT, ROOT, UNITS

# conda-forge's name where it differs from the PyPI name
CONDA_NAMES = {"torch": "pytorch"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _split(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"^([A-Za-z0-9_.\-]+)\s*(.*)$", requirement).groups()
    return name.lower(), spec.replace(" ", "")


def test_environment_yml_and_pyproject_list_the_same_packages():
    project = _pyproject()["project"]
    from_pyproject = dict(
        _split(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]
    )
    from_pyproject = {CONDA_NAMES.get(name, name): spec for name, spec in from_pyproject.items()}
    environment = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    conda = dict(_split(d) for d in environment["dependencies"] if isinstance(d, str))
    conda.pop("pip")
    python = conda.pop("python")
    assert conda == from_pyproject
    # Binder's repo2docker needs an exact `python=X.Y` pin; it must satisfy requires-python.
    pinned = re.fullmatch(r"=(\d+)\.(\d+)", python)
    assert pinned, f"environment.yml should pin python exactly (python=3.11), not {python!r}"
    lowest = re.fullmatch(r">=(\d+)\.(\d+)", project["requires-python"])
    assert tuple(map(int, pinned.groups())) >= tuple(map(int, lowest.groups()))
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip_section


def test_ci_pins_the_cpu_build_of_torch():
    constraints = (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
    assert "torch==2.13.0" in constraints
    assert "-c constraints.txt" in (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.xdist_group("packaging")
def test_xdist_keeps_a_group_on_one_worker(request):
    """`make test` runs `--dist loadgroup`, so that one worker grades each unit once and the
    hub and the browser start once. xdist groups a test by adding ``@group`` to its node id,
    which pytest 9.2 no longer reads (pytest-xdist#1386): the groups are split across workers
    without a word, and the suite runs minutes longer. constraints.txt pins a pytest that
    keeps them."""
    if not request.config.getoption("loadgroup", default=False):
        pytest.skip("not run with --dist loadgroup (make test runs it so)")
    assert request.node.nodeid.endswith("@packaging"), (
        f"xdist did not group {request.node.nodeid} under pytest {pytest.__version__}: install "
        "the pytest that constraints.txt pins"
    )


def test_readme_starts_with_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```")[1]
    assert "make lab" in first_block and "make test" in first_block


def _notebooks():
    return sorted(
        path
        for folder in (LAYOUT.solutions, LAYOUT.course)
        for path in folder.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in path.parts
    )


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: str(p.relative_to(ROOT)))
def test_notebooks_are_stored_clean(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.id
    translated = Path(path).parent.parent.name in TRANSLATIONS
    allowed = {"kernelspec", "language_info"} | ({NOTEBOOK_KEY} if translated else set())
    assert set(notebook.metadata) <= allowed


@pytest.mark.parametrize("unit", UNITS)
def test_unit_has_the_promised_exercises(unit):
    notebook = nbformat.read(LAYOUT.source_notebook(unit), as_version=4)
    tests = [
        cell.metadata["nbgrader"]
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get("grade")
    ]
    predictions = [meta for meta in tests if meta["grade_id"].startswith("predict_")]
    assert len(tests) >= 7
    assert len(predictions) >= 2
    assert len(tests) - len(predictions) >= 4
    total = sum(meta["points"] for meta in tests)
    stated = re.search(
        r"\*\*Points:\*\* (\d+), in (\d+) graded exercises", notebook.cells[0].source
    )
    assert stated is not None, "the first cell must state the points and the number of exercises"
    assert (int(stated[1]), int(stated[2])) == (total, len(tests))


def test_ruff_passes():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", str(ROOT)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout
