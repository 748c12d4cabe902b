"""What a translator translates: each markdown cell, and each text the code hands to the checks.

A unit's English lives in its source notebook: every markdown cell whole, and every text its
code passes to a check's message, name or hint, to ``reveal_prediction``'s ``why`` and
``labels``, or to ``say``. An f-string becomes a template with each replacement field written
as its source (``"`{_name}` was replaced."``), which :class:`autograder.i18n.Messages` matches
against the finished text. A text reached through a variable is found where the variable is
bound (``hint=_reasons[_letter]`` finds the dict ``_reasons`` was set to); a variable used
inside a field contributes the prose it is bound to (the words with spaces), which the lookup
translates inside the filled template.

The packages' own words are found by Babel's Python extractor (:func:`library_messages`).

Example::

    >>> import nbformat
    >>> notebook = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_markdown_cell("# A unit"),
    ...     nbformat.v4.new_code_cell(
    ...         'for _name in ["a leaf", "a non-leaf"]:\\n'
    ...         '    expect(ok, f"snapshot of {_name} is wrong.", hint="clone it.")'),
    ... ])
    >>> [(entry.text, entry.cell) for entry in notebook_messages(notebook)]
    [('# A unit', 0), ('snapshot of {_name} is wrong.', 1), ('a leaf', 1), ('a non-leaf', 1), \
('clone it.', 1)]
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.i18n.messages import parts

__all__ = ["Entry", "library_messages", "notebook_messages"]

# Where a check call takes text: positional indexes and keyword names. A check's ``name`` is
# often code (`snapshot`, `grads['w']`), translated only where it is prose (has a space). An
# answer a learner types (`"error"`, one of ``expect_choice``'s choices) stays as typed, but the
# reveal shows it in the learner's language: its words are translated, its letters are not.
_NAME, _TEXT, _ANSWER = "name", "text", "answer"
_TEXT_ARGUMENTS: dict[str, dict[int | str, str]] = {
    "expect": {1: _TEXT, "message": _TEXT, "hint": _TEXT},
    "expect_first_prediction": {1: _NAME, "name": _NAME, "hint": _TEXT},
    "expect_choice": {0: _NAME, "name": _NAME, 2: _ANSWER, "choices": _ANSWER, "hint": _TEXT},
    "call_learner": {0: _NAME},
    "reveal_prediction": {"why": _TEXT, "labels": _TEXT},
    "say": {0: _TEXT},
    **{
        check: {0: _NAME, "name": _NAME, "hint": _TEXT}
        for check in ("expect_type", "expect_equal", "expect_mapping", "expect_tensor")
        + ("expect_leaf", "expect_made_with_device")
    },
}
# The packages' marks for translatable text, as Babel's extractor knows them.
LIBRARY_KEYWORDS = {"_": None, "gettext": None, "N_": None}


@dataclass(frozen=True)
class Entry:
    """One English text to translate: the text (a template for formatted text), the cell it
    is in (``None`` for package code), and whether it is a whole markdown cell."""

    text: str
    cell: int | None
    markdown: bool = False
    where: str = ""


def notebook_messages(notebook: nbformat.NotebookNode) -> list[Entry]:
    """Every text to translate in ``notebook``, in cell order, each once (at its first cell).

    A code cell that is not valid Python contributes nothing (the release's source check
    reports it)."""
    trees = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            try:
                trees[index] = ast.parse(cell.source)
            except SyntaxError:
                continue
    bindings = _bindings(trees.values())
    entries: dict[str, Entry] = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown" and cell.source.strip():
            entries.setdefault(cell.source, Entry(cell.source, index, markdown=True))
        for text in _cell_texts(trees.get(index), bindings):
            entries.setdefault(text, Entry(text, index))
    return list(entries.values())


def library_messages(package: Path) -> list[Entry]:
    """Every text the Python modules and Jinja templates of ``package`` mark with ``_``,
    ``gettext`` or ``N_``."""
    from babel.messages.extract import extract_from_dir

    entries: dict[str, Entry] = {}
    found = extract_from_dir(
        str(package),
        method_map=[("**.py", "python"), ("**.j2", "jinja2.ext:babel_extract")],
        options_map={"**.j2": {"extensions": "jinja2.ext.i18n", "trimmed": "true"}},
        keywords=LIBRARY_KEYWORDS,
    )
    for filename, line, text, _comments, _context in found:
        if isinstance(text, str) and text:
            where = f"{package.name}/{filename}:{line}"
            entries.setdefault(text, Entry(text, None, where=where))
    return list(entries.values())


def _cell_texts(tree: ast.Module | None, bindings: dict[str, list[ast.expr]]) -> Iterator[str]:
    if tree is None:
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _called(node)
        if name not in _TEXT_ARGUMENTS:
            continue
        takes = _TEXT_ARGUMENTS[name]
        arguments = [
            (node.args[i], takes[i]) for i in takes if isinstance(i, int) and i < len(node.args)
        ]
        arguments += [(k.value, takes[k.arg]) for k in node.keywords if k.arg in takes]
        for argument, kind in arguments:
            for text in _texts(argument, bindings, set()):
                if kind == _TEXT or _is_prose(text) or kind == _ANSWER and _is_word(text):
                    yield text


def _is_word(template: str) -> bool:
    """Whether a template is words (``"error"``, ``"hook skipped"``), not a letter or a number."""
    return len(template) > 1 and template.replace(" ", "").isalpha()


def _is_prose(template: str) -> bool:
    """Whether a template's literal text has a space: words, not an expression."""
    return any(" " in text.strip() for text, is_field in parts(template) if not is_field)


