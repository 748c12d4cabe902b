"""Find the learner's source line that triggered an event (for labels only).

This is the one place that reads the call stack: it walks outwards to the first frame
that belongs neither to torch nor to gradgraph. The result is a label; no behaviour
depends on it.

>>> from gradgraph.source import user_source_line
>>> user_source_line().split(":")[0].endswith(("py", ">", "]"))
True
"""

from __future__ import annotations

import linecache
import os
import sys

import torch

__all__ = ["user_source_line"]

_SKIPPED_DIRS = (
    os.path.dirname(torch.__file__) + os.sep,
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
)


def user_source_line() -> str | None:
    """``"file.py:12: y = x.exp()"`` for the innermost frame outside torch and gradgraph."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIPPED_DIRS):
        frame = frame.f_back
    if frame is None:
        return None
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    code = linecache.getline(filename, lineno).strip()
    return (
        f"{os.path.basename(filename)}:{lineno}: {code}"
        if code
        else f"{os.path.basename(filename)}:{lineno}"
    )
