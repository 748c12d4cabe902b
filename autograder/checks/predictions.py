"""Make the first prediction count: record it at its reveal, and compare it with torch line by line.

A predict-the-output item is answered in one cell; the cell after its test (the *reveal*)
runs the snippets and shows what torch did. :func:`reveal_prediction` records the learner's
prediction the first time it runs for an item, in :data:`RECORD_FILE` beside the notebook (the
kernel's working directory), and never changes that record afterwards: it survives a kernel
restart and travels with the submission folder. The item's hidden test calls
``expect_first_prediction`` (in :mod:`autograder.checks`), so that a prediction changed after
its reveal earns nothing. The class grader reads the file itself (:func:`read_first_predictions`)
and judges that check against its own copy (:func:`bind_first_prediction`), so a record changed
while the notebook runs changes no grade.

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
    >>> read_first_predictions(folder).first("predict_leaf")
    ['dict', [[['str', 'a'], ['bool', True]], [['str', 'b'], ['bool', True]]]]
"""

from __future__ import annotations

import json
import math
import os
import stat
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.atomic import write_text_atomic
from autograder.checks.evidence import describe
from autograder.checks.rules import judge
from autograder.i18n import N_, translate
from autograder.i18n import gettext as _

__all__ = [
    "RECORD_FILE",
    "FirstPredictions",
    "bind_first_prediction",
    "read_first_predictions",
    "reveal_prediction",
]

RECORD_FILE = "first_predictions.json"
MAX_RECORD_BYTES = 2**20

Evidence = list[Any]
_WIDTH = 88
_DEFAULT_LABELS = {True: N_("yes"), False: N_("no")}


@dataclass(frozen=True)
class FirstPredictions:
    """What :data:`RECORD_FILE` holds: its text as read (``None`` when there is none), the
    readable first prediction of each item (as evidence, keyed by the answer's grade_id), and
    a sentence for each part that could not be read (which counts as no record)."""

    text: str | None = None
    predictions: Mapping[str, Evidence] | None = None
    problems: tuple[str, ...] = ()

    def files(self) -> dict[str, str]:
        """The file to place beside the notebook where it runs: the record as it was read."""
        return {} if self.text is None else {RECORD_FILE: self.text}

    def first(self, grade_id: object) -> Evidence | None:
        """The recorded first prediction for ``grade_id``, or ``None`` when there is none."""
        return (self.predictions or {}).get(grade_id) if isinstance(grade_id, str) else None


def read_first_predictions(folder: Path) -> FirstPredictions:
    """Read ``folder/first_predictions.json``: never a link, at most 1 MiB, and each entry
    checked; whatever is unreadable is named in ``problems`` and counts as no record.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / RECORD_FILE).write_text("{not json")
    >>> print(*read_first_predictions(folder).problems)
    `first_predictions.json` is not valid JSON (Expecting property name enclosed in double \
quotes at line 1, column 2), so it counts as no record of your first predictions.
    """
    path = folder / RECORD_FILE
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return FirstPredictions()
    except OSError as error:
        if path.is_symlink():
            return _unreadable(
                N_(
                    "`{file}` is a symbolic link, "
                    "so it counts as no record of your first predictions."
                )
            )
        why = N_(
            "`{file}` cannot be read ({reason}), "
            "so it counts as no record of your first predictions."
        )
        return _unreadable(why, reason=error.strerror)
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            return _unreadable(
                N_("`{file}` is not a file, so it counts as no record of your first predictions.")
            )
        data = stream.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        return _unreadable(
            N_(
                "`{file}` is larger than 1 MiB, "
                "so it counts as no record of your first predictions."
            )
        )
    try:
        text = data.decode("utf-8")
        document = json.loads(text)
    except UnicodeDecodeError:
        return _unreadable(
            N_("`{file}` is not UTF-8 text, so it counts as no record of your first predictions.")
        )
    except ValueError as error:
        if isinstance(error, json.JSONDecodeError):
            why = N_(
                "`{file}` is not valid JSON ({reason} at line {line}, column {column}), "
                "so it counts as no record of your first predictions."
            )
            return _unreadable(why, text, reason=error.msg, line=error.lineno, column=error.colno)
        return _unreadable(
            N_(
                "`{file}` is not valid JSON (a number too long), "
                "so it counts as no record of your first predictions."
            ),
            text,
        )
    if not isinstance(document, dict):
        why = N_(
            "`{file}` does not map each item to its first prediction, "
            "so it counts as no record of your first predictions."
        )
        return _unreadable(why, text)
    predictions, problems = {}, []
    for grade_id, evidence in sorted(document.items()):
        try:
            _value_of(evidence)
        except (ValueError, TypeError, IndexError, RecursionError):
            problems.append(
                N_(
                    "`{file}` holds no readable first prediction for `{grade_id}`, so it counts "
                    "as no record for that item."
                ).format(file=RECORD_FILE, grade_id=grade_id)
            )
        else:
            predictions[grade_id] = evidence
    return FirstPredictions(text, predictions, tuple(problems))


