"""What the checks' own code reads, looked at again each time a check begins while a test runs.

The guard (:mod:`autograder.grading.guard`) compares the state tests rely on when a test cell
ends, and puts it back. Code of the notebook's that a test runs (the function it calls, a hook
it left on the test's tensors, an element of its answer that a comparison calls) could change
what the checks read (a name in a check module's namespace or in the private copy of it that
the checks run with, a builtin) and change it back before the test ends: nothing would show
when the cell ends, and the checks in between would have read what the notebook chose. So the
checks say when they begin, and when the learner's code they called returns
(:func:`autograder.checks.records.checkpoint`), and the grader's sink looks then
(:mod:`autograder.grading.delivery`): whatever differs from :func:`take_watch`'s moment voids
the item, even if it is changed back later.

What is looked at here: the builtins (no name added or taken away), the namespaces of the
course's packages and the private copies their sealed functions run with (none added there
either), the keyword defaults of those functions, and the namespaces of ``math`` and of torch's
main modules (names torch adds as it loads more are allowed). Each is compared by identity, in
C, value by value in its order: a few thousand names in a fraction of a millisecond. (Classes
are compared when the cell ends; ``warnings`` is left to then too, since ``catch_warnings``
rebinds its names for the length of a block.)

A test cell's own globals and builtins are looked at then as well (:func:`watch_test_scope`):
the functions and classes a test defines hold them, and a test hands such functions to the
notebook's code.

Example::

    >>> import types
    >>> space = types.ModuleType("demo")
    >>> space.double = lambda x: 2 * x
    >>> changed = watch([("demo", vars(space), False)])
    >>> changed()
    []
    >>> real, space.double = space.double, lambda x: 0
    >>> changed()
    ['demo.double']
    >>> space.double = real
    >>> changed(), watch([("demo", vars(space), True)])()
    ([], [])
    >>> vars(space)["double"] = vars(space).pop("double")  # the same, in another order
    >>> changed()
    []
"""

from __future__ import annotations

import builtins
import opcode
import sys
import types
from collections.abc import Callable, Iterable
from itertools import islice, repeat
from operator import is_, is_not
from typing import Any

__all__ = ["take_watch", "names_bound_by", "watch_test_scope", "watch"]

# Torch's modules whose names a test's and the checks' code look up (with math's).
_TORCH = ("torch", "torch.nn", "torch.nn.functional", "torch.autograd", "torch.optim")
_COURSE = ("autograder", "gradgraph")
_MISSING = object()
Space = tuple[str, dict[Any, Any], bool]  # (label, the dict, whether nothing may be added)


def watch(spaces: Iterable[Space]) -> Callable[[], list[str]]:
    """``changed()``: the names in ``spaces`` that differ from now (a value replaced, a name
    taken away, a key that is not a plain ``str`` put in, or, where the space is strict, a
    name added). Each space is first compared value by value in its order; where that order
    moved with no name's value changed (a name taken out and put back), the order now is the
    one compared from then on."""
    kept = [_taken(label, space, strict) for label, space, strict in spaces]

    def changed(
        _len=len, _all=all, _map=map, _is=is_, _islice=islice, _keys=dict.keys,
        _values=dict.values, _range=range,
    ) -> list[str]:  # fmt: skip
        found: list[str] = []
        for index in _range(_len(kept)):
            label, space, strict, size, keys, values = kept[index]
            now = _len(space)
            if (
                now == size or (now > size and not strict)
            ) and _all(_map(_is, _islice(_values(space), size), values)) and _all(
                _map(_is, _islice(_keys(space), size), keys)
            ):
                continue
            differences = _differences(label, space, strict, keys, values)
            if differences:
                found += differences
            else:  # the same names and values in another order, or names added where allowed
                kept[index] = _taken(label, space, strict)
        return found

    return changed


def _taken(label: str, space: dict[Any, Any], strict: bool) -> tuple[Any, ...]:
    return (label, space, strict, len(space), tuple(space), tuple(space.values()))


