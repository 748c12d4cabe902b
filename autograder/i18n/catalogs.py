"""Where the translation catalogs are, and how one is read.

Every translation is a gettext PO file whose msgid is the English text:

- ``autograder/locale/LANG.po`` and ``gradgraph/locale/LANG.po``: the packages' own words
  (check messages, the reveal's comparison, feedback pages, the film's captions);
- ``solutions/UNIT/LANG.po``: one unit's markdown cells and the messages its code hands to
  the checks, hidden tests' included. It stays with the instructor: a learner's notebook
  carries only the translations of its visible cells' messages, in its metadata
  (:data:`NOTEBOOK_KEY`).

Example::

    >>> import io
    >>> po = io.BytesIO('msgid "Hint: {hint}"\\nmsgstr "힌트: {hint}"\\n'.encode())
    >>> read_translations(po)
    {'Hint: {hint}': '힌트: {hint}'}
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

__all__ = [
    "MARKDOWN_FLAG",
    "NOTEBOOK_KEY",
    "course_root",
    "library_catalog",
    "read_catalog_file",
    "read_translations",
    "unit_catalog",
]

# The notebook metadata key under which a translated notebook says its language and carries
# the translations of its visible cells' messages: {"language": "ko", "messages": {...}}.
NOTEBOOK_KEY = "autograd_course"
# The flag of a unit catalog's entry that is a whole markdown cell, not a message.
MARKDOWN_FLAG = "markdown-cell"
_PACKAGES = Path(__file__).resolve().parents[2]


def read_translations(stream: BinaryIO, *, markdown: bool = False) -> dict[str, str]:
    """The translated, non-fuzzy messages of a PO file (or, with ``markdown=True``, its
    markdown cells): English -> translation."""
    from babel.messages.pofile import read_po  # Babel loads only where a translation is read

    catalog = read_po(stream)
    return {
        str(message.id): str(message.string)
        for message in catalog
        if message.id
        and message.string
        and not message.fuzzy
        and (MARKDOWN_FLAG in message.flags) == markdown
    }


def read_catalog_file(path: Path, *, markdown: bool = False) -> dict[str, str]:
    """:func:`read_translations` of ``path``; empty when there is no such file."""
    try:
        with path.open("rb") as stream:
            return read_translations(stream, markdown=markdown)
    except FileNotFoundError:
        return {}


def library_catalog(package: str, language: str) -> Path:
    """The PO file of a package's own words (``autograder`` or ``gradgraph``)."""
    return _PACKAGES / package / "locale" / f"{language}.po"


def unit_catalog(root: Path, unit: str, language: str) -> Path:
    """The PO file of one unit under the course repository ``root``."""
    return root / "solutions" / unit / f"{language}.po"


def course_root() -> Path:
    """The repository these packages were installed from (editable, as ``make`` does)."""
    return _PACKAGES
