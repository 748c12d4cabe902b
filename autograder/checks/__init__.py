"""Checks that the course's test cells call: exact, strict, and with failure messages that teach.

Every check raises :class:`CheckFailed` (an ``AssertionError``) whose message names the
concept, says what was expected and what came, and gives the next step. Types are compared
exactly before values, so a subclass or an object with a permissive ``__eq__`` never passes.

Each check reads what it is given into plain evidence (:mod:`autograder.checks.evidence`) and
decides with a rule over that data alone (:mod:`autograder.checks.rules`). When a class is
graded, the grader receives every check's record through :func:`send_records_to`, without the
expected values the learner's process computed, and judges it in its own process against the
same check of the solution's run (:mod:`autograder.grading.scoring`). A check whose right
answer may legitimately differ from the solution's says so (``answer_may_differ=True``); it
keeps its own expected value, and the class report lists it as judged inside the learner's
process. The grader keeps a record only when the test cell's own code called the check (directly,
or through a function the test cell defines): a helper defined in another cell, or anything
of the notebook's, handing one over voids the item (:mod:`autograder.grading.delivery`).

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

import warnings
from collections.abc import Collection
from pathlib import Path
from typing import Any

import torch

from autograder.checks.buffers import holds_saved_tensors
from autograder.checks.devices import (
    MadeWithoutDevice,
    call_watched,
    differentiate_away_from_notebook_device,
    differentiate_watched,
    meta_values_read_as_zeros,
    notebook_device_elsewhere,
    tensors_made_without_device,
)
from autograder.checks.evidence import describe, type_label
from autograder.checks.first_predictions import read_first_predictions
from autograder.checks.gradients import GivenGradients, gradients_from_autograd
from autograder.checks.live import every_warning, shows_outcome
from autograder.checks.messages import whole_message
from autograder.checks.modes import modes_changed, train_modes
from autograder.checks.predictions import reveal_prediction
from autograder.checks.records import (
    CHECK_BEGINS as _BEGINS,
)
from autograder.checks.records import (
    LEARNER_CALLED as _CALLED,
)
from autograder.checks.records import (
    LEARNER_RETURNED as _RETURNED,
)
from autograder.checks.records import (
    CheckFailed,
    send_records_to,
)
from autograder.checks.records import (
    checkpoint as _checkpoint,
)
from autograder.checks.records import (
    decide as _decide,
)
from autograder.checks.records import (
    declared as _declared,
)
from autograder.checks.runs import Runs, count_runs
from autograder.i18n import translate

# Forward-mode AD (torch.func.jvp, jacfwd, hessian) imports this module on first use, and its
# TorchScript decorators then warn that torch.jit.script is deprecated: a warning about torch's
# own code, which call_learner would blame on a learner's first forward-mode call. Imported here
# once, as the grader's workers do before any notebook runs.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import torch._decomp.decompositions_for_jvp  # noqa: F401

__all__ = [
    "CheckFailed",
    "GivenGradients",
    "MadeWithoutDevice",
    "Runs",
    "call_learner",
    "call_watched",
    "count_runs",
    "differentiate_away_from_notebook_device",
    "differentiate_watched",
    "expect",
    "expect_choice",
    "expect_equal",
    "expect_first_prediction",
    "expect_leaf",
    "expect_made_with_device",
    "expect_mapping",
    "expect_tensor",
    "expect_type",
    "gradients_from_autograd",
    "holds_saved_tensors",
    "meta_values_read_as_zeros",
    "modes_changed",
    "notebook_device_elsewhere",
    "reveal_prediction",
    "say",
    "send_records_to",
    "shows_outcome",
    "tensors_made_without_device",
    "train_modes",
]

_callable = callable
# torch's advice about code that is right: a warning whose message holds one of these does
# not fail a call (``float(loss)`` is as right as ``loss.item()``)
ADVICE_TO_RIGHT_CODE = ("Converting a tensor with requires_grad=True to a scalar",)


def say(text: str) -> None:
    """Print ``text``, a test cell's words to the learner, in the notebook's language.

    >>> say("Visible tests passed.")
    Visible tests passed.
    """
    print(translate(text))


def expect(condition: object, message: str, *, hint: str | None = None) -> None:
    """Pass only when ``condition`` is the object ``True`` (a truthy stand-in does not count).

    >>> expect(1 + 1 == 2, "arithmetic is broken")
    >>> expect(torch.ones(2).requires_grad, "`x` should require grad.", hint="x.requires_grad_()")
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `x` should require grad.
    Hint: x.requires_grad_()
    """
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    _decide({"rule": "expect", "condition": describe(condition), "message": message, "hint": hint})


def expect_type(name: str, value: object, expected: type, *, hint: str | None = None) -> None:
    """Pass only when ``type(value) is expected`` (subclasses are refused, on purpose).

    >>> expect_type("n", 3, int)
    >>> expect_type("flag", True, int)
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `flag` should be of type int, but it is of type bool.
    """
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    _decide(
        {
            "rule": "type",
            "name": name,
            "value": describe(value),
            "expected": type_label(expected),
            "hint": hint,
        }
    )


def expect_equal(
    name: str,
    actual: object,
    expected: object,
    *,
    hint: str | None = None,
    answer_may_differ: bool = False,
) -> None:
    """Pass when ``actual`` has exactly the type of ``expected`` and the same value (floats to
    a relative 1e-9). ``answer_may_differ``: see the module's description.

    >>> expect_equal("answer", False, False)
    >>> expect_equal("answer", 0, False)
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `answer` should be of type bool, but it is of type int.
    """
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    _decide(
        _declared(
            {
                "rule": "equal",
                "name": name,
                "actual": describe(actual),
                "expected": describe(expected),
                "hint": hint,
            },
            answer_may_differ,
        )
    )


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
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    _decide(
        {
            "rule": "choice",
            "name": name,
            "value": describe(value),
            "choices": [describe(choice) for choice in choices],
            "hint": hint,
        }
    )


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
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    _decide(
        {
            "rule": "mapping",
            "name": name,
            "actual": describe(actual),
            "keys": [describe(key) for key in expected_keys],
            "hint": hint,
        }
    )


def expect_tensor(
    name: str,
    actual: object,
    expected: torch.Tensor,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    hint: str | None = None,
    answer_may_differ: bool = False,
) -> None:
    """Pass when ``actual`` is a plain ``torch.Tensor`` (or exactly the expected tensor's class,
    e.g. ``nn.Parameter``) with the expected dtype, shape and device type, and close values.
    ``answer_may_differ``: see the module's description.

    >>> expect_tensor("g", torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))
    >>> expect_tensor("g", torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.0]))
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `g` has the right dtype, shape and device but wrong values: \
the largest difference is 0.5 (at index 1).
    """
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    _decide(
        _declared(
            {
                "rule": "tensor",
                "name": name,
                "actual": describe(actual),
                "expected": describe(expected),
                "rtol": rtol,
                "atol": atol,
                "hint": hint,
            },
            answer_may_differ,
        )
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
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    _decide({"rule": "leaf", "name": name, "tensor": describe(tensor), "hint": hint})


def expect_made_with_device(
    name: str,
    made: MadeWithoutDevice,
    returned: Collection[object] | None = (),
    device: torch.device | None = None,
    *,
    hint: str | None = None,
) -> None:
    """Pass when ``name``, run inside :func:`tensors_made_without_device` (by :func:`call_watched`
    or :func:`differentiate_watched`; ``made``: what the block saw), used no tensor made
    without ``device=`` together with the tensors it was given and, where ``device`` is
    given, returned only tensors on it (``returned``: what the call gave back; None: it gave
    nothing back, it raised).

    >>> x = torch.ones(3)
    >>> with tensors_made_without_device() as made:
    ...     y = x * torch.ones(3, device=x.device)
    >>> expect_made_with_device("scale", made, [y], x.device)
    >>> with tensors_made_without_device() as made:
    ...     y = torch.zeros(3) + 1  # never meets x, but comes back from elsewhere
    >>> expect_made_with_device("shift", made, [y], x.device)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `shift` returned a tensor that is not on the device of its \
