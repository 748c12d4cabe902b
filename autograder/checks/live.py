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

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from autograder.checks.messages import whole_message, wrapped
from autograder.i18n import gettext as _

__all__ = ["every_warning", "shows_outcome"]


@contextmanager
def every_warning() -> Iterator[list[warnings.WarningMessage]]:
    """Record every warning the block gives, however often the same code warned before.

    Python shows a warning once per place unless told otherwise, and torch gives many of
    its own once per process (``TORCH_WARN_ONCE``): run the same cell twice and the second
    run would seem to give none. Inside the block both say everything
    (``torch.set_warn_always``, put back as it was afterwards).

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
    """
    always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught
    finally:
        torch.set_warn_always(always)


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
