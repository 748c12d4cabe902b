"""Turn exceptions and warnings into text a learner reads: torch's whole message, wrapped.

Torch's messages say what went wrong and then what to do (``use .retain_grad()``,
``Specify retain_graph=True``); the course prints all of it, wrapped to a readable width,
leaving out only the C++ source location some warnings end with. :data:`WIDTH` leaves room
for nbgrader's Validate, which indents each line of an error by four spaces and cuts it at 87
characters.

>>> error = RuntimeError("Trying to backward through the graph a second time. Specify "
...                      "retain_graph=True if you need to backward through it twice.")
>>> print(wrapped(f"RuntimeError: {whole_message(error)}", width=60))
RuntimeError: Trying to backward through the graph a second
time. Specify retain_graph=True if you need to backward
through it twice.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["SHOWN_BEFORE", "WIDTH", "whole_message", "wrapped"]

WIDTH = 80
# What a traceback (and nbgrader's Validate) shows before a failure's first line.
SHOWN_BEFORE = len("CheckFailed: ")
_SOURCE_LOCATION = re.compile(r"\s*\(Triggered internally at [^\n]*?\.\)")


def whole_message(message: object) -> str:
    """``str(message)`` without surrounding space and without the ``(Triggered internally at
    FILE:LINE.)`` that names where in torch's C++ sources a warning was raised.

    >>> whole_message(UserWarning("Use .retain_grad(). (Triggered internally at /a/T.h:4.)"))
    'Use .retain_grad().'
    """
    return _SOURCE_LOCATION.sub("", str(message)).strip()


def wrapped(text: str, width: int = WIDTH, *, taken: int = 0) -> str:
    """``text`` with each of its lines wrapped to ``width`` (indentation kept; a long word, such
    as an address, is never split); ``taken``: characters a reader shows before the first line
    (``CheckFailed: `` in a traceback), which it leaves free.

    >>> print(wrapped("one two three\\n  four five six", width=9))
    one two
    three
      four
      five
      six
    >>> print(wrapped("one two three", width=9, taken=4))
    one
    two three
    """
    lines = []
    for number, line in enumerate(text.splitlines() or [""]):
        indent = line[: len(line) - len(line.lstrip())]
        room = " " * taken if number == 0 else ""
        filled = textwrap.fill(
            line,
            width,
            initial_indent=room,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines.append(filled[len(room) :] if filled else line)
    return "\n".join(lines)
