"""Write one feedback page per learner and unit: ``FOLDER/STUDENT/UNIT.html``.

Each page stands alone (no external files), reads on a phone and prints cleanly. It shows
the total, every item in notebook order with its points and every failure message (the
hidden tests' included), the notes, and for a notebook that could not be graded the reason
and what to do.

Example::

    >>> import tempfile, pathlib
    >>> from autograder.grading.results import GRADED, ItemInfo, ItemResult, UnitResult
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> result = UnitResult("ada", "01_leaf_tensors", GRADED, max_score=3.0, items=(
    ...     ItemResult("grads_test", 0.0, 3.0, failures=("`x.grad` is None.",)),))
    >>> units = {"01_leaf_tensors": [ItemInfo("grads_test", 3.0, "Who gets .grad")]}
    >>> [path.relative_to(folder).as_posix() for path in write_feedback(folder, [result], units)]
    ['ada/01_leaf_tensors.html']
    >>> "`x.grad` is None." in (folder / "ada" / "01_leaf_tensors.html").read_text()
    True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder.atomic import write_text_atomic
from autograder.grading.results import GRADED, ItemInfo, ItemResult, UnitResult
from autograder.i18n import N_, use_language
from autograder.i18n import gettext as _
from autograder.reporting.templating import render

__all__ = ["check_path_component", "item_status", "paired_items", "write_feedback"]

_UNSAFE_NAMES = {"", ".", ".."}
_UNSAFE_CHARACTERS = ("/", "\\", "\0")


# How each status reads on the page (the status itself is also its CSS class).
_STATUS_WORDS = {"passed": N_("passed"), "partial": N_("partial"), "failed": N_("failed")}


@dataclass(frozen=True)
class _ItemView:
    title: str
    grade_id: str
    points: float
    max_points: float
    status: str
    status_word: str
    failures: tuple[str, ...]


def check_path_component(name: str, what: str) -> str:
    """Return ``name`` if it is safe as one folder or file name, else raise ValueError.

    >>> check_path_component("..", "student id")
    Traceback (most recent call last):
    ...
    ValueError: student id '..' cannot be used as a folder name: ...
    """
    if name in _UNSAFE_NAMES or any(character in name for character in _UNSAFE_CHARACTERS):
        raise ValueError(
            f"{what} {name!r} cannot be used as a folder name: it is empty, '.' or '..', or "
            "holds '/', '\\' or a NUL byte; the submission intake should have refused it"
        )
    return name


def item_status(item: ItemResult) -> str:
    """``"passed"``, ``"partial"`` (some points) or ``"failed"`` (none).

    >>> item_status(ItemResult("a", 1.0, 2.0)), item_status(ItemResult("a", 0.0, 2.0))
    ('partial', 'failed')
    """
    if item.passed:
        return "passed"
    return "partial" if item.points > 0 else "failed"


def paired_items(
    result: UnitResult, infos: Sequence[ItemInfo]
) -> list[tuple[ItemInfo, ItemResult]]:
    """A graded result's items next to their unit's, in notebook order; ValueError when the
    result's grade ids are not exactly the unit's (it was graded against another version).

    >>> result = UnitResult("ada", "u", GRADED, items=(ItemResult("b", 1.0, 1.0),))
    >>> paired_items(result, [ItemInfo("a", 1.0, "A")])
    Traceback (most recent call last):
    ...
    ValueError: ada/u: the result has items ['b'] but the unit has ['a']; ...
    """
    by_id = {item.grade_id: item for item in result.items}
    expected = [info.grade_id for info in infos]
    if sorted(by_id) != sorted(expected) or len(by_id) != len(result.items):
        raise ValueError(
            f"{result.student}/{result.unit}: the result has items "
            f"{sorted(item.grade_id for item in result.items)} but the unit has "
            f"{sorted(expected)}; grade the submission again against the current unit"
        )
    return [(info, by_id[info.grade_id]) for info in infos]


def write_feedback(
    folder: Path,
    results: Sequence[UnitResult],
    units: Mapping[str, Sequence[ItemInfo]],
    *,
    titled: Mapping[str, Mapping[str, Sequence[ItemInfo]]] | None = None,
) -> list[Path]:
    """Write ``folder/STUDENT/UNIT.html`` for each result (atomically) and return the paths.

    Each page speaks its learner's language (``result.language``): its own words, the notes,
    and the items titled as in ``titled[unit][language]`` where given (else ``units[unit]``).
    Nothing is written unless every page can be: an unsafe student id or unit, two results
    for one page, or a graded result whose items differ from its unit's raise ValueError.
    """
    pages = [_page_path(folder, result) for result in results]
    duplicates = sorted(page for page, count in Counter(pages).items() if count > 1)
    if duplicates:
        raise ValueError(f"two or more results would share a feedback page: {duplicates}")
    texts = []
    for result in results:
        infos = (titled or {}).get(result.unit, {}).get(result.language)
        with use_language(result.language):
            texts.append(_page(result, infos or units.get(result.unit, ())))
    for page, text in zip(pages, texts, strict=True):
        write_text_atomic(page, text)
    return pages


def _page_path(folder: Path, result: UnitResult) -> Path:
    student = check_path_component(result.student, "student id")
    return folder / student / f"{check_path_component(result.unit, 'unit')}.html"


def _page(result: UnitResult, infos: Sequence[ItemInfo]) -> str:
    graded = result.status == GRADED
    return render(
        "feedback.html.j2",
        title=_("{unit}: feedback for {student}").format(unit=result.unit, student=result.student),
        student=result.student,
        unit=result.unit,
        graded=graded,
        score=result.score,
        max_score=result.max_score,
        items=_item_views(result, infos) if graded else [],
        reason=_(result.reason),
        notes=[_(note) for note in result.notes],
    )


def _item_views(result: UnitResult, infos: Sequence[ItemInfo]) -> list[_ItemView]:
    return [
        _ItemView(
            title=info.title,
            grade_id=info.grade_id,
            points=item.points,
            max_points=item.max_points,
            status=item_status(item),
            status_word=_(_STATUS_WORDS[item_status(item)]),
            failures=item.failures,
        )
        for info, item in paired_items(result, infos)
    ]
