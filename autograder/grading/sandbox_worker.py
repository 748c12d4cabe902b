"""The grading worker: runs inside the sandbox, imports torch once, and runs each submission
in a forked child that executes the cells the grader sends, one at a time.

Started by :mod:`autograder.grading.worker_pool` as
``python -m autograder.grading.sandbox_worker``. It speaks JSON lines on its standard input
and output; what a cell prints goes nowhere. Per submission:

1. the grader sends ``{"op": "job", "limits": {...}}``; the worker forks a child, which answers
   ``{"op": "started"}``;
2. the grader sends ``{"op": "cell", "index", "origin", "source", "hidden", "nonce"}`` and the
   child answers ``{"op": "done", "index", "nonce", "ok", "error", "records", "hidden_from"}``;
   the next cell is sent only then, so a hidden test is nowhere in the process while the
   learner's code runs before it;
3. ``{"op": "end"}`` ends the child; the worker kills whatever the child left behind and
   answers ``{"op": "exit", "status"}``.

Why the cells run here and not in an IPython kernel: with no IPython there are no input or AST
transformers and no run-cell machinery for a learner's cell to replace, and the grader compiles
every cell itself. Before each test cell the runner puts back what tests rely on (builtins,
torch's and the course's modules, the check helpers' defaults); from the first learner cell on,
an audit hook refuses what could reach past that (frames, the garbage collector's object lists,
ctypes, new audit hooks, tracing, signals to other processes, subprocesses). Each test cell gets
its own copy of the notebook's globals, so the learner's functions cannot read a hidden test's
variables through ``globals()``. The final decision is not taken here: the grader judges the
records again (see :mod:`autograder.checks.rules`).

Example (the message shapes)::

    >>> json.loads(_encode({"op": "started"}))
    {'op': 'started'}
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

__all__ = ["main"]

os.environ.setdefault("MPLBACKEND", "Agg")
# The grading machinery, bound before any learner code runs (a learner's later replacement of
# these modules in sys.modules changes nothing here).
from autograder.checks import CheckFailed, send_records_to  # noqa: E402
from autograder.checks.evidence import type_label  # noqa: E402
from autograder.checks.messages import whole_message, wrapped  # noqa: E402

_PROTECTED = ("autograder", "torch", "gradgraph", "builtins", "math", "warnings")
_REFUSED_EVENTS = frozenset(
    {
        "sys.addaudithook",
        "sys.settrace",
        "sys.setprofile",
        "sys._getframe",
        "sys._current_frames",
        "sys._current_exceptions",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "os.kill",
        "os.killpg",
        "signal.pthread_kill",
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "pty.spawn",
    }
)
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_FUNCTION_INTERNALS = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__globals__"})
_LIMITS = {
    "memory_bytes": resource.RLIMIT_AS,
    "cpu_seconds": resource.RLIMIT_CPU,
    "file_bytes": resource.RLIMIT_FSIZE,
    "open_files": resource.RLIMIT_NOFILE,
    "processes": resource.RLIMIT_NPROC,
}


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, allow_nan=False).encode("utf-8") + b"\n"


class _Channel:
    """JSON lines on two file descriptors that no cell's print can reach."""

    def __init__(self, reading: int, writing: int) -> None:
        self._reader = os.fdopen(reading, "rb", buffering=0)
        self._writing = writing

    def receive(self) -> dict[str, Any] | None:
        line = bytearray()
        while not line.endswith(b"\n"):
            chunk = self._reader.read(1)
            if not chunk:
                return None
            line += chunk
        return json.loads(line)

    def send(self, message: dict[str, Any]) -> None:
        data = _encode(message)
        while data:
            data = data[os.write(self._writing, data) :]


