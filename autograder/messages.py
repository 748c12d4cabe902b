"""Turn exceptions and warnings into the one line a learner needs to read.

>>> first_line(ValueError("bad value\\nmore detail"))
'bad value'
"""

__all__ = ["first_line"]


def first_line(message: object) -> str:
    """The first line of ``str(message)``, stripped."""
    return str(message).strip().split("\n")[0]
