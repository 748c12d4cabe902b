"""Checks that the course's test cells call: exact, strict, and with failure messages that teach.

Every check raises :class:`CheckFailed` (an ``AssertionError``) whose message names the
concept, says what was expected and what came, and gives the next step. Types are compared
exactly before values, so a subclass or an object with a permissive ``__eq__`` never passes.

Example::

    >>> import torch
    >>> from autograder.checks import expect_tensor
    >>> expect_tensor("y", torch.ones(2), torch.ones(2))
    >>> expect_tensor("y", torch.ones(2, dtype=torch.float64), torch.ones(2))
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `y` has dtype torch.float64; expected torch.float32.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection
from typing import Any

import torch

from autograder.messages import headline

__all__ = [
    "CheckFailed",
    "call_learner",
    "expect",
    "expect_choice",
    "expect_equal",
    "expect_leaf",
    "expect_mapping",
    "expect_tensor",
    "expect_type",
]

# Bound once at import, so that a later monkeypatch of torch in the learner's kernel does not
# change what these checks compute.
_allclose = torch.allclose
_isfinite = torch.isfinite
_Tensor = torch.Tensor


class CheckFailed(AssertionError):
    """A test cell's check failed; the message says why and what to do next."""


def _fail(message: str, hint: str | None) -> None:
    raise CheckFailed(message if hint is None else f"{message}\nHint: {hint}")


def expect(condition: object, message: str, *, hint: str | None = None) -> None:
    """Pass only when ``condition`` is the object ``True`` (a truthy stand-in does not count).

    >>> expect(1 + 1 == 2, "arithmetic is broken")
    >>> expect(torch.ones(2).requires_grad, "`x` should require grad.", hint="x.requires_grad_()")
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `x` should require grad.
    Hint: x.requires_grad_()
    """
    if condition is not True:
        _fail(message, hint)


def _type_name(kind: type) -> str:
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def _describe_type(value: object) -> str:
    return _type_name(type(value))


def expect_type(name: str, value: object, expected: type, *, hint: str | None = None) -> None:
    """Pass only when ``type(value) is expected`` (subclasses are refused, on purpose).

    >>> expect_type("n", 3, int)
    >>> expect_type("flag", True, int)
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `flag` should be of type int, but it is of type bool.
    """
    if type(value) is not expected:
        _fail(
            f"`{name}` should be of type {_type_name(expected)}, "
            f"but it is of type {_describe_type(value)}.",
            hint,
        )


def expect_equal(name: str, actual: object, expected: object, *, hint: str | None = None) -> None:
    """Pass when ``actual`` has exactly the type of ``expected`` and the same value.

    >>> expect_equal("answer", False, False)
    >>> expect_equal("answer", 0, False)
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `answer` should be of type bool, but it is of type int.
    """
    expect_type(name, actual, type(expected), hint=hint)
    if type(expected) is float:
        same = math.isclose(actual, expected, rel_tol=1e-9)  # type: ignore[arg-type]
    else:
        same = bool(expected == actual)
    if not same:
        _fail(f"`{name}` is {actual!r}; expected {expected!r}.", hint)


def expect_choice(
    name: str, value: object, choices: Collection[object], *, hint: str | None = None
) -> None:
    """Pass when ``value`` is one of ``choices`` (same type too): the format check of a
    multiple-choice or predict-the-output answer, which says nothing of the right answer.

    >>> expect_choice("pick", "B", ["A", "B", "C"])
    >>> expect_choice("pick", "E", ["A", "B", "C"])
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `pick` is 'E'; it must be one of 'A', 'B', 'C'.
    """
    allowed = ", ".join(repr(choice) for choice in choices)
    if not any(type(value) is type(choice) and value == choice for choice in choices):
        _fail(f"`{name}` is {value!r}; it must be one of {allowed}.", hint)


def expect_mapping(
    name: str,
    actual: object,
    expected_keys: Collection[str],
    *,
    hint: str | None = None,
) -> None:
    """Pass when ``actual`` is a plain ``dict`` with exactly ``expected_keys``.

    >>> expect_mapping("grads", {"a": 1}, ["a"])
    >>> expect_mapping("grads", {"a": 1}, ["a", "b"])
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `grads` is missing the key(s) 'b'.
    """
    expect_type(name, actual, dict, hint=hint)
    assert isinstance(actual, dict)
    missing = [key for key in expected_keys if key not in actual]
    extra = [key for key in actual if key not in expected_keys]
    if missing:
        _fail(f"`{name}` is missing the key(s) {', '.join(map(repr, missing))}.", hint)
    if extra:
        _fail(f"`{name}` has unexpected key(s) {', '.join(map(repr, extra))}.", hint)