def _called(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _texts(node: ast.expr, bindings: dict[str, list[ast.expr]], seen: set[str]) -> Iterator[str]:
    """The texts ``node`` may evaluate to, as templates."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if node.value.strip():
            yield node.value.replace("{", "{{").replace("}", "}}")
    elif isinstance(node, ast.JoinedStr):
        yield _template(node)
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                yield from _prose_bound_to(value.value, bindings, seen)
    elif isinstance(node, ast.Dict):
        for value in node.values:
            yield from _texts(value, bindings, seen)
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        for element in node.elts:
            yield from _texts(element, bindings, seen)
    elif isinstance(node, ast.IfExp):
        yield from _texts(node.body, bindings, seen)
        yield from _texts(node.orelse, bindings, seen)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _texts(value, bindings, seen)
    elif isinstance(node, ast.Subscript):
        yield from _texts(node.value, bindings, seen)
    elif isinstance(node, ast.Name) and node.id not in seen:
        for bound in bindings.get(node.id, []):
            yield from _texts(bound, bindings, seen | {node.id})


def _prose_bound_to(
    node: ast.expr, bindings: dict[str, list[ast.expr]], seen: set[str]
) -> Iterator[str]:
    """The words (string constants of prose or of letters only) that the names used in a
    replacement field are bound to: what a filled template may hold."""
    for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - seen:
        for bound in bindings.get(name, []):
            for constant in ast.walk(bound):
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                    text = constant.value.replace("{", "{{").replace("}", "}}")
                    if _is_prose(text) or _is_word(text):
                        yield text


def _template(node: ast.JoinedStr) -> str:
    pieces = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            pieces.append(str(value.value).replace("{", "{{").replace("}", "}}"))
        elif isinstance(value, ast.FormattedValue):
            pieces.append("{" + _field_source(value) + "}")
    return "".join(pieces)


def _field_source(value: ast.FormattedValue) -> str:
    source = ast.unparse(value.value)
    if value.conversion != -1:
        source += "!" + chr(value.conversion)
    if value.format_spec is not None:
        source += ":" + _template(value.format_spec)  # type: ignore[arg-type]
    return source


def _bindings(trees: object) -> dict[str, list[ast.expr]]:
    """Each name assigned in the notebook's code, with every expression it is bound to: an
    assignment's value, a for loop's iterable (all of it, for a tuple target), or, for a
    function's parameter, what the notebook's calls of that function pass it."""
    bound: dict[str, list[ast.expr]] = {}
    functions: dict[str, ast.FunctionDef] = {}
    calls: list[ast.Call] = []
    for tree in trees:  # type: ignore[attr-defined]
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in _names(target):
                        bound.setdefault(name, []).append(node.value)
            elif isinstance(node, ast.For | ast.comprehension):
                for name in _names(node.target):
                    bound.setdefault(name, []).append(node.iter)
            elif isinstance(node, ast.FunctionDef):
                functions[node.name] = node
            elif isinstance(node, ast.Call):
                calls.append(node)
    for call in calls:
        function = functions.get(_called(call) or "")
        if function is None:
            continue
        parameters = [argument.arg for argument in function.args.args]
        for name, value in zip(parameters, call.args, strict=False):
            bound.setdefault(name, []).append(value)
        for keyword in call.keywords:
            if keyword.arg in parameters:
                bound.setdefault(keyword.arg, []).append(keyword.value)
    return bound


def _names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
