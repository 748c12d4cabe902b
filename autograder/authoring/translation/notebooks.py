"""A learner notebook in another language: the English one with its markdown translated.

Everything else stays the English notebook's: code, cell ids, nbgrader's metadata and
checksums, so nbgrader and the class grader grade both the same way. The notebook's metadata
says its language and unit, and carries the translations of the messages its visible cells
hand to the checks (:data:`autograder.i18n.catalogs.NOTEBOOK_KEY`); the hidden tests'
messages stay in ``solutions/``.

Example::

    >>> import nbformat
    >>> english = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_markdown_cell("Run it."),
    ...     nbformat.v4.new_code_cell('say("Visible tests passed.")')])
    >>> korean = translated_notebook(
    ...     english, "01_leaf_tensors", "ko",
    ...     markdown={"Run it.": "실행해 보세요."},
    ...     messages={"Visible tests passed.": "공개 테스트를 통과했습니다."})
    >>> korean.cells[0].source, korean.cells[1].source
    ('실행해 보세요.', 'say("Visible tests passed.")')
    >>> korean.metadata["autograd_course"]["messages"]
    {'Visible tests passed.': '공개 테스트를 통과했습니다.'}
    >>> structure_differences(english, korean)
    []
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import nbformat

from autograder.authoring.translation.extract import notebook_messages
from autograder.i18n.catalogs import NOTEBOOK_KEY

__all__ = ["structure_differences", "translated_notebook"]


def translated_notebook(
    english: nbformat.NotebookNode,
    unit: str,
    language: str,
    *,
    markdown: Mapping[str, str],
    messages: Mapping[str, str],
) -> nbformat.NotebookNode:
    """``english`` with each markdown cell's translation (the English where there is none
    yet) and, in its metadata, the translations of its own cells' messages."""
    translated = copy.deepcopy(english)
    for cell in translated.cells:
        if cell.cell_type == "markdown":
            cell.source = markdown.get(cell.source, cell.source)
    own = [entry.text for entry in notebook_messages(english) if not entry.markdown]
    translated.metadata[NOTEBOOK_KEY] = {
        "language": language,
        "unit": unit,
        "messages": {text: messages[text] for text in own if text in messages},
    }
    return translated


def structure_differences(
    english: nbformat.NotebookNode, translated: nbformat.NotebookNode
) -> list[str]:
    """Where ``translated`` differs from ``english`` in anything but markdown text and its own
    metadata entry: cell kinds, ids, code, cell metadata, notebook metadata. One line each."""
    problems = []
    if len(english.cells) != len(translated.cells):
        return [f"{len(translated.cells)} cells; the English notebook has {len(english.cells)}"]
    for number, (ours, theirs) in enumerate(zip(english.cells, translated.cells, strict=True), 1):
        for key in ("cell_type", "id", "metadata"):
            if ours.get(key) != theirs.get(key):
                problems.append(f"cell {number}: its {key} differs from the English notebook's")
        if ours.cell_type != "markdown" and ours.source != theirs.source:
            problems.append(f"cell {number}: its code differs from the English notebook's")
    mine = {k: v for k, v in english.metadata.items() if k != NOTEBOOK_KEY}
    theirs = {k: v for k, v in translated.metadata.items() if k != NOTEBOOK_KEY}
    if mine != theirs:
        problems.append("the notebook's metadata differs from the English notebook's")
    return problems