def expect_tensor(
    name: str,
    actual: object,
    expected: torch.Tensor,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    hint: str | None = None,
) -> None:
    """Pass when ``actual`` is a plain ``torch.Tensor`` (or exactly the expected tensor's class,
    e.g. ``nn.Parameter``) with the expected dtype, shape and device type, and close values.

    >>> expect_tensor("g", torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))
    >>> expect_tensor("g", torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0]))
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `g` has the right dtype, shape and device but wrong values: \
the largest difference is 0.5 (at index 1).
    """
    expect_type(name, actual, type(expected), hint=hint)
    assert isinstance(actual, _Tensor)
    if actual.dtype != expected.dtype:
        _fail(f"`{name}` has dtype {actual.dtype}; expected {expected.dtype}.", hint)
    if tuple(actual.shape) != tuple(expected.shape):
        _fail(f"`{name}` has shape {tuple(actual.shape)}; expected {tuple(expected.shape)}.", hint)
    if actual.device.type != expected.device.type:
        _fail(
            f"`{name}` is on device '{actual.device.type}'; expected '{expected.device.type}'. "
            "Create tensors on the device of their inputs (device=x.device).",
            hint,
        )
    got = actual.detach()
    want = expected.detach()
    if not bool(_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)):
        difference = (got.double() - want.double()).abs().flatten()
        difference[~_isfinite(difference)] = math.inf
        worst = int(difference.argmax())
        _fail(
            f"`{name}` has the right dtype, shape and device but wrong values: the largest "
            f"difference is {float(difference[worst]):.3g} (at index {worst}).",
            hint,
        )


def expect_leaf(name: str, tensor: object, *, hint: str | None = None) -> None:
    """Pass when ``tensor`` is a leaf that requires grad: the kind of tensor whose ``.grad``
    backward fills.

    >>> expect_leaf("w", torch.zeros(2, requires_grad=True))
    >>> expect_leaf("w", torch.zeros(2, requires_grad=True) * 2)
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `w` is not a leaf any more: it was computed by MulBackward0, \
so backward will not fill `w.grad`.
    """
    if not isinstance(tensor, _Tensor):
        _fail(f"`{name}` should be a tensor, but it is of type {_describe_type(tensor)}.", hint)
    assert isinstance(tensor, _Tensor)
    if not tensor.requires_grad:
        _fail(f"`{name}` does not require grad, so backward will never fill `{name}.grad`.", hint)
    if tensor.grad_fn is not None:
        _fail(
            f"`{name}` is not a leaf any more: it was computed by "
            f"{type(tensor.grad_fn).__name__}, so backward will not fill `{name}.grad`.",
            hint,
        )


def call_learner(name: str, function: object, /, *args: Any, **kwargs: Any) -> Any:
    """Call the learner's ``function`` and turn what goes wrong into a teaching message.

    An exception becomes a :class:`CheckFailed` naming the call and the exception; a warning
    raised during the call fails too, because a correct answer here raises none.

    >>> call_learner("double", lambda x: 2 * x, 21)
    42
    >>> call_learner("broken", lambda: 1 / 0)
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: calling `broken()` raised ZeroDivisionError: division by zero
    """
    if not callable(function):
        _fail(f"`{name}` should be a function, but it is of type {_describe_type(function)}.", None)
    assert isinstance(function, Callable)
    failure = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = function(*args, **kwargs)
        except NotImplementedError:
            failure = (
                f"`{name}` is not written yet: replace `raise NotImplementedError()` "
                "with your code."
            )
        except Exception as error:  # the learner's code may raise anything
            failure = f"calling `{name}()` raised {type(error).__name__}: {headline(error)}"
    if failure is not None:
        _fail(failure, None)
    if caught:
        _fail(
            f"calling `{name}()` gave a {caught[0].category.__name__}: "
            f"{headline(caught[0].message)}",
            "a correct answer triggers no warning here; read the warning's advice.",
        )
    return result