def _unreadable(why: str, text: str | None = None, **facts: object) -> FirstPredictions:
    """A record that counts as none, for the reason ``why`` (a template, kept in English: the
    grader shows it in the learner's language)."""
    problem = why.format(file=RECORD_FILE, **facts)
    return FirstPredictions(text=text, problems=(problem,))


def bind_first_prediction(record: Mapping[str, Any], trusted: FirstPredictions) -> dict[str, Any]:
    """``record`` with the first prediction the grader read itself, if it is the record of an
    ``expect_first_prediction`` check; any other record unchanged.

    >>> record = {"rule": "first_prediction", "grade_id": "p", "first": ["bool", True]}
    >>> bind_first_prediction(record, FirstPredictions())["first"] is None
    True
    """
    if record.get("rule") != "first_prediction":
        return dict(record)
    return {**record, "first": trusted.first(record.get("grade_id"))}


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
    first = _record_first(folder, grade_id, predicted)
    if first is not None and not _same_value(_value_of(first), predicted):
        said = _(
            "Your first prediction was {first}; a prediction changed after its reveal earns no "
            "points."
        )
        print(textwrap.fill(said.format(first=_shown(_value_of(first), labels)), _WIDTH))


def _record_first(folder: Path, grade_id: str, predicted: object) -> Evidence | None:
    """The first prediction recorded for ``grade_id``; records ``predicted`` when there is
    none (and says so when the file could not be read)."""
    found = read_first_predictions(folder)
    for problem in found.problems:
        print(textwrap.fill(_(problem), _WIDTH))
    first = found.first(grade_id)
    if first is not None:
        return first
    document = dict(found.predictions or {})
    document[grade_id] = describe(predicted)
    write_text_atomic(
        folder / RECORD_FILE, json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False)
    )
    return None


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
        _value_of(describe(predicted))
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


def _value_of(evidence: Any) -> Any:
    """The plain value that ``evidence`` stands for; ValueError for anything else (tensors,
    other objects, malformed data)."""
    if not isinstance(evidence, list) or not evidence or not isinstance(evidence[0], str):
        raise ValueError("not evidence")
    kind, rest = evidence[0], evidence[1:]
    if kind == "none" and not rest:
        return None
    if len(rest) != 1:
        raise ValueError("not evidence")
    content = rest[0]
    if kind == "bool" and type(content) is bool:
        return content
    if kind == "int" and type(content) is int:
        return content
    if kind == "str" and type(content) is str:
        return content
    if kind == "float" and type(content) in (int, float, str):
        number = float(content)
        if type(content) is str and math.isfinite(number):
            raise ValueError("a finite float written as text")
        return number
    if kind in ("list", "tuple", "set") and type(content) is list:
        items = [_value_of(item) for item in content]
        return {"list": list, "tuple": tuple, "set": set}[kind](items)
    if kind == "dict" and type(content) is list:
        pairs = [pair for pair in content if type(pair) is list and len(pair) == 2]
        if len(pairs) != len(content):
            raise ValueError("not evidence")
        return {_value_of(key): _value_of(value) for key, value in pairs}
    raise ValueError("not evidence")
