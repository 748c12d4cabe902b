"""The translated course is complete, current, and the English one in everything but words.

Each translation lives in PO catalogs keyed by the English (autograder.i18n.catalogs): a
missing or stale translation fails here, naming the unit and cell or the package and line; a
translated learner notebook differs from the English one only in its markdown and its
language entry; its kernel speaks its language; no hidden test's text leaves solutions/.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import nbformat
import pytest

from autograder.authoring.translation import (
    TRANSLATIONS,
    structure_differences,
    translation_problems,
)
from autograder.authoring.translation.catalog import catalog_problems, update_catalog
from autograder.authoring.translation.extract import Entry, notebook_messages
from autograder.i18n import Messages, gettext, translate, use_language
from autograder.i18n.catalogs import NOTEBOOK_KEY, read_catalog_file, unit_catalog
from tests.conftest import LAYOUT, ROOT, UNITS


def test_every_translation_is_complete_and_current():
    problems = translation_problems(root=ROOT)
    listed = "\n".join(problems[:40])
    assert not problems, f"{len(problems)} translation problem(s); the first:\n{listed}"


@pytest.mark.parametrize("language", TRANSLATIONS)
@pytest.mark.parametrize("unit", UNITS)
def test_a_translated_notebook_is_the_english_one_but_for_its_words(unit, language):
    english = nbformat.read(LAYOUT.learner_notebook(unit), as_version=4)
    translated = nbformat.read(LAYOUT.learner_notebook(unit, language), as_version=4)
    assert structure_differences(english, translated) == []
    assert translated.metadata[NOTEBOOK_KEY]["language"] == language
    assert translated.metadata[NOTEBOOK_KEY]["unit"] == unit
    words = [c.source for c in translated.cells if c.cell_type == "markdown"]
    english_words = [c.source for c in english.cells if c.cell_type == "markdown"]
    untranslated = [w for w, e in zip(words, english_words, strict=True) if w == e]
    assert not untranslated, f"{unit}: {len(untranslated)} markdown cell(s) still in English"


@pytest.mark.parametrize("language", TRANSLATIONS)
@pytest.mark.parametrize("unit", UNITS)
def test_no_hidden_test_text_leaves_solutions(unit, language):
    """The learner's notebook carries the translations of its own cells' messages only: a
    hidden test's hint (which may give an answer away) stays in solutions/UNIT/LANG.po."""
    source = nbformat.read(LAYOUT.source_notebook(unit), as_version=4)
    learner = nbformat.read(LAYOUT.learner_notebook(unit), as_version=4)
    visible = {e.text for e in notebook_messages(learner)}
    hidden = {e.text for e in notebook_messages(source) if not e.markdown} - visible
    assert hidden, f"{unit}: its hidden tests hand no text to the checks?"
    translations = read_catalog_file(unit_catalog(ROOT, unit, language))
    released = LAYOUT.learner_notebook(unit, language).read_text(encoding="utf-8")
    carried = json.loads(released)["metadata"][NOTEBOOK_KEY]["messages"]
    assert set(carried) <= visible and not set(carried) & hidden
    assert carried == {english: translations[english] for english in carried}


def _unit_source(markdown: str, hint: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(markdown),
            nbformat.v4.new_code_cell(f"expect(ok, 'the value is wrong.', hint={hint!r})"),
        ]
    )