class _Snapshot:
    """What test cells rely on, taken before any learner code ran, and put back on demand."""

    def __init__(self) -> None:
        self._builtins = dict(vars(builtins))
        self._modules = {
            name: module
            for name, module in sys.modules.items()
            if name.split(".")[0] in _PROTECTED and module is not None
        }
        self._namespaces = {
            name: dict(vars(module))
            for name, module in self._modules.items()
            if name.split(".")[0] in ("autograder", "math")
            or name in ("torch", "torch.nn", "torch.nn.functional", "torch.autograd")
        }
        self._contents = {
            id(value): (value, value.copy())
            for name, namespace in self._namespaces.items()
            if name.startswith("autograder")
            for value in namespace.values()
            if type(value) in (dict, list, set)
        }
        self._functions = {
            function: (function.__defaults__, function.__kwdefaults__)
            for name, namespace in self._namespaces.items()
            if name.startswith("autograder")
            for function in namespace.values()
            if type(function).__name__ == "function"
        }
        self._path = list(sys.path)
        self._meta_path = list(sys.meta_path)

    def restore(self) -> None:
        _put_back(vars(builtins), self._builtins)
        for name, module in self._modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
        for name, namespace in self._namespaces.items():
            _put_back(vars(self._modules[name]), namespace, keep_new=True)
        for container, saved in self._contents.values():
            if type(container) is list:
                container[:] = saved
            else:
                container.clear()
                container.update(saved)
        for function, (defaults, kwdefaults) in self._functions.items():
            function.__defaults__, function.__kwdefaults__ = defaults, kwdefaults
        sys.path[:] = self._path
        sys.meta_path[:] = self._meta_path
        sys.settrace(None)
        sys.setprofile(None)


def _put_back(current: dict[str, Any], saved: dict[str, Any], *, keep_new: bool = False) -> None:
    if not keep_new:
        for key in [key for key in current if key not in saved]:
            del current[key]
    for key, value in saved.items():
        if current.get(key, _put_back) is not value:
            current[key] = value


def _frame_readers() -> frozenset[Any]:
    """Library functions allowed to call ``sys._getframe``: each returns a name or a line,
    never a frame, so a learner calling them learns nothing about the grader."""
    import collections
    import enum
    import traceback
    import typing

    import torch.library
    import typing_extensions

    import gradgraph.source

    functions = [
        getattr(typing, "_caller", None),
        getattr(typing_extensions, "_caller", None),
        getattr(typing_extensions, "_has_generic_or_protocol_as_origin", None),
        collections.namedtuple,
        getattr(enum.EnumType, "_create_", None),
        traceback.format_stack,
        traceback.extract_stack,
        traceback.print_stack,
        torch.library.Library.__init__,
        gradgraph.source.user_source_line,
    ]
    return frozenset(function.__code__ for function in functions if function is not None)


def _install_audit_hook() -> Callable[[bool], None]:
    """Install the hook that refuses escapes while armed; returns the switch that arms it."""
    state = {"armed": False, "inside": False}
    readers = _frame_readers()
    get_frame = sys._getframe

    def frame_reader_calls() -> bool:
        state["inside"] = True
        try:
            return get_frame(2).f_code in readers
        finally:
            state["inside"] = False

    def hook(event: str, arguments: tuple[Any, ...]) -> None:
        if not state["armed"] or state["inside"]:
            return
        if event == "sys._getframe" and frame_reader_calls():
            return
        if event in _REFUSED_EVENTS or event.startswith("ctypes."):
            raise RuntimeError(f"the grading sandbox does not allow {event}")
        if event == "object.__getattr__" and arguments[1] in _FRAME_ATTRIBUTES:
            raise RuntimeError("the grading sandbox does not allow reading frames")
        if event == "object.__setattr__" and arguments[1] in _FUNCTION_INTERNALS:
            module = getattr(arguments[0], "__module__", None) or ""
            if module.split(".")[0] in _PROTECTED:
                raise RuntimeError("the grading sandbox does not allow patching library code")

    sys.addaudithook(hook)

    def arm(armed: bool) -> None:
        state["armed"] = armed

    return arm