def _differences(
    label: str,
    space: dict[Any, Any],
    strict: bool,
    keys: tuple[str, ...],
    values: tuple[Any, ...],
) -> list[str]:
    """The names of ``space`` whose value is not what it was (or that were added, where
    ``strict``), and its keys that are not plain ``str``, named by their type: read without
    hashing or comparing any key of the notebook's (which would run its code)."""
    items = list(space.items())
    strange = [type(key).__name__ for key, _ in items if type(key) is not str]
    now = {key: value for key, value in items if type(key) is str}
    was = dict(zip(keys, values, strict=True))
    names = [key for key in keys if now.get(key, _MISSING) is not was[key]]
    names += [key for key in now if strict and key not in was]
    names += [f"<a key of type {kind}>" for kind in strange]
    prefix = f"{label}." if label else ""  # "": a scope of its own, named by its names alone
    return [prefix + name for name in names]


def take_watch() -> Callable[[], list[str]]:
    """:func:`watch` of what the checks' code reads (see the module's text), taken now: in the
    grading worker, after the course's modules were sealed and before any notebook runs."""
    spaces: list[Space] = [("builtins", vars(builtins), True)]
    modules = [
        (name, module)
        for name, module in list(sys.modules.items())
        if module is not None
        and (name.split(".")[0] in _COURSE or name in _TORCH or name == "math")
    ]
    private: dict[int, Space] = {}
    for name, module in modules:
        namespace = vars(module)
        spaces.append((name, namespace, False))
        for value in list(namespace.values()):
            if type(value) is not types.FunctionType or value.__module__ != name:
                continue
            scope = value.__globals__
            if scope is not namespace and name.split(".")[0] in _COURSE:
                private[id(scope)] = (f"{name} (sealed)", scope, True)
            if value.__kwdefaults__:
                label = f"{name}.{value.__qualname__} (keyword defaults)"
                private[id(value.__kwdefaults__)] = (label, value.__kwdefaults__, True)
    return watch([*spaces, *private.values()])


def names_bound_by(
    *codes: types.CodeType,
    _name_ops=frozenset(opcode.opmap[name] for name in ("STORE_NAME", "DELETE_NAME")),
    _global_ops=frozenset(opcode.opmap[name] for name in ("STORE_GLOBAL", "DELETE_GLOBAL")),
    _import_star=opcode.opmap["IMPORT_STAR"],
    _extended=opcode.EXTENDED_ARG,
    _code_type=types.CodeType,
    _type=type,
    _range=range,
    _len=len,
    _frozenset=frozenset,
) -> frozenset[str] | None:
    """The global names a cell's ``codes`` bind or delete themselves (their top-level
    ``STORE_NAME``/``DELETE_NAME``, and the ``STORE_GLOBAL``/``DELETE_GLOBAL`` of the functions
    they define), read off the bytecode with nothing a notebook can replace (the runner asks
    after the notebook's cells ran); ``None`` where one imports ``*`` (any name may be its).

    >>> text = "import torch.nn as nn\\nx = y = 1\\ndef f():\\n    global z\\n    z = 2\\nprint(w)"
    >>> sorted(names_bound_by(compile(text, "c", "exec")))
    ['f', 'nn', 'x', 'y', 'z']
    >>> names_bound_by(compile("from math import *", "c", "exec")) is None
    True
    """
    found: list[str] = []
    for top in codes:
        pending = [top]
        while pending:
            current = pending.pop()
            raw, extended = current.co_code, 0
            for offset in _range(0, _len(raw), 2):
                op, argument = raw[offset], raw[offset + 1] | extended
                extended = argument << 8 if op == _extended else 0
                if op == _import_star:
                    return None
                if op in _global_ops or (op in _name_ops and current is top):
                    found.append(current.co_names[argument])
            pending += [const for const in current.co_consts if _type(const) is _code_type]
    return _frozenset(found)


