"""Show what torch says, live: the course's demo cells run real code and print real messages.

A notebook never pastes an error or a warning; it runs the code inside :func:`shows_outcome`
and prints what torch raised or warned, whatever the installed release says: the whole
message, advice included, wrapped to a readable width.

Example::

    >>> import torch
    >>> with shows_outcome():
    ...     torch.zeros(2).retain_grad()
    RuntimeError: can't retain_grad on Tensor that has requires_grad=False
    >>> with shows_outcome():
    ...     (torch.ones(2, requires_grad=True) * 2).grad
    UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being
    accessed. Its .grad attribute won't be populated during autograd.backward(). If
    you indeed want the .grad field to be populated for a non-leaf Tensor, use
    .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by
    mistake, make sure you access the leaf Tensor instead. See
    github.com/pytorch/pytorch/pull/30531 for more information.
    >>> with shows_outcome():
    ...     x = 1 + 1
    (no error, no warning)
"""

from __future__ import annotations

import _warnings
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from autograder.checks.messages import whole_message, wrapped
from autograder.i18n import gettext as _

__all__ = ["every_warning", "shows_outcome"]

# Bound at import: what the watch relies on, whatever is patched later.
_module = warnings  # the module CPython's warnings code (torch's C++ warnings too) looks up
_ModuleType = type(warnings)
_read_attribute = _ModuleType.__getattribute__
_catch_warnings, _WarningMessage = warnings.catch_warnings, warnings.WarningMessage
_warn, _warn_explicit, _filters_mutated = (
    _warnings.warn,
    _warnings.warn_explicit,
    _warnings._filters_mutated,
)
_urandom, _from_bytes, _range = os.urandom, int.from_bytes, range
_torch_C = torch._C
_warn_always, _set_warn_always = torch._C._get_warnAlways, torch._C._set_warnAlways
_ALWAYS = ("always", None, Warning, None, 0)
# What torch silences itself where it gives it: gradcheck's batched check (torch.autograd.
# gradcheck), custom_op's registration (torch._library.custom_ops) and torch.overrides' tables
# of functions. No notebook's code gave these, and the watch keeps torch's filters for them.
_TORCH_SILENCES = (
    ("There is a performance drop", Warning, ""),
    ("Please use `torch.vmap`", Warning, ""),
    ("Warning only once for all operators", UserWarning, ""),
    (".*is deprecated, please use.*", UserWarning, "torch"),
)
_listeners: list[list[warnings.WarningMessage]] = []  # one per open block, outermost first


def _heard(message: warnings.WarningMessage) -> None:
    """Where every warning goes while a block is watched: to each open block's list."""
    for caught in _listeners:
        caught.append(message)


def _torch_filters() -> tuple[tuple[Any, ...], ...]:
    """The filters torch sets for :data:`_TORCH_SILENCES`, made as ``filterwarnings`` makes
    them."""
    with _catch_warnings(module=_module):
        _module.filters[:] = []
        for message, category, module in _TORCH_SILENCES:
            _module.filterwarnings("ignore", message, category, module)
        return tuple(_module.filters)


_QUIETED_BY_TORCH = _torch_filters()


def _filters() -> list[tuple[Any, ...]]:
    """The filters a warning meets while watched: a fresh list each time (one the code read
    and changed is not the next one), showing every warning but torch's own silences. The
    filters' version moves on by an unpredictable step, so that no ``__warningregistry__``
    entry the code wrote, which would skip a warning before any filter is read, can match
    it."""
    for _step in _range(1 + _from_bytes(_urandom(2), "big") % 1024):
        _filters_mutated()
    return [*_QUIETED_BY_TORCH, _ALWAYS]


# What the warnings module answers while watched, whatever the code inside changed: the names
# that CPython's C warnings code reads at each warning, and the functions torch's Python code
# calls through the module
_PINNED: dict[str, Callable[[], Any]] = {
    "filters": _filters,
    "defaultaction": lambda: "always",
    "onceregistry": dict,
    "_showwarnmsg": lambda: _heard,
    "WarningMessage": lambda: _WarningMessage,
    "warn": lambda: _warn,
    "warn_explicit": lambda: _warn_explicit,
}


class _Watched(_ModuleType):
    """The warnings module's type while a block is watched: see :data:`_PINNED`."""

    def __getattribute__(self, name: str) -> Any:
        pinned = _PINNED.get(name)
        return _read_attribute(self, name) if pinned is None else pinned()


