"""Open a notebook trusted when it holds nothing that trust would let run.

Jupyter marks a notebook trusted only when this account signed it, so a learner's freshly copied
or fetched course notebook opens "not trusted", although it has no output at all. A notebook is
trusted here when either is true: Jupyter's own signature check passes, or no cell holds an
output that trust would change (HTML, JavaScript, widgets or any other rich output: Jupyter's
own rule, ``NotebookNotary.check_cells``, with whatever ``trusted`` flag the file claims
ignored). A notebook with such outputs that this account did not sign stays untrusted.

Example::

    >>> import nbformat
    >>> from nbformat.v4 import new_code_cell, new_notebook, new_output
    >>> plain = new_notebook(cells=[new_code_cell("x = 1")])
    >>> nothing_to_trust(plain)
    True
    >>> rich = new_output("display_data", data={"text/html": "<script>alert(1)</script>"})
    >>> forged = new_notebook(cells=[new_code_cell("x = 1", outputs=[rich],
    ...                                            metadata={"trusted": True})])
    >>> nothing_to_trust(forged)
    False
"""

from __future__ import annotations

import copy

import nbformat
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from nbformat.sign import NotebookNotary

__all__ = ["CourseContentsManager", "nothing_to_trust"]


def nothing_to_trust(notebook: nbformat.NotebookNode) -> bool:
    """Whether no cell of ``notebook`` holds an output that trust would let run."""
    plain = copy.deepcopy(notebook)
    for cell in plain.get("cells", []):
        cell.get("metadata", {}).pop("trusted", None)
    return bool(NotebookNotary().check_cells(plain))


class CourseContentsManager(AsyncLargeFileManager):
    """Jupyter Server's usual contents manager; a notebook with nothing to distrust opens
    trusted (see the module)."""

    def mark_trusted_cells(self, nb: nbformat.NotebookNode, path: str = "") -> None:
        trusted = self.notary.check_signature(nb) or nothing_to_trust(nb)
        self.notary.mark_cells(nb, trusted)
