"""Reading learner notebooks: every bad file is refused with its reason, every readable one is
returned as a clean, valid v4.5 notebook without outputs."""

from __future__ import annotations

import codecs
import copy
import json

import nbformat
import pytest

from autograder.grading.notebook_reader import MAX_NOTEBOOK_BYTES, read_learner_notebook
from autograder.grading.results import NotGradable
from tests.conftest import LAYOUT

NAME = "01_leaf_tensors.ipynb"
RESUBMIT = "open the notebook in Jupyter, save it and submit it again."


def write(tmp_path, content, name=NAME):
    path = tmp_path / name
    data = content if isinstance(content, bytes) else json.dumps(content).encode()
    path.write_bytes(data)
    return path


def refusal(tmp_path, content, **options):
    path = write(tmp_path, content)
    before = path.read_bytes()
    with pytest.raises(NotGradable) as caught:
        read_learner_notebook(path, **options)
    assert path.read_bytes() == before
    return str(caught.value)


def v4(cells, metadata=None, minor=5):
    return {"cells": cells, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": minor}


def code(source, **more):
    return {"cell_type": "code", "metadata": {}, "source": source, **more}


def test_the_released_notebook_with_outputs_reads_back_as_released(tmp_path):
    released = nbformat.read(LAYOUT.learner_notebook("01_leaf_tensors"), as_version=4)
    submitted = copy.deepcopy(released)
    for number, cell in enumerate(submitted.cells):
        cell.source = cell.source.splitlines(keepends=True)
        if cell.cell_type == "code":
            cell.execution_count = number
            cell.outputs = [{"output_type": "stream", "name": "stdout", "text": "x" * 100_000}]
    path = write(tmp_path, submitted)
    before = path.read_bytes()

    notebook = read_learner_notebook(path)

    assert notebook == released
    assert read_learner_notebook(path) == notebook
    assert path.read_bytes() == before


def test_outputs_and_execution_counts_are_cleared_and_sources_joined(tmp_path):
    cells = [
        code(
            ["a = 1\n", "a"],
            id="one",
            execution_count=7,
            outputs=[{"output_type": "error", "ename": "E", "evalue": "v", "traceback": []}],
        ),
        {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "text"], "id": "two"},
        {"cell_type": "raw", "metadata": {}, "source": "raw", "id": "three"},
    ]
    metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "widgets": {"state": {"x": "y" * 1000}},
    }

    notebook = read_learner_notebook(write(tmp_path, v4(cells, metadata)))

    assert notebook == nbformat.from_dict(
        v4(
            [
                {
                    "id": "one",
                    "cell_type": "code",
                    "metadata": {},
                    "source": "a = 1\na",
                    "execution_count": None,
                    "outputs": [],
                },
                {"id": "two", "cell_type": "markdown", "metadata": {}, "source": "# Title\ntext"},
                {"id": "three", "cell_type": "raw", "metadata": {}, "source": "raw"},
            ],
            {"kernelspec": metadata["kernelspec"]},
        )
    )


def test_older_v4_minors_are_upgraded_with_ids_that_do_not_change(tmp_path):
    path = write(tmp_path, v4([code("x = 1"), code("y = 2")], minor=2))

    notebook = read_learner_notebook(path)

    assert (notebook.nbformat, notebook.nbformat_minor) == (4, 5)
    assert [cell.id for cell in notebook.cells] == ["cell-1", "cell-2"]
    assert read_learner_notebook(path) == notebook
    nbformat.validate(notebook)


def test_invalid_and_duplicate_ids_are_replaced_deterministically(tmp_path):
    cells = [
        code("1", id="same"),
        code("2", id="same"),
        code("3", id="cell-2"),
        code("4", id="a b"),
    ]

    notebook = read_learner_notebook(write(tmp_path, v4(cells)))

    assert [cell.id for cell in notebook.cells] == ["same", "cell-2-1", "cell-2", "cell-4"]