def _describe_error(error: BaseException) -> str:
    if type(error) is CheckFailed:
        return str(error)
    text = whole_message(error) if isinstance(error, Exception) else repr(error.args)[:200]
    return wrapped(f"{type_label(type(error))}: {text}")[:2000]


class _Runner:
    """Runs one submission's cells in the forked child."""

    def __init__(self, channel: _Channel, snapshot: _Snapshot, arm: Callable[[bool], None]):
        self._channel = channel
        self._snapshot = snapshot
        self._arm = arm
        self._namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        self._learner_started = False

    def run(self) -> None:
        self._channel.send({"op": "started"})
        while (message := self._channel.receive()) is not None and message["op"] == "cell":
            self._channel.send(self._run_cell(message))

    def _run_cell(self, cell: dict[str, Any]) -> dict[str, Any]:
        origin = cell["origin"]
        learner_code = origin in ("answer", "added")
        self._learner_started = self._learner_started or learner_code
        records: list[dict[str, Any]] = []
        hidden_from = None
        if origin == "test":
            self._arm(False)
            self._snapshot.restore()
            namespace = dict(self._namespace)
        else:
            namespace = self._namespace
        self._arm(self._learner_started and origin != "course")
        error = None
        try:
            with send_records_to(records.append):
                exec(compile(cell["source"], f"<cell {cell['index']}>", "exec"), namespace)
                hidden_from = len(records)
                if cell.get("hidden"):
                    exec(compile(cell["hidden"], f"<cell {cell['index']}>", "exec"), namespace)
        except BaseException as raised:  # a cell may raise anything, SystemExit included
            error = _describe_error(raised)
        finally:
            self._arm(False)
        return {
            "op": "done",
            "index": cell["index"],
            "nonce": cell["nonce"],
            "ok": error is None,
            "error": error,
            "records": records,
            "hidden_from": hidden_from,
        }


def _apply_limits(limits: dict[str, int]) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, value in limits.items():
        if name in _LIMITS and value:
            resource.setrlimit(_LIMITS[name], (value, value))


def _kill_strays(child: int) -> None:
    """Kill what the submission left running: its process group, and, inside the sandbox's own
    pid namespace (where this worker is pid 1 or 2), every process but init and this worker."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child, signal.SIGKILL)
    if os.getpid() > 2:
        return
    mine = {1, os.getpid()}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in mine:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry), signal.SIGKILL)


def _wait(child: int, most_processes: int) -> int:
    """Wait for the child; inside the sandbox's pid namespace, also stop it as soon as the
    namespace holds more than ``most_processes`` processes (a fork bomb), whatever the uid."""
    watch = most_processes > 0 and os.getpid() <= 2
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
    import torch._dynamo  # noqa: F401  (optimizers import it lazily, reading frames)
    import torch.optim  # noqa: F401

    import autograder.checks  # noqa: F401
    import autograder.checks.live  # noqa: F401
    import gradgraph  # noqa: F401

    torch.set_num_threads(1)


def main() -> None:
    channel = _Channel(os.dup(0), os.dup(1))
    quiet = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(quiet, descriptor)
    sys.path[:] = [entry for entry in sys.path if entry not in ("", os.getcwd())]
    _preload()
    snapshot = _Snapshot()
    arm = _install_audit_hook()
    channel.send({"op": "ready", "pid": os.getpid()})
    while (message := channel.receive()) is not None and message["op"] == "job":
        scratch = tempfile.mkdtemp(prefix="submission-")
        _place_files(scratch, message.get("files"))
        child = os.fork()
        if child == 0:
            os.setsid()
            os.chdir(scratch)
            os.environ["HOME"] = scratch
            _apply_limits(message.get("limits", {}))
            try:
                _Runner(channel, snapshot, arm).run()
            finally:
                os._exit(0)
        status = _wait(child, message.get("limits", {}).get("processes", 0))
        _kill_strays(child)
        shutil.rmtree(scratch, ignore_errors=True)
        channel.send({"op": "exit", "status": status})


if __name__ == "__main__":
    main()