def watch_test_scope(
    scope: dict[Any, Any],
    own: frozenset[str] | None,
    builtins_copy: dict[Any, Any],
) -> Callable[[bool, bool], list[str]]:
    """``changed(called, returned)``: what code other than the test's own changed in a test
    cell's globals ``scope`` and in its private ``builtins_copy``, looked at each time a check
    begins, each time a check is about to call the learner's code (``called``) and each time
    that code returns (``returned``).

    A test hands the notebook's code functions and classes of its own (a saved-tensor hook, a
    module class, a backward hook), and each holds the test's globals (``__globals__``) and its
    builtins (``__builtins__``): through them the notebook's code could rebind a name the test
    reads next (the record of the gradients autograd gave, the tensor whose ``.grad`` it checks)
    or a builtin (``any``, ``len``) for that test alone. So:

    * the builtins copy holds what it held when the test began, always;
    * a name the test never binds itself (``own``: see :func:`names_bound_by`) keeps its value, and
      no such name is added (one would hide a builtin from the test);
    * while the learner's code a check calls runs, nothing in ``scope`` changes at all: the
      test's own code does not run then.

    Everything is compared by identity, and no key but an exact ``str`` is hashed or compared
    (a key of the notebook's class would run its code). What ``scope`` held is kept only while
    the learner's code runs (the test's own values are the test's to free: a test may check
    that one was freed).

    >>> scope = {"__builtins__": {}, "torch": 1, "_given": 2}
    >>> changed = watch_test_scope(scope, frozenset({"_given"}), scope["__builtins__"])
    >>> changed(True, False), changed(False, True)
    ([], [])
    >>> _ = changed(True, False)
    >>> scope["_given"] = 3
    >>> changed(False, True)
    ['_given']
    >>> scope["torch"] = 4
    >>> changed(False, False)
    ['torch']
    >>> scope["torch"], scope["__builtins__"]["len"] = 1, None
    >>> changed(False, False)
    ['builtins.len']
    >>> del scope["__builtins__"]["len"]
    >>> scope["len"] = len
    >>> changed(False, False)
    ['len']
    """
    fixed_keys = tuple(key for key in scope if own is not None and key not in own)
    fixed_values = tuple(scope[key] for key in fixed_keys)
    fixed_names = frozenset(fixed_keys)
    builtins_was = _taken("builtins", builtins_copy, True)
    during_call: list[Any] = []  # the scope as the learner's code was called, until it returns

    def changed(
        called: bool,
        returned: bool,
        _same=_same_as, _taken=_taken, _differences=_differences, _any=any, _all=all,
        _map=map, _is=is_, _is_not=is_not, _type=type, _str=str, _repeat=repeat, _get=dict.get,
        _keys=dict.keys, _sorted=sorted, _zip=zip,
    ) -> list[str]:  # fmt: skip
        found: list[str] = []
        if not _same(builtins_copy, builtins_was):
            found += _differences("builtins", builtins_copy, True, *builtins_was[4:])
        if returned and during_call and not _same(scope, during_call[0]):
            found += _differences("", scope, True, *during_call[0][4:])
        during_call[:] = [_taken("", scope, True)] if called else []
        if own is None:
            return found
        if _any(_map(_is_not, _map(_type, scope), _repeat(_str))):
            return [*found, "<a key that is not a plain string>"]
        if not _all(_map(_is, _map(_get, _repeat(scope), fixed_keys, _repeat(_MISSING)),
                         fixed_values)):  # fmt: skip
            found += [
                key
                for key, value in _zip(fixed_keys, fixed_values)
                if _get(scope, key, _MISSING) is not value
            ]
        found += _sorted(_keys(scope) - own - fixed_names)
        return found

    return changed


def _same_as(space: dict[Any, Any], taken: tuple[Any, ...]) -> bool:
    """Whether ``space`` holds exactly what :func:`_taken` saw: the same keys and values, by
    identity, in the same order."""
    _, _, _, size, keys, values = taken
    return (
        len(space) == size
        and all(map(is_, islice(dict.keys(space), size), keys))
        and all(map(is_, islice(dict.values(space), size), values))
    )
