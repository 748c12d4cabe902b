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

from autograder.checks.messages import SHOWN_BEFORE, wrapped
from autograder.i18n import N_, translate
from autograder.i18n import gettext as _

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
        return _("a check record could not be read ({error}): grading refused it.").format(
            error=type(error).__name__
        )
    if message is None:
        return None
    hint = record.get("hint")
    if hint is None:
        return message
    return message + "\n" + _("Hint: {hint}").format(hint=translate(hint))


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
        return _("a {type}").format(type=evidence[1]["class"])
    return _("an object of type {type}").format(type=evidence[1])


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
    return None if record["condition"] == ["bool", True] else translate(record["message"])


def _type(record: Record) -> str | None:
    return _wrong_type(record["name"], record["value"], record["expected"])


def _wrong_type(name: str, value: Evidence, expected: str) -> str | None:
    got = type_of(value)
    if got == expected:
        return None
    return _("`{name}` should be of type {expected}, but it is of type {got}.").format(
        name=translate(name), expected=expected, got=got
    )


def _equal(record: Record) -> str | None:
    actual, expected = record["actual"], record["expected"]
    wrong_type = _wrong_type(record["name"], actual, type_of(expected))
    if wrong_type:
        return wrong_type
    if not _same(actual, expected):
        return _("`{name}` is {actual}; expected {expected}.").format(
            name=translate(record["name"]), actual=show(actual), expected=show(expected)
        )
    return None


def _choice(record: Record) -> str | None:
    value, choices = record["value"], record["choices"]
    if not any(_same(value, choice) for choice in choices):
        allowed = ", ".join(show(choice) for choice in choices)
        return _("`{name}` is {value}; it must be one of {allowed}.").format(
            name=translate(record["name"]), value=show(value), allowed=allowed
        )
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
        return _("`{name}` is missing the key(s) {keys}.").format(
            name=translate(name), keys=", ".join(map(show, missing))
        )
    if extra:
        return _("`{name}` has unexpected key(s) {keys}.").format(
            name=translate(name), keys=", ".join(map(show, extra))
        )
    return None


def _tensor(record: Record) -> str | None:
    actual, expected, name = record["actual"], record["expected"], record["name"]
    if expected[0] != "tensor" or "values" not in expected[1]:
        return _("`{name}`: the expected value is not a plain tensor; the test is broken.").format(
            name=translate(name)
        )
    wrong_type = _wrong_type(name, actual, type_of(expected))
    if wrong_type:
        return wrong_type
    got, want = actual[1], expected[1]
    shown = translate(name)
    if "dtype" not in got:
        return _unreadable(shown, got)
    if got["dtype"] != want["dtype"]:
        return _("`{name}` has dtype {dtype}; expected {expected}.").format(
            name=shown, dtype=got["dtype"], expected=want["dtype"]
        )
    if got["shape"] != want["shape"]:
        return _("`{name}` has shape {shape}; expected {expected}.").format(
            name=shown, shape=_shape(got), expected=_shape(want)
        )
    if got["device"] != want["device"]:
        return _(
            "`{name}` is on device '{device}'; expected '{expected}'. "
            "Create tensors on the device of their inputs (device=x.device)."
        ).format(name=shown, device=got["device"], expected=want["device"])
    if "values" not in got:
        return _unreadable(shown, got)
    worst, difference = _worst_difference(got["values"], want["values"], record)
    if worst is not None:
        return _(
            "`{name}` has the right dtype, shape and device but wrong values: the largest "
            "difference is {difference} (at index {index})."
        ).format(name=shown, difference=f"{difference:.3g}", index=worst)
    return None


def _unreadable(name: str, tensor: Mapping[str, Any]) -> str:
    reason = _(tensor.get("unreadable") or "unknown reason")
    return _("`{name}` could not be read: {reason}.").format(name=name, reason=reason)


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
    tensor, name = record["tensor"], translate(record["name"])
    if tensor[0] != "tensor" or "requires_grad" not in tensor[1]:
        return _("`{name}` should be a tensor, but it is of type {type}.").format(
            name=name, type=type_of(tensor)
        )
    if tensor[1]["requires_grad"] is not True:
        return _(
            "`{name}` does not require grad, so backward will never fill `{name}.grad`."
        ).format(name=name)
    if tensor[1]["grad_fn"] is not None:
        return _(
            "`{name}` is not a leaf any more: it was computed by {grad_fn}, "
            "so backward will not fill `{name}.grad`."
        ).format(name=name, grad_fn=tensor[1]["grad_fn"])
    return None


