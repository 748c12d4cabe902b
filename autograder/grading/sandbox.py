"""How a grading worker is started: inside bubblewrap, or, only when the instructor says so,
without any isolation.

The sandbox sees a read-only system, the Python environment and the two support packages
(``autograder``, ``gradgraph``); never the repository's ``solutions/``, the gradebook, the
grader's output or any submission (cells reach the worker only through its standard input). It
has no network, its own pid, ipc and uts namespaces, no capabilities, a private ``/tmp`` of
bounded size, a read-only ``/dev`` but for a private ``/dev/shm`` of bounded size, and a
cleared environment. When the grader runs as root, the worker runs as ``nobody``, so that the
process limit applies.

Example::

    >>> settings = SandboxSettings(kind="bwrap")
    >>> command = worker_command(settings, packages=[Path("/repo/autograder")])
    >>> command[:2], "--unshare-all" in command, command[-2:]
    (['bwrap', '--die-with-parent'], True, ['-m', 'autograder.grading.sandbox_worker'])
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "NOBODY",
    "SandboxSettings",
    "SandboxUnavailable",
    "find_sandbox",
    "run_as",
    "system_mounts",
    "worker_command",
    "worker_environment",
]

NOBODY = 65534
_SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
# Only what programs need from /etc: not /etc whole, which holds the machine's secrets.
_SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
)


class SandboxUnavailable(RuntimeError):
    """No working sandbox here; the message says how to install one or how to go without."""


@dataclass(frozen=True)
class SandboxSettings:
    """``kind`` is ``"bwrap"`` or ``"none"`` (no isolation: only when the instructor asks)."""

    kind: str = "bwrap"
    tmp_bytes: int = 256 * 2**20
    shm_bytes: int = 64 * 2**20

    @property
    def isolated(self) -> bool:
        return self.kind != "none"


def worker_command(settings: SandboxSettings, *, packages: Sequence[Path]) -> list[str]:
    """The command line that starts one worker under ``settings``."""
    python = [sys.executable, "-m", "autograder.grading.sandbox_worker"]
    if not settings.isolated:
        return python
    command = ["bwrap", "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
    command += ["--proc", "/proc", "--dev", "/dev"]
    # /dev is a tmpfs of no set size (memory), which every later submission of the worker
    # would see: read-only, but for a bounded /dev/shm of its own (emptied after each one)
    command += ["--size", str(settings.shm_bytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    # The kernel's settings and its SysRq trigger, read-only: a root uid without capabilities
    # could otherwise still write some of them.
    command += ["--ro-bind", "/proc/sys", "/proc/sys"]
    command += ["--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]
    command += ["--size", str(settings.tmp_bytes), "--tmpfs", "/tmp"]
    mounted = system_mounts()
    for path in mounted:
        command += ["--ro-bind", str(path), str(path)]
    for package in packages:
        command += ["--ro-bind", str(package), str(package)]
    command += [
        "--chdir",
        "/tmp",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "HOME",
        "/tmp",
    ]
    for name, value in _worker_environment().items():
        command += ["--setenv", name, value]
    return [*command, *python]


def system_mounts() -> list[Path]:
    """What a sandbox sees of this machine, read-only: the system's programs and libraries, the
    few files they need from /etc, and this Python environment."""
    mounted = [Path(p) for p in (*_SYSTEM_DIRS, *_SYSTEM_FILES) if Path(p).exists()]
    for prefix in {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}:
        if not any(prefix.is_relative_to(m) for m in mounted):
            mounted.append(prefix)
    return mounted


def worker_environment(settings: SandboxSettings) -> dict[str, str]:
    """The environment a worker starts with (bubblewrap clears it again inside)."""
    if settings.isolated:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return {"PATH": "/usr/bin:/bin", "HOME": "/tmp", **_worker_environment()}


def _worker_environment() -> dict[str, str]:
    return {
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
    }


def run_as() -> int | None:
    """The uid to start workers as: ``nobody`` when the grader runs as root and ``nobody`` can
    reach the Python environment; otherwise unchanged (the sandbox then still has no
    capabilities, and the worker caps the number of processes itself)."""
    if os.geteuid() != 0:
        return None
    needed = {Path(sys.prefix), Path(sys.base_prefix), Path(__file__).resolve().parent}
    return NOBODY if all(_open_to_others(path) for path in needed) else None


def _open_to_others(path: Path) -> bool:
    """Whether any user may walk down to ``path`` and read it."""
    return all(part.stat().st_mode & 5 for part in [path, *path.parents])


def find_sandbox() -> SandboxSettings:
    """Settings for bubblewrap, after proving that it starts here; else :class:`SandboxUnavailable`
    with the way to install it."""
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed, so learner code cannot be isolated. Install it "
            "(Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install "
            "bubblewrap), or pass --no-sandbox to grade WITHOUT isolation (learner code then runs "
            "with your rights, files and network)."
        )
    settings = SandboxSettings()
    probe = worker_command(settings, packages=[])[:-3] + ["/bin/true"]
    uid = run_as()
    result = subprocess.run(
        probe, capture_output=True, text=True, user=uid, group=uid, timeout=60, check=False
    )
    if result.returncode != 0:
        raise SandboxUnavailable(
            f"bubblewrap is installed but cannot start a sandbox here ({result.stderr.strip()}). "
            "Unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone"
            "=1, or an AppArmor rule for bwrap); or pass --no-sandbox to grade WITHOUT isolation."
        )
    return settings
