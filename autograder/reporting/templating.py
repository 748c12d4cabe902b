"""Render the grading pages from ``autograder/templates``, with every value HTML-escaped.

Learner text (failure messages, notes, even student ids) may hold HTML or script; autoescape
is always on, so it shows as text. Templates see ``points`` (:func:`format_points`) as a filter.

Example::

    >>> page = render("base.html.j2", title="<script>alert(1)</script>")
    >>> "<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>" in page
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from autograder.reporting.points import format_points

__all__ = ["render"]

_ENVIRONMENT = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENVIRONMENT.filters["points"] = format_points


def render(template: str, **context: Any) -> str:
    """The page that ``templates/<template>`` makes from ``context``."""
    return _ENVIRONMENT.get_template(template).render(**context)
