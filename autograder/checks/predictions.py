"""Make the first prediction count: reveal what torch did, line by line, against the prediction.

A predict-the-output item is answered in one cell; the cell after its test (the *reveal*)
runs the snippets and shows what torch did. :func:`reveal_prediction` compares the learner's
prediction with it, line by line, in the learner's language, and records the first prediction
for the item (:mod:`autograder.checks.first_predictions`); the item's hidden test calls
``expect_first_prediction`` (in :mod:`autograder.checks`), so that a prediction changed after
its reveal earns nothing.

Example::

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> leaf = {True: "leaf", False: "not a leaf"}
    >>> reveal_prediction("predict_leaf", {"a": True, "b": True}, {"a": True, "b": False},
    ...                   labels=leaf, why={"b": "b = a * 2 was recorded."}, folder=folder)
    a: you said leaf; torch: leaf  ✓
    b: you said leaf; torch: not a leaf  ✗
       b = a * 2 was recorded.
    1 of 2 right.
    >>> reveal_prediction("predict_leaf", {"a": True, "b": False}, {"a": True, "b": False},
    ...                   labels=leaf, folder=folder)
    a: you said leaf; torch: leaf  ✓
    b: you said not a leaf; torch: not a leaf  ✓
    2 of 2 right.
    Your first prediction was a: leaf, b: leaf; a prediction changed after its reveal earns
    no points.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

from autograder.checks.evidence import describe
from autograder.checks.first_predictions import record_first, value_of
from autograder.checks.rules import judge
from autograder.i18n import N_, translate
from autograder.i18n import gettext as _

__all__ = ["reveal_prediction"]

_WIDTH = 88
_DEFAULT_LABELS = {True: N_("yes"), False: N_("no")}


def reveal_prediction(
    grade_id: str,
    predicted: object,
    observed: object,
    *,
    why: Mapping[object, str] | str | None = None,
    labels: Mapping[object, str] | None = None,
    folder: Path | None = None,
) -> None:
    """Record ``predicted`` as the first prediction for ``grade_id`` (once: a later run never
    changes the record) and print it against ``observed``, what torch did, line by line.

    ``observed`` has the prediction's form: a dict (one line per key), a set of letters (one
    line per option, the options being the letters in either set or in ``why``), or a single
    value (one line). ``labels`` gives the item's words for values (``{True: "error", False:
    "fine"}``; a set's lines show True for a letter in the set), ``why`` an explanation per
    line (a dict by key or letter) or for the single line (a string). The record is kept in
    ``folder`` (default: the working directory, which is the notebook's folder).
    """
    folder = Path.cwd() if folder is None else folder
    labels = _DEFAULT_LABELS if labels is None and isinstance(observed, set) else labels or {}
    form = _form_problem(predicted, observed)
    if form is not None:
        print(form)
        return
    rows = _rows(predicted, observed, why)
    for key, said, truth, reason in rows:
        line = _("you said {said}; torch: {truth}").format(
            said=_word(said, labels), truth=_word(truth, labels)
        )
        mark = "✓" if _same_value(said, truth) else "✗"
        print(f"{line}  {mark}" if key is None else f"{key}: {line}  {mark}")
        if reason:
            print(
                textwrap.fill(
                    translate(reason), _WIDTH, initial_indent="   ", subsequent_indent="   "
                )
            )
    right = sum(_same_value(said, truth) for _, said, truth, _ in rows)
    print(_("{right} of {total} right.").format(right=right, total=len(rows)))
    first = record_first(folder, grade_id, predicted)
    if first is not None and not _same_value(value_of(first), predicted):
        said = _(
            "Your first prediction was {first}; a prediction changed after its reveal earns no "
            "points."
        )
        print(textwrap.fill(said.format(first=_shown(value_of(first), labels)), _WIDTH))


def _form_problem(predicted: object, observed: object) -> str | None:
    """Why ``predicted`` cannot be compared with ``observed``, or ``None`` when it can."""
    if type(predicted) is not type(observed):
        return _(
            "Your prediction is of type {got}; this item asks for a {wanted}: fix it and run "
            "this cell again. Nothing was recorded."
        ).format(got=type(predicted).__name__, wanted=type(observed).__name__)
    if (
        isinstance(predicted, dict)
        and isinstance(observed, dict)
        and predicted.keys() != observed.keys()
    ):
        return _(
            "Your prediction has the keys {got}; this item asks for the keys {wanted}: fix it "
            "and run this cell again. Nothing was recorded."
        ).format(got=_listed(predicted), wanted=_listed(observed))
    try:
        value_of(describe(predicted))
    except (ValueError, TypeError):
        return _(
            "Your prediction holds something other than plain values (text, numbers, "
            "True/False): fix it and run this cell again. Nothing was recorded."
        )
    return None


def _rows(
    predicted: object, observed: object, why: Mapping[object, str] | str | None
) -> list[tuple[object, object, object, str | None]]:
    """(key or option or None, what the learner said, what torch did, why) per line."""
    reasons = why if isinstance(why, Mapping) else {}
    if isinstance(predicted, dict) and isinstance(observed, dict):
        return [(key, predicted[key], value, reasons.get(key)) for key, value in observed.items()]
    if isinstance(predicted, set) and isinstance(observed, set):
        options = sorted(predicted | observed | set(reasons), key=str)
        return [
            (option, option in predicted, option in observed, reasons.get(option))
            for option in options
        ]
    return [(None, predicted, observed, why if isinstance(why, str) else None)]


def _same_value(a: object, b: object) -> bool:
    """Equal with exactly the same types, as the course's checks compare."""
    return (
        judge({"rule": "equal", "name": "", "actual": describe(a), "expected": describe(b)}) is None
    )


def _word(value: object, labels: Mapping[object, str]) -> str:
    """The item's word for ``value`` in the learner's language: its label (same type only: True
    is not 1), else the text itself (an answer's word, translated), else its repr."""
    for key, label in labels.items():
        if type(key) is type(value) and key == value:
            return _(translate(label))
    return translate(value) if isinstance(value, str) else repr(value)


def _shown(value: object, labels: Mapping[object, str]) -> str:
    """A whole prediction in the item's words: ``a: leaf, b: not a leaf``, ``{A, C}``."""
    if isinstance(value, dict):
        return ", ".join(f"{key}: {_word(item, labels)}" for key, item in value.items())
    if isinstance(value, set):
        return "{" + ", ".join(sorted(map(str, value))) + "}" if value else _("no letter at all")
    return _word(value, labels)


def _listed(mapping: Mapping[object, object]) -> str:
    return ", ".join(sorted(map(str, mapping))) or _("(none)")
