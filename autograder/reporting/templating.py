"""Render the grading pages from ``autograder/templates``, with every value HTML-escaped.

Learner text (failure messages, notes, even student ids) may hold HTML or script; autoescape
is always on, so it shows as text. Templates see ``points`` (:func:`format_points`) as a filter,
``language`` (the page's, for ``<html lang>``), and Jinja's ``_()``, which says a template's
words in the language of :func:`autograder.i18n.use_language`.

Example::

    >>> page = render("base.html.j2", title="<script>alert(1)</script>")
    >>> "<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>" in page
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from autograder.i18n import current_language, gettext
from autograder.reporting.points import format_points

__all__ = ["render"]

_ENVIRONMENT = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    extensions=["jinja2.ext.i18n"],
)
_ENVIRONMENT.filters["points"] = format_points
_ENVIRONMENT.install_gettext_callables(  # type: ignore[attr-defined] (added by the extension)
    gettext, lambda one, many, count: gettext(one if count == 1 else many), newstyle=True
)


def render(template: str, **context: Any) -> str:
    """The page that ``templates/<template>`` makes from ``context``, in the current language.

    >>> from autograder.i18n import use_language
    >>> with use_language("ko"):
    ...     page = render("feedback.html.j2", title="t", student="ada", unit="u1", graded=False,
    ...                   score=0, max_score=1, items=[], reason="r", notes=[])
    >>> "u1: 내 피드백" in page, '<html lang="ko">' in page
    (True, True)
    """
    return _ENVIRONMENT.get_template(template).render(language=current_language(), **context)
