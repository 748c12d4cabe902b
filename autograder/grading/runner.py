"""Run one submission's cells in the worker's forked child, as the grader sends them.

:func:`make_runner` is called before any learner code runs; everything the runner calls
afterwards is bound then (as default arguments and closure variables), so no later patch of a
module, a class or the builtins reaches it. Per cell:

* from the first learner cell on, the audit hook is armed, and it stays armed;
* before each of the instructor's cells, :func:`autograder.grading.guard.take_snapshot`'s
  ``put_back`` restores what tests rely on (what it had to put back is reported with the next
  test cell, for the instructor's review); before a test cell, torch's, Python's and NumPy's
  random generators are also seeded alike in every run (the solution's and each learner's),
  and the test gets its own copy of the notebook's globals, in which every name an
  instructor's cell bound (``torch``, ``nn``, ``device``, a model it made) is what that cell
  bound, whatever a learner's cell rebound it to, and the builtins are a copy of Python's own
  that no notebook's code holds (a notebook's ``__builtins__`` would hand its ``__import__``
  the test's globals; the ``builtins`` module's could be changed for a moment by the function
  a test calls);
* while a test runs, each of its checks says when it begins and when the learner's code it
  called returns, and its sink looks then at what the checks read
  (:mod:`autograder.grading.checkpoints`): a change seen there voids the item even if the
  notebook changes it back before the test ends; the checks' tables of sinks are filled and
  emptied here with bound list operations, so that nothing the notebook can replace runs
  between the test's last line and the guard's look;
* the test's own globals and its copy of the builtins are looked at then too
  (:func:`autograder.grading.checkpoints.watch_test_scope`): a function or class the test
  defines holds them, and the test hands such functions to the notebook's code (a hook, a
  module): a builtin of the test's changed, a name the test never binds changed or added, or
  anything in its globals changed while the learner's code a check called ran, voids the item;
* after every cell, before anything is looked up, ``put_back(strays_only=True)`` takes out
  of the namespaces the checks use any key that is not a plain string (one hashed as a name
  runs the notebook's code at each lookup of that name); a test cell that left one earns
  nothing;
* a learner run sends its checks without the expected values its process computed; a test's
  records are taken only from the checks its own code called (see
  :mod:`autograder.grading.delivery`: anything else handing one over voids the item);
* after a test cell the state is checked again, before anything the notebook could have
  changed is called (the streams that caught its output included, whose methods could put
  back what the notebook changed): what changed while the test ran, or a thread the notebook
  started that is still running, voids the item, with the reason;
* what the cell prints (``sys.stdout`` and ``sys.stderr``, the first :data:`OUTPUT_CHARS`
  characters of each) is sent back for display in the autograded notebook: it never decides a
  point, since a notebook may print anything.

Example (the reply's shape)::

    >>> sorted(reply(3, "n", True, None, [], [], []))
    ['error', 'index', 'nonce', 'ok', 'op', 'output', 'put_back', 'records', 'voided']
    >>> shown = Output(limit=5)
    >>> shown.write("hello, world")
    12
    >>> shown.text().splitlines()
    ['hello', '… (output cut after 5 characters)']
"""

from __future__ import annotations

import builtins
import random
import sys
import types
from _thread import _count as _thread_count
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import torch

from autograder.checks import CheckFailed
from autograder.checks import records as check_records
from autograder.checks.evidence import type_label
from autograder.checks.messages import whole_message, wrapped
from autograder.checks.records import LEARNER_CALLED, LEARNER_RETURNED
from autograder.grading.checkpoints import names_bound_by, watch_test_scope
from autograder.grading.delivery import cell_code, checks_code, collect

__all__ = ["OUTPUT_CHARS", "Output", "make_runner", "reply"]

TEST_SEED = 20260
_MAX_NAMES = 20
OUTPUT_CHARS = 20_000
_CUT = "\n… (output cut after {limit} characters)"


class Output:
    """A stream that keeps the first ``limit`` characters written to it (what a cell prints,
    shown in the autograded notebook; display only)."""

    def __init__(self, limit: int = OUTPUT_CHARS) -> None:
        self._parts: list[str] = []
        self._size = 0
        self._limit = limit
        self._cut = False

    def write(self, text: str) -> int:
        text = str.__str__(text) if isinstance(text, str) else ""
        written = len(text)
        room = self._limit - self._size
        if written > room:
            self._cut = True
            text = text[: max(room, 0)]
        self._parts.append(text)
        self._size += len(text)
        return written

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        shown = "".join(self._parts)
        return shown + (_CUT.format(limit=self._limit) if self._cut else "")


def reply(
    index: int,
    nonce: str,
    ok: bool,
    error: str | None,
    records: list[dict[str, Any]],
    voided: list[str],
    put_back: list[str],
    output: tuple[str, str] = ("", ""),
) -> dict[str, Any]:
    """The ``done`` message for one cell; ``output``: what it printed to stdout and stderr."""
    return {
        "op": "done",
        "index": index,
        "nonce": nonce,
        "ok": ok,
        "error": error,
        "records": records,
        "voided": voided,
        "put_back": put_back,
        "output": list(output),
    }


