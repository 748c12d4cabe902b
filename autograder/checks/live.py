"""Show what torch says, live: the course's demo cells run real code and print real messages.

A notebook never pastes an error or a warning; it runs the code inside :func:`shows_outcome`
and prints what torch raised or warned, whatever the installed release says.

Example::

    >>> import torch
    >>> with shows_outcome():
    ...     torch.zeros(2).retain_grad()
    RuntimeError: can't retain_grad on Tensor that has requires_grad=False
    >>> with shows_outcome():
    ...     x = 1 + 1
    (no error, no warning)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from autograder.checks.messages import headline

__all__ = ["shows_outcome"]


@contextmanager
def shows_outcome() -> Iterator[None]:
    """Run the block; print each warning it gave and the exception it raised (type and first
    line), or ``(no error, no warning)``. The exception does not propagate.

    >>> with shows_outcome():
    ...     warnings.warn("careful")
    UserWarning: careful
    """
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except Exception as raised:  # showing any error is the point
            error = raised
    for warning in caught:
        print(f"{warning.category.__name__}: {headline(warning.message)}")
    if error is not None:
        print(f"{type(error).__name__}: {headline(error)}")
    if error is None and not caught:
        print("(no error, no warning)")
