"""Keep a PO catalog in step with its English, and say what is missing or stale in it.

:func:`update_catalog` adds each new English text (with Babel's fuzzy match of the text it
replaced, so a translator sees what changed), retires texts that are gone, and keeps every
translation. :func:`catalog_problems` lists, one line each, what a translator still has to
do; a translation is *stale* when the English it was made for changed (its entry is fuzzy, or
only a close variant of the new text is translated).

Babel writes the replaced English of a long entry as wrapped ``#|`` lines that its own reader
cannot parse back: it keeps them as translator comments, which would outlive the translation.
The update reads them back into the entry's replaced English while the entry is stale, and
keeps no such comment.

Example::

    >>> import tempfile, pathlib
    >>> from autograder.authoring.translation.extract import Entry
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ko.po"
    >>> update_catalog(path, [Entry("Run it.", 3)], "ko", label="unit 01")
    >>> catalog_problems(path, [Entry("Run it.", 3)], label="unit 01")
    ['unit 01, cell 4: not translated: Run it.']
"""

from __future__ import annotations

import difflib
import io
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po, unescape, write_po

from autograder.atomic import write_bytes_atomic
from autograder.authoring.translation.extract import Entry
from autograder.i18n import LANGUAGES
from autograder.i18n.catalogs import MARKDOWN_FLAG
from autograder.i18n.messages import TemplateError, fields

__all__ = ["catalog_problems", "read_catalog", "update_catalog"]

# A fixed creation date keeps a regenerated catalog byte for byte the same.
_CREATED = datetime(2026, 12, 1, tzinfo=UTC)
_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_SHOWN = 70
_STALE = "stale (its English changed since it was translated)"


def read_catalog(path: Path) -> Catalog | None:
    """The catalog at ``path``, or ``None`` when there is none; a malformed one raises
    ``ValueError`` naming the file."""
    try:
        with path.open("rb") as stream:
            return read_po(stream, abort_invalid=True)
    except FileNotFoundError:
        return None
    except Exception as error:  # Babel raises its own PoFileError, and UnicodeDecodeError
        raise ValueError(f"{path}: not a readable PO catalog ({error})") from error


def update_catalog(
    path: Path, entries: Sequence[Entry], language: str, *, label: str, source: str = ""
) -> None:
    """Bring the catalog at ``path`` in step with ``entries`` (creating it if needed);
    ``source``: the notebook the entries' cell numbers refer to, named in each entry."""
    template = Catalog(locale=language, project="autograd-course", creation_date=_CREATED)
    for entry in entries:
        template.add(
            entry.text,
            locations=[_location(entry, source)],
            flags=[MARKDOWN_FLAG] if entry.markdown else [],
            auto_comments=_comments(entry),
        )
    catalog = read_catalog(path)
    if catalog is None:
        catalog = Catalog(locale=language, project="autograd-course", creation_date=_CREATED)
    previous = {message.id: _take_previous_from_comments(message) for message in catalog}
    catalog.update(template, update_header_comment=True)
    for message in catalog:
        if message.fuzzy and not message.previous_id and previous.get(message.id):
            message.previous_id = [previous[message.id]]
    catalog.obsolete.clear()
    catalog.fuzzy = False
    catalog.version = "1"
    catalog.msgid_bugs_address = "https://github.com/ (the course's issue tracker)"
    catalog.last_translator = "the course's translators"
    catalog.language_team = f"{LANGUAGES[language]} ({language})"
    catalog.creation_date = _CREATED
    catalog.revision_date = _CREATED
    catalog.header_comment = (
        f"# {language} translation of {label} (autograd-course).\n"
        "# msgid: the English. Keep code, `inline code` and {fields} as they are.\n"
        "# Regenerate the English side with `python -m autograder translate`."
    )
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, omit_header=False, include_previous=True)
    write_bytes_atomic(path, buffer.getvalue())


def _take_previous_from_comments(message: Message) -> str:
    """Drop the ``#|`` lines that Babel wrote and read back as translator comments
    (``"| msgid ..."``) from ``message``, and return the English they hold ("" if none).

    Babel writes them after the translator's own comments, and each time a PO tool that uses
    Babel saves the catalog they grow by a character (``"# |"`` for ``"#|"``) and may wrap: a
    wrapped line's end comes back as a comment of its own, without the ``|``. So everything
    from the first ``|`` comment on is that English.
    """
    comments = message.user_comments
    first = next((i for i, c in enumerate(comments) if c.startswith("|")), len(comments))
    message.user_comments = comments[:first]
    lines = [c[1:].strip() if c.startswith("|") else c.strip() for c in comments[first:]]
    previous = " ".join(lines)
    if not previous.startswith("msgid "):
        return ""
    return "".join(unescape(part) for part in _QUOTED.findall(previous))


def _location(entry: Entry, source: str) -> tuple[str, int | None]:
    """Where an entry's English is: ``(file, line)`` in a package, ``(notebook, cell)``."""
    if entry.where:
        file, _, line = entry.where.rpartition(":")
        return file, int(line)
    return source, None if entry.cell is None else entry.cell + 1


def _comments(entry: Entry) -> list[str]:
    if entry.markdown:
        return ["a markdown cell, translated whole"]
    if fields(entry.text):
        return ["a message; keep each {field} as it is: it is filled in when shown"]
    return ["a message the checks show"]


def catalog_problems(path: Path, entries: Sequence[Entry], *, label: str) -> list[str]:
    """What is missing, stale or broken in the catalog at ``path`` for ``entries``: one line
    each, naming ``label`` and the cell (empty when the translation is complete)."""
    catalog = read_catalog(path)
    if catalog is None:
        return [f"{label}: {path} is missing; run `python -m autograder translate`"]
    wanted = {entry.text for entry in entries}
    spare = [
        str(message.id)
        for message in catalog
        if message.id and message.id not in wanted and message.string
    ]
    problems = []
    for entry in entries:
        where = label if entry.cell is None else f"{label}, cell {entry.cell + 1}"
        if entry.where:
            where = f"{label}, {entry.where}"
        message = catalog.get(entry.text)
        if message is None or not message.string:
            old = difflib.get_close_matches(entry.text, spare, n=1, cutoff=0.6)
            state = (
                "stale (its English changed since it was translated)" if old else "not translated"
            )
            problems.append(f"{where}: {state}: {_shown(entry.text)}")
        elif message.fuzzy:
            problems.append(f"{where}: {_STALE}: {_shown(entry.text)}")
        else:
            problems.extend(f"{where}: {p}" for p in _translation_problems(entry, message.string))
    for english in spare:
        problems.append(f"{label}: a translation of English no longer there: {_shown(english)}")
    return problems


def _translation_problems(entry: Entry, translated: str) -> list[str]:
    if entry.markdown:
        english_code, translated_code = _FENCE.findall(entry.text), _FENCE.findall(translated)
        if english_code != translated_code:
            return [f"the translation changes a code block: {_shown(entry.text)}"]
        return []
    try:
        english_fields, translated_fields = sorted(fields(entry.text)), sorted(fields(translated))
    except TemplateError as error:
        return [f"the translation's braces do not pair up ({error})"]
    if english_fields != translated_fields:
        return [
            f"the translation's fields {translated_fields} differ from the English's "
            f"{english_fields}: {_shown(entry.text)}"
        ]
    return []


def _shown(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _SHOWN else line[: _SHOWN - 1] + "…"
