"""Stack readers for the grading worker that hand no frame to anything a notebook can replace.

The standard library's ``traceback.extract_stack`` passes each frame it reads to functions a
notebook can swap for its own (``traceback.walk_stack``, ``StackSummary`` methods,
``linecache.lazycache``), which would give the notebook the grader's frames. Anomaly mode and
``torch.fx`` call traceback's stack readers, so the worker puts :func:`extract_stack`,
:func:`format_stack` and :func:`print_stack` in their place (:func:`install`). All three are
built on :func:`stack_entries`, the one function here that reads frames: it only reads their
attributes and returns plain tuples, so even a copy of it made with other globals or defaults
hands out no frame. The audit hook lets it read the stack (``autograder.grading.audit``).

Example::

    >>> def where():
    ...     return extract_stack(limit=1)[0].name
    >>> where()
    'where'
    >>> format_stack(limit=1)[0].strip().startswith("File")
    True
"""

from __future__ import annotations

import sys
import traceback
from types import FrameType
from typing import IO

__all__ = ["extract_stack", "format_stack", "install", "print_stack", "stack_entries"]

Entry = tuple[str, int, str, None]  # file, line, function, no line text (read when shown)


def stack_entries(depth: int, frame: FrameType | None = None) -> list[Entry]:
    """``(file, line, function, None)`` of each frame from ``frame`` (by default the one
    ``depth`` calls out from the caller) outwards, innermost first."""
    if frame is None:
        frame = sys._getframe(depth + 1)
    entries = []
    while frame is not None:
        code = frame.f_code
        entries.append((code.co_filename, frame.f_lineno, code.co_name, None))
        frame = frame.f_back
    return entries


def _summary(entries: list[Entry], limit: int | None) -> traceback.StackSummary:
    """``entries`` (innermost first) as traceback's ``StackSummary``, outermost first, cut to
    ``limit`` as traceback cuts it (the innermost ``limit``; the outermost ``-limit``)."""
    if limit is None:
        limit = getattr(sys, "tracebacklimit", None)
        if limit is not None and limit < 0:
            limit = 0
    if limit is not None:
        entries = entries[:limit] if limit >= 0 else entries[limit:]
    return traceback.StackSummary.from_list(entries[::-1])


def extract_stack(f: FrameType | None = None, limit: int | None = None) -> traceback.StackSummary:
    """``traceback.extract_stack``: the caller's stack (or ``f``'s), outermost first."""
    return _summary(stack_entries(1, f), limit)


def format_stack(f: FrameType | None = None, limit: int | None = None) -> list[str]:
    """``traceback.format_stack``: the caller's stack (or ``f``'s) as printable lines."""
    return traceback.format_list(_summary(stack_entries(1, f), limit))


def print_stack(
    f: FrameType | None = None, limit: int | None = None, file: IO[str] | None = None
) -> None:
    """``traceback.print_stack``: print the caller's stack (or ``f``'s) to ``file`` (stderr)."""
    traceback.print_list(_summary(stack_entries(1, f), limit), file=file)


def install() -> None:
    """Put this module's stack readers in place of traceback's, for the rest of the process."""
    traceback.extract_stack = extract_stack
    traceback.format_stack = format_stack
    traceback.print_stack = print_stack
