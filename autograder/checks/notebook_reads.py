"""Where a learner's function reads the notebook's names from, found without running its code.

:func:`autograder.checks.devices.notebook_device_elsewhere` points the notebook's ``device`` at
another device while a test calls the learner's function, by changing that name in the
function's globals. So the globals must be the ones the function really runs with: they are
read through the function type's own descriptor (an object's ``__globals__`` attribute, or one
a class of the notebook's declares, could name any dict), a callable object is read through its
class's ``__call__``, a bound method through its function, an ``autograd.Function`` through its
``forward``, ``backward`` and ``setup_context``, each as its class holds it. And the function
must not hold the device itself, where no change of the name reaches: a default argument
(``def f(x, device=device)``) or a closure cell holding the notebook's own device object is
reported by :func:`devices_held`.

Example::

    >>> import torch
    >>> notebook = {"__name__": "__main__", "device": torch.device("cpu")}
    >>> exec("def scale(t, device=device):\\n    return t * 2", notebook)
    >>> class Impostor:
    ...     __globals__ = {"__name__": "__main__"}  # a decoy
    ...     def __call__(self, t):
    ...         return t
    >>> [space is notebook for space in notebook_globals((notebook["scale"],))]
    [True]
    >>> notebook_globals((Impostor(),))  # its __call__'s globals are this module's, no decoy
    []
    >>> devices_held((notebook["scale"],), [notebook], ("device",))
    ['device']
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Sequence
from contextlib import suppress as _suppress
from inspect import getattr_static as _getattr_static
from typing import Any

__all__ = ["devices_held", "notebook_globals"]

_FunctionType, _MethodType = types.FunctionType, types.MethodType
_globals_of = vars(types.FunctionType)["__globals__"].__get__
_defaults_of = vars(types.FunctionType)["__defaults__"].__get__
_kwdefaults_of = vars(types.FunctionType)["__kwdefaults__"].__get__
_closure_of = vars(types.FunctionType)["__closure__"].__get__
_function_dict = vars(types.FunctionType)["__dict__"].__get__
_method_function = vars(types.MethodType)["__func__"].__get__
_cell_contents = vars(types.CellType)["cell_contents"].__get__
_FUNCTION_METHODS = ("forward", "backward", "setup_context")
_MAX_WRAPPED = 100


def _functions(read: Any) -> list[Any]:
    """The Python functions that run when ``read`` is called, found as their classes hold
    them (no descriptor, property or ``__getattr__`` of the notebook's runs)."""
    if type(read) is _MethodType:
        read = _method_function(read)
    if issubclass(type(read), type):  # (by its type alone: no __class__ of the notebook's runs)
        found = [_getattr_static(read, name, None) for name in _FUNCTION_METHODS]
    elif type(read) is _FunctionType:
        found = [read]
    else:
        found = [_getattr_static(type(read), "__call__", None)]
    functions = []
    for function in found:
        if type(function) in (staticmethod, classmethod):
            function = function.__func__
        for _ in range(_MAX_WRAPPED):  # the functions a decorator wrapped, as it noted them
            if type(function) is not _FunctionType:
                break
            functions.append(function)
            function = _function_dict(function).get("__wrapped__")
    return functions


def notebook_globals(reads: Iterable[Any]) -> list[dict[str, Any]]:
    """The notebook's globals (``__name__ == "__main__"``) that the functions behind ``reads``
    run with, each once."""
    found: dict[int, dict[str, Any]] = {}
    for read in reads:
        for function in _functions(read):
            space = _globals_of(function)
            if type(space) is dict and space.get("__name__") == "__main__":
                found[id(space)] = space
    return list(found.values())


def devices_held(
    reads: Iterable[Any], spaces: Sequence[dict[str, Any]], names: Sequence[str]
) -> list[str]:
    """The ``names`` (of ``spaces``, the notebook's globals) whose very object a function
    behind ``reads`` holds in a default argument or a closure cell."""
    held: dict[int, str] = {}
    for space in spaces:
        for name in names:
            if name in space:
                held.setdefault(id(space[name]), name)  # (device64 may be device itself)
    found: list[str] = []
    for read in reads:
        for function in _functions(read):
            kept = [*(_defaults_of(function) or ()), *(_kwdefaults_of(function) or {}).values()]
            for cell in _closure_of(function) or ():
                with _suppress(ValueError):  # an empty cell
                    kept.append(_cell_contents(cell))
            found += [held[id(value)] for value in kept if id(value) in held]
    return sorted(set(found))
