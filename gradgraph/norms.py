"""Gradient norms for ``grad`` events: computed in the hook, or later when that is exact.

A hook runs inside the learner's backward, so every norm it computes is paid there. The
gradient arriving at a leaf whose ``.grad`` already held a value is added into ``.grad``
and then held by nothing but autograd's finished input buffer: nothing changes it any
more, so its norm can wait until the events are read (:class:`LateNorm`). What ``.grad``
holds is not a tensor to wait for (the learner changes it, as ``clip_grad_norm_`` does):
its norm is computed in the hook. A late norm's version counter, shared with every view
of the same storage, is checked when it is read: a gradient that was after all modified in
place since (an alias of a tensor the learner holds) reads as None, not as a value it did
not have. (A change made through ``.data``, which has a version counter of its own, is the
one change that no check can see.)

>>> import torch
>>> from gradgraph.norms import LateNorm, norm
>>> g = torch.tensor([3.0, 4.0])
>>> float(norm(g)), LateNorm(g).read()
(5.0, 5.0)
>>> sparse = torch.sparse_coo_tensor([[0, 0, 1]], [3.0, 1.0, 4.0], (2,), check_invariants=True)
>>> float(norm(sparse)), norm(torch.tensor([1, 2])) is None
(5.656854152679443, True)
>>> late = LateNorm(g)
>>> _ = g.mul_(2)  # modified in place before the events were read
>>> late.read() is None
True
"""

from __future__ import annotations

import torch

__all__ = ["LateNorm", "norm", "value_of"]

_vector_norm = torch.linalg.vector_norm
_grad_enabled = torch.is_grad_enabled


def norm(t: torch.Tensor | None) -> torch.Tensor | None:
    """The gradient's 2-norm as a 0-dim tensor (read as a float later, so that no hook waits
    for a device), or None where it has none (a hook must never raise)."""
    if t is None:
        return None
    try:  # hooks run without grad mode, unless create_graph: then add nothing to the graph
        return _vector_norm(t.detach() if _grad_enabled() else t)
    except (RuntimeError, NotImplementedError, TypeError):  # sparse, integer...
        return _sparse_norm(t)


def _sparse_norm(t: torch.Tensor) -> torch.Tensor | None:
    """The 2-norm of a sparse gradient (``nn.Embedding(sparse=True)``): that of its values,
    repeated indices summed first; None for anything else without a norm (integers)."""
    try:
        t = t.detach()
        if t.layout is torch.sparse_coo:
            t = t.coalesce()
        return _vector_norm(t.values())
    except (RuntimeError, NotImplementedError, TypeError):
        return None


class LateNorm:
    """The norm of ``gradient`` as it is now, computed on the first :meth:`read`.

    Until then it holds the gradient (its bytes are the caller's to budget); once
    computed, it lets it go.
    """

    __slots__ = ("_gradient", "_version", "_value")

    def __init__(self, gradient: torch.Tensor) -> None:
        self._gradient: torch.Tensor | None = gradient
        self._version = gradient._version
        self._value: torch.Tensor | None = None  # 0-dim

    def __repr__(self) -> str:
        state = "pending" if self._gradient is not None else self.read()
        return f"LateNorm({state})"

    def read(self) -> float | None:
        """The norm as a float; None where the gradient was modified in place since (or has
        no norm)."""
        gradient = self._gradient
        if gradient is not None:
            self._value = norm(gradient) if gradient._version == self._version else None
            self._gradient = None
        return value_of(self._value)


def value_of(t: torch.Tensor | None) -> float | None:
    """A 0-dim tensor (a norm) as a float; None for None, or where it cannot be read (the
    meta device has no values)."""
    if t is None:
        return None
    try:
        return float(t)
    except (RuntimeError, NotImplementedError, TypeError, ValueError):
        return None
