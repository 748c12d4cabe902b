"""Observe the hooks a user registers on ``grad_fn`` nodes (``node.register_hook`` and
``node.register_prehook``) while a recording is on.

PyTorch files every node hook through one Python function, ``torch.autograd.Function.
_register_hook`` (for its own C++ nodes and for custom Functions alike). For the block,
:func:`observe_node_hooks` puts a function in front of it that hands each of the user's
hooks to ``wrap`` first; hooks that torch or gradgraph register for themselves (a module's
full backward hook, the recorder's own) pass unchanged. The original is put back when
the block ends; hooks wrapped inside it stay wrapped (and keep firing as the user's).
PyTorch looks that function up on the class ``Function`` itself, so the one in front is
set on ``Function``'s metaclass, as a data descriptor (which a class lookup asks first):
setting an attribute of ``Function`` would make Python forget what it had cached about
``Function`` and all its subclasses, at a cost to every recording.

The recorder's own node hooks are :class:`OwnHook` partials. In the block they are filed
straight into the node's hook table, with an :class:`OwnHandle` to remove them (the
recorder hooks every node it sees: torch's own filing, a ``RemovableHandle`` each, would
be much of its cost); outside it they take torch's ordinary path.

>>> import torch
>>> fired = []
>>> def wrap(hook):
...     return lambda *args: (fired.append(len(args)), hook(*args))[1]
>>> x = torch.ones(2, requires_grad=True)
>>> restore = observe_node_hooks(wrap)
>>> y = (x * 2).sum()
>>> _ = y.grad_fn.register_prehook(lambda grad_outputs: None)
>>> _ = y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
>>> restore()
>>> y.backward()
>>> fired  # the pre-hook gets one argument, the post-hook two
[1, 2]
>>> def own(grad_outputs):
...     fired.append("own")
>>> restore = observe_node_hooks(wrap)
>>> y = (x * 2).sum()
>>> handle = y.grad_fn.register_prehook(OwnHook(own))
>>> restore()
>>> y.backward(retain_graph=True)
>>> handle.remove()
>>> y.backward()
>>> fired[2:], type(handle).__name__  # it fired once, not wrapped (no count from wrap)
(['own'], 'OwnHandle')
"""

from __future__ import annotations

import functools
import itertools
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

import torch

__all__ = ["OwnHandle", "OwnHook", "observe_node_hooks", "remove_hooks"]

_RECORDERS = "gradgraph.watcher"  # where the recorder's own node hooks are defined
_own_keys = itertools.count(-1, -1)  # torch's own handles count up from 0


class OwnHook(functools.partial):
    """A hook of the recorder's own on a node: ``OwnHook(function, *arguments)``."""

    __slots__ = ()


class OwnHandle(tuple):
    """``(weak reference to a node's hook table, key)``: removes what was filed under the key.

    A tuple (made without a Python call) that holds no hook: the recorder keeps its
    handles and its hooks hold the recorder, so a handle holding a hook would be a cycle.
    """

    __slots__ = ()

    def remove(self) -> None:
        """Take the hook out of its node's table (nothing if the node is gone)."""
        remove_hooks((self,))


def remove_hooks(handles: Iterable[Any]) -> None:
    """Remove the hooks of ``handles``: :class:`OwnHandle` s, and torch's own handles.

    A recording removes every hook it filed as it closes, inside the learner's loop: an
    ``OwnHandle`` is taken out here, without a call of its method each.

    >>> table = OrderedDict(a=print)
    >>> remove_hooks([OwnHandle((weakref.ref(table), "a"))])
    >>> table
    OrderedDict()
    """
    for handle in handles:
        if type(handle) is OwnHandle:
            table = handle[0]()
            if table is not None:
                table.pop(handle[1], None)
        else:
            handle.remove()


def _users(hook: Callable) -> bool:
    """Whether ``hook`` is the user's (not torch's machinery, nor the recorder's)."""
    while isinstance(hook, functools.partial):
        hook = hook.func
    module = getattr(hook, "__module__", None) or ""
    return module != "torch" and not module.startswith("torch.") and module != _RECORDERS


def observe_node_hooks(wrap: Callable[[Callable], Callable]) -> Callable[[], None]:
    """Register ``wrap(hook)`` instead of each node hook the user registers, until the
    function returned is called."""
    meta = type(torch.autograd.Function)
    if "_register_hook" in meta.__dict__:
        raise RuntimeError("node hooks are already observed: a recording did not end")
    original = torch.autograd.Function._register_hook

    def register_hook(backward_hooks: Any, hook: Callable) -> Any:
        if type(hook) is OwnHook:  # filed as torch files hooks, without its handle
            if backward_hooks is None:
                backward_hooks = OrderedDict()
            key = next(_own_keys)
            backward_hooks[key] = hook
            return backward_hooks, OwnHandle((weakref.ref(backward_hooks), key))
        return original(backward_hooks, wrap(hook) if _users(hook) else hook)

    def restore() -> None:
        del meta._register_hook

    meta._register_hook = _class_attribute(register_hook)
    return restore


def _class_attribute(value: Any) -> property:
    """A data descriptor that gives ``value`` to every lookup through the metaclass.

    Its getter is ``next(repeat(value), cls)``, which is ``value``: a function of one
    argument that runs no Python code (torch looks it up for every node hook filed).

    >>> class Meta(type):
    ...     pass
    >>> class Base(metaclass=Meta):
    ...     pass
    >>> Meta.answer = _class_attribute(42)
    >>> Base.answer
    42
    >>> Base.answer = 0  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AttributeError: property ... has no setter
    """
    return property(functools.partial(next, itertools.repeat(value)))
