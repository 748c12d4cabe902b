"""Show what torch says, live: the course's demo cells run real code and print real messages.

A notebook never pastes an error or a warning; it runs the code inside one of these and
prints what torch raised or warned, whatever the installed release says.

Example::

    >>> import torch
    >>> with shows_error():
    ...     torch.zeros(2).retain_grad()
    RuntimeError: can't retain_grad on Tensor that has requires_grad=False
    >>> with shows_error():
    ...     x = 1 + 1
    (no error)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from autograder.messages import first_line

__all__ = ["shows_error", "shows_warnings"]


@contextmanager
def shows_error() -> Iterator[None]:
    """Run the block; print the exception it raises (type and first line) instead of failing.

    Prints ``(no error)`` when the block finishes normally, so the cell always says something.
    """
    try:
        yield
    except Exception as error:  # showing any error is the point
        print(f"{type(error).__name__}: {first_line(error)}")
    else:
        print("(no error)")


@contextmanager
def shows_warnings() -> Iterator[None]:
    """Run the block; print every warning it raised (category and first line), or ``(no warning)``.

    >>> with shows_warnings():
    ...     warnings.warn("careful")
    UserWarning: careful
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for warning in caught:
        print(f"{warning.category.__name__}: {first_line(warning.message)}")
    if not caught:
        print("(no warning)")
