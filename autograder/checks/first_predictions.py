"""The record of first predictions: ``first_predictions.json`` beside the notebook.

A reveal (:mod:`autograder.checks.predictions`) records a learner's prediction the first time it
runs for an item and never changes it afterwards: the record survives a kernel restart and
travels with the submission folder. The class grader reads the file itself
(:func:`read_first_predictions`) and judges ``expect_first_prediction`` against its own copy
(:func:`bind_first_prediction`), so a record changed while the notebook runs changes no grade.

Example::

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> record_first(folder, "predict_leaf", {"a": True}) is None  # nothing recorded before
    True
    >>> read_first_predictions(folder).first("predict_leaf")
    ['dict', [[['str', 'a'], ['bool', True]]]]
    >>> value_of(record_first(folder, "predict_leaf", {"a": False}))  # the first one stays
    {'a': True}
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
from autograder.i18n import N_
from autograder.i18n import gettext as _

__all__ = [
    "MAX_RECORD_BYTES",
    "RECORD_FILE",
    "FirstPredictions",
    "bind_first_prediction",
    "read_first_predictions",
    "record_first",
    "value_of",
]

RECORD_FILE = "first_predictions.json"
MAX_RECORD_BYTES = 2**20
_WIDTH = 88

Evidence = list[Any]


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
            value_of(evidence)
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


def record_first(folder: Path, grade_id: str, predicted: object) -> Evidence | None:
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


def value_of(evidence: Any) -> Any:
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
        items = [value_of(item) for item in content]
        return {"list": list, "tuple": tuple, "set": set}[kind](items)
    if kind == "dict" and type(content) is list:
        pairs = [pair for pair in content if type(pair) is list and len(pair) == 2]
        if len(pairs) != len(content):
            raise ValueError("not evidence")
        return {value_of(key): value_of(value) for key, value in pairs}
    raise ValueError("not evidence")
