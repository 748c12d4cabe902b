"""What the instructor should look at in one submission: code that reaches for grading
internals, and what the worker had to put back or refused to trust.

Points never depend on this list (the scoring does not read it); it is for a person, who
decides. A line is quoted when a learner's cell reaches for the worker's or the checks'
modules, ``sys.modules``, the garbage collector, frames, ``ctypes``, builtins, function
internals, finalizers, weak references, ``atexit``, threads or torch's C internals
(``torch._C.``), or assigns to an attribute of a library module or class
(``torch.Tensor.__sub__ = ...``, ``nn.Linear.forward = ...``, ``json.dumps = ...``).

Example::

    >>> from autograder.grading.assemble import Cell, Job
    >>> job = Job((Cell(0, "added", "import torch\\ntorch.Tensor.__sub__ = lambda a, b: a"),), ())
    >>> reaching_lines(job)
    ('cell 1: torch.Tensor.__sub__ = lambda a, b: a',)
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

import nbformat

from autograder.grading.assemble import Job
from autograder.grading.scoring import Reference
from autograder.grading.worker_pool import CellOutcome

__all__ = ["reaching_lines", "review_notes"]

_LIBRARIES = (
    r"(?:torch|nn|F|optim|json|os|io|struct|pickle|codecs|sys|math|random|warnings|numpy|np)"
)
_REACHING = re.compile(
    r"\bautograder\b|\bsys\.modules\b|\bimport\s+gc\b|\bgc\.|\bctypes\b|\bbuiltins\b"
    r"|__builtins__|_getframe|\bf_(?:back|globals|locals)\b|\btb_frame\b|\bgi_frame\b"
    r"|__(?:code|globals|closure|defaults|kwdefaults|del|main)__|\bweakref\b|\batexit\b"
    r"|\b_?thread(?:ing)?\b|\bset(?:trace|profile)\b|\baddaudithook\b|\btorch\._C\."
    rf"|\b{_LIBRARIES}(?:\.\w+)+\s*(?<![=!<>])=(?!=)|\bsetattr\(\s*{_LIBRARIES}\b"
)
_QUOTED_CHARS = 160
_MAX_LINES = 30


def reaching_lines(job: Job, known: Collection[str] = ()) -> tuple[str, ...]:
    """The learner's lines that reach for grading internals, quoted with their cell; a line
    the instructor's own notebook holds (``known``, stripped) is not the learner's doing."""
    found = []
    for cell in job.cells:
        if cell.origin not in ("answer", "added"):
            continue
        for line in cell.source.splitlines():
            if _REACHING.search(line) and line.strip() not in known:
                found.append(f"cell {cell.index + 1}: {line.strip()[:_QUOTED_CHARS]}")
    return tuple(found[:_MAX_LINES])


def review_notes(
    job: Job,
    outcomes: Mapping[int, CellOutcome],
    references: Mapping[str, Reference],
    source: nbformat.NotebookNode,
) -> tuple[str, ...]:
    """The quoted lines (not those of the instructor's ``source``), then per test cell what
    the worker put back before it (beyond what the solution's own run needed) and why it
    voided the item."""
    known = {line.strip() for cell in source.cells for line in cell.source.splitlines()}
    notes = list(reaching_lines(job, known))
    for cell in job.cells:
        outcome = outcomes.get(cell.index)
        if cell.origin != "test" or outcome is None or cell.grade_id not in references:
            continue
        extra = [n for n in outcome.put_back if n not in references[cell.grade_id].put_back]
        if extra:
            notes.append(f"before `{cell.grade_id}` the grader put back: {', '.join(extra)}")
        notes += [f"`{cell.grade_id}` voided: {reason}" for reason in outcome.voided]
    return tuple(notes)
