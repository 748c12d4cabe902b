"""Whether an autograd node still holds what it saved for backward, asked without running any
code of the notebook's.

A graph that was retained keeps its saved tensors (activations, inputs) until it dies; a plain
``backward()`` frees each as it goes. Reading a saved tensor (``node._saved_self``) would run
the unpack hook that a notebook may have put on it, and a hook can say anything, raise the
error of a freed buffer included. So :func:`holds_saved_tensors` offers each of the node's
slots a pair of hooks of its own instead: torch takes them where the slot holds a tensor, and
says "whose hooks have already been set" where it holds one under hooks; it refuses a freed
slot first ("after it has been freed"), and a slot that saved nothing ("with value None").
Everything it uses is bound at import, so a later patch of torch's classes changes nothing
here.

Example::

    >>> import torch
    >>> x = torch.ones(3, requires_grad=True)
    >>> y = x.exp()
    >>> holds_saved_tensors(y.grad_fn)
    True
    >>> y.sum().backward()
    >>> holds_saved_tensors(y.grad_fn)
    False
    >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1 / 0):
    ...     z = x.exp()
    >>> holds_saved_tensors(z.grad_fn), holds_saved_tensors(None)
    (True, False)
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["holds_saved_tensors"]

_SavedTensor = torch._C._autograd.SavedTensor
_offer_hooks = _SavedTensor.register_hooks
_dir, _getattr, _type, _str, _runtime_error = dir, getattr, type, str, RuntimeError
_HOOKED = "whose hooks have already been set"
_RAW = "_raw_saved_"


def _same(tensor: Any) -> Any:  # torch hands pack a tensor without history: no cycle
    return tensor


def _held(saved: Any) -> bool:
    try:
        _offer_hooks(saved, _same, _same)
    except _runtime_error as refusal:  # hooks set already (held), freed, or nothing saved
        return _HOOKED in _str(refusal)
    return True


def holds_saved_tensors(node: Any) -> bool:
    """Whether autograd node ``node`` (a ``grad_fn``; None: no node) still holds a tensor it
    saved for backward: True until backward frees it, for as long as the graph was retained."""
    if node is None:
        return False
    for name in _dir(_type(node)):
        if not name.startswith(_RAW):
            continue
        try:
            value = _getattr(node, name)
        except _runtime_error:  # a custom Function's node refuses to list freed tensors
            continue
        for saved in value if _type(value) in (list, tuple) else (value,):
            if _type(saved) is _SavedTensor and _held(saved):
                return True
    return False