input: it was made without device= (torch.zeros, of shape (3,)). Beside inputs on a GPU...
    """
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    culprit = made.culprit or (made.made[0] if made.made else None)
    elsewhere = device is not None and (
        returned is None
        or any(isinstance(t, torch.Tensor) and t.device != device for t in returned)
    )
    _decide(
        {
            "rule": "device",
            "name": name,
            "met_in": made.met_in,
            "culprit": None if culprit is None else [culprit[0], list(culprit[1])],
            "returned_elsewhere": elsewhere,
            "read_into_numpy": made.read_into_numpy,
            "refused_on_meta": made.refused_on_meta,
            "hint": hint,
        }
    )


def expect_first_prediction(
    grade_id: str, name: str, value: object, *, hint: str | None = None
) -> None:
    """Pass when ``value`` is the first prediction recorded for ``grade_id`` by its reveal
    (:func:`reveal_prediction`), or when none was recorded; a prediction changed after its
    reveal fails. The class grader judges this check against its own read of the record.

    >>> import os, tempfile
    >>> here = os.getcwd()
    >>> os.chdir(tempfile.mkdtemp())
    >>> expect_first_prediction("pick", "pick", "B")
    >>> reveal_prediction("pick", "B", "A")
    you said B; torch: A  ✗
    0 of 1 right.
    >>> expect_first_prediction("pick", "pick", "A")
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `pick` is 'A', but your first prediction, recorded when you \
first ran its reveal cell, was 'B': a prediction changed after its reveal earns no points. This \
item is graded on your first prediction: set `pick` back to it.
    >>> os.chdir(here)
    """
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    _decide(
        {
            "rule": "first_prediction",
            "grade_id": grade_id,
            "name": name,
            "value": describe(value),
            "first": read_first_predictions(Path.cwd()).first(grade_id),
            "hint": hint,
        }
    )


def call_learner(name: str, function: object, /, *args: Any, **kwargs: Any) -> Any:
    """Call the learner's ``function`` and turn what goes wrong into a teaching message.

    An exception becomes a :class:`CheckFailed` naming the call and the exception; a warning
    raised during the call fails too, because a correct answer here raises none (torch's
    advice in :data:`ADVICE_TO_RIGHT_CODE` aside), however many times the same code warned
    before (see :func:`~autograder.checks.live.every_warning`).

    >>> call_learner("double", lambda x: 2 * x, 21)
    42
    >>> call_learner("broken", lambda: 1 / 0)
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: calling `broken()` raised ZeroDivisionError: division by zero
    """
    _checkpoint(_BEGINS)  # before anything is read (see autograder.checks.records)
    failure, result = _call(function, args, kwargs)
    _decide({"rule": "call", "name": name, "failure": failure, "hint": None})
    return result


def _call(
    function: object, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, str] | None, Any]:
    """What went wrong when calling ``function`` (plain data, phrased by the rule), or
    ``None``; and its result."""
    if not _callable(function):
        _checkpoint(_RETURNED)  # (none of the learner's code ran)
        return {"problem": "not callable", "type": type_label(type(function))}, None
    with every_warning() as caught:  # torch's once-per-process warnings too, every call
        try:
            _checkpoint(_CALLED)  # from here to its return, only the learner's code runs
            result = function(*args, **kwargs)
        except NotImplementedError as error:
            if not whole_message(error):  # the released stub's bare `raise NotImplementedError()`
                return {"problem": "not written"}, None
            return _raised(error), None
        except Exception as error:  # the learner's code may raise anything
            return _raised(error), None
        finally:  # what the learner's code changed is looked at before anything else runs
            _checkpoint(_RETURNED)
    warned = [w for w in caught if not _advice_to_right_code(whole_message(w.message))]
    if warned:
        warning = warned[0]
        return {
            "problem": "warned",
            "type": warning.category.__name__,
            "message": whole_message(warning.message),
        }, None
    return None, result


def _advice_to_right_code(message: str) -> bool:
    return any(advice in message for advice in ADVICE_TO_RIGHT_CODE)


def _raised(error: BaseException) -> dict[str, str]:
    return {"problem": "raised", "type": type(error).__name__, "message": whole_message(error)}