def test_catalog_problems_name_what_is_missing_stale_or_broken(tmp_path):
    path = tmp_path / "ko.po"
    notebook = _unit_source("Run it:\n\n```python\nx = 1\n```", "call {x}.")
    entries = notebook_messages(notebook)
    update_catalog(path, entries, "ko", label="unit 09_demo")
    assert catalog_problems(path, entries, label="unit 09_demo") == [
        "unit 09_demo, cell 1: not translated: Run it: ```python x = 1 ```",
        "unit 09_demo, cell 2: not translated: the value is wrong.",
        "unit 09_demo, cell 2: not translated: call {{x}}.",
    ]
    translated = {
        "Run it:\n\n```python\nx = 1\n```": "실행하세요:\n\n```python\nx = 2\n```",
        "the value is wrong.": "값이 틀렸습니다.",
        "call {{x}}.": "{x}를 호출하세요.",
    }
    _fill(path, translated)
    assert catalog_problems(path, entries, label="unit 09_demo") == [
        "unit 09_demo, cell 1: the translation changes a code block: Run it: ```python x = 1 ```",
        "unit 09_demo, cell 2: the translation's fields ['{x}'] differ from the English's []: "
        "call {{x}}.",
    ]
    translated["call {{x}}."] = "{x를 호출하세요."
    _fill(path, translated)
    assert catalog_problems(path, entries, label="unit 09_demo")[1] == (
        "unit 09_demo, cell 2: the translation's braces do not pair up "
        "(an unclosed '{' at character 1 of '{x를 호출하세요.')"
    )
    translated["Run it:\n\n```python\nx = 1\n```"] = "실행하세요:\n\n```python\nx = 1\n```"
    translated["call {{x}}."] = "{{x}}를 호출하세요."
    _fill(path, translated)
    assert catalog_problems(path, entries, label="unit 09_demo") == []

    # The English changes: stale before the catalog is updated, and fuzzy after.
    changed = notebook_messages(_unit_source("Run it:\n\n```python\nx = 1\n```", "call {y}."))
    assert catalog_problems(path, changed, label="unit 09_demo") == [
        "unit 09_demo, cell 2: stale (its English changed since it was translated): call {{y}}.",
        "unit 09_demo: a translation of English no longer there: call {{x}}.",
    ]
    update_catalog(path, changed, "ko", label="unit 09_demo")
    assert catalog_problems(path, changed, label="unit 09_demo") == [
        "unit 09_demo, cell 2: stale (its English changed since it was translated): call {{y}}."
    ]


def test_fields_of_a_template_must_all_be_kept(tmp_path):
    path = tmp_path / "ko.po"
    entries = [Entry("`{_name}` was replaced by {_what}.", 4)]
    update_catalog(path, entries, "ko", label="unit 09_demo")
    _fill(path, {"`{_name}` was replaced by {_what}.": "`{_name}`이(가) 바뀌었습니다."})
    (problem,) = catalog_problems(path, entries, label="unit 09_demo")
    assert problem.startswith(
        "unit 09_demo, cell 5: the translation's fields ['{_name}'] differ from the English's "
        "['{_name}', '{_what}']"
    )


def _fill(path, translations, *, settled=False):
    """Write ``translations`` into the catalog at ``path``; ``settled``: as a translator's editor
    does, also mark each entry as no longer stale (no fuzzy flag, no replaced English)."""
    from babel.messages.pofile import read_po, write_po

    with path.open("rb") as stream:
        catalog = read_po(stream)
    for english, text in translations.items():
        catalog[english].string = text
        if settled:
            catalog[english].flags.discard("fuzzy")
            catalog[english].previous_id = []
    with path.open("wb") as stream:
        write_po(stream, catalog, width=100)


def test_the_hint_of_every_check_that_takes_one_is_found_for_translators():
    """A check added to autograder.checks without a line in the extractor's table would show
    its hints in English to every Korean learner (as expect_made_with_device once did)."""
    import inspect

    import autograder.checks as checks

    takers = [
        name
        for name in checks.__all__
        if inspect.isfunction(getattr(checks, name))
        and "hint" in inspect.signature(getattr(checks, name)).parameters
    ]
    assert "expect_made_with_device" in takers and "expect_tensor" in takers
    cells = [nbformat.v4.new_code_cell(f'{name}(a, b, hint="hint of {name}")') for name in takers]
    notebook = nbformat.v4.new_notebook(cells=cells)
    found = {entry.text for entry in notebook_messages(notebook)}
    assert [name for name in takers if f"hint of {name}" not in found] == []


