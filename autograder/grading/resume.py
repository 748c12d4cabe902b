"""The resume cache of class grading: each result is saved as soon as it is known, keyed by what
decides it (the submission's files, its unit's source, the sandbox, the grader's version), so an
interrupted run resumes and a second run gives the same grades without running anything.

Example::

    >>> import tempfile
    >>> from autograder.grading.results import GRADED, UnitResult
    >>> path = Path(tempfile.mkdtemp()) / "ada" / "u1.json"
    >>> save(path, "k1", UnitResult("ada", "u1", GRADED, outputs={"3": ["hi\\n", "", ""]}))
    >>> cached(path, "k1").outputs
    {'3': ['hi\\n', '', '']}
    >>> cached(path, "another key") is None
    True
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from autograder.atomic import write_text_atomic
from autograder.checks.first_predictions import read_first_predictions
from autograder.grading.intake import Submission
from autograder.grading.results import UnitResult

__all__ = ["cache_key", "cached", "save"]

# Raised whenever what a result holds changes: 3 added the outputs of the graded run.
_GRADER_VERSION = "3"


def cache_key(submission: Submission, unit_digest: str | None, sandbox_kind: str) -> str:
    """The key of ``submission``'s result: its files, its unit's source (``unit_digest``,
    ``None`` for no unit of the course) and the kind of sandbox that graded it."""
    digest = hashlib.sha256(f"{_GRADER_VERSION}\0{sandbox_kind}\0".encode())
    digest.update(json.dumps([submission.problem, submission.notes]).encode())
    if submission.notebook is not None:
        digest.update(submission.notebook.read_bytes())
        firsts = read_first_predictions(submission.notebook.parent)
        digest.update(json.dumps([firsts.text, firsts.problems]).encode())
    digest.update(unit_digest.encode() if unit_digest else b"no unit")
    return digest.hexdigest()


def cached(path: Path, key: str) -> UnitResult | None:
    """The result saved at ``path`` under ``key``; ``None`` when there is none (or another)."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        return UnitResult.from_json(saved["result"]) if saved.get("key") == key else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(path: Path, key: str, result: UnitResult) -> None:
    """Save ``result`` at ``path`` under ``key`` (atomically)."""
    write_text_atomic(path, json.dumps({"key": key, "result": result.to_json()}))
