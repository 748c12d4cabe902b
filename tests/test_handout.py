"""The learner handout: the allow-listed files only, no answer key, the same bytes every build."""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.__main__ import main
from autograder.authoring.handout import HandoutError, build_handout, find_secret
from autograder.authoring.translation import TRANSLATIONS
from tests.conftest import LAYOUT, ROOT, UNITS

_TOP_FILES = ("pyproject.toml", "constraints.txt", "environment.yml", "Makefile", "README.md")


def _notebook(*sources: str) -> str:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return nbformat.writes(notebook)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def root(tmp_path) -> Path:
    """A small course tree, with the clutter a real one collects."""
    root = tmp_path / "repo"
    for name in _TOP_FILES:
        _write(root / name, f"{name}\n")
    _write(root / "course/01_a/01_a.ipynb", _notebook("x = 1", "# YOUR CODE HERE"))
    _write(root / "autograder/__init__.py", '"""Checks."""\n')
    # prose that names a marker is no leak
    _write(root / "autograder/authoring/source_check.py", 'PAIRS = {"### BEGIN SOLUTION": 1}\n')
    _write(root / "gradgraph/__init__.py", '"""Recorder."""\n')
    _write(root / "solutions/01_a/01_a.ipynb", _notebook("### BEGIN SOLUTION\nx = 1"))
    _write(root / "tests/test_a.py", "def test(): pass\n")
    _write(root / "gradebook.db", "sqlite")
    _write(root / "autograder/__pycache__/checks.cpython-311.pyc", "bytecode")
    _write(root / "autograder/stale.pyc", "bytecode")
    _write(root / "course/01_a/.ipynb_checkpoints/01_a-checkpoint.ipynb", _notebook("y"))
    _write(root / "course/01_a/.01_a.ipynb.swp", "editor")
    _write(root / "autograd_course.egg-info/PKG-INFO", "Name: autograd-course\n")
    return root


def _names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        return archive.namelist()


def test_handout_holds_the_allow_list_only(root, tmp_path):
    out = build_handout(root=root, out=tmp_path / "handout.zip")
    assert out == tmp_path / "handout.zip"
    assert _names(out) == [
        "autograd-course/Makefile",
        "autograd-course/README.md",
        "autograd-course/autograder/__init__.py",
        "autograd-course/autograder/authoring/source_check.py",
        "autograd-course/constraints.txt",
        "autograd-course/course/01_a/01_a.ipynb",
        "autograd-course/environment.yml",
        "autograd-course/gradgraph/__init__.py",
        "autograd-course/pyproject.toml",
    ]
    with zipfile.ZipFile(out) as archive:
        assert (
            archive.read("autograd-course/course/01_a/01_a.ipynb")
            == (root / "course/01_a/01_a.ipynb").read_bytes()
        )
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_default_path_and_optional_license(root):
    _write(root / "LICENSE", "MIT\n")
    out = build_handout(root=root)
    assert out == root / "dist" / "autograd-course-handout.zip"
    assert "autograd-course/LICENSE" in _names(out)


def test_two_builds_are_byte_identical(root, tmp_path):
    first = build_handout(root=root, out=tmp_path / "one.zip").read_bytes()
    later = 2_000_000_000
    for path in root.rglob("*"):
        os.utime(path, (later, later))
    second = build_handout(root=root, out=tmp_path / "two.zip").read_bytes()
    assert first == second


@pytest.mark.parametrize(
    ("relative", "text", "problem"),
    [
        (
            "course/01_a/01_a.ipynb",
            _notebook("x = 1", "check(x)\n### BEGIN HIDDEN TESTS\ncheck(2)\n### END HIDDEN TESTS"),
            "has nbgrader's marker 'BEGIN HIDDEN TESTS' in cell 2",
        ),
        (
            "course/01_a/copy.ipynb",
            _notebook("### BEGIN SOLUTION\nx = 1\n### END SOLUTION"),
            "has nbgrader's marker 'BEGIN SOLUTION' in cell 1",
        ),
        (
            "autograder/answers.py",
            "def f():\n    ### BEGIN SOLUTION\n    return 1\n",
            "has an nbgrader marker on line 2",
        ),
        ("course/gradebook.db", "sqlite", "is a database"),
        ("course/01_a/broken.ipynb", "{", "is not a readable notebook"),
    ],
    # named, not shown: a notebook's text holds random cell ids, and xdist's workers must
    # collect the same test names
    ids=["hidden-tests", "solution", "python-file", "database", "unreadable-notebook"],
)
def test_a_planted_secret_stops_the_build(root, tmp_path, relative, text, problem):
    _write(root / relative, text)
    out = tmp_path / "handout.zip"
    with pytest.raises(HandoutError, match=re.escape(f"{root / relative} {problem}")):
        build_handout(root=root, out=out)
    assert not out.exists()


