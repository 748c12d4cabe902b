"""The film's typefaces and their metrics: DejaVu Sans (shipped with matplotlib), and for
Hangul a Korean face found on the system.

Layout measures every text with the fonts that the PNG frames draw it in; the SVG frames pin
each text to that measured width (``textLength``), so no viewer's font can make a label run
into its neighbour. DejaVu has no Hangul: a text is measured and drawn in runs, its Hangul in
the first Korean face installed (:data:`HANGUL_FACES`: Nanum, Noto CJK, Malgun Gothic, Apple SD
Gothic Neo), the rest (Latin, digits, ✓ ⚑ ✗) in DejaVu, as a browser does with the font
family the SVG gives such a text. Where no Korean face is installed, a Hangul syllable is
measured one em wide (what Korean faces give it) and a warning says to install one.

>>> from gradgraph.fonts import font, text_width
>>> text_width("AddmmBackward0", 13) == font(13).getlength("AddmmBackward0")
True
>>> text_width("x", 13, bold=True) > text_width("x", 13)
True
>>> runs("✓ 역전파 2번")
[('✓ ', False), ('역전파', True), (' 2', False), ('번', True)]
>>> family("backward") == FAMILY, family("역전파").startswith("DejaVu Sans, NanumGothic")
(True, True)
"""

from __future__ import annotations

import functools
import re
import warnings
from pathlib import Path

import matplotlib
from matplotlib import font_manager
from PIL import ImageFont

__all__ = ["FAMILY", "HANGUL_FACES", "family", "font", "runs", "text_width", "wrap"]

FAMILY = "DejaVu Sans, Verdana, Arial, sans-serif"
# Korean faces, in the order they are looked for (Debian: fonts-nanum; desktops have one).
HANGUL_FACES = (
    "NanumGothic",
    "Noto Sans CJK KR",
    "Noto Sans KR",
    "Malgun Gothic",
    "Apple SD Gothic Neo",
)
_HANGUL_FAMILY = ", ".join(f"'{face}'" if " " in face else face for face in HANGUL_FACES)
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_HANGUL_RUN = re.compile(f"{_HANGUL.pattern}+")
_FILES = Path(matplotlib.get_data_path()) / "fonts" / "ttf"


def family(text: str) -> str:
    """The CSS font family an SVG gives ``text``: the Korean faces after DejaVu where it has
    Hangul (a browser then takes each glyph from the first face that has it)."""
    if not _HANGUL.search(text):
        return FAMILY
    latin, rest = FAMILY.split(", ", 1)
    return f"{latin}, {_HANGUL_FAMILY}, {rest}"


def runs(text: str) -> list[tuple[str, bool]]:
    """``text`` as runs of ``(text, is_hangul)``, in order."""
    pieces, position = [], 0
    for match in _HANGUL_RUN.finditer(text):
        if match.start() > position:
            pieces.append((text[position : match.start()], False))
        pieces.append((match.group(), True))
        position = match.end()
    if position < len(text):
        pieces.append((text[position:], False))
    return pieces


@functools.cache
def font(size: float, bold: bool = False, hangul: bool = False) -> ImageFont.FreeTypeFont:
    """The film's font at ``size`` pixels; ``hangul``: the Korean face (DejaVu where none is
    installed)."""
    path = _hangul_file(bold) if hangul else None
    if path is None:
        path = str(_FILES / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"))
    return ImageFont.truetype(path, size=size)


@functools.cache
def text_width(text: str, size: float, bold: bool = False) -> float:
    """Advance width of ``text`` in pixels at ``size`` (one line)."""
    if not _HANGUL.search(text):
        return font(size, bold).getlength(text)
    if _hangul_file(bold) is None:
        return sum(
            len(piece) * size if hangul else font(size, bold).getlength(piece)
            for piece, hangul in runs(text)
        )
    return sum(font(size, bold, hangul).getlength(piece) for piece, hangul in runs(text))


@functools.cache
def _hangul_file(bold: bool) -> str | None:
    """The file of the first Korean face installed, in the weight nearest the one asked for,
    or ``None`` (with a warning, once)."""
    wanted = 700 if bold else 400
    entries = _korean_entries()
    for face in HANGUL_FACES:
        files = [entry for entry in entries if entry.name == face]
        if files:
            return min(files, key=lambda entry: abs(_weight(entry.weight) - wanted)).fname
    warnings.warn(
        "gradgraph: no Korean font is installed, so Hangul in the film's PNG frames shows as "
        "boxes (the player's SVG frames use the browser's fonts); install one, e.g. "
        "`sudo apt-get install fonts-nanum`",
        stacklevel=2,
    )
    return None


@functools.cache
def _korean_entries() -> list[font_manager.FontEntry]:
    """matplotlib's entries of the Korean faces installed.

    matplotlib keeps its list of the system's fonts in a cache file, built the first time
    it ran: a font installed since (``apt-get install fonts-nanum`` after a first plot) is
    not in it until the cache is rebuilt. Where the list has no Korean face, the system's
    font files that it lacks are added to it (for this process; the cache file is left as
    it is), so that such a font is found all the same. Where the system's fonts cannot be
    listed (a grading sandbox refuses the ``fc-list`` that matplotlib runs), the list is
    taken as it is.
    """
    manager = font_manager.fontManager
    if not any(entry.name in HANGUL_FACES for entry in manager.ttflist):
        listed = {entry.fname for entry in manager.ttflist}
        try:
            paths = font_manager.findSystemFonts()
        except Exception:  # noqa: BLE001 (it may run fc-list: a sandbox refuses subprocesses)
            paths = []
        for path in paths:
            if path not in listed:
                try:
                    manager.addfont(path)
                except (OSError, RuntimeError, ValueError):  # a file FreeType cannot read
                    continue
    return [entry for entry in manager.ttflist if entry.name in HANGUL_FACES]


def _weight(weight: int | str) -> int:
    return weight if isinstance(weight, int) else font_manager.weight_dict.get(weight, 400)


def wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """``text`` as it is where it fits in ``width`` pixels, else greedy word wrap into lines
    at most that wide (a longer word keeps a line of its own).

    >>> wrap("saved its result", text_width("saved its", 13), 13)
    ['saved its', 'result']
    >>> wrap("step 1  ·  NODE", 300, 13)
    ['step 1  ·  NODE']
    """
    if text_width(text, size, bold) <= width:
        return [text]
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size, bold) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines or [""]