def _keep_warn_always(flag: bool, /) -> None:
    """``torch._C._set_warnAlways`` while watched (``torch.set_warn_always`` calls it): torch
    keeps giving its once-per-process warnings every time."""


@contextmanager
def every_warning() -> Iterator[list[warnings.WarningMessage]]:
    """Record every warning the block gives, however often the same code warned before, and
    whatever the code inside does to the warnings machinery.

    Python shows a warning once per place unless told otherwise, and torch gives many of
    its own once per process (``TORCH_WARN_ONCE``): run the same cell twice and the second
    run would seem to give none. Inside the block both say everything
    (``torch.set_warn_always``, put back as it was afterwards).

    The code inside cannot hide a warning either: not with ``warnings.catch_warnings``,
    ``simplefilter`` or ``filterwarnings`` ("ignore", or "error" and an ``except``), nor
    ``resetwarnings``, by changing ``warnings.filters``, ``warnings.showwarning`` or
    ``warnings.warn``, by ``logging.captureWarnings``, a redirected ``sys.stderr``, a
    ``__warningregistry__`` entry, or ``torch.set_warn_always(False)``. While the block runs,
    the warnings module answers the names CPython's own warnings code reads at each warning
    (torch's C++ warnings go through it too) with the block's values: filters that show every
    warning but those torch silences itself (:data:`_TORCH_SILENCES`), and a recorder; what
    the code changed is put back afterwards. Blocks nest, and each records everything given
    inside it. (Code that takes this machinery itself apart for the length of the call, such
    as another module put in ``sys.modules["warnings"]``, is beyond what a check in the same
    process can stop.)

    >>> import torch
    >>> def leaky_backward():
    ...     layer = torch.nn.Linear(2, 1)
    ...     layer(torch.ones(2)).tanh().sum().backward(create_graph=True)
    ...     layer.weight.grad = layer.bias.grad = None  # break the cycle
    >>> for _ in range(2):  # torch warns once per process; here, on every run
    ...     with every_warning() as caught:
    ...         leaky_backward()
    ...     print([str(w.message)[:44] for w in caught])
    ['Using backward() with create_graph=True will']
    ['Using backward() with create_graph=True will']
    >>> torch.is_warn_always_enabled()
    False
    >>> with every_warning() as caught:
    ...     with warnings.catch_warnings():
    ...         warnings.simplefilter("ignore")
    ...         (torch.ones(2, requires_grad=True) * 2).grad  # a non-leaf's .grad warns
    >>> [str(w.message)[:19] for w in caught]
    ['The .grad attribute']
    """
    caught: list[warnings.WarningMessage] = []
    if _listeners:  # inside another block, which watches already
        _listeners.append(caught)
        try:
            yield caught
        finally:
            _listeners.remove(caught)
        return
    saved = _catch_warnings(module=_module)  # what the code changes is put back afterwards
    saved.__enter__()
    always, switch = _warn_always(), vars(_torch_C).get("_set_warnAlways", _set_warn_always)
    _set_warn_always(True)
    _listeners.append(caught)
    try:
        _torch_C._set_warnAlways = _keep_warn_always
        _module.__class__ = _Watched
        _filters()  # forget what each place warned before
        yield caught
    finally:
        _module.__class__ = _ModuleType
        _torch_C._set_warnAlways = switch
        _listeners.clear()
        _set_warn_always(always)
        saved.__exit__(None, None, None)


@contextmanager
def shows_outcome() -> Iterator[None]:
    """Run the block; print each warning it gave (see :func:`every_warning`; one given several
    times, once) and the exception it raised (type and whole message), or
    ``(no error, no warning)``. The exception does not propagate.

    >>> with shows_outcome():
    ...     warnings.warn("careful")
    UserWarning: careful
    """
    error = None
    with every_warning() as caught:
        try:
            yield
        except Exception as raised:  # showing any error is the point
            error = raised
    shown = {f"{w.category.__name__}: {whole_message(w.message)}": None for w in caught}
    for warning in shown:
        print(wrapped(warning))
    if error is not None:
        print(wrapped(f"{type(error).__name__}: {whole_message(error)}"))
    if error is None and not caught:
        print(_("(no error, no warning)"))
