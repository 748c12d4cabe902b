"""The instructor guide (docs/) says what the notebooks and gradgraph really do.

Fast checks, no notebook is executed: one guide per unit; each guide's 50- and 90-minute
timing tables add up exactly; every graded item's grade id, every solution (the answer cell
without its nbgrader markers) and the unit's total points are in its guide; every cell it
cites is the cell it quotes; every gradgraph name and recording method it mentions exists,
with the keyword arguments it passes; and every relative link resolves. The guides of each
translation (docs/LANG/units/) meet the same checks in their language's words, and each names
the hash of the English guide it translates, so a changed English guide makes it stale.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

import gradgraph
from autograder.grading.assemble import items
from tests.conftest import LAYOUT, ROOT, UNITS

DOCS = ROOT / "docs"
_MARKER = re.compile(r"^\s*### (?:BEGIN|END) SOLUTION\s*$")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_GRADGRAPH_NAME = re.compile(r"\bgradgraph((?:\.[A-Za-z_]\w*)+)")
# A recording as the notebooks name it (`recording`, `rec`, an entry of `recordings`), or the class.
_RECORDING_USE = re.compile(
    r"\b(Recording|recording|rec|recordings)(\[[^\]]+\])?\.([A-Za-z_]\w*)(?:\(([^()]*)\))?"
)
_PLAY = re.compile(r"(\S*)\.play\(")
_KEYWORD = re.compile(r"\b([A-Za-z_]\w*)\s*=(?!=)")


@dataclass(frozen=True)
class GuideForm:
    """How the unit guides of one language are written: where they are, the points line, the
    timing headings and total row, and how a cell is cited (``cell N (`quote`)``)."""

    folder: Path
    points: re.Pattern[str]
    session: str
    total: str
    cell: re.Pattern[str]


FORMS = {
    "en": GuideForm(
        DOCS / "units",
        re.compile(r"\*\*Points:\*\* (\d+) in (\d+) graded items"),
        "{minutes}-minute session",
        "total",
        re.compile(r"\b[Cc]ell (\d+)\b(?: \(`([^`]+)`\))?"),
    ),
    "ko": GuideForm(
        DOCS / "ko" / "units",
        re.compile(r"\*\*점수:\*\* (\d+)점, 채점 항목 (\d+)개"),
        "{minutes}분 수업",
        "합계",
        re.compile(r"(?:\b[Cc]ell|셀) (\d+)\b(?: \(`([^`]+)`\))?"),
    ),
}
GUIDES = [(language, unit) for language in FORMS for unit in UNITS]
_SOURCE_LINE = re.compile(r"<!-- source: (docs/[\w./]+\.md) sha256:([0-9a-f]{64}) -->")


def _guide(unit: str, language: str = "en") -> str:
    return (FORMS[language].folder / f"{unit}.md").read_text(encoding="utf-8")


def _notebook(unit: str) -> nbformat.NotebookNode:
    return nbformat.read(LAYOUT.source_notebook(unit), as_version=4)


def _all_docs() -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in sorted(DOCS.rglob("*.md"))}


def _timing_table(text: str, minutes: int, language: str = "en") -> list[list[str]]:
    """The rows (minutes, segment, cells) under the '### N-minute session' heading."""
    title = FORMS[language].session.format(minutes=minutes)
    heading = re.search(rf"^###\s+{re.escape(title)}\s*$", text, re.MULTILINE)
    assert heading, f"no '### {title}' heading"
    rows = []
    for line in text[heading.end() :].lstrip("\n").splitlines():
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0].strip("*").isdigit():
            rows.append([cells[0].strip("*"), *cells[1:]])
    return rows


@pytest.mark.parametrize("language", FORMS)
def test_every_unit_has_a_guide_and_no_guide_lacks_a_unit(language):
    assert sorted(path.stem for path in FORMS[language].folder.glob("*.md")) == UNITS


TRANSLATED_PAGES = sorted(
    path
    for language in FORMS
    if language != "en"
    for path in (DOCS / language).rglob("*.md")
    if path.name != "glossary.md"  # written in Korean, translating no English page
)


@pytest.mark.parametrize("page", TRANSLATED_PAGES, ids=lambda path: str(path.relative_to(DOCS)))
def test_a_translated_page_translates_the_current_english(page):
    """Its first line names the English page and that page's hash: a changed English page
    makes the translation stale until it is brought in step and the hash renewed."""
    first_line = page.read_text(encoding="utf-8").splitlines()[0]
    named = _SOURCE_LINE.fullmatch(first_line)
    where = page.relative_to(ROOT)
    assert named, f"{where}: the first line must be <!-- source: docs/... sha256:... -->"
    language = page.relative_to(DOCS).parts[0]
    source = ROOT / named.group(1)
    assert source == DOCS / page.relative_to(DOCS / language), f"{where} names {named.group(1)}"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert named.group(2) == digest, (
        f"{where} is stale: {named.group(1)} changed since it was translated; bring the "
        f"translation in step, then set its sha256 to {digest}"
    )


def test_every_translated_guide_has_its_index():
    for language in FORMS:
        if language != "en":
            index = (DOCS / language / "README.md").read_text(encoding="utf-8")
            for unit in UNITS:
                assert f"(units/{unit}.md)" in index, f"docs/{language}/README.md lacks {unit}"
            assert f"]({language}/README.md)" in (DOCS / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("language", "unit"), GUIDES)
@pytest.mark.parametrize("minutes", [50, 90])
def test_timing_tables_add_up_exactly(language, unit, minutes):
    rows = _timing_table(_guide(unit, language), minutes, language)
    total = FORMS[language].total
    totals = [int(row[0]) for row in rows if total in row[1].lower()]
    segments = [int(row[0]) for row in rows if total not in row[1].lower()]
    assert totals == [minutes], f"{unit}: the {minutes}-minute table needs one total row"
    assert sum(segments) == minutes, f"{unit}: segments add up to {sum(segments)}, not {minutes}"
    assert len(segments) >= 4, f"{unit}: a {minutes}-minute plan needs real segments"


@pytest.mark.parametrize(("language", "unit"), GUIDES)
def test_every_graded_item_and_the_total_points_are_in_the_guide(language, unit):
    guide = _guide(unit, language)
    infos = items(_notebook(unit))
    for info in infos:
        assert f"`{info.grade_id}`" in guide, f"{unit}: {info.grade_id} is not in its guide"
    total = sum(info.max_points for info in infos)
    stated = FORMS[language].points.search(guide)
    assert stated, f"{unit} ({language}): no points line ({FORMS[language].points.pattern})"
    assert (int(stated.group(1)), int(stated.group(2))) == (total, len(infos))


@pytest.mark.parametrize(("language", "unit"), GUIDES)
def test_every_solution_is_quoted_exactly(language, unit):
    guide = "\n".join(line.rstrip() for line in _guide(unit, language).splitlines())
    for cell in _notebook(unit).cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution") or meta.get("grade"):
            continue
        answer = "\n".join(
            line.rstrip() for line in cell.source.splitlines() if not _MARKER.match(line)
        ).strip("\n")
        assert answer in guide, f"{unit}: the answer of {meta['grade_id']} is not quoted exactly"
        assert f"`{meta['grade_id']}`" in guide


@pytest.mark.parametrize(("language", "unit"), GUIDES)
def test_cited_cells_hold_what_the_guide_quotes(language, unit):
    """A cell is quoted from the English source notebook or the guide's own language's."""
    cells = _notebook(unit).cells
    own = nbformat.read(LAYOUT.learner_notebook(unit, language), as_version=4).cells
    guide = _guide(unit, language)
    cited = list(FORMS[language].cell.finditer(guide))
    assert cited, f"{unit}: the guide cites no cell"
    for match in cited:
        number, quote = int(match.group(1)), match.group(2)
        assert quote, f"{unit}: '{match.group(0)}' needs a quote: cell N (`text in the cell`)"
        assert 1 <= number <= len(cells), f"{unit}: cell {number} does not exist"
        held = cells[number - 1].source + "\n" + own[number - 1].source
        assert quote in held, f"{unit} ({language}): cell {number} does not hold {quote!r}"
    for minutes in (50, 90):
        for row in _timing_table(guide, minutes, language):
            for number in re.findall(r"\d+", row[2]):
                assert 1 <= int(number) <= len(cells), f"{unit}: the timing cites cell {number}"


def test_gradgraph_names_in_the_docs_exist():
    found = set()
    for path, text in _all_docs().items():
        for match in _GRADGRAPH_NAME.finditer(text):
            target = gradgraph
            for name in match.group(1).strip(".").split("."):
                assert hasattr(target, name), (
                    f"{path.name}: gradgraph{match.group(1)} does not exist"
                )
                target = getattr(target, name)
            found.add(match.group(1))
    assert ".record" in found


def test_recording_methods_and_their_keywords_exist():
    plays = 0
    for path, text in _all_docs().items():
        for match in _PLAY.finditer(text):
            assert re.search(
                r"(?:Recording|recording|rec|recordings\[[^\]]+\])$", match.group(1)
            ), f"{path.name}: .play( is called on {match.group(1)!r}, not on a recording"
        for match in _RECORDING_USE.finditer(text):
            method, arguments = match.group(3), match.group(4)
            member = getattr(gradgraph.Recording, method, None)
            assert member is not None, f"{path.name}: Recording has no {method!r}"
            if arguments is None:
                continue
            plays += method == "play"
            accepted = inspect.signature(member).parameters
            for keyword in _KEYWORD.findall(arguments):
                assert keyword in accepted, f"{path.name}: {method}() takes no {keyword}="
    assert plays >= len(UNITS)


@pytest.mark.parametrize(("language", "unit"), GUIDES)
def test_the_projector_animation_is_the_notebooks_own_recording(language, unit):
    code = "\n".join(c.source for c in _notebook(unit).cells if c.cell_type == "code")
    shown = re.findall(r"\b(\w+)(\[[^\]]+\])?\.play\(projector=True\)", _guide(unit, language))
    assert shown, f"{unit}: the guide shows no animation with play(projector=True)"
    for name, key in shown:
        assert re.search(rf"\b{name}\b", code), f"{unit}: the notebook has no {name}"
        assert key.strip("[]") in code, f"{unit}: the notebook records no {name}{key}"


def test_relative_links_resolve():
    pages = {**_all_docs(), ROOT / "README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    for path, text in pages.items():
        for target in _LINK.findall(text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            resolved = (path.parent / target.split("#", 1)[0]).resolve()
            assert resolved.exists(), f"{path.relative_to(ROOT)} links {target}: no such file"
