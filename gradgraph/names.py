"""Display names of leaf tensors, looked up by identity, holding no tensor alive.

An entry answers only for the very tensor it was given, so a new tensor that reuses a
dead one's memory address never inherits its name.

>>> import torch
>>> from gradgraph.names import LeafNames
>>> names = LeafNames()
>>> x = torch.ones(2)
>>> names[x] = "x"
>>> names.setdefault(x, "other"); names.get(x), names.get(torch.ones(2), "tensor")
('x', 'tensor')
>>> y = torch.ones(2)
>>> names.setdefaults([(x, "other"), (y, "y")]); names.get(x), names.get(y)
('x', 'y')
>>> del x, y
>>> len(names)
0
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable

import torch

__all__ = ["LeafNames"]


class LeafNames:
    """Names of tensors, by identity; the first name given wins with :meth:`setdefault`.

    Entries of tensors that died stay until the names go (they answer for nothing): a
    recording names its modules' parameters and the tensors it is given, a bounded set,
    and a plain weak reference (shared by all who hold one) costs far less than one that
    calls back when its tensor dies.
    """

    def __init__(self) -> None:
        self._names: dict[int, tuple[weakref.ref, str]] = {}

    def __repr__(self) -> str:
        return f"LeafNames({len(self)} names)"

    def __len__(self) -> int:
        """The number of named tensors still alive."""
        return sum(ref() is not None for ref, _ in self._names.values())

    def __setitem__(self, t: torch.Tensor, name: str) -> None:
        self._names[id(t)] = (weakref.ref(t), name)

    def setdefault(self, t: torch.Tensor, name: str) -> None:
        """Name ``t`` unless it has a name already."""
        self.setdefaults([(t, name)])

    def setdefaults(self, named: Iterable[tuple[torch.Tensor, str]]) -> None:
        """:meth:`setdefault` for each ``(tensor, name)``."""
        entries = self._names
        for t, name in named:
            entry = entries.get(id(t))
            if entry is None or entry[0]() is not t:
                entries[id(t)] = (weakref.ref(t), name)

    def get(self, t: torch.Tensor, default: str | None = None) -> str | None:
        """``t``'s name, or ``default``."""
        entry = self._names.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else default
