"""The grading worker: runs inside the sandbox, imports torch once, and runs each submission
in a forked child that executes the cells the grader sends, one at a time.

Started by :mod:`autograder.grading.worker_pool` as
``python -m autograder.grading.sandbox_worker``. It speaks JSON lines on its standard input
and output (:mod:`autograder.grading.channel`); what a cell prints goes nowhere. Per
submission:

1. the grader sends ``{"op": "job", "limits", "files", "learner"}``; the worker forks a child,
   which answers ``{"op": "started"}``;
2. the grader sends ``{"op": "cell", "index", "origin", "source", "hidden", "nonce"}`` and the
   child answers ``{"op": "done", "index", "nonce", "ok", "error", "records", "voided",
   "put_back"}`` (:mod:`autograder.grading.runner`); the next cell is sent only then, so a
   hidden test is nowhere in the process while the learner's code runs before it;
3. ``{"op": "end"}`` ends the child, which exits at once (no ``atexit`` handler, no finalizer
   runs); the worker kills whatever the child left behind, removes what it left in the
   sandbox's ``/tmp`` and ``/dev/shm`` and answers ``{"op": "exit", "status"}``.

Why the cells run here and not in an IPython kernel: with no IPython there are no input or AST
transformers and no run-cell machinery for a learner's cell to replace, and the grader compiles
every cell itself. Before the first job the worker imports what notebooks use, seals the
checks' and its own modules, takes the snapshot of what tests rely on and installs the audit
hook (:mod:`autograder.grading.guard`, :mod:`autograder.grading.audit`); in the child
``__main__`` is a blank module, so a notebook's ``import __main__`` finds nothing of the
worker's. The final decision is not taken here: the grader judges the records against the
solution's run (see :mod:`autograder.grading.scoring`).

Example (a job's limits)::

    >>> sorted(_LIMITS)
    ['cpu_seconds', 'file_bytes', 'memory_bytes', 'open_files', 'processes']
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import stat
import sys
import tempfile
import time
import types

__all__ = ["main"]

os.environ.setdefault("MPLBACKEND", "Agg")

_LIMITS = {
    "memory_bytes": resource.RLIMIT_AS,
    "cpu_seconds": resource.RLIMIT_CPU,
    "file_bytes": resource.RLIMIT_FSIZE,
    "open_files": resource.RLIMIT_NOFILE,
    "processes": resource.RLIMIT_NPROC,
}
_SEALED = (
    "autograder.checks",
    "autograder.grading.audit",
    "autograder.grading.channel",
    "autograder.grading.checkpoints",
    "autograder.grading.delivery",
    "autograder.grading.guard",
    "autograder.grading.runner",
    "autograder.grading.stack",
)


def _apply_limits(limits: dict[str, int]) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, value in limits.items():
        if name in _LIMITS and value:
            resource.setrlimit(_LIMITS[name], (value, value))


def _in_sandbox() -> bool:
    """Whether this worker runs in the sandbox's own pid namespace, where it is pid 1 or 2 (its
    ``/proc`` and ``/tmp`` are the sandbox's alone)."""
    return os.getpid() <= 2