def test_symbolic_links_are_refused(root, tmp_path):
    (root / "course/answers").symlink_to(root / "solutions")
    with pytest.raises(HandoutError, match="course/answers is a symbolic link"):
        build_handout(root=root, out=tmp_path / "handout.zip")


def test_missing_entries_and_an_empty_course_are_refused(root, tmp_path):
    (root / "README.md").unlink()
    with pytest.raises(HandoutError, match="README.md is missing"):
        build_handout(root=root, out=tmp_path / "handout.zip")
    _write(root / "README.md", "x\n")
    (root / "course/01_a/01_a.ipynb").unlink()
    with pytest.raises(HandoutError, match="holds no notebook: run `make release` first"):
        build_handout(root=root, out=tmp_path / "handout.zip")


def test_find_secret_reads_markers_as_nbgrader_does():
    assert find_secret("a.ipynb", _notebook("print('BEGIN HIDDEN')").encode()) is not None
    assert find_secret("README.md", b"a broken `### BEGIN SOLUTION` marker") is None
    assert find_secret("a.py", b"x = 1\n  ## BEGIN HIDDEN TESTS\n") is not None


def test_command_line(root, tmp_path, capsys):
    out = tmp_path / "cli.zip"
    assert main(["handout", "--root", str(root), "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"handout written: {out}\n"
    _write(root / "course/01_a/01_a.ipynb", _notebook("### BEGIN HIDDEN TESTS"))
    assert main(["handout", "--root", str(root), "--out", str(out)]) == 1
    assert capsys.readouterr().err.startswith(f"handout failed: {root}/course/01_a/01_a.ipynb has")


_IMPORT = re.compile(r"\s*(from|import) ")


def _answer_key_lines() -> set[str]:
    """Distinctive lines of the answer key (inside solution and hidden-test regions; no
    imports) that a learner never sees elsewhere in the released notebook."""
    lines, visible = set(), set()
    for unit in UNITS:
        for cell in nbformat.read(LAYOUT.source_notebook(unit), as_version=4).cells:
            inside = False
            for line in cell.source.splitlines():
                if "BEGIN SOLUTION" in line or "BEGIN HIDDEN TESTS" in line:
                    inside = True
                elif "END SOLUTION" in line or "END HIDDEN TESTS" in line:
                    inside = False
                elif inside and len(line.strip()) >= 30 and not _IMPORT.match(line):
                    lines.add(line.strip())
        for cell in nbformat.read(LAYOUT.learner_notebook(unit), as_version=4).cells:
            if not cell.metadata.get("nbgrader", {}).get("solution"):
                visible.update(line.strip() for line in cell.source.splitlines())
    return lines - visible


def test_the_real_handout_has_the_notebooks_and_no_answer_key(tmp_path):
    out = build_handout(root=ROOT, out=tmp_path / "handout.zip")
    names = _names(out)
    top = {name.split("/")[1] for name in names}
    licensed = {"LICENSE"} if (ROOT / "LICENSE").exists() else set()
    assert top == {"course", "autograder", "gradgraph", *_TOP_FILES, *licensed}
    notebooks = sorted(name for name in names if name.endswith(".ipynb"))
    assert notebooks == sorted(
        f"autograd-course/course/{folder}{unit}/{unit}.ipynb"
        for unit in UNITS
        for folder in ("", *(f"{language}/" for language in TRANSLATIONS))
    )
    checks, live = "autograder/checks/__init__.py", "autograder/checks/live.py"
    catalogs = [f"{package}/locale/{language}.po" for package in ("autograder", "gradgraph")
                for language in TRANSLATIONS]  # fmt: skip
    for needed in (checks, live, "gradgraph/__init__.py", "autograder/i18n/__init__.py", *catalogs):
        assert f"autograd-course/{needed}" in names
    assert not [n for n in names if re.search(r"solutions|\.po$", n) and "/locale/" not in n]
    leftovers = r"__pycache__|\.pyc$|egg-info|\.ipynb_checkpoints|/\."
    assert not [n for n in names if re.search(leftovers, n)]
    answer_key = _answer_key_lines()
    assert len(answer_key) > 100
    with zipfile.ZipFile(out) as archive:
        for name in names:
            text = archive.read(name).decode("utf-8")
            if name.endswith(".ipynb"):
                text = "\n".join(cell.source for cell in nbformat.reads(text, as_version=4).cells)
            leaked = answer_key & {line.strip() for line in text.splitlines()}
            assert not leaked, (name, sorted(leaked)[:3])
