"""The worker's JSON-lines channel to the grader, built only from objects bound at import.

A submission can replace ``json.dumps``, ``os.write`` or anything in ``json.encoder``; the
functions :func:`open_channel` returns call none of them: they hold the C encoder of strings,
the C scanner of a decoder made at import, the raw ``os.read``/``os.write`` functions and the
exact built-in types, so a later patch of any module changes nothing that is sent or received.

Example::

    >>> encode({"op": "done", "ok": True, "records": [["float", 0.5], None, "é"]})
    b'{"op": "done", "ok": true, "records": [["float", 0.5], null, "\\\\u00e9"]}\\n'
    >>> encode({"bad": float("nan")})
    Traceback (most recent call last):
    ...
    ValueError: a message holds nan, which JSON cannot carry
"""

from __future__ import annotations

import json
import math
import os
from _json import encode_basestring_ascii
from collections.abc import Callable
from typing import Any

__all__ = ["encode", "open_channel"]

_DECODER = json.JSONDecoder()


def encode(
    message: Any,
    _str=encode_basestring_ascii,
    _type=type,
    _float_repr=float.__repr__,
    _int_repr=int.__repr__,
    _isfinite=math.isfinite,
    _join=", ".join,
    _items=dict.items,
    _bytes=str.encode,
) -> bytes:
    """One message as a line of ASCII JSON (``NaN`` and infinities refused)."""

    def text(value: Any) -> str:
        kind = _type(value)
        if kind is str:
            return _str(value)
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if kind is int:
            return _int_repr(value)
        if kind is float:
            if not _isfinite(value):
                raise ValueError(f"a message holds {_float_repr(value)}, which JSON cannot carry")
            return _float_repr(value)
        if kind is list or kind is tuple:
            return "[" + _join([text(item) for item in value]) + "]"
        if kind is dict:
            return "{" + _join([_str(k) + ": " + text(v) for k, v in _items(value)]) + "}"
        raise ValueError(f"a message holds a {kind.__name__}, which is not plain data")

    return _bytes(text(message) + "\n", "ascii")


def open_channel(
    reading: int,
    writing: int,
    _decode=_DECODER.raw_decode,
    _read=os.read,
    _write=os.write,
    _encode=encode,
    _bytearray=bytearray,
    _bytes=bytes,
) -> tuple[Callable[[], dict[str, Any] | None], Callable[[dict[str, Any]], None]]:
    """``(receive, send)`` over two file descriptors: ``receive()`` returns the next message
    (``None`` at end of input), ``send(message)`` writes one. Input is read byte by byte, so
    that a forked child and its parent never take each other's messages."""

    def receive() -> dict[str, Any] | None:
        line = _bytearray()
        while not line.endswith(b"\n"):
            chunk = _read(reading, 1)
            if not chunk:
                return None
            line += chunk
        return _decode(_bytes(line).decode("utf-8"))[0]

    def send(message: dict[str, Any]) -> None:
        data = _encode(message)
        while data:
            data = data[_write(writing, data) :]

    return receive, send
