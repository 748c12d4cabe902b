"""Methods that no object can hide: a test's tensors, modules and records answer with their
class's methods, whatever a notebook's code did to the object itself.

Python looks a method up in an object's own ``__dict__`` before its class's (a method is a
*non-data* descriptor). Code that a test hands one of its tensors can therefore give that one
tensor a ``detach`` or a ``data_ptr`` of its own (``p.detach = lambda: forged``), and every
later ``p.detach()`` in the test reads what the code chose, while no class changed. The same
holds for a module's ``named_parameters`` or ``forward`` and for a check's record
(``given.includes``). :func:`pin_methods` replaces each method of the classes given by a
*data* descriptor, which Python asks before the object's ``__dict__``: it hands out the very
same method, refuses an attribute of that name on an instance, and ignores one put into the
``__dict__`` directly. A descriptor is an immutable tuple, so nothing can change what it
hands out short of changing the class itself, which the guard watches
(:mod:`autograder.grading.guard`). Torch itself replaces a method on one object in a single
place the course never needs: an LR scheduler (``torch.optim.lr_scheduler``) wraps its
optimizer's ``step``, and raises this AttributeError in the grader; no exercise asks for one.

Example::

    >>> class Tensorish:
    ...     def detach(self):
    ...         return "the real detach"
    >>> pin_methods([Tensorish])
    >>> t = Tensorish()
    >>> t.detach()
    'the real detach'
    >>> t.detach = lambda: "forged"
    Traceback (most recent call last):
    ...
    AttributeError: 'Tensorish' object's detach is its class's method: code being graded \
cannot replace it on one object
    >>> vars(t)["detach"] = lambda: "forged"
    >>> t.detach(), Tensorish.detach(t)
    ('the real detach', 'the real detach')
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable
from typing import Any

__all__ = ["classes_tests_hand_over", "pin_methods"]

_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a C type, whose attributes cannot be set


class _Pinned(tuple):
    """``(method, bind, name)``: what a class hands out for the method's ``name``,
    ``bind(method, object, class)`` (the method's own ``__get__``), whatever the object holds
    under that name."""

    __slots__ = ()

    # The items are read with tuple's own method, never with one a notebook adds to this class.
    def __get__(self, instance: object, owner: type | None = None, _item=tuple.__getitem__) -> Any:
        return _item(self, 1)(_item(self, 0), instance, owner)

    def __set__(self, instance: object, value: object, _item=tuple.__getitem__) -> None:
        raise AttributeError(
            f"{type(instance).__name__!r} object's {_item(self, 2)} is its class's method: "
            "code being graded cannot replace it on one object"
        )

    def __delete__(self, instance: object) -> None:
        self.__set__(instance, None)


def _unbound(method: object, instance: object, owner: type | None = None) -> object:
    """The ``bind`` of a method without ``__get__`` (a callable object): itself."""
    return method


def pin_methods(kinds: Iterable[type]) -> None:
    """Pin every method of each class of ``kinds``: those it defines, and those it inherits from
    a base that cannot be changed (``torch.Tensor``'s from its C base ``TensorBase``). Functions,
    static and class methods and C methods are pinned; properties, data descriptors already,
    and the special ``__names__``, which Python looks up on the class anyway, are not."""
    for kind in kinds:
        bases = kind.__mro__[:-1]  # not object: its methods are special names
        for name in sorted({name for base in bases for name in vars(base)}):
            owner = next(base for base in bases if name in vars(base))
            value = vars(owner)[name]
            if owner is not kind and not owner.__flags__ & _IMMUTABLE_TYPE:
                continue  # a changeable base's own: pinned there, if it is one of kinds
            if name.startswith("__") and name.endswith("__") or type(value) is _Pinned:
                continue
            if isinstance(value, type) or hasattr(type(value), "__set__"):
                continue
            if callable(value) or isinstance(value, (staticmethod, classmethod)):
                get = getattr(type(value), "__get__", _unbound)
                setattr(kind, name, _Pinned((value, get, name)))


def classes_tests_hand_over() -> list[type]:
    """The classes whose objects a test hands to a notebook's code, or keeps where its code
    can reach them: torch's tensors and parameters, torch's modules and optimizers, and the
    course's checks' records and torch modes (``GivenGradients``, ``Runs``...), each once."""
    import torch

    def family(root: type, *packages: str) -> list[type]:
        found, todo = [root], root.__subclasses__()
        while todo:
            kind = todo.pop()
            if kind.__module__.startswith(packages) and kind not in found:
                found.append(kind)
                todo.extend(kind.__subclasses__())
        return found

    checks = [
        kind
        for name, module in list(sys.modules.items())
        if name.startswith("autograder.checks") and module is not None
        for kind in vars(module).values()
        if isinstance(kind, type)
        and kind.__module__ == name
        and not issubclass(kind, (types.ModuleType, BaseException))
    ]
    return [
        *family(torch.Tensor, "torch.nn.parameter"),
        *family(torch.nn.Module, "torch.nn.modules"),
        *family(torch.optim.Optimizer, "torch.optim"),
        *checks,
    ]
