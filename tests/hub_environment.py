"""Make the course environment of a one-server hub, as docs/deploy.md's install does, fast.

A real server installs it with ``python3 -m venv /opt/autograd-course/venv`` and ``pip install``
(minutes: PyTorch alone is hundreds of MB). The test has that environment already, ``.venv``,
but here it and its interpreter may live where other accounts cannot enter (pyenv's Python under
``/root``, or a clone in a private ``mktemp -d``). So it is *placed* at a prefix every account
can read, as an installer would have made it: the interpreter's installation, when other
accounts cannot reach it, and the virtual environment are copied as hard links (instant, no
space; nothing is ever written through a link: each file changed is replaced). The interpreter
is made relocatable as standalone Python builds are (its library search path becomes
``$ORIGIN/../lib``), the environment and its scripts are repointed at their new place, the
course's packages are plain copies instead of the editable install, the guide's
configuration files are in the environment's ``etc/jupyter``, and the learners' settings in
``learner/`` beside it (:func:`install_learner_settings`, the guide's two ``cp -r``). Nothing
outside the prefix is changed, and removing the prefix removes it all.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

from tests.conftest import ROOT

DEPLOY = ROOT / "docs" / "deploy" / "one-server"
LAB = ROOT / "autograder" / "lab"
_PACKAGES = ("autograder", "gradgraph")


def reachable_by_others(path: Path) -> bool:
    """Whether an account without privileges can enter every folder down to ``path``."""
    return all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents])


def _link_tree(source: Path, target: Path, skip: set[Path] = frozenset()) -> None:
    def ignore(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if Path(folder, n) in skip or n == "__pycache__"]

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:  # another file system: a copy
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link, ignore=ignore)


def _replace(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` as a new file (never through a hard link)."""
    path.unlink(missing_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)


def _relocated_python(prefix: Path, version: str) -> Path:
    """This interpreter's installation copied under ``prefix/python``, its executable finding
    its ``libpython`` beside it (the absolute run path a source build records, such as pyenv's
    under ``/root``, rewritten to ``$ORIGIN/../lib``, padded to the same length)."""
    base = Path(sys.base_prefix)
    _link_tree(base, prefix / "python", skip={base / "lib" / version / "site-packages"})
    (prefix / "python" / "lib" / version / "site-packages").mkdir(exist_ok=True)
    executable = prefix / "python" / "bin" / version
    binary = executable.read_bytes()
    old = f"{base}/lib".encode()
    new = b"$ORIGIN/../lib".ljust(len(old), b"\0")
    if old in binary and len(new) == len(old):
        executable.unlink()
        executable.write_bytes(binary.replace(old + b"\0", new + b"\0"))
        executable.chmod(0o755)
    return executable


def install_learner_settings(prefix: Path) -> Path:
    """What the guide's install copies to ``prefix/learner``: the learners' settings (no
    instructor tools) and, in ``learner/ko``, a Korean class's JupyterLab settings."""
    learner = prefix / "learner"
    shutil.copytree(DEPLOY / "learner", learner)
    shutil.copytree(LAB / "ko", learner / "ko")
    return learner


def install_course_environment(prefix: Path) -> Path:
    """Place the course environment at ``prefix/venv`` (see the module); returns its python."""
    prefix.mkdir(parents=True, exist_ok=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    python = Path(sys._base_executable).resolve()
    if not reachable_by_others(python.parent):
        python = _relocated_python(prefix, version)
    home = python.parent
    venv, old = prefix / "venv", Path(sys.prefix)
    _link_tree(old, venv)
    config = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    lines = [f"home = {home}" if line.startswith("home") else line for line in config]
    _replace(venv / "pyvenv.cfg", "\n".join(lines) + "\n")
    for name in ("python", "python3", version):
        (venv / "bin" / name).unlink(missing_ok=True)
        (venv / "bin" / name).symlink_to(python)
    for script in (venv / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            text = script.read_bytes()
            if text.startswith(f"#!{old}/bin/".encode()):
                new = text.replace(f"#!{old}/bin/".encode(), f"#!{venv}/bin/".encode(), 1)
                _replace(script, new.decode("utf-8"), 0o755)
    site = venv / "lib" / version / "site-packages"
    for hook in site.glob("__editable__*autograd_course*"):
        hook.unlink()
    for package in _PACKAGES:
        skip = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / package, site / package, ignore=skip)
    etc = venv / "etc" / "jupyter"
    for source, target in [
        (DEPLOY / "nbgrader_config.py", etc / "nbgrader_config.py"),
        (LAB / "jupyter_server_config.json", etc / "jupyter_server_config.json"),
        (LAB / "labconfig" / "default_setting_overrides.json",
         etc / "labconfig" / "default_setting_overrides.json"),
    ]:  # fmt: skip
        target.parent.mkdir(parents=True, exist_ok=True)
        _replace(target, source.read_text(encoding="utf-8"))
    install_learner_settings(prefix)
    exchange = prefix / "exchange"
    exchange.mkdir(exist_ok=True)
    exchange.chmod(0o1777)
    return venv / "bin" / "python"