def test_a_v3_notebook_is_upgraded(tmp_path):
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {"name": "homework"},
        "worksheets": [
            {
                "metadata": {},
                "cells": [
                    {"cell_type": "heading", "level": 2, "metadata": {}, "source": ["Leaf"]},
                    {
                        "cell_type": "code",
                        "language": "python",
                        "collapsed": False,
                        "metadata": {},
                        "input": ["x = 1\n", "x"],
                        "prompt_number": 3,
                        "outputs": [{"output_type": "pyout", "prompt_number": 3, "text": "1"}],
                    },
                    {"cell_type": "markdown", "metadata": {}, "source": "Some *text*"},
                ],
            }
        ],
    }

    notebook = read_learner_notebook(write(tmp_path, v3))

    assert notebook == nbformat.from_dict(
        v4(
            [
                {"id": "cell-1", "cell_type": "markdown", "metadata": {}, "source": "## Leaf"},
                {
                    "id": "cell-2",
                    "cell_type": "code",
                    "metadata": {"collapsed": False},
                    "source": "x = 1\nx",
                    "execution_count": None,
                    "outputs": [],
                },
                {"id": "cell-3", "cell_type": "markdown", "metadata": {}, "source": "Some *text*"},
            ],
            {"name": "homework"},
        )
    )


def test_vs_code_and_colab_notebooks_are_accepted_and_keep_nbgrader_metadata(tmp_path):
    grading = {
        "grade": True,
        "grade_id": "grads_test",
        "locked": True,
        "points": 3,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }
    cells = [
        # VS Code: no outputs or execution_count keys on a code cell, tags as a string.
        {"cell_type": "code", "source": "x = 1", "metadata": {"tags": "oops", "nbgrader": grading}},
        # Colab: a cell id in the metadata, collapsed given as a number.
        {
            "cell_type": "code",
            "source": "y = 2",
            "execution_count": None,
            "outputs": [],
            "metadata": {"id": "Xy12", "collapsed": 3},
        },
    ]
    metadata = {
        "kernelspec": {"name": "python3"},
        "colab": {"provenance": []},
        "accelerator": "GPU",
        "language_info": {"name": "python"},
    }

    notebook = read_learner_notebook(write(tmp_path, v4(cells, metadata, minor=4)))

    nbformat.validate(notebook)
    assert [cell.source for cell in notebook.cells] == ["x = 1", "y = 2"]
    assert notebook.cells[0].metadata == {"nbgrader": grading}
    assert notebook.cells[1].metadata == {"id": "Xy12"}
    assert notebook.metadata == {
        "colab": {"provenance": []},
        "accelerator": "GPU",
        "language_info": {"name": "python"},
    }


