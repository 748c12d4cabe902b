"""Write points as a person would: ``17``, ``17.5``, never ``17.000000000000004``.

Example::

    >>> format_points(17.0), format_points(17.5), format_points(0.1 + 0.2)
    ('17', '17.5', '0.3')
"""

from __future__ import annotations

__all__ = ["format_points"]


def format_points(value: float) -> str:
    """``value`` rounded to 4 decimals, without a trailing ``.0`` and without ``-0``."""
    text = repr(round(float(value), 4) + 0.0)
    return text.removesuffix(".0")