def _kill_strays(child: int) -> None:
    """Kill what the submission left running: its process group, and, inside the sandbox's own
    pid namespace (where this worker is pid 1 or 2), every process but init and this worker.

    There, one ``kill(-1, SIGKILL)`` reaches them all at once: the kernel hands a process that
    is forking the signal for its child too, whereas killing them one by one from a list of
    ``/proc`` misses a child forked after the list was read (a process that forks and exits
    in a loop, or leaves its process group, outlives such a list, and would read the next
    submission's cells, hidden tests included, from this worker's input). It is repeated until
    nothing but zombies is left, a bounded number of times."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child, signal.SIGKILL)
    if not _in_sandbox():
        return
    for _ in range(100):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(-1, signal.SIGKILL)  # every process of the namespace but init and this one
        if not _living_strays():
            return
        time.sleep(0.001)


def _living_strays() -> list[int]:
    """The processes of the sandbox's pid namespace other than init and this worker that are
    not zombies (a zombie runs nothing; its parent, or init, reaps it)."""
    mine = {1, os.getpid()}
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in mine:
            with contextlib.suppress(OSError), open(f"/proc/{entry}/stat", "rb") as stat:
                if stat.read().rpartition(b")")[2].split()[:1] != [b"Z"]:
                    found.append(int(entry))
    return found


# The sandbox's writable places (tmpfs mounts of its own, bounded): what a submission leaves there
# is taken away before the next one runs.
_WRITABLE = ("/dev/shm",)
State = dict[str, tuple[int, int, int, int]]


def _writable_places() -> list[str]:
    return [tempfile.gettempdir(), *(place for place in _WRITABLE if os.path.isdir(place))]


def _state() -> State:
    """Inside the sandbox, every path under its writable places (its ``/tmp``, ``/dev/shm``)
    with its :func:`_signature`, links not followed.
    Taken before the first submission: the caches torch and matplotlib made there then."""
    if not _in_sandbox():  # outside a sandbox the temporary folder is everyone's
        return {}
    found: State = {}
    pending = _writable_places()
    while pending:
        path = pending.pop()
        with contextlib.suppress(OSError):
            facts = os.lstat(path)
            found[path] = _signature(facts)
            if stat.S_ISDIR(facts.st_mode):
                pending += [os.path.join(path, entry) for entry in os.listdir(path)]
    return found


def _signature(facts: os.stat_result) -> tuple[int, int, int, int]:
    """What tells a change of a path: ``(mode, inode, size, modification time)``."""
    return facts.st_mode, facts.st_ino, facts.st_size, facts.st_mtime_ns


def _clear_temp(kept: State) -> None:
    """Inside the sandbox, take away what a submission left in its writable places, at any
    depth (inside the folders that were there before the first submission too: caches), and
    every file that was there but changed since (``kept``: :func:`_state` then), so that the
    next submission this worker runs finds nothing of it, and all the room there is its own.
    A folder is made writable again first (a submission may have taken its own rights away)."""
    if not kept:
        return
    pending = _writable_places()
    while pending:
        path = pending.pop()
        try:
            facts = os.lstat(path)
        except OSError:
            continue
        now = _signature(facts)
        was = kept.get(path)
        if stat.S_ISDIR(facts.st_mode) and was is not None and stat.S_ISDIR(was[0]):
            if now[0] != was[0] or not os.access(path, os.R_OK | os.W_OK | os.X_OK):
                with contextlib.suppress(OSError):
                    os.chmod(path, stat.S_IMODE(was[0]) | stat.S_IRWXU)
            with contextlib.suppress(OSError):
                pending += [os.path.join(path, entry) for entry in os.listdir(path)]
            with contextlib.suppress(OSError):
                os.chmod(path, stat.S_IMODE(was[0]))
        elif was != now:
            _remove(path, facts)


def _remove(path: str, facts: os.stat_result) -> None:
    """Remove ``path`` (a folder with all it holds, whatever rights the submission left it)."""
    if not stat.S_ISDIR(facts.st_mode):
        with contextlib.suppress(OSError):
            os.remove(path)
        return
    folders = [path]
    index = 0
    while index < len(folders):  # every folder below, made readable and writable
        with contextlib.suppress(OSError):
            os.chmod(folders[index], stat.S_IRWXU)
        with contextlib.suppress(OSError), os.scandir(folders[index]) as entries:
            folders += [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        index += 1
    shutil.rmtree(path, ignore_errors=True)


def _wait(child: int, most_processes: int) -> int:
    """Wait for the child; inside the sandbox's pid namespace, also stop it as soon as the
    namespace holds more than ``most_processes`` processes (a fork bomb), whatever the uid."""
    watch = most_processes > 0 and _in_sandbox()
    while True:
        pid, status = os.waitpid(child, os.WNOHANG if watch else 0)
        if pid:
            return status
        if sum(entry.isdigit() for entry in os.listdir("/proc")) > most_processes:
            _kill_strays(child)
        time.sleep(0.02)


def _place_files(folder: str, files: object) -> None:
    """Write the files the grader sends (the notebook's record of first predictions) into the
    submission's working folder, each under a plain name of its own."""
    for name, text in (files if isinstance(files, dict) else {}).items():
        if isinstance(text, str) and name and name == os.path.basename(name) and name[0] != ".":
            with open(os.path.join(folder, name), "x", encoding="utf-8") as stream:
                stream.write(text)


def _preload() -> None:
    import matplotlib.pyplot  # noqa: F401  (imported once here, not per submission)
    import torch

    # forward AD and torch.func import it on first use, and TorchScript reads frames to build it
    import torch._decomp.decompositions_for_jvp  # noqa: F401
    import torch._dynamo  # noqa: F401  (optimizers import it lazily, reading frames)
    import torch._functorch.predispatch
    import torch.optim  # noqa: F401

    import autograder.checks  # noqa: F401
    import autograder.checks.live  # noqa: F401
    import autograder.grading.checkpoints  # noqa: F401
    import autograder.grading.runner  # noqa: F401
    import gradgraph  # noqa: F401
    import gradgraph.player  # noqa: F401  (ipywidgets reads frames as it sets up its classes)
    from autograder.grading import stack
    from autograder.grading.guard import seal
    from autograder.i18n import load_catalogs

    stack.install()  # traceback's stack readers hand frames to replaceable functions

    load_catalogs()  # a translated notebook's checks speak its language (autograder.i18n)

    # torch.func's vmap registers its decompositions (a torch.library.Library) on first use;
    # the guard withdraws the library maker before any notebook runs
    torch._functorch.predispatch.lazy_load_decompositions()
    torch.set_num_threads(1)
    for name, module in list(sys.modules.items()):
        if module is not None and name.startswith(_SEALED):
            seal(module)


def main() -> None:
    reading, writing = os.dup(0), os.dup(1)
    quiet = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(quiet, descriptor)
    sys.path[:] = [entry for entry in sys.path if entry not in ("", os.getcwd())]
    _preload()
    from autograder.grading.audit import install_audit_hook
    from autograder.grading.channel import open_channel
    from autograder.grading.checkpoints import take_watch
    from autograder.grading.guard import settle_optimizers, take_snapshot, withdraw_unaudited
    from autograder.grading.pinning import classes_tests_hand_over, pin_methods
    from autograder.grading.runner import make_runner

    receive, send = open_channel(reading, writing)
    sys.modules["__main__"] = types.ModuleType("__main__")
    withdrawn = withdraw_unaudited()  # before the snapshot: putting back never restores them
    settle_optimizers()  # torch wraps each optimizer class's step once: before it is pinned
    pin_methods(classes_tests_hand_over())  # no tensor, module or record hides its methods
    put_back = take_snapshot(withdrawn)
    watch = take_watch()  # what the checks read, looked at again each time one begins
    arm = install_audit_hook()
    leave = os._exit
    send({"op": "ready", "pid": os.getpid()})
    kept = _state()
    while (message := receive()) is not None and message["op"] == "job":
        scratch = tempfile.mkdtemp(prefix="submission-")
        _place_files(scratch, message.get("files"))
        run = make_runner(
            receive, send, put_back, arm, learner=message.get("learner") is not False, watch=watch
        )
        child = os.fork()
        if child == 0:
            os.setsid()
            os.chdir(scratch)
            os.environ["HOME"] = scratch
            _apply_limits(message.get("limits", {}))
            try:
                run()
            finally:
                leave(0)
        status = _wait(child, message.get("limits", {}).get("processes", 0))
        _kill_strays(child)
        shutil.rmtree(scratch, ignore_errors=True)
        _clear_temp(kept)
        send({"op": "exit", "status": status})


if __name__ == "__main__":
    main()
