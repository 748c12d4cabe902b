"""Display names of leaf tensors, looked up by identity, holding no tensor alive.

A tensor's name is dropped when the tensor dies, so a new tensor that reuses its memory
address never inherits it.

>>> import torch
>>> from gradgraph.names import LeafNames
>>> names = LeafNames()
>>> x = torch.ones(2)
>>> names[x] = "x"
>>> names.setdefault(x, "other"); names.get(x), names.get(torch.ones(2), "tensor")
('x', 'tensor')
>>> del x
>>> len(names)
0
"""

from __future__ import annotations

import functools
import weakref

import torch

__all__ = ["LeafNames"]


class LeafNames:
    """Names of tensors, by identity; the first name given wins with :meth:`setdefault`."""

    def __init__(self) -> None:
        self._names: dict[int, tuple[weakref.ref, str]] = {}
        self._ref = weakref.ref(self)  # the tensors' death callbacks reach the names weakly

    def __repr__(self) -> str:
        return f"LeafNames({len(self._names)} names)"

    def __len__(self) -> int:
        return len(self._names)

    def __setitem__(self, t: torch.Tensor, name: str) -> None:
        key = id(t)
        self._names[key] = (weakref.ref(t, functools.partial(_forget, self._ref, key)), name)

    def setdefault(self, t: torch.Tensor, name: str) -> None:
        """Name ``t`` unless it has a name already."""
        if self.get(t) is None:
            self[t] = name

    def get(self, t: torch.Tensor, default: str | None = None) -> str | None:
        """``t``'s name, or ``default``."""
        entry = self._names.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else default


def _forget(owner: weakref.ref, key: int, ref: weakref.ref) -> None:
    """Drop the name of a tensor that died (a weak reference to the names: a strong one
    would be a reference cycle that only the garbage collector frees)."""
    names = owner()
    entry = names._names.get(key) if names is not None else None
    if entry is not None and entry[0] is ref:
        del names._names[key]
