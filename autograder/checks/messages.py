"""Turn exceptions and warnings into the line a learner needs to read.

>>> headline(ValueError("bad value. Try again.\\nmore detail"))
'bad value.'
>>> headline(RuntimeError("element 0 of tensors does not require grad"))
'element 0 of tensors does not require grad'
"""

__all__ = ["headline"]


def headline(message: object) -> str:
    """The first sentence of the first line of ``str(message)``: what went wrong, not the
    advice and references torch appends after it."""
    line = str(message).strip().split("\n")[0]
    sentence, stop, _ = line.partition(". ")
    return sentence + "." if stop else line
