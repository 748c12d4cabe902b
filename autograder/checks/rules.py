"""The checks' pass/fail rules over plain data, so that the same rule can decide twice.

A check first turns what it is given into *evidence*: plain JSON data, made by
:mod:`autograder.checks.evidence`. :func:`judge` then decides from that data alone and returns the
failure message, or ``None`` when the check passes. In the learner's kernel this gives instant
feedback; when a class is graded, the trusted grader judges the same records again, outside the
learner's process, where nothing the learner wrote can reach the rule.

Evidence is a list whose first element names its kind: ``["bool", True]``, ``["int", 3]``,
``["float", 0.5]`` (``"nan"``, ``"inf"``, ``"-inf"`` for the non-finite ones), ``["str", "a"]``,
``["none"]``, ``["list", [...]]``, ``["tuple", [...]]``, ``["set", [...]]``,
``["dict", [[key, value], ...]]``, ``["tensor", {...}]``, ``["type", "int"]`` and
``["other", "type name"]`` for anything else, which never equals anything.

Example::

    >>> judge({"rule": "equal", "name": "answer", "actual": ["int", 0],
    ...        "expected": ["bool", False]})
    '`answer` should be of type bool, but it is of type int.'
    >>> judge({"rule": "expect", "condition": ["bool", True], "message": "broken"}) is None
    True
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["judge", "show", "type_of"]

Evidence = list[Any]
Record = Mapping[str, Any]


def judge(record: Record) -> str | None:
    """The failure message of one check ``record``, or ``None`` when it passes.

    An unknown rule or malformed record fails: the grader never passes what it cannot read.
    """
    try:
        rule = _RULES[record["rule"]]
        message = rule(record)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        return f"a check record could not be read ({type(error).__name__}): grading refused it."
    if message is None:
        return None
    hint = record.get("hint")
    return message if hint is None else f"{message}\nHint: {hint}"


def type_of(evidence: Evidence) -> str:
    """The type name the evidence stands for, as messages show it.

    >>> type_of(["tensor", {"class": "torch.Tensor"}]), type_of(["none"])
    ('torch.Tensor', 'NoneType')
    """
    kind = evidence[0]
    if kind == "tensor":
        return evidence[1]["class"]
    if kind == "other":
        return evidence[1]
    return {"none": "NoneType", "dtype": "torch.dtype", "device": "torch.device"}.get(kind, kind)


def show(evidence: Evidence) -> str:
    """A Python-like repr of plain evidence, for messages.

    >>> show(["dict", [[["str", "a"], ["tuple", [["int", 1], ["bool", False]]]]]])
    "{'a': (1, False)}"
    """
    kind = evidence[0]
    if kind in ("bool", "int", "str"):
        return repr(evidence[1])
    if kind == "float":
        value = evidence[1]
        return repr(float(value)) if isinstance(value, str) else repr(value)
    if kind == "none":
        return "None"
    if kind in ("list", "tuple", "set"):
        inner = ", ".join(show(item) for item in evidence[1])
        if kind == "list":
            return f"[{inner}]"
        if kind == "set":
            return f"{{{inner}}}" if inner else "set()"
        return f"({inner},)" if len(evidence[1]) == 1 else f"({inner})"
    if kind == "dict":
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in evidence[1]) + "}"
    if kind in ("dtype", "device", "type"):
        return evidence[1]
    if kind == "tensor":
        return f"a {evidence[1]['class']}"
    return f"an object of type {evidence[1]}"


def _same(actual: Evidence, expected: Evidence) -> bool:
    """Exact equality of plain evidence; floats close to 1e-9 relative (as math.isclose)."""
    if actual[0] != expected[0]:
        return False
    kind = actual[0]
    if kind == "other" or kind == "tensor":
        return False
    if kind == "float":
        a, b = float(actual[1]), float(expected[1])
        return a == b or math.isclose(a, b, rel_tol=1e-9)
    if kind in ("list", "tuple"):
        return len(actual[1]) == len(expected[1]) and all(
            _same(a, b) for a, b in zip(actual[1], expected[1], strict=True)
        )
    if kind == "set":
        return _canonical(actual) == _canonical(expected)
    if kind == "dict":
        mine = {_canonical(k): v for k, v in actual[1]}
        theirs = {_canonical(k): v for k, v in expected[1]}
        return mine.keys() == theirs.keys() and all(_same(mine[k], theirs[k]) for k in mine)
    return actual == expected


def _canonical(evidence: Evidence) -> str:
    if evidence[0] == "set":
        return json.dumps(["set", sorted(_canonical(item) for item in evidence[1])])
    return json.dumps(evidence, sort_keys=True)


def _expect(record: Record) -> str | None:
    return None if record["condition"] == ["bool", True] else record["message"]


def _type(record: Record) -> str | None:
    return _wrong_type(record["name"], record["value"], record["expected"])


def _wrong_type(name: str, value: Evidence, expected: str) -> str | None:
    got = type_of(value)
    return (
        None
        if got == expected
        else f"`{name}` should be of type {expected}, but it is of type {got}."
    )


def _equal(record: Record) -> str | None:
    actual, expected = record["actual"], record["expected"]
    wrong_type = _wrong_type(record["name"], actual, type_of(expected))
    if wrong_type:
        return wrong_type
    if not _same(actual, expected):
        return f"`{record['name']}` is {show(actual)}; expected {show(expected)}."
    return None


def _choice(record: Record) -> str | None:
    value, choices = record["value"], record["choices"]
    if not any(_same(value, choice) for choice in choices):
        allowed = ", ".join(show(choice) for choice in choices)
        return f"`{record['name']}` is {show(value)}; it must be one of {allowed}."
    return None


def _mapping(record: Record) -> str | None:
    actual, name = record["actual"], record["name"]
    wrong_type = _wrong_type(name, actual, "dict")
    if wrong_type:
        return wrong_type
    keys = [key for key, _ in actual[1]]
    expected = record["keys"]
    missing = [key for key in expected if not any(_same(key, k) for k in keys)]
    extra = [key for key in keys if not any(_same(key, k) for k in expected)]
    if missing:
        return f"`{name}` is missing the key(s) {', '.join(map(show, missing))}."
    if extra:
        return f"`{name}` has unexpected key(s) {', '.join(map(show, extra))}."
    return None


def _tensor(record: Record) -> str | None:
    actual, expected, name = record["actual"], record["expected"], record["name"]
    if expected[0] != "tensor" or "values" not in expected[1]:
        return f"`{name}`: the expected value is not a plain tensor; the test is broken."
    wrong_type = _wrong_type(name, actual, type_of(expected))
    if wrong_type:
        return wrong_type
    got, want = actual[1], expected[1]
    if "dtype" not in got:
        return f"`{name}` could not be read: {got.get('unreadable', 'unknown reason')}."
    if got["dtype"] != want["dtype"]:
        return f"`{name}` has dtype {got['dtype']}; expected {want['dtype']}."
    if got["shape"] != want["shape"]:
        return f"`{name}` has shape {_shape(got)}; expected {_shape(want)}."
    if got["device"] != want["device"]:
        return (
            f"`{name}` is on device '{got['device']}'; expected '{want['device']}'. "
            "Create tensors on the device of their inputs (device=x.device)."
        )
    if "values" not in got:
        return f"`{name}` could not be read: {got.get('unreadable', 'unknown reason')}."
    worst, difference = _worst_difference(got["values"], want["values"], record)
    if worst is not None:
        return (
            f"`{name}` has the right dtype, shape and device but wrong values: the largest "
            f"difference is {difference:.3g} (at index {worst})."
        )
    return None


def _shape(tensor: Mapping[str, Any]) -> str:
    return str(tuple(tensor["shape"]))


def _worst_difference(
    got: Sequence[Any], want: Sequence[Any], record: Record
) -> tuple[int | None, float]:
    """Index and size of the largest difference when some element is not close, as
    ``torch.allclose(got, want, rtol, atol, equal_nan=True)`` decides; ``(None, 0.0)`` if all
    are."""
    rtol, atol = float(record.get("rtol", 1e-5)), float(record.get("atol", 1e-6))
    if len(got) != len(want):
        return 0, math.inf
    close = True
    differences = []
    for a, b in zip(got, want, strict=True):
        a, b = float(a), float(b)
        both_nan = math.isnan(a) and math.isnan(b)
        if not both_nan and not (a == b or abs(a - b) <= atol + rtol * abs(b)):
            close = False
        difference = abs(a - b)
        differences.append(difference if math.isfinite(difference) else math.inf)
    if close:
        return None, 0.0
    worst = max(range(len(differences)), key=differences.__getitem__)
    return worst, differences[worst]


def _leaf(record: Record) -> str | None:
    tensor, name = record["tensor"], record["name"]
    if tensor[0] != "tensor" or "requires_grad" not in tensor[1]:
        return f"`{name}` should be a tensor, but it is of type {type_of(tensor)}."
    if tensor[1]["requires_grad"] is not True:
        return f"`{name}` does not require grad, so backward will never fill `{name}.grad`."
    if tensor[1]["grad_fn"] is not None:
        return (
            f"`{name}` is not a leaf any more: it was computed by {tensor[1]['grad_fn']}, "
            f"so backward will not fill `{name}.grad`."
        )
    return None


def _call(record: Record) -> str | None:
    return record["failure"]


def _first_prediction(record: Record) -> str | None:
    first, value, name = record["first"], record["value"], record["name"]
    if first is None or _same(value, first):
        return None
    return (
        f"`{name}` is {show(value)}, but your first prediction, recorded when you first ran "
        f"its reveal cell, was {show(first)}: a prediction changed after its reveal earns no "
        f"points. This item is graded on your first prediction: set `{name}` back to it."
    )


_RULES: dict[str, Callable[[Record], str | None]] = {
    "expect": _expect,
    "type": _type,
    "equal": _equal,
    "choice": _choice,
    "mapping": _mapping,
    "tensor": _tensor,
    "leaf": _leaf,
    "call": _call,
    "first_prediction": _first_prediction,
}