def test_templates_match_finished_text_and_translate_what_their_fields_held():
    messages = Messages(
        {
            "snapshot of {_name} is still in the graph.": "{_name}의 스냅숏이 그래프에 있습니다.",
            "a leaf": "리프 텐서",
            "grad {{x}}: {value!r}": "기울기 {{x}}: {value!r}",
        }
    )
    assert messages.lookup("snapshot of a leaf is still in the graph.") == (
        "리프 텐서의 스냅숏이 그래프에 있습니다."
    )
    assert (
        messages.lookup("snapshot of w is still in the graph.") == "w의 스냅숏이 그래프에 있습니다."
    )
    assert messages.lookup("grad {x}: 3") == "기울기 {x}: 3"
    assert messages.lookup("grad x: 3") is None
    with use_language("ko", messages=messages):
        assert translate("a leaf") == "리프 텐서"
        assert translate("something new") == "something new"
        assert gettext("Hint: {hint}") == "힌트: {hint}"
    assert translate("a leaf") == "a leaf"


def test_a_korean_notebook_speaks_korean_in_its_own_kernel(tmp_path):
    """Run where the Korean learner notebook is, as JupyterLab, Validate and nbgrader do: the
    checks, `say`, the reveal and `shows_outcome` speak Korean, and torch's text stays."""
    unit = "01_leaf_tensors"
    folder = tmp_path / unit
    folder.mkdir()
    (folder / f"{unit}.ipynb").write_bytes(LAYOUT.learner_notebook(unit, "ko").read_bytes())
    script = textwrap.dedent(
        """
        import torch
        from autograder.checks import CheckFailed, expect_leaf, reveal_prediction, say
        from autograder.checks import shows_outcome
        say("Visible tests passed.")
        try:
            expect_leaf("w", torch.zeros(2, requires_grad=True) * 2)
        except CheckFailed as failure:
            print(failure)
        reveal_prediction("predict_is_leaf", {"a": True}, {"a": False},
                          labels={True: "leaf", False: "not a leaf"})
        with shows_outcome():
            torch.zeros(2).retain_grad()
        """
    )
    shown = subprocess.run(
        [sys.executable, "-c", script],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    ).stdout
    words = read_catalog_file(unit_catalog(ROOT, unit, "ko"))
    assert shown.splitlines() == [
        "공개 테스트를 통과했습니다.",
        "`w`은(는) 더 이상 리프가 아닙니다. MulBackward0이(가) 계산한 텐서이므로 역전파가 "
        "`w.grad`를 채우지 않습니다.",
        f"a: 내 예측: {words['leaf']}; torch: {words['not a leaf']}  ✗",
        "1개 중 0개를 맞혔습니다.",
        "RuntimeError: can't retain_grad on Tensor that has requires_grad=False",
    ]


def _stale_entry(path):
    """A catalog at ``path`` whose one long entry was translated, then changed in English:
    ``(the new English, the catalog's text as translate writes it)``."""
    old = "A long first line of a markdown text, which goes on and on.\n" * 3
    new = old.replace("first", "second", 1)
    update_catalog(path, [Entry(old, 3)], "ko", label="unit 09_demo")
    _fill(path, {old: "번역\n"})
    update_catalog(path, [Entry(new, 3)], "ko", label="unit 09_demo")
    return new, path.read_text()


def test_a_long_stale_entry_keeps_its_previous_english_until_it_is_translated(tmp_path):
    path = tmp_path / "ko.po"
    new, stale = _stale_entry(path)
    assert "#, fuzzy" in stale and '#| msgid "" "A long first line' in stale
    # Babel's reader keeps its own wrapped `#|` lines as translator comments ("# |" when
    # written again): the update reads them back into the previous English instead
    update_catalog(path, [Entry(new, 3)], "ko", label="unit 09_demo")
    assert path.read_text() == stale
    _fill(path, {new: "새 번역\n"}, settled=True)
    update_catalog(path, [Entry(new, 3)], "ko", label="unit 09_demo")
    assert "|" not in path.read_text()


def test_a_po_tool_saving_a_stale_entry_leaves_no_stray_comments(tmp_path):
    from babel.messages.pofile import read_po, write_po

    path = tmp_path / "ko.po"
    new, stale = _stale_entry(path)
    with path.open("rb") as stream:  # saved by a tool that uses Babel with its default width
        catalog = read_po(stream)
    with path.open("wb") as stream:
        write_po(stream, catalog)
    wrapped = path.read_text().splitlines()[3:]
    assert any(line.startswith("# ") and "|" not in line for line in wrapped)
    update_catalog(path, [Entry(new, 3)], "ko", label="unit 09_demo")
    assert path.read_text() == stale
