"""Find the learner's source line that triggered an event (for labels only).

This is the one place that reads the call stack: it walks outwards to the first frame
that belongs neither to torch nor to gradgraph. The result is a label; no behaviour
depends on it.

>>> from gradgraph.source import backward_target, user_source_line
>>> user_source_line().split(":")[0].endswith(("py", ">", "]"))
True
>>> backward_target("cell.py:3: loss.backward(retain_graph=True)")
'loss'
>>> backward_target("cell.py:4: (g,) = torch.autograd.grad(penalty, x, create_graph=True)")
'penalty'
>>> backward_target("cell.py:5: recording.backward(losses[1])"), backward_target(None)
('losses[1]', None)
"""

from __future__ import annotations

import linecache
import os
import re
import sys

import torch

__all__ = ["backward_target", "user_source_line"]

_SKIPPED_DIRS = (
    os.path.dirname(torch.__file__) + os.sep,
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
)


_NAME = r"([A-Za-z_][\w.]*(?:\[[^\]]*\])?)"
# autograd.grad(loss, ...); rec.backward(loss), autograd.backward(loss); loss.backward()
_TARGETS = (
    re.compile(rf"\bgrad\(\s*{_NAME}\s*[,)]"),
    re.compile(rf"\.backward\(\s*{_NAME}\s*[,)]"),
    re.compile(rf"{_NAME}\.backward\("),
)


def backward_target(line: str | None) -> str | None:
    """The name of what a source line differentiates (``loss`` in ``loss.backward()``), or None."""
    code = (line or "").split(": ", 1)[-1]
    for pattern in _TARGETS:
        match = pattern.search(code)
        if match:
            return match.group(1)
    return None


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
