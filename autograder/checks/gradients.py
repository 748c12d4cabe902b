"""Which tensors autograd gave the code: what it read, was returned or was called with.

An exercise that asks for gradients "computed by autograd" cannot be checked by their values:
a formula derived by hand gives the same numbers, as long as the function stays exactly the
one it was derived for. Inside :func:`gradients_from_autograd`, every gradient autograd hands
the code is noted: what a ``.grad`` read returns, what ``torch.autograd.grad`` returns, the
gradient a tensor hook (``register_hook``) is called with, the ``.grad`` of the leaf a
post-accumulate-grad hook is called with, the gradients a hook on a node (``grad_fn.
register_prehook``, ``register_hook``) is called with, and the copies the code makes of those
(``clone``, ``detach``, ``to``, ``contiguous``, ``.data``, ``copy_`` into a tensor,
``copy.deepcopy``, and the reshaping and casting ones: ``view``, ``reshape``, ``type_as``...).
A tensor the code put into a ``.grad`` itself is not one autograd gave, however it is read back.
Everything used here is bound at import, so a later patch of torch's names changes nothing.

The tensors noted are kept in the frame of a generator (:func:`_ledger`), which a notebook
cannot read in the grading worker, and it notes a tensor only for this module's own code: the
torch mode, or a hook wrapper called by autograd's engine. A notebook's function that reaches
the record (through a test's globals, or the stack of torch modes) can ask it what it holds,
never add to it.

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
    >>> holder = torch.zeros(2, requires_grad=True)
    >>> with gradients_from_autograd() as given:
    ...     holder.grad = derived  # put there by the code: not autograd's, read back or not
    ...     given.includes(holder.grad)
    False
    >>> given._note(derived)  # only the module's own code notes a tensor
    >>> given.includes(derived)
    False
    >>> bool(torch.equal(read, derived))  # the same numbers: only where they came from differs
    True
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack, contextmanager, suppress
from functools import partial
from typing import Any

import torch
import torch.autograd.graph
from torch.overrides import TorchFunctionMode

from gradgraph.nodehooks import observe_node_hooks

__all__ = ["GivenGradients", "gradients_from_autograd"]

_Tensor, _Base = torch.Tensor, torch._C.TensorBase
_GRAD = vars(_Base)["grad"]  # a property: torch hands its getter to the mode, bound to this
_DATA = vars(_Base)["data"]
_AUTOGRAD_GRAD, _REGISTER_HOOK = torch.autograd.grad, torch.Tensor.register_hook
_REGISTER_LEAF_HOOK = torch.Tensor.register_post_accumulate_grad_hook  # called with the leaf
_grad_of = _GRAD.__get__
# What copies a tensor's values as they are, or reads them in another shape or dtype: a copy of
# a gradient autograd gave is one too (a gradient taken on a flat or a float64 working copy comes
# back through view_as or type_as). Looked up by identity, so that no object's __eq__ or
# __hash__ runs.
_COPIES = {
    id(copy): copy
    for copy in (
        *(_Base.clone, _Base.detach, _Base.to, _Base.contiguous, torch.Tensor.__deepcopy__),
        *(_Base.view, _Base.view_as, _Base.reshape, _Base.reshape_as, _Base.flatten),
        *(_Base.squeeze, _Base.unsqueeze, _Base.type_as, _Base.type),
        *(_Base.float, _Base.double, _Base.half, _Base.bfloat16),
        *(torch.clone, torch.detach, torch.reshape, torch.flatten, torch.squeeze),
        *(torch.unsqueeze, _Tensor.unflatten, torch.unflatten, torch.as_tensor, torch.asarray),
    )
}
_COPY_INTO = _Base.copy_
_MethodWrapper = type(_GRAD.__get__)
_isinstance, _id, _list, _tuple = isinstance, id, list, tuple
_ASK, _NOTE, _COUNT = object(), object(), object()  # what a ledger is sent with a value
_ENGINE = torch.autograd.graph._engine_run_backward.__code__  # what calls a tensor hook


class GivenGradients:
    """The tensors autograd gave the code inside :func:`gradients_from_autograd` (kept alive,
    so that no other tensor can take one's identity)."""

    def __init__(self) -> None:
        self._ledger = _ledger(globals())
        next(self._ledger)
        self._assigned: dict[int, torch.Tensor] = {}  # put into a .grad by the code itself

    def __repr__(self) -> str:
        return f"GivenGradients({self._ledger.send((_COUNT, None))} tensors)"

    def includes(self, value: object) -> bool:
        """Whether ``value`` is one of the tensors autograd gave (or a copy of one)."""
        return _isinstance(value, _Tensor) and self._ledger.send((_ASK, value)) is True

    def _note(self, value: object) -> None:
        if _isinstance(value, _Tensor):
            if self._assigned.get(_id(value)) is not value:
                self._ledger.send((_NOTE, value))
        elif _isinstance(value, (_list, _tuple)):
            for item in value:
                self._note(item)


def _ledger(
    scope: dict[str, Any], _getframe=sys._getframe, _id=id, _none=None
) -> Generator[Any, tuple[object, Any], None]:
    """The tensors a :class:`GivenGradients` noted, in this generator's own frame. Sent
    ``(_ASK, tensor)`` it answers whether it holds it; ``(_NOTE, tensor)`` keeps it when
    ``GivenGradients._note`` was called by the torch mode, or by the hook wrapper that
    autograd's engine called (this module's code, with ``scope`` as globals), and else not."""
    kept: dict[int, Any] = {}
    note, mode = GivenGradients._note.__code__, _NotesGradients.__torch_function__.__code__
    noting = _NotesGradients._noting.__code__.co_consts  # the hook wrapper the engine calls
    noting = next(const for const in noting if type(const) is types.CodeType)
    answer: Any = None
    while True:
        op, value = yield answer
        answer = None
        if op is _ASK:
            answer = kept.get(_id(value)) is value
        elif op is _COUNT:
            answer = len(kept)
        elif op is _NOTE:
            frame = _getframe(1)
            while frame is not _none and frame.f_code is note and frame.f_globals is scope:
                frame = frame.f_back
            if frame is not _none and frame.f_globals is scope:
                caller = frame.f_back
                if frame.f_code is mode or (
                    frame.f_code is noting and (caller is _none or caller.f_code is _ENGINE)
                ):
                    kept[_id(value)] = value
            frame = caller = _none


class _NotesGradients(TorchFunctionMode):
    """Notes what autograd gives the code, in ``given``; changes nothing the code sees."""

    def __init__(self, given: GivenGradients) -> None:
        super().__init__()
        self.given = given

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        if func is _REGISTER_HOOK and len(args) == 2 and not kwargs:
            args = (args[0], self._noting(args[1], _arguments))
        elif func is _REGISTER_LEAF_HOOK and len(args) == 2 and not kwargs:
            args = (args[0], self._noting(args[1], _grad_of))  # the leaf's .grad, accumulated
        result = func(*args, **kwargs)
        if self._grad_set(func) and len(args) > 1 and not self.given.includes(args[1]):
            self.given._assigned[_id(args[1])] = args[1]
        elif self._gives(func, args):
            self.given._note(result)
        return result

    @staticmethod
    def _grad_set(func: Any) -> bool:
        """Whether ``func`` is the setter of ``.grad`` (``x.grad = value``)."""
        wrapper = type(func) is _MethodWrapper
        return wrapper and func.__self__ is _GRAD and func.__name__ == "__set__"

    def _gives(self, func: Any, args: tuple[Any, ...]) -> bool:
        """Whether what ``func`` returned for ``args`` is a gradient autograd gave, or a copy
        of one."""
        wrapper = type(func) is _MethodWrapper and func.__name__ == "__get__"
        bound = func.__self__ if wrapper else None
        if bound is _GRAD or func is _AUTOGRAD_GRAD:
            return True
        if func is _COPY_INTO:  # copy_(self, source): self now holds the source's values
            return len(args) > 1 and self.given.includes(args[1])
        copies = _COPIES.get(_id(func)) is func or bound is _DATA
        return copies and bool(args) and self.given.includes(args[0])

    def _noting(
        self, hook: Callable[..., Any], gradients: Callable[..., Any]
    ) -> Callable[..., Any]:
        """``hook``, which also notes ``gradients(what it is called with)``: what a tensor hook
        or a node's hook gets (``_arguments``), the ``.grad`` of the leaf a post-accumulate-grad
        hook gets (``_grad_of``)."""
        given = self.given

        def noting(*args: Any) -> Any:
            given._note(gradients(*args))
            return hook(*args)

        return noting


def _arguments(*args: Any) -> tuple[Any, ...]:
    """What a hook is called with: a tensor hook's gradient, a node pre-hook's output
    gradients, a node post-hook's input and output gradients."""
    return args


@contextmanager
def gradients_from_autograd() -> Iterator[GivenGradients]:
    """Note, in the record yielded, every gradient autograd gives the code inside the block
    (see the module's text). The block's torch mode and its watch on node hooks are gone
    afterwards, whatever the code inside raised."""
    given = GivenGradients()
    mode = _NotesGradients(given)
    with ExitStack() as undo:
        with suppress(RuntimeError):  # observed once at a time: not inside a gradgraph recording
            undo.callback(observe_node_hooks(partial(mode._noting, gradients=_arguments)))
        undo.enter_context(mode)
        yield given