def test_what_the_schema_still_refuses_is_dropped_but_the_cells_are_kept(tmp_path):
    grading = {
        "grade": False,
        "grade_id": "intro",
        "locked": False,
        "schema_version": 3,
        "solution": True,
        "task": False,
    }
    cells = [
        {
            "cell_type": "markdown",
            "source": "![x](attachment:x.png)",
            "id": "m",
            "metadata": {"nbgrader": grading, "note": 1},
            "attachments": {"x.png": "not a bundle"},
        },
        code("z = 3", id="c", metadata={"nbgrader": grading}),
    ]
    metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3"}, "other": 1}

    notebook = read_learner_notebook(write(tmp_path, v4(cells, metadata)))

    nbformat.validate(notebook)
    assert notebook == nbformat.from_dict(
        v4(
            [
                {
                    "id": "m",
                    "cell_type": "markdown",
                    "metadata": {"nbgrader": grading},
                    "source": "![x](attachment:x.png)",
                },
                {
                    "id": "c",
                    "cell_type": "code",
                    "metadata": {"nbgrader": grading},
                    "source": "z = 3",
                    "execution_count": None,
                    "outputs": [],
                },
            ],
            {"kernelspec": metadata["kernelspec"]},
        )
    )


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    data = codecs.BOM_UTF8 + json.dumps(v4([code("x")])).encode()

    assert read_learner_notebook(write(tmp_path, data)).cells[0].source == "x"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", f"`{NAME}` is empty (0 bytes): {RESUBMIT}"),
        (b" \n\t", f"`{NAME}` is empty (3 bytes): {RESUBMIT}"),
        (
            b'{"cells": [{"cell_type": "code", "sou',
            f"`{NAME}` ends before its JSON is complete (line 1, column 34): the file was cut "
            f"short; {RESUBMIT}",
        ),
        (
            b'{"cells": [],\n "nbformat": 4,,\n}',
            f"`{NAME}` is not valid JSON (Expecting property name enclosed in double quotes at "
            f"line 2, column 16), so it is damaged or was edited outside Jupyter: {RESUBMIT}",
        ),
        (
            b'{"cells": ["caf\xe9"]}',
            f"`{NAME}` is not valid UTF-8 text (byte 15 cannot be read), so it is damaged: "
            f"{RESUBMIT}",
        ),
        (
            b'{"cells": [\x00]}',
            f"`{NAME}` contains NUL bytes (the first at byte 11), so it is damaged or is not a "
            f"notebook: {RESUBMIT}",
        ),
        (
            '{"cells": []}'.encode("utf-16"),
            f"`{NAME}` is saved as UTF-16 text, not the UTF-8 Jupyter writes: {RESUBMIT}",
        ),
        (
            b"[1, 2]",
            f"`{NAME}` is JSON but not a notebook (it holds a list, not cells): {RESUBMIT}",
        ),
        (
            b'"cells"',
            f"`{NAME}` is JSON but not a notebook (it holds a string, not cells): {RESUBMIT}",
        ),
        (
            b"42",
            f"`{NAME}` is JSON but not a notebook (it holds a single value, not cells): {RESUBMIT}",
        ),
        (
            b'{"metadata": {}}',
            f"`{NAME}` is JSON but not a notebook (it has no cells): {RESUBMIT}",
        ),
        (
            b'{"cells": {}, "nbformat": 4}',
            f"`{NAME}` is JSON but not a notebook (it has no list of cells): {RESUBMIT}",
        ),
        (
            b"[" * 100_000 + b"]" * 100_000,
            f"`{NAME}` is JSON nested too deeply to be a notebook: {RESUBMIT}",
        ),
        (
            b'{"nbformat": 2, "worksheets": []}',
            f"`{NAME}` is in notebook format v2 (IPython 2 or older), which the grader cannot "
            f"read: {RESUBMIT}",
        ),
        (
            b'{"nbformat": 1, "cells": []}',
            f"`{NAME}` is in notebook format v1 (IPython 2 or older), which the grader cannot "
            f"read: {RESUBMIT}",
        ),
        (
            b'{"nbformat": 5, "cells": []}',
            f"`{NAME}` declares notebook format 5, which the grader does not know (it reads v3 "
            f"and v4): {RESUBMIT}",
        ),
        (
            b'{"nbformat": "4", "cells": []}',
            f"`{NAME}` declares notebook format '4', which the grader does not know (it reads "
            f"v3 and v4): {RESUBMIT}",
        ),
        (
            b'{"cells": [], "nbformat": 4, "nbformat_minor": ' + b"9" * 5000 + b"}",
            f"`{NAME}` holds a number too long to be a notebook's: {RESUBMIT}",
        ),
        (
            b'{"nbformat": 3, "worksheets": [{"cells": 1}]}',
            f"`{NAME}` is a v3 notebook without readable worksheets of cells: {RESUBMIT}",
        ),
    ],
    ids=[
        "empty",
        "blank",
        "truncated",
        "malformed",
        "invalid-utf8",
        "nul",
        "utf16",
        "list",
        "string",
        "number",
        "no-cells",
        "cells-not-a-list",
        "deep-nesting",
        "v2",
        "v1",
        "v5",
        "version-as-string",
        "huge-number",
        "v3-without-worksheets",
    ],
)
def test_unreadable_files_are_refused_with_their_reason(tmp_path, content, reason):
    assert refusal(tmp_path, content) == reason


@pytest.mark.parametrize(
    "cell",
    [
        {"cell_type": "heading", "source": "x", "metadata": {}},
        {"source": "x", "metadata": {}},
        {"cell_type": "code", "source": 3, "metadata": {}},
        {"cell_type": "code", "source": ["a", 1], "metadata": {}},
        {"cell_type": "code", "metadata": {}},
        "a string",
    ],
    ids=["unknown-type", "no-type", "number-source", "mixed-list-source", "no-source", "string"],
)
def test_a_cell_that_cannot_be_read_refuses_the_notebook(tmp_path, cell):
    reason = refusal(tmp_path, v4([code("ok"), cell]))

    assert reason == (
        f"`{NAME}` cell 2 has no readable cell type and source, so the notebook cannot be read "
        f"as cells: {RESUBMIT}"
    )


