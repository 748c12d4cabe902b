"""Find the learner's source line that triggered an event (for labels only).

This is the one place that reads the call stack: it walks outwards to the first frame
that belongs neither to torch nor to gradgraph. Where frames may not be read (the course's
grading sandbox refuses them to the notebook and to gradgraph alike), :func:`caller_frame`
gives None and a recording has no source lines and no module names. Recording keeps only
the file name and line number (cheap); the line's text is read when the event is first
looked at. The result is a label; no behaviour depends on it.

:func:`walk_out` also finds, on the same walk, the innermost frame that runs a given
function (the module tracker asks for ``Module.__call__``: the module running an op).

>>> from gradgraph.source import backward_target, user_source_line
>>> str(user_source_line()).split(":")[0].endswith(("py", ">", "]"))
True
>>> backward_target("cell.py:3: loss.backward(retain_graph=True)")
'loss'
>>> backward_target("cell.py:4: (g,) = torch.autograd.grad(penalty, x, create_graph=True)")
'penalty'
>>> backward_target("cell.py:5: recording.backward(losses[1])"), backward_target(None)
('losses[1]', None)
>>> backward_target("cell.py:6: h.sum().backward()")
'h.sum()'
>>> backward_target("cell.py:7: (x * w).exp().sum().backward()") is None  # no name to give
True
"""

from __future__ import annotations

import linecache
import os
import re
import sys
from operator import itemgetter
from types import CodeType, FrameType

import torch

__all__ = [
    "SourceLine",
    "backward_target",
    "caller_frame",
    "source_line_from",
    "user_source_line",
    "walk_out",
]

_SKIPPED_DIRS = (
    os.path.dirname(torch.__file__) + os.sep,
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
)
# Code objects are looked up by id: hashing a code object hashes its bytecode and
# constants every time (about 0.5 us), an int costs next to nothing. The table holds the
# code objects it names, so their ids cannot be reused while they are in it.
_skipped: dict[int, CodeType] = {}  # torch's and gradgraph's code met so far


_NAME = r"([A-Za-z_][\w.]*(?:\[[^\]]*\])?)"
# a name, then attributes, indexing and calls without nested brackets: h.sum(), model(x)[0]
_CHAIN = r"(?<![\w.)\]])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\[\]]*\]|\([^()]*\))*)"
# autograd.grad(loss, ...); rec.backward(loss), autograd.backward(loss); loss.backward()
_TARGETS = (
    re.compile(rf"\bgrad\(\s*{_NAME}\s*[,)]"),
    re.compile(rf"\.backward\(\s*{_NAME}\s*[,)]"),
    re.compile(rf"{_CHAIN}\.backward\("),
)


class SourceLine(tuple):
    """A line of the learner's code, ``SourceLine((filename, lineno))``; ``str()`` reads it:
    ``"file.py:12: y = x.exp()"``.

    A tuple: the recorder makes one for every operation it sees, and a tuple subclass is
    made without running any Python code.
    """

    __slots__ = ()

    filename = property(itemgetter(0), doc="The file's path.")
    lineno = property(itemgetter(1), doc="The line's number, from 1.")

    def __repr__(self) -> str:
        return f"SourceLine({os.path.basename(self.filename)}:{self.lineno})"

    def __str__(self) -> str:
        where = f"{os.path.basename(self.filename)}:{self.lineno}"
        code = linecache.getline(self.filename, self.lineno).strip()
        return f"{where}: {code}" if code else where


def backward_target(line: str | None) -> str | None:
    """The name of what a source line differentiates (``loss`` in ``loss.backward()``), or None."""
    code = (line or "").split(": ", 1)[-1]
    for pattern in _TARGETS:
        match = pattern.search(code)
        if match:
            return match.group(1)
    return None


def caller_frame(depth: int = 1) -> FrameType | None:
    """The frame ``depth`` calls out from the function that calls this one (0: that function),
    or None where there is none or frames may not be read (a sandbox's audit hook refuses
    ``sys._getframe`` with a RuntimeError).

    >>> def inner():
    ...     return caller_frame(1).f_code.co_name
    >>> def outer():
    ...     return inner()
    >>> outer(), caller_frame(10_000)
    ('outer', None)
    """
    try:
        return sys._getframe(depth + 1)
    except (RuntimeError, ValueError):
        return None


def user_source_line() -> SourceLine | None:
    """The innermost frame outside torch and gradgraph, as a :class:`SourceLine`."""
    return source_line_from(caller_frame(1))


def source_line_from(frame: FrameType | None) -> SourceLine | None:
    """The first frame from ``frame`` outwards that is outside torch and gradgraph."""
    return walk_out(frame)[0]


def walk_out(
    frame: FrameType | None, marker: CodeType | None = None, stop: FrameType | None = None
) -> tuple[SourceLine | None, FrameType | None]:
    """From ``frame`` outwards, no further than ``stop``: the learner's line (the first
    frame outside torch and gradgraph) and the innermost frame that runs ``marker`` (None
    where it was not met; without a marker the walk ends at the line).

    >>> import sys
    >>> def marked():
    ...     return walk_out(sys._getframe(), outer.__code__)
    >>> def outer():
    ...     return marked()
    >>> line, frame = outer()
    >>> frame.f_code is outer.__code__, line.lineno == marked.__code__.co_firstlineno + 1
    (True, True)
    >>> walk_out(sys._getframe(), outer.__code__)[1] is None  # not running: not found
    True
    """
    line = found = None
    while frame is not None:
        code = frame.f_code
        if code is marker:
            if found is None:
                found = frame
                if line is not None:
                    break
        elif line is None and id(code) not in _skipped:
            if code.co_filename.startswith(_SKIPPED_DIRS):
                _skipped[id(code)] = code
            else:
                line = SourceLine((code.co_filename, frame.f_lineno))
                if found is not None or marker is None:
                    break
        if frame is stop:
            break
        frame = frame.f_back
    return line, found
