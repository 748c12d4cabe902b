"""Which tensors autograd gave the code: what it read, was returned or was called with.

An exercise that asks for gradients "computed by autograd" cannot be checked by their values:
a formula derived by hand gives the same numbers, as long as the function stays exactly the
one it was derived for. Inside :func:`gradients_from_autograd`, every gradient autograd hands
the code is noted: what a ``.grad`` read returns, what ``torch.autograd.grad`` returns, the
gradient a tensor hook (``register_hook``) is called with, and the copies the code makes of
those (``clone``, ``detach``, ``to``, ``contiguous``, ``.data``, ``copy_`` into a tensor,
``copy.deepcopy``). Everything used here is bound at import, so a later patch of torch's names
changes nothing.

Example::

    >>> import torch
    >>> x = torch.tensor([0.5, -1.0], requires_grad=True)
    >>> with gradients_from_autograd() as given:
    ...     h = torch.tanh(x)
    ...     h.retain_grad()
    ...     (h * h).sum().backward()
    ...     read, copied, derived = h.grad, h.grad.clone(), 2 * h.detach()
    >>> given.includes(read), given.includes(copied), given.includes(derived)
    (True, True, False)
    >>> bool(torch.equal(read, derived))  # the same numbers: only where they came from differs
    True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["GivenGradients", "gradients_from_autograd"]

_Tensor, _Base = torch.Tensor, torch._C.TensorBase
_GRAD = vars(_Base)["grad"]  # a property: torch hands its getter to the mode, bound to this
_DATA = vars(_Base)["data"]
_AUTOGRAD_GRAD, _REGISTER_HOOK = torch.autograd.grad, torch.Tensor.register_hook
# What copies a tensor's values as they are: a copy of a gradient autograd gave is one too.
_COPIES = frozenset(
    {
        _Base.clone,
        _Base.detach,
        _Base.to,
        _Base.contiguous,
        torch.clone,
        torch.detach,
        torch.Tensor.__deepcopy__,
    }
)
_COPY_INTO = _Base.copy_
_isinstance, _id, _getattr, _list, _tuple = isinstance, id, getattr, list, tuple


class GivenGradients:
    """The tensors autograd gave the code inside :func:`gradients_from_autograd` (kept alive,
    so that no other tensor can take one's identity)."""

    def __init__(self) -> None:
        self._kept: dict[int, torch.Tensor] = {}

    def __repr__(self) -> str:
        return f"GivenGradients({len(self._kept)} tensors)"

    def includes(self, value: object) -> bool:
        """Whether ``value`` is one of the tensors autograd gave (or a copy of one)."""
        return _isinstance(value, _Tensor) and self._kept.get(_id(value)) is value

    def _note(self, value: object) -> None:
        if _isinstance(value, _Tensor):
            self._kept[_id(value)] = value
        elif _isinstance(value, (_list, _tuple)):
            for item in value:
                self._note(item)


class _NotesGradients(TorchFunctionMode):
    """Notes what autograd gives the code, in ``given``; changes nothing the code sees."""

    def __init__(self, given: GivenGradients) -> None:
        super().__init__()
        self.given = given

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        if func is _REGISTER_HOOK and len(args) == 2 and not kwargs:
            args = (args[0], self._noting(args[1]))
        result = func(*args, **kwargs)
        if self._gives(func, args):
            self.given._note(result)
        return result

    def _gives(self, func: Any, args: tuple[Any, ...]) -> bool:
        """Whether what ``func`` returned for ``args`` is a gradient autograd gave, or a copy
        of one."""
        bound = _getattr(func, "__self__", None)
        if bound is _GRAD or func is _AUTOGRAD_GRAD:
            return True
        if func is _COPY_INTO:  # copy_(self, source): self now holds the source's values
            return len(args) > 1 and self.given.includes(args[1])
        return bool(args) and self.given.includes(args[0]) and (func in _COPIES or bound is _DATA)

    def _noting(self, hook: Callable[[torch.Tensor], Any]) -> Callable[[torch.Tensor], Any]:
        """``hook``, which also notes the gradient it is called with."""
        given = self.given

        def noting(grad: torch.Tensor) -> Any:
            given._note(grad)
            return hook(grad)

        return noting


@contextmanager
def gradients_from_autograd() -> Iterator[GivenGradients]:
    """Note, in the record yielded, every gradient autograd gives the code inside the block
    (see the module's text). The block's torch mode is gone afterwards, whatever the code
    inside raised."""
    given = GivenGradients()
    with _NotesGradients(given):
        yield given
