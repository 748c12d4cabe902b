"""The audit hook of the grading worker: once armed (from the first learner cell), it refuses
what could reach past the rest of the guard, for as long as the child lives.

Refused: frames (``sys._getframe`` and the frame attributes of tracebacks, generators and
coroutines), the garbage collector's object lists, ctypes and the other ways to native code
(cffi, CPython's test modules, subinterpreters, a compiled library the notebook wrote), a
process's memory (``/proc/self/mem``, which reads and writes anything, the hook's own state
included), new audit hooks, tracing and profiling, signals to other processes, subprocesses,
patching the code, defaults or globals of a library function, and giving a module, a class or
an object of a library class a class of the notebook's (``sys.__class__ = Mine``: the worker's
own ``sys.stdout = ...`` would run the notebook's code at each cell's start and end, before the
guard looks; a test's parameter given a subclass that answers ``detach`` as it likes).

A few library functions may read a frame: each returns only a name or plain data, and hands
the frame to nothing a notebook could replace (a copy of one made with the notebook's own
globals or defaults hands out nothing either). The standard library's stack readers are not
among them (they pass each frame to replaceable functions): the worker puts
:mod:`autograder.grading.stack`'s in their place. Nor is code that reads a frame through
``inspect.currentframe`` (torch's TorchScript name resolution gives a notebook the names in
any caller's frame): the worker loads what torch builds with it before the hook is armed.
What hands over frames or runs programs without an audit event (signal handlers,
TorchDynamo's frame callbacks, ``_posixsubprocess.fork_exec``) is withdrawn by
:func:`autograder.grading.guard.withdraw_unaudited`.

Example::

    >>> "sys.settrace" in REFUSED_EVENTS, "gc.get_objects" in REFUSED_EVENTS
    (True, True)
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable
from importlib.machinery import EXTENSION_SUFFIXES
from typing import Any

__all__ = ["NATIVE_ACCESS", "PROTECTED", "REFUSED_EVENTS", "install_audit_hook"]

PROTECTED = ("autograder", "torch", "gradgraph", "builtins", "math", "warnings", "__main__")
REFUSED_EVENTS = frozenset(
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
        "cpython.PyInterpreterState_New",  # a subinterpreter has no audit hook of ours
        "os.symlink",  # a link named otherwise, opened relative to a directory descriptor
    }
)
# Modules that call native code with no audit event (as ctypes would with one): importing one
# is refused once armed (the worker loads none of them before)
NATIVE_ACCESS = frozenset(
    {"_cffi_backend", "cffi", "_testcapi", "_testinternalcapi", "_xxsubinterpreters"}
)
# Files that are a process's memory (``/proc/<pid>/mem``) or the machine's: read or written,
# they reach everything the rest of the guard keeps out of reach
_MEMORY_FILES = frozenset({"mem", "kmem", "kcore"})
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_FUNCTION_INTERNALS = frozenset({"__code__", "__defaults__", "__kwdefaults__", "__globals__"})


def _frame_readers() -> frozenset[Any]:
    """Library functions allowed to call ``sys._getframe``: each returns a name or plain data
    read off the frames, never a frame, and calls nothing with one, so a learner calling them
    learns nothing about the grader."""
    import collections
    import enum
    import typing

    import torch.library
    import typing_extensions

    from autograder.checks.gradients import _ledger
    from autograder.grading.delivery import collect
    from autograder.grading.stack import stack_entries

    functions = [
        getattr(typing, "_caller", None),
        getattr(typing_extensions, "_caller", None),
        getattr(typing_extensions, "_has_generic_or_protocol_as_origin", None),
        collections.namedtuple,
        getattr(enum.EnumType, "_create_", None),
        torch.library.Library.__init__,
        stack_entries,
        collect,
        _ledger,
    ]
    return frozenset(function.__code__ for function in functions if function is not None)


def _refused_import(
    arguments: tuple[Any, ...], installed: tuple[str, ...], suffixes: tuple[str, ...]
) -> bool:
    """Whether an ``import`` event loads native code a notebook must not reach: one of
    :data:`NATIVE_ACCESS` (by the last part of the name it is loaded under, which finds an
    extension's init function, or by its file's name), or an extension module (a file ending
    in one of ``suffixes``) from outside the ``installed`` folders (a compiled library the
    notebook wrote itself).

    >>> places = ("/usr/lib/python3.11/",), (".so",)
    >>> _refused_import(("pkg._cffi_backend", None), *places)
    True
    >>> _refused_import(("plain", "/usr/lib/python3.11/_testcapi.cpython-311.so"), *places)
    True
    >>> _refused_import(("evil", "/tmp/submission-1/evil.so"), *places)
    True
    >>> _refused_import(("json", "/usr/lib/python3.11/json/__init__.py"), *places)
    False
    """
    name, filename = str(arguments[0]), str(arguments[1]) if len(arguments) > 1 else ""
    stem = filename.rsplit("/", 1)[-1].split(".")[0]
    if name.rpartition(".")[2] in NATIVE_ACCESS or stem in NATIVE_ACCESS:
        return True
    return filename.endswith(suffixes) and not filename.startswith(installed)


def _memory_file(name: str, realpath: Callable[[str], str]) -> bool:
    """Whether opening the file ``name`` opens a memory file, by its own name (a path relative
    to a directory descriptor names no directory) or by the name of what it links to.

    >>> import os.path
    >>> _memory_file("/proc/self/mem", os.path.realpath), _memory_file("task/1/mem", str)
    (True, True)
    >>> _memory_file("/tmp/notes.txt", os.path.realpath)
    False
    """
    if name.rpartition("/")[2] in _MEMORY_FILES:
        return True
    try:
        return realpath(name).rpartition("/")[2] in _MEMORY_FILES
    except (ValueError, OSError):  # not a path: open refuses it itself
        return False


def _plain_paths() -> Callable[[Any], bool]:
    """What tells a path the hook reads as ``open`` will: a str, bytes or ``os.DirEntry``
    (its type, by identity). A pathlib path or another object's ``__fspath__`` is Python code
    a notebook can change, to give one name to the hook and another to ``open``.

    >>> import pathlib
    >>> plain = _plain_paths()
    >>> plain("/tmp/a"), plain(b"/tmp/a"), plain(pathlib.Path("/tmp/a"))
    (True, True, False)
    """
    type_ = type
    text, raw, entry = str, bytes, os.DirEntry

    def plain(path: Any) -> bool:
        kind = type_(path)
        return kind is text or kind is raw or kind is entry

    return plain


def _library_classes() -> tuple[type, ...]:
    """Every class in the namespaces of the modules loaded now (the standard library's, torch's,
    the course's: in the worker, before any notebook runs), each once."""
    found: dict[int, type] = {}
    for module in list(sys.modules.values()):
        if isinstance(module, types.ModuleType):
            for value in list(vars(module).values()):
                if isinstance(value, type):
                    found[id(value)] = value
    return tuple(found.values())


def install_audit_hook() -> Callable[[], None]:
    """Install the hook that refuses escapes once armed; returns the function that arms it
    (for good: nothing disarms it)."""
    state = {"armed": False, "inside": False}
    readers = _frame_readers()
    get_frame = sys._getframe
    refused, frames, internals = REFUSED_EVENTS, _FRAME_ATTRIBUTES, _FUNCTION_INTERNALS
    refused_import, memory_file = _refused_import, _memory_file
    # the hook's own references: a notebook may replace os.fspath or os.path's functions (the
    # file is opened with the real ones), never these
    fspath, realpath, type_, int_, bytes_ = os.fspath, os.path.realpath, type, int, bytes
    plain_paths = _plain_paths()
    installed = tuple(
        os.path.join(os.path.realpath(prefix), "")
        for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    )
    suffixes = tuple(EXTENSION_SUFFIXES)  # a copy: a notebook can empty importlib's list
    protected, getattr_, str_ = PROTECTED, getattr, str
    kept_alive = _library_classes()  # (held, so that no id of theirs is reused)
    library, id_, issubclass_ = frozenset(map(id, kept_alive)), id, issubclass
    changes_class = (types.ModuleType, type)  # a module, or a class (its metaclass)

    def caller() -> Any:
        """The code that asked for a frame."""
        state["inside"] = True
        try:
            return get_frame(2).f_code
        finally:
            state["inside"] = False

    def hook(event: str, arguments: tuple[Any, ...]) -> None:
        if not state["armed"] or state["inside"]:
            return
        if event == "sys._getframe":
            code = caller()
            if code in readers:
                return
            raise RuntimeError(
                f"the grading sandbox does not allow sys._getframe (called by {code.co_name})"
            )
        if event in refused or event.startswith("ctypes."):
            raise RuntimeError(f"the grading sandbox does not allow {event}")
        if event == "open" and type_(arguments[0]) is not int_:  # an int: a descriptor
            path = arguments[0]
            if not plain_paths(path):
                raise RuntimeError("the grading sandbox opens files by str or bytes paths only")
            name = fspath(path)
            if type_(name) is bytes_:
                name = name.decode("utf-8", "surrogateescape")
            if memory_file(name, realpath):
                raise RuntimeError("the grading sandbox does not allow opening a process's memory")
        if event == "import" and refused_import(arguments, installed, suffixes):
            raise RuntimeError(f"the grading sandbox does not allow importing {arguments[0]}")
        if event == "object.__getattr__" and arguments[1] in frames:
            raise RuntimeError("the grading sandbox does not allow reading frames")
        if event == "object.__setattr__" and arguments[1] in internals:
            module = getattr_(arguments[0], "__module__", None) or ""
            if str_.split(module, ".")[0] in protected:
                raise RuntimeError("the grading sandbox does not allow patching library code")
        if event == "object.__setattr__" and arguments[1] == "__class__":
            owner = type_(arguments[0])  # (read by type alone: no code of the object's runs)
            if id_(arguments[2]) not in library and (
                issubclass_(owner, changes_class) or id_(owner) in library
            ):
                raise RuntimeError(
                    "the grading sandbox does not allow giving a module, a class or a library "
                    "object a class of the notebook's"
                )

    sys.addaudithook(hook)

    def arm() -> None:
        state["armed"] = True

    return arm
