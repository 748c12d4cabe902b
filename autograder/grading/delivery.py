"""Where a test cell's check records go in the worker: a collector that takes a record only
when the checks that made it were called by the test cell's own code.

A notebook's function that a test calls runs in the same process as the checks, and can reach
the table of sinks that :func:`autograder.checks.send_records_to` fills: it could put a sink of
its own in front of the grader's (one that turns every failed check into a passed one before it
passes the record on), or hand the grader's sink records it made itself. So the sink is
:func:`collect`, a generator whose records live in its own frame (which the audit hook keeps a
notebook from reading), and which looks at the frames that called it before it keeps a record:
from the sink outwards, every frame must run the course's check code (or the test cell's own
code) with that code's own globals, up to the test cell itself. A record handed over by any
other code, a notebook's included, is refused and counted; the runner voids the item.

Example::

    >>> import types, autograder.checks
    >>> from autograder.checks import expect, send_records_to
    >>> trusted = checks_code([autograder.checks])
    >>> cell = compile("expect(True, 'never shown')", "<cell 1>", "exec")
    >>> scope = {"expect": expect}
    >>> take = object()
    >>> collector = collect({**trusted, **cell_code(cell, scope)}, take)
    >>> next(collector)
    >>> with send_records_to(collector.send, expected=False):
    ...     exec(cell, scope)
    ...     expect(True, "made outside the test cell")
    >>> records, refused = collector.send(take)
    >>> [record["rule"] for record in records], refused
    (['expect'], 1)
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Generator, Iterable
from typing import Any

from autograder.checks.records import CHECK_BEGINS, LEARNER_CALLED, LEARNER_RETURNED

__all__ = ["cell_code", "checks_code", "collect"]

# id of a code object -> (the code, the globals it may run with, whether it is a test cell's)
Trusted = dict[int, tuple[types.CodeType, tuple[dict[str, Any], ...], bool]]


def _codes(code: types.CodeType) -> Iterable[types.CodeType]:
    """``code`` and every code object nested in it (functions, lambdas, comprehensions)."""
    pending = [code]
    while pending:
        current = pending.pop()
        yield current
        pending += [const for const in current.co_consts if type(const) is types.CodeType]


def _functions(modules: Iterable[types.ModuleType]) -> list[types.FunctionType]:
    """The functions in ``modules``: module-level ones (also those a decorator wraps), and the
    methods, static and class methods and properties of the classes defined there."""
    found: dict[int, types.FunctionType] = {}
    pending: list[Any] = []
    for module in modules:
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == module.__name__:
                for member in list(vars(value).values()):
                    if isinstance(member, (staticmethod, classmethod)):
                        member = member.__func__
                    if isinstance(member, property):
                        pending += [member.fget, member.fset, member.fdel]
                    else:
                        pending.append(member)
            else:
                pending.append(value)
    while pending:
        value = pending.pop()
        if type(value) is types.FunctionType and id(value) not in found:
            found[id(value)] = value
            pending.append(getattr(value, "__wrapped__", None))
            pending += [cell.cell_contents for cell in value.__closure__ or () if _filled(cell)]
    return list(found.values())


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def checks_code(modules: Iterable[types.ModuleType]) -> Trusted:
    """The code of the checks in ``modules`` (with :mod:`contextlib`'s, which runs a check's
    ``with`` block), each with every globals dict its functions run with (a sealed module's
    functions run with a private copy, the functions another module imported before sealing
    with the module's own)."""
    trusted: dict[int, tuple[types.CodeType, list[dict[str, Any]]]] = {}
    for function in _functions([*modules, contextlib]):
        for code in _codes(function.__code__):
            _, scopes = trusted.setdefault(id(code), (code, []))
            if not any(scope is function.__globals__ for scope in scopes):
                scopes.append(function.__globals__)
    return {key: (code, tuple(scopes), False) for key, (code, scopes) in trusted.items()}


def cell_code(code: types.CodeType, scope: dict[str, Any]) -> Trusted:
    """A test cell's code (``code``, run at the top level with ``scope`` as its globals) and the
    code of the functions it defines."""
    return {id(nested): (nested, (scope,), nested is code) for nested in _codes(code)}


def collect(
    trusted: Trusted,
    take: object,
    look: Callable[[object], None] | None = None,
    _getframe=sys._getframe,
    _id=id,
    _none=None,
    _begins=CHECK_BEGINS,
    _called=LEARNER_CALLED,
    _returned=LEARNER_RETURNED,
    _rule_of=dict.get,
) -> Generator[tuple[list[dict[str, Any]], int] | None, Any, None]:
    """The sink of one test cell (start it with ``next``, pass ``collector.send``): each record
    sent is kept if the frames from its sender out to a test cell's code all run ``trusted``
    code with one of its globals, and refused (counted) otherwise; sending ``take`` answers
    ``(records kept, number refused)``.

    With ``look``, it is also the sink of the checks' checkpoints
    (:func:`autograder.checks.records.checkpoint`), taken from trusted code alone: at each it
    calls ``look(moment)`` (the grader looks at what the checks read; ``moment``: the
    checkpoint), and a record is kept only when a check began since the previous record, and,
    for a call of the learner's code, that code returned since: so no check reads what was not
    looked at after the notebook's code last ran before it."""
    records: list[dict[str, Any]] = []
    refused = 0
    get = trusted.get
    began = returned = False
    message = yield
    while message is not take:
        kept = False
        frame = _getframe(1)
        while frame is not _none:
            code = frame.f_code
            entry = get(_id(code))
            if entry is _none or entry[0] is not code:
                break
            scope = frame.f_globals
            for allowed in entry[1]:
                if allowed is scope:
                    break
            else:
                break
            if entry[2]:
                kept = True
                break
            frame = frame.f_back
        frame = _none
        if not kept:
            refused += 1
        elif message is _called:
            if look is not None:
                look(message)
        elif message is _begins or message is _returned:
            if look is not None:
                look(message)
            began, returned = (True, False) if message is _begins else (began, began)
        elif look is not None and not (
            began and (returned or _rule_of(message, "rule") != "call")
        ):
            refused += 1  # no check began (or no call returned) since the last record
            began = returned = False
        else:
            records.append(message)
            began = returned = False
        message = yield
    yield records, refused
