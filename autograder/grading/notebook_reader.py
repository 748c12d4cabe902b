"""Read a learner's submitted notebook safely: a clean v4 notebook without outputs, or a reason.

The grader reads every submission in its own trusted process before anything runs, so a
damaged, enormous or foreign file is refused here with one sentence that names the file, says
what is wrong and what to do, instead of failing later inside nbgrader. Old formats (v3 and the
v4 minors) are upgraded, and notebooks written by other tools (VS Code, Colab) are accepted as
long as their cells can be read: only what cannot be read as cells is refused.

Example::

    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "01_leaf_tensors.ipynb"
    >>> cell = {"cell_type": "code", "source": ["x = 1\\n", "x"], "metadata": {},
    ...         "execution_count": 3, "outputs": [{"output_type": "stream",
    ...         "name": "stdout", "text": "1"}]}
    >>> _ = path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
    ...                                 "nbformat_minor": 2}))
    >>> notebook = read_learner_notebook(path)
    >>> notebook.cells[0].source, notebook.cells[0].outputs, notebook.cells[0].execution_count
    ('x = 1\\nx', [], None)
    >>> _ = path.write_text('{"cells": [')
    >>> read_learner_notebook(path)
    Traceback (most recent call last):
    ...
    autograder.grading.results.NotGradable: `01_leaf_tensors.ipynb` ends before its JSON is \
complete (line 1, column 12): the file was cut short; open the notebook in Jupyter, save it \
and submit it again.
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4.convert import upgrade_cell

from autograder.grading.results import NotGradable

__all__ = ["MAX_NOTEBOOK_BYTES", "NOTEBOOK_SUFFIX", "read_learner_notebook"]

NOTEBOOK_SUFFIX = ".ipynb"
MAX_NOTEBOOK_BYTES = 50 * 2**20

_CELL_TYPES = frozenset({"code", "markdown", "raw"})
_CELL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_MIB = 2**20
_RESUBMIT = "open the notebook in Jupyter, save it and submit it again"


def read_learner_notebook(
    path: Path, *, max_bytes: int = MAX_NOTEBOOK_BYTES
) -> nbformat.NotebookNode:
    """The notebook at ``path`` as a valid v4.5 notebook with every output and execution count
    removed and every source a single string; raises :class:`NotGradable` when it cannot be read
    as a Python notebook (the reason names ``path.name``)."""
    name = f"`{path.name}`"
    data = _read_bytes(path, name, max_bytes)
    try:
        cells, metadata = _cells_and_metadata(name, _parse_json(name, data))
        _refuse_other_language(name, metadata)
        return _clean_notebook(name, cells, metadata)
    except RecursionError:  # from json itself, or from nbformat's recursive copies and checks
        raise NotGradable(
            f"{name} is JSON nested too deeply to be a notebook: {_RESUBMIT}."
        ) from None


def _read_bytes(path: Path, name: str, max_bytes: int) -> bytes:
    try:
        if not path.is_file():
            raise NotGradable(f"{name} is missing or is not a file: submit the notebook file.")
        with path.open("rb") as stream:
            data = stream.read(max_bytes + 1)
    except OSError as error:
        raise NotGradable(
            f"{name} could not be read ({error.strerror}): submit it again."
        ) from None
    if len(data) > max_bytes:
        size = path.stat().st_size
        raise NotGradable(
            f"{name} is {_size(size)}, more than the {_size(max_bytes)} the grader reads: "
            "clear all outputs (Edit > Clear Outputs of All Cells), save the notebook and submit "
            "it again."
        )
    if not data.strip():
        raise NotGradable(f"{name} is empty ({len(data)} bytes): {_RESUBMIT}.")
    return data


def _parse_json(name: str, data: bytes) -> Any:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise NotGradable(
            f"{name} is saved as UTF-16 text, not the UTF-8 Jupyter writes: {_RESUBMIT}."
        )
    nul = data.find(b"\x00")
    if nul >= 0:
        raise NotGradable(
            f"{name} contains NUL bytes (the first at byte {nul}), so it is damaged or is not a "
            f"notebook: {_RESUBMIT}."
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise NotGradable(
            f"{name} is not valid UTF-8 text (byte {error.start} cannot be read), so it is "
            f"damaged: {_RESUBMIT}."
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        if error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string"):
            raise NotGradable(
                f"{name} ends before its JSON is complete ({where}): the file was cut short; "
                f"{_RESUBMIT}."
            ) from None
        raise NotGradable(
            f"{name} is not valid JSON ({error.msg} at {where}), so it is damaged or was edited "
            f"outside Jupyter: {_RESUBMIT}."
        ) from None
    except ValueError:  # the only other refusal of json.loads: an integer too long to convert
        raise NotGradable(
            f"{name} holds a number too long to be a notebook's: {_RESUBMIT}."
        ) from None


def _cells_and_metadata(name: str, document: Any) -> tuple[list[Any], dict[str, Any]]:
    """The raw cells (v4 shape) and notebook metadata of a parsed v3 or v4 notebook."""
    not_a_notebook = f"{name} is JSON but not a notebook"
    if not isinstance(document, dict):
        kind = {list: "a list", str: "a string"}.get(type(document), "a single value")
        raise NotGradable(f"{not_a_notebook} (it holds {kind}, not cells): {_RESUBMIT}.")
    metadata = document.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    major = document.get("nbformat", 4 if "cells" in document else None)
    if major == 3:
        return _upgrade_v3_cells(name, document), metadata
    if major == 4:
        cells = document.get("cells")
        if not isinstance(cells, list):
            raise NotGradable(f"{not_a_notebook} (it has no list of cells): {_RESUBMIT}.")
        return cells, metadata
    if major in (1, 2):
        raise NotGradable(
            f"{name} is in notebook format v{major} (IPython 2 or older), which the grader "
            f"cannot read: {_RESUBMIT}."
        )
    if major is None:
        raise NotGradable(f"{not_a_notebook} (it has no cells): {_RESUBMIT}.")
    raise NotGradable(
        f"{name} declares notebook format {major!r}, which the grader does not know (it reads "
        f"v3 and v4): {_RESUBMIT}."
    )


def _upgrade_v3_cells(name: str, document: dict[str, Any]) -> list[Any]:
    worksheets = document.get("worksheets")
    if not isinstance(worksheets, list) or not all(
        isinstance(sheet, dict) and isinstance(sheet.get("cells"), list) for sheet in worksheets
    ):
        raise NotGradable(
            f"{name} is a v3 notebook without readable worksheets of cells: {_RESUBMIT}."
        )
    cells = []
    for number, cell in enumerate(
        (cell for sheet in worksheets for cell in sheet["cells"]), start=1
    ):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise _unreadable_cell(name, number)
        old = nbformat.from_dict({**cell, "outputs": []})
        for key in ("input", "source"):
            text = old.get(key, "")
            if isinstance(text, list) and all(isinstance(line, str) for line in text):
                old[key] = "".join(text)
            elif not isinstance(text, str):
                raise _unreadable_cell(name, number)
        cells.append({**upgrade_cell(old), "id": None})
    return cells


def _refuse_other_language(name: str, metadata: dict[str, Any]) -> None:
    kernelspec = metadata.get("kernelspec")
    language_info = metadata.get("language_info")
    kernelspec = kernelspec if isinstance(kernelspec, dict) else {}
    language_info = language_info if isinstance(language_info, dict) else {}
    language = language_info.get("name") or kernelspec.get("language")
    if not isinstance(language, str) or language.lower().startswith(("python", "ipython")):
        return
    kernel = kernelspec.get("display_name") or kernelspec.get("name") or language
    raise NotGradable(
        f"{name} was saved with the `{kernel}` kernel, for {language}, so its cells are not "
        "Python: open it with the Python 3 kernel (Kernel > Change Kernel), save it and submit "
        "it again."
    )


def _clean_notebook(name: str, cells: list[Any], metadata: dict[str, Any]) -> nbformat.NotebookNode:
    clean_cells = [_clean_cell(name, number, cell) for number, cell in enumerate(cells, start=1)]
    _give_unique_ids(clean_cells)
    notebook_metadata = {key: value for key, value in metadata.items() if key != "widgets"}
    notebook = nbformat.from_dict(
        {
            "cells": clean_cells,
            "metadata": notebook_metadata,
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )
    _, notebook = nbformat.validator.normalize(notebook, strip_invalid_metadata=True)
    notebook = nbformat.from_dict(notebook)
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError:
        _keep_only_grading_metadata(notebook)
    return notebook


def _clean_cell(name: str, number: int, cell: Any) -> dict[str, Any]:
    if not isinstance(cell, dict) or cell.get("cell_type") not in _CELL_TYPES:
        raise _unreadable_cell(name, number)
    source = cell.get("source")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise _unreadable_cell(name, number)
    metadata = cell.get("metadata")
    clean = {
        "id": cell.get("id"),
        "cell_type": cell["cell_type"],
        "metadata": metadata if isinstance(metadata, dict) else {},
        "source": source,
    }
    if cell["cell_type"] == "code":
        clean.update(execution_count=None, outputs=[])
    elif isinstance(cell.get("attachments"), dict):
        clean["attachments"] = cell["attachments"]
    return clean


def _give_unique_ids(cells: list[dict[str, Any]]) -> None:
    """Keep each valid, unique cell id; give the others ``cell-N`` (N from 1), so that reading
    the same file twice gives the same notebook."""
    kept = set()
    for cell in cells:
        if isinstance(cell["id"], str) and _CELL_ID.match(cell["id"]) and cell["id"] not in kept:
            kept.add(cell["id"])
        else:
            cell["id"] = None
    taken = set(kept)
    for number, cell in enumerate(cells, start=1):
        if cell["id"] is None:
            candidate, extra = f"cell-{number}", 0
            while candidate in taken:
                extra += 1
                candidate = f"cell-{number}-{extra}"
            cell["id"] = candidate
            taken.add(candidate)


def _keep_only_grading_metadata(notebook: nbformat.NotebookNode) -> None:
    """Last resort for what the schema still refuses once invalid metadata is stripped (a
    markdown cell's malformed attachments, say): keep what grading reads, each cell's type,
    source and ``nbgrader`` metadata, and the notebook's kernel, and drop the rest."""
    notebook.metadata = nbformat.from_dict(
        {key: notebook.metadata[key] for key in ("kernelspec",) if key in notebook.metadata}
    )
    for cell in notebook.cells:
        cell.pop("attachments", None)
        cell.metadata = nbformat.from_dict(
            {"nbgrader": cell.metadata["nbgrader"]} if "nbgrader" in cell.metadata else {}
        )


def _unreadable_cell(name: str, number: int) -> NotGradable:
    return NotGradable(
        f"{name} cell {number} has no readable cell type and source, so the notebook cannot be "
        f"read as cells: {_RESUBMIT}."
    )


def _size(count: int) -> str:
    return f"{count / _MIB:.1f} MiB" if count >= _MIB else f"{count:,} bytes"
