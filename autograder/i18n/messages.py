"""Look up a translation of a text that was formatted before it reached us.

A test cell writes ``hint=f"`{_name}` was replaced by a new object."``: the check receives
the finished text, with the name already filled in. Its catalog entry keeps the f-string's
shape, with each replacement field written as its source (``{_name}``), so the lookup matches
the finished text against that shape, takes what each field held, and puts it into the
translation's fields of the same source. Literal braces are doubled, as in a format string.

Example::

    >>> messages = Messages({"`{_name}` was replaced by a new object.":
    ...                      "`{_name}`이(가) 새 객체로 바뀌었습니다."})
    >>> messages.lookup("`0.weight` was replaced by a new object.")
    '`0.weight`이(가) 새 객체로 바뀌었습니다.'
    >>> messages.lookup("something else") is None
    True
    >>> Messages({'e.g. {{"A"}}': '예: {{"A"}}'}).lookup('e.g. {"A"}')
    '예: {"A"}'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property

__all__ = ["Messages", "TemplateError", "fields", "parts"]


class TemplateError(ValueError):
    """A template's braces do not pair up; the message says where."""


def parts(template: str) -> list[tuple[str, bool]]:
    """``template`` as ``(text, is_field)`` pieces: literal text (braces undoubled) and the
    source of each replacement field, braces included.

    >>> parts("{a!r} and {{b}} or {c[{d}]}")
    [('{a!r}', True), (' and {b} or ', False), ('{c[{d}]}', True)]
    """
    pieces: list[tuple[str, bool]] = []
    literal: list[str] = []
    position = 0
    while position < len(template):
        character = template[position]
        if template.startswith(("{{", "}}"), position):
            literal.append(character)
            position += 2
        elif character == "{":
            end = _field_end(template, position)
            if literal:
                pieces.append(("".join(literal), False))
                literal = []
            pieces.append((template[position : end + 1], True))
            position = end + 1
        elif character == "}":
            raise TemplateError(f"a single '}}' at character {position + 1} of {template!r}")
        else:
            literal.append(character)
            position += 1
    if literal:
        pieces.append(("".join(literal), False))
    return pieces


def _field_end(template: str, start: int) -> int:
    depth = 0
    for position in range(start, len(template)):
        if template[position] == "{":
            depth += 1
        elif template[position] == "}":
            depth -= 1
            if depth == 0:
                return position
    raise TemplateError(f"an unclosed '{{' at character {start + 1} of {template!r}")


def fields(template: str) -> list[str]:
    """The replacement fields of ``template``, in order.

    >>> fields("`{name}` is {show(actual)}; expected {expected!r}.")
    ['{name}', '{show(actual)}', '{expected!r}']
    """
    return [text for text, is_field in parts(template) if is_field]


class Messages:
    """Translations keyed by English text; a key with replacement fields is a template."""

    def __init__(self, translations: Mapping[str, str]) -> None:
        self._translations = dict(translations)
        self._exact = {
            _literal(english): _literal(translated)
            for english, translated in translations.items()
            if translated and not fields(english)
        }
        self._templates = {
            english: translated
            for english, translated in translations.items()
            if translated and fields(english)
        }

    def __len__(self) -> int:
        return len(self._exact) + len(self._templates)

    def __repr__(self) -> str:
        return f"Messages({len(self)} translations)"

    def merged(self, other: Messages) -> Messages:
        """These translations and ``other``'s (``other`` wins where both have a key)."""
        return Messages({**self._translations, **other._translations})

    def lookup(self, text: str) -> str | None:
        """The translation of ``text``, or ``None`` when no entry matches it.

        An exact entry wins: a text with no fields, or a template asked for as it is written
        (a format string from the code, whose translation is a format string too, its
        doubled braces kept). Otherwise the template with the most literal text that
        matches, each of its fields holding the translation of what it held, if there is
        one (a name such as "a leaf" inside "snapshot of a leaf").

        >>> messages = Messages({"snapshot of {_name}": "{_name}의 스냅숏", "a leaf": "리프 텐서"})
        >>> messages.lookup("snapshot of a leaf")
        '리프 텐서의 스냅숏'
        >>> messages.lookup("snapshot of {_name}")
        '{_name}의 스냅숏'
        >>> Messages({'{n}: e.g. {{"A"}}': '{n}: 예: {{"A"}}'}).lookup('{n}: e.g. {{"A"}}')
        '{n}: 예: {{"A"}}'
        """
        found = self._exact.get(text)
        if found is None:
            found = self._templates.get(text)
        if found is not None:
            return found
        for english, pattern in self._patterns:
            match = pattern.fullmatch(text)
            if match is not None:
                values = tuple(self._exact.get(value, value) for value in match.groups())
                return _fill(self._templates[english], fields(english), values)
        return None

    @cached_property
    def _patterns(self) -> list[tuple[str, re.Pattern[str]]]:
        compiled = []
        for english in self._templates:
            pieces = parts(english)
            regex = "".join("(.*?)" if is_field else re.escape(text) for text, is_field in pieces)
            literal = sum(len(text) for text, is_field in pieces if not is_field)
            compiled.append((literal, english, re.compile(regex, re.DOTALL)))
        compiled.sort(key=lambda entry: -entry[0])
        return [(english, pattern) for _, english, pattern in compiled]


def _literal(template: str) -> str:
    """The text a template with no fields stands for: its doubled braces undoubled."""
    return "".join(text for text, _ in parts(template))


def _fill(translated: str, names: list[str], values: tuple[str, ...]) -> str:
    """``translated`` with each field replaced by what the field of the same source held."""
    held = dict(zip(names, values, strict=True))
    return "".join(
        held.get(text, text) if is_field else text for text, is_field in parts(translated)
    )
