"""How a check's record travels: to the sinks the class grader installs, then to its rule.

The checks of :mod:`autograder.checks` build a record of plain evidence and hand it to
:func:`decide`, which passes it to every sink :func:`send_records_to` installed (the grading
worker's, in a class run) and raises :class:`CheckFailed` with the rule's message when the
check fails. In a learner's run the sinks get the record without the fields of
``EXPECTED_FIELDS``: the grader takes those from the same check of the solution's run. A check
also tells the grader's sink when it begins (:data:`CHECK_BEGINS`), when it calls the learner's
code (:data:`LEARNER_CALLED`) and when that code returns (:data:`LEARNER_RETURNED`), through
:func:`checkpoint`: the grader looks at what the checks read at those moments
(:mod:`autograder.grading.checkpoints`).

Example::

    >>> seen = []
    >>> with send_records_to(seen.append, expected=False):
    ...     decide({"rule": "equal", "name": "n", "actual": ["int", 2], "expected": ["int", 2]})
    >>> seen
    [{'rule': 'equal', 'name': 'n', 'actual': ['int', 2]}]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from autograder.checks.rules import judge

__all__ = [
    "CHECK_BEGINS",
    "EXPECTED_FIELDS",
    "LEARNER_CALLED",
    "LEARNER_RETURNED",
    "CheckFailed",
    "Record",
    "checkpoint",
    "declared",
    "decide",
    "send_records_to",
    "sending",
]

Record = dict[str, Any]
_record_sinks: list[tuple[Callable[[Record], None], bool]] = []
_checkpoint_sinks: list[Callable[[str], None]] = []
# What a check tells the sinks of checkpoints: it begins, before it reads anything; it calls
# the learner's code now (call_learner: nothing of the test's runs until that code returns);
# the learner's code it called has returned.
CHECK_BEGINS = "a check begins"
LEARNER_CALLED = "the learner's code is called"
LEARNER_RETURNED = "the learner's code returned"
# What each rule's record holds that the test computed as the right answer: in a learner's run
# the grader takes these from the solution's run of the same check instead.
EXPECTED_FIELDS = {
    "type": ("expected",),
    "equal": ("expected",),
    "choice": ("choices",),
    "mapping": ("keys",),
    "tensor": ("expected", "rtol", "atol"),
}


class CheckFailed(AssertionError):
    """A test cell's check failed; the message says why and what to do next."""


# Shown where notebooks import it (``autograder.checks.CheckFailed``).
CheckFailed.__module__ = "autograder.checks"


@contextmanager
def send_records_to(
    sink: Callable[[Record], None],
    *,
    expected: bool = True,
    checkpoints: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Pass every check's record to ``sink`` (the class grader's channel) while inside; with
    ``expected=False`` (a learner's run) a copy without the fields of ``EXPECTED_FIELDS``,
    unless the check says its answer may differ; and, where given, every :func:`checkpoint`
    to ``checkpoints``.

    >>> seen = []
    >>> from autograder.checks import expect, expect_equal
    >>> with send_records_to(seen.append, expected=False):
    ...     expect(True, "never shown")
    ...     expect_equal("n", 2, 2)
    >>> seen  # doctest: +NORMALIZE_WHITESPACE
    [{'rule': 'expect', 'condition': ['bool', True], 'message': 'never shown', 'hint': None},
     {'rule': 'equal', 'name': 'n', 'actual': ['int', 2], 'hint': None}]
    """
    entry = (sink, expected)
    _record_sinks.append(entry)
    if checkpoints is not None:
        _checkpoint_sinks.append(checkpoints)
    try:
        yield
    finally:  # by identity: list.remove would run the __eq__ of whatever else the list holds
        _take_out(_record_sinks, entry)
        if checkpoints is not None:
            _take_out(_checkpoint_sinks, checkpoints)


def _take_out(table: list[Any], entry: object) -> None:
    """Remove the last ``entry`` from ``table``, found by identity."""
    for index in reversed(range(len(table))):
        if table[index] is entry:
            del table[index]
            break


def checkpoint(moment: str) -> None:
    """Tell every sink of checkpoints that a check is at ``moment`` (:data:`CHECK_BEGINS`,
    :data:`LEARNER_CALLED`, :data:`LEARNER_RETURNED`); nothing happens where none listens (a
    learner's own run).

    >>> heard = []
    >>> with send_records_to(lambda record: None, checkpoints=heard.append):
    ...     from autograder.checks import expect
    ...     expect(True, "never shown")
    >>> heard
    ['a check begins']
    """
    for sink in tuple(_checkpoint_sinks):
        sink(moment)


def sending() -> bool:
    """Whether the checks' records go to a sink now (a class is being graded, or a solution
    run as its reference), not only to the learner's eyes.

    >>> sending()
    False
    >>> with send_records_to(lambda record: None):
    ...     sending()
    True
    """
    return bool(_record_sinks)


def decide(record: Record) -> None:
    """Pass a copy of ``record`` to every sink, then raise :class:`CheckFailed` if the rule
    fails it. Every copy is made before any sink runs: a sink (a notebook's, put ahead of the
    grader's) can change its own copy, never what the other sinks or the rule are given."""
    hidden = () if record.get("may_differ") else EXPECTED_FIELDS.get(record["rule"], ())
    deliveries = [
        (sink, _copied({k: v for k, v in record.items() if expected or k not in hidden}))
        for sink, expected in tuple(_record_sinks)
    ]
    for sink, copy in deliveries:
        sink(copy)
    message = judge(record)
    if message is not None:
        raise CheckFailed(message)


def _copied(value: Any) -> Any:
    """A deep copy of a record's plain evidence (dicts, lists and tuples of plain values)."""
    kind = type(value)
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return kind(map(_copied, value))
    return value


def declared(record: Record, answer_may_differ: bool) -> Record:
    """``record``, marked as a check whose right answer may differ when so declared."""
    return {**record, "may_differ": True} if answer_may_differ else record