@pytest.mark.parametrize(
    ("metadata", "kernel", "language"),
    [
        (
            {
                "kernelspec": {"name": "ir", "display_name": "R", "language": "R"},
                "language_info": {"name": "R"},
            },
            "R",
            "R",
        ),
        (
            {
                "kernelspec": {
                    "name": "julia-1.10",
                    "display_name": "Julia 1.10",
                    "language": "julia",
                }
            },
            "Julia 1.10",
            "julia",
        ),
        ({"language_info": {"name": "javascript"}}, "javascript", "javascript"),
    ],
    ids=["r", "julia", "language-info-only"],
)
def test_a_notebook_for_another_language_is_refused(tmp_path, metadata, kernel, language):
    reason = refusal(tmp_path, v4([code("x <- 1")], metadata))

    assert reason == (
        f"`{NAME}` was saved with the `{kernel}` kernel, for {language}, so its cells are not "
        "Python: open it with the Python 3 kernel (Kernel > Change Kernel), save it and submit "
        "it again."
    )


def test_python_kernels_of_any_name_are_accepted(tmp_path):
    metadata = {
        "kernelspec": {
            "name": "conda-env-course-py",
            "display_name": "Python (course)",
            "language": "python",
        },
        "language_info": {"name": "python", "version": "3.11.7"},
    }

    notebook = read_learner_notebook(write(tmp_path, v4([code("x")], metadata)))

    assert notebook.metadata == metadata


def test_a_file_larger_than_the_limit_is_refused_with_its_size(tmp_path):
    content = json.dumps(v4([code("x" * 3000)])).encode()

    assert refusal(tmp_path, content, max_bytes=2048) == (
        f"`{NAME}` is {len(content):,} bytes, more than the 2,048 bytes the grader reads: clear "
        "all outputs (Edit > Clear Outputs of All Cells), save the notebook and submit it again."
    )


def test_the_default_limit_is_50_mib_and_is_said_in_mib(tmp_path):
    path = tmp_path / NAME
    with path.open("wb") as stream:
        stream.truncate(MAX_NOTEBOOK_BYTES + 2**20)

    with pytest.raises(NotGradable) as caught:
        read_learner_notebook(path)

    assert MAX_NOTEBOOK_BYTES == 50 * 2**20
    assert str(caught.value).startswith(
        f"`{NAME}` is 51.0 MiB, more than the 50.0 MiB the grader reads:"
    )


def test_a_missing_file_or_a_folder_is_refused(tmp_path):
    (tmp_path / "folder.ipynb").mkdir()

    with pytest.raises(NotGradable) as missing:
        read_learner_notebook(tmp_path / NAME)
    with pytest.raises(NotGradable) as folder:
        read_learner_notebook(tmp_path / "folder.ipynb")

    assert str(missing.value) == f"`{NAME}` is missing or is not a file: submit the notebook file."
    assert (
        str(folder.value) == "`folder.ipynb` is missing or is not a file: submit the notebook file."
    )


def test_a_file_that_cannot_be_opened_is_refused_with_the_system_reason(tmp_path, monkeypatch):
    path = write(tmp_path, v4([code("x")]))

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(type(path), "open", denied)
    with pytest.raises(NotGradable) as caught:
        read_learner_notebook(path)

    assert str(caught.value) == f"`{NAME}` could not be read (Permission denied): submit it again."


@pytest.mark.parametrize(
    "cell",
    [{"source": "x"}, {"cell_type": "code", "input": 3, "outputs": []}, ["not", "a", "cell"]],
    ids=["no-type", "number-input", "list"],
)
def test_a_v3_cell_that_cannot_be_read_refuses_the_notebook(tmp_path, cell):
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {},
        "worksheets": [{"cells": [{"cell_type": "markdown", "source": "ok"}, cell]}],
    }

    assert refusal(tmp_path, v3) == (
        f"`{NAME}` cell 2 has no readable cell type and source, so the notebook cannot be read "
        f"as cells: {RESUBMIT}"
    )


def test_nesting_that_json_reads_but_nbformat_cannot_walk_is_refused(tmp_path):
    nested = '{"a": ' * 600 + "1" + "}" * 600
    content = '{"cells": [{"cell_type": "code", "source": "x", "metadata": %s}], "metadata": {}, '
    content += '"nbformat": 4, "nbformat_minor": 5}'

    reason = refusal(tmp_path, (content % nested).encode())

    assert reason == f"`{NAME}` is JSON nested too deeply to be a notebook: {RESUBMIT}"
