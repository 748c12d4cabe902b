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
import sys
import types
from collections.abc import Callable, Iterable
from itertools import islice
from operator import is_
from typing import Any

__all__ = ["take_watch", "watch"]

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
    return [f"{label}.{name}" for name in names]


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