def _call(record: Record) -> str | None:
    failure, name = record["failure"], translate(record["name"])
    if failure is None:
        return None
    problem = failure["problem"]
    if problem == "not callable":
        return _("`{name}` should be a function, but it is of type {type}.").format(
            name=name, type=failure["type"]
        )
    if problem == "not written":
        return _(
            "`{name}` is not written yet: replace `raise NotImplementedError()` with your code."
        ).format(name=name)
    if problem == "raised":
        said = _("calling `{name}()` raised {error}: {message}")
        return wrapped(
            said.format(name=name, error=failure["type"], message=failure["message"]),
            taken=SHOWN_BEFORE,
        )
    if problem == "warned":
        said = _("calling `{name}()` gave a {warning}: {message}")
        warned = wrapped(
            said.format(name=name, warning=failure["type"], message=failure["message"]),
            taken=SHOWN_BEFORE,
        )
        return (
            warned
            + "\n"
            + _("Hint: {hint}").format(
                hint=_(
                    "a correct answer triggers no warning here: find what in your code made torch "
                    "warn, and change it so that nothing does."
                )
            )
        )
    raise ValueError(f"unknown call problem {problem!r}")


def _device(record: Record) -> str | None:
    met_in, elsewhere = record["met_in"], record["returned_elsewhere"]
    if met_in is None and elsewhere is not True:
        refused = record.get("refused_on_meta")
        if type(refused) is str:
            return wrapped(
                _(
                    "`{name}` mixed devices: run once more with what it is given on the meta "
                    "device (standing in for a GPU), it used a tensor on the CPU with them, and "
                    "torch refused: {message} A tensor made without device= lands on the CPU, "
                    "whatever device its inputs are on."
                ).format(name=translate(record["name"]), message=refused),
                taken=SHOWN_BEFORE,
            )
        if record.get("read_into_numpy") is True:
            return _(
                "`{name}` read a tensor it was given into NumPy (.numpy()) without bringing it "
                "to the CPU first. Beside inputs on a GPU that tensor is on the GPU, and "
                ".numpy() refuses it: 'can't convert cuda:0 device type tensor to numpy. Use "
                "Tensor.cpu() to copy the tensor to host memory first.' Read it as "
                "t.detach().cpu().numpy(), and bring the result back with device=x.device."
            ).format(name=translate(record["name"]))
        return None
    factory, shape = record["culprit"] or ("?", ())
    made = {"name": translate(record["name"]), "factory": factory, "shape": tuple(shape)}
    if met_in is not None:
        said = _(
            "`{name}` made a tensor without device= ({factory}, of shape {shape}) and used it "
            "with the tensors it was given, in {op}. Beside inputs on a GPU such a tensor is "
            "made on the CPU, and there that operation fails: 'Expected all tensors to be on "
            "the same device'."
        ).format(op=met_in, **made)
    else:
        said = _(
            "`{name}` returned a tensor that is not on the device of its input: it was made "
            "without device= ({factory}, of shape {shape}). Beside inputs on a GPU it would be "
            "on the CPU, where the next operation with the model's tensors fails."
        ).format(**made)
    return (
        said
        + " "
        + _(
            "(Tried by keeping every tensor made without device= apart from the inputs, as the "
            "CPU is from a GPU.)"
        )
    )


_TAKEN = {
    "tensor": N_("a tensor hook (register_hook) on a tensor it was given"),
    "module": N_("a forward hook (register_forward_hook) on a module it was given"),
    "count": N_("the count those hooks keep"),
}


def _hooks_kept(record: Record) -> str | None:
    taken = record["taken"]
    if not taken:
        return None
    return _(
        "`{name}` took away a hook the test had put on what it gave the function ({taken}): "
        "the test counts what autograd runs through that hook, so it cannot grade this call."
        "\nHint: remove only the hooks you registered yourself, through the handles that "
        "register_hook and register_forward_hook return. Emptying a table such as "
        "_backward_hooks or _forward_hooks removes the hooks of others with yours."
    ).format(name=translate(record["name"]), taken="; ".join(_(_TAKEN[kind]) for kind in taken))


def _first_prediction(record: Record) -> str | None:
    first, value, name = record["first"], record["value"], record["name"]
    if first is None or _same(value, first):
        return None
    return _(
        "`{name}` is {value}, but your first prediction, recorded when you first ran "
        "its reveal cell, was {first}: a prediction changed after its reveal earns no "
        "points. This item is graded on your first prediction: set `{name}` back to it."
    ).format(name=translate(name), value=show(value), first=show(first))


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
    "device": _device,
    "hooks_kept": _hooks_kept,
}