def describe_error(
    error: BaseException,
    _type=type,
    _failed=CheckFailed,
    _str=str,
    _repr=repr,
    _isinstance=isinstance,
    _exception=Exception,
    _whole=whole_message,
    _wrapped=wrapped,
    _label=type_label,
) -> str:
    """What a cell's exception says, for the feedback (read without calling the notebook's
    code where it can be avoided)."""
    if _type(error) is _failed:
        return _str(error)
    text = _whole(error) if _isinstance(error, _exception) else _repr(error.args)[:200]
    return _wrapped(f"{_label(_type(error))}: {text}")[:2000]


def _seeders() -> list[Callable[[], Any]]:
    seeders: list[Callable[[], Any]] = [
        lambda seed=torch.manual_seed: seed(TEST_SEED),
        lambda seed=random.seed: seed(TEST_SEED),
    ]
    try:
        import numpy
    except ImportError:  # numpy is optional for torch
        return seeders
    return [*seeders, lambda seed=numpy.random.seed: seed(TEST_SEED)]


def make_runner(
    receive: Callable[[], dict[str, Any] | None],
    send: Callable[[dict[str, Any]], None],
    put_back: Callable[[], list[str]],
    arm: Callable[[], None],
    *,
    learner: bool,
    watch: Callable[[], list[str]] = lambda: [],
) -> Callable[[], None]:
    """The child's loop: answer ``started``, then run each ``cell`` message until ``end``.
    ``watch()``: what differs in the state the checks read (see
    :mod:`autograder.grading.checkpoints`), looked at each time a check of a test begins."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    course_names: dict[str, Any] = {}  # what the instructor's cells bound, by name
    unsure = [False]  # whether a thread of the notebook's ran beside an instructor's cell
    started = [False]
    pending: list[str] = []  # what was put back before the instructor's cells since the last test
    seeders = _seeders()
    threads = _thread_count()
    bound_compile, bound_exec, base_exception = compile, exec, BaseException
    changed_names = _names
    the_sys, make_output, the_builtins, module_type = sys, Output, builtins, types.ModuleType
    bound_type, bound_str, no_names = type, str, frozenset()
    checks = checks_code(
        module for name, module in sys.modules.items() if name.startswith("autograder.checks")
    )
    take = object()  # what asks a collector for its records: only this frame holds it
    bound_collect, bound_cell_code = collect, cell_code
    # the checks' tables of sinks, filled and emptied here with nothing a notebook can replace
    # (a context manager's exit would look names up after the test's code, before the guard)
    record_sinks, checkpoint_sinks = check_records._record_sinks, check_records._checkpoint_sinks
    add_record_sink, add_checkpoint_sink = record_sinks.append, checkpoint_sinks.append
    test_builtins = dict(vars(builtins))  # a test's own: no notebook's code holds this dict
    bound_dict, bound_set, bound_sorted, bound_len = dict, set, sorted, len
    scope_watch, own_names = watch_test_scope, names_bound_by
    called_moment, returned_moment = LEARNER_CALLED, LEARNER_RETURNED

    def discard(record: dict[str, Any]) -> None:
        """The sink of the cells that are not tests: their records count for nothing."""

    def plain_names() -> dict[str, Any]:
        """The notebook's globals under plain ``str`` names only: a key of the notebook's own
        class (a ``str`` subclass, an object hashed as ``"torch"``) would run its ``__eq__`` at
        every lookup of that name, and could answer for it."""
        return {key: value for key, value in namespace.items() if bound_type(key) is bound_str}

    def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
        origin = cell["origin"]
        if origin in ("answer", "added") and not started[0]:
            started[0] = True
            arm()
        records: list[dict[str, Any]] = []
        voided: list[str] = []
        restored: list[str] = []
        scope = namespace
        if origin in ("course", "test"):
            # the instructor's cells run with Python's builtins and the modules they imported
            # themselves, under plain names (see plain_names); put back last, so that what a
            # dropped object's finalizer changes is put back too
            before = plain_names()
            namespace.clear()
            namespace.update(before)
            namespace.update(
                {k: v for k, v in course_names.items() if bound_type(v) is module_type}
            )
            namespace["__builtins__"] = the_builtins
            pending.extend(put_back())
        if origin == "test":
            restored, pending[:] = pending[:], []
            for seed in seeders:
                seed()
            scope = plain_names()
            scope.update(course_names)
            scope["__builtins__"] = bound_dict(test_builtins)
        error = None
        meddled: list[str] = []  # what of the test's own globals or builtins others changed
        printed, warned = make_output(), make_output()
        streams = the_sys.stdout, the_sys.stderr
        the_sys.stdout, the_sys.stderr = printed, warned
        stores = no_names
        collector = None
        seen: list[str] = []  # what differed when a check began, while this test ran
        sink: Callable[[dict[str, Any]], None] = discard
        entry = (sink, not learner)
        add_record_sink(entry)
        try:
            code = bound_compile(cell["source"], f"<cell {cell['index']}>", "exec")
            hidden = bound_compile(cell.get("hidden") or "", f"<cell {cell['index']}>", "exec")
            if origin == "test":  # only a test's records count: kept where no notebook reaches
                trusted = {
                    **checks,
                    **bound_cell_code(code, scope),
                    **bound_cell_code(hidden, scope),
                }

                scope_changes = scope_watch(scope, own_names(code, hidden), scope["__builtins__"])

                def look(moment: object) -> None:
                    seen.extend(watch())
                    meddled.extend(
                        scope_changes(moment is called_moment, moment is returned_moment)
                    )
                    if not (
                        bound_len(record_sinks) == 1
                        and record_sinks[0] is entry
                        and bound_len(checkpoint_sinks) == 1
                        and checkpoint_sinks[0] is sink
                    ):
                        seen.append("the checks' tables of sinks")

                collector = bound_collect(trusted, take, look)
                next(collector)
                sink = collector.send
                record_sinks[0:] = [(sink, not learner)]
                entry = record_sinks[0]
                add_checkpoint_sink(sink)
            if origin == "course":  # (an instructor's cell that imports * binds no name here)
                stores = own_names(code) or no_names
            bound_exec(code, scope)
            bound_exec(hidden, scope)
        except base_exception as raised:  # a cell may raise anything, SystemExit included
            error = "the cell raised an exception that could not be described"
            with suppress(base_exception):
                error = describe_error(raised)
        finally:  # first, before anything here looks a name up: keys that are no plain str out
            strays = put_back(True)
            record_sinks[0:], checkpoint_sinks[0:] = [], []
            the_sys.stdout, the_sys.stderr = streams
        if collector is not None:
            refused = -1  # a collector the notebook closed or broke answers nothing
            with suppress(base_exception):
                records, refused = collector.send(take)
            collector.close()
            if refused:
                records = []
                voided.append(
                    "code of the notebook's handed the grader check results that the test's "
                    "own checks did not make (or stopped it from receiving them): the item "
                    "earns nothing."
                )
        if origin == "course" and _thread_count() > threads:
            unsure[0] = True  # a thread of the notebook's ran beside it: its names may be theirs
        elif origin == "course":
            course_names.update(
                {key: value for key, value in plain_names().items() if key in stores}
            )
        if origin == "test" and seen:
            voided.append(
                f"the notebook changed {changed_names(bound_sorted(bound_set(seen)))} while this "
                "test ran, seen as its checks ran (whether or not it was changed back before the "
                "test ended): its checks read changed state, so the item earns nothing."
            )
        if origin == "test" and meddled:
            names = changed_names(bound_sorted(bound_set(meddled)))
            voided.append(
                f"code of the notebook's changed {names} in the test's own globals or builtins "
                "while this test ran (it reached them through a function or class the test "
                "defined and handed over): its checks read what the notebook chose, so the item "
                "earns nothing."
            )
        if origin == "test" and strays:
            voided.append(
                f"the notebook put keys that are not plain strings into {changed_names(strays)} "
                "while this test ran (an object hashed as a name runs the notebook's code "
                "whenever that name is looked up): the item earns nothing."
            )
        elif strays:
            pending.extend(f"{label} (a key that is not a plain string)" for label in strays)
        if origin == "test":  # before anything of the cell's is called, Output's text too
            changed = put_back()
            if changed:
                voided.append(
                    f"the notebook changed {changed_names(changed)} while this test ran, so "
                    "its checks ran on changed state: the item earns nothing."
                )
        output = ("", "")
        with suppress(base_exception):  # display only: a broken stream shows nothing
            output = (printed.text(), warned.text())
        if origin == "test" and unsure[0]:
            unsure[0] = False
            voided.append(
                "a thread the notebook started ran beside the instructor's cells before this "
                "test: what they set up cannot be trusted, so the item earns nothing."
            )
        if _thread_count() > threads:
            voided.append(
                "a thread the notebook started was still running: its checks cannot be "
                "trusted, so the item earns nothing."
            )
        return reply(
            cell["index"], cell["nonce"], error is None, error, records, voided, restored, output
        )

    def run() -> None:
        send({"op": "started"})
        while (message := receive()) is not None and message.get("op") == "cell":
            send(run_cell(message))

    return run


def _names(names: list[str]) -> str:
    """``a, b and 3 more`` for a list of changed names."""
    shown = ", ".join(f"`{name}`" for name in names[:_MAX_NAMES])
    more = len(names) - _MAX_NAMES
    return shown + (f" and {more} more" if more > 0 else "")
