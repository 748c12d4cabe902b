"""Observe the hooks a user registers on ``grad_fn`` nodes (``node.register_hook`` and
``node.register_prehook``) while a recording is on.

PyTorch files every node hook through one Python function, ``torch.autograd.Function.
_register_hook`` (for its own C++ nodes and for custom Functions alike). For the block,
:func:`observe_node_hooks` puts a function in front of it that hands each of the user's
hooks to ``wrap`` first; hooks that torch or gradgraph register for themselves (a module's
full backward hook, the recorder's own) pass unchanged. The original is put back when
the block ends; hooks wrapped inside it stay wrapped (and keep firing as the user's).

>>> import torch
>>> fired = []
>>> def wrap(hook):
...     return lambda *args: (fired.append(len(args)), hook(*args))[1]
>>> x = torch.ones(2, requires_grad=True)
>>> with observe_node_hooks(wrap):
...     y = (x * 2).sum()
...     _ = y.grad_fn.register_prehook(lambda grad_outputs: None)
...     _ = y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
>>> y.backward()
>>> fired  # the pre-hook gets one argument, the post-hook two
[1, 2]
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch

__all__ = ["observe_node_hooks"]

_RECORDERS = "gradgraph.watcher"  # where the recorder's own node hooks are defined


def _users(hook: Callable) -> bool:
    """Whether ``hook`` is the user's (not torch's machinery, nor the recorder's)."""
    while isinstance(hook, functools.partial):
        hook = hook.func
    module = getattr(hook, "__module__", None) or ""
    return module != "torch" and not module.startswith("torch.") and module != _RECORDERS


@contextlib.contextmanager
def observe_node_hooks(wrap: Callable[[Callable], Callable]) -> Iterator[None]:
    """For the block, register ``wrap(hook)`` instead of each node hook the user registers."""
    holder = torch.autograd.Function
    had_own = "_register_hook" in holder.__dict__
    original = holder._register_hook

    def register_hook(backward_hooks: Any, hook: Callable) -> Any:
        return original(backward_hooks, wrap(hook) if _users(hook) else hook)

    holder._register_hook = staticmethod(register_hook)
    try:
        yield
    finally:
        if had_own:
            holder._register_hook = staticmethod(original)
        else:
            del holder._register_hook
