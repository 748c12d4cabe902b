"""Memory held by saved tensors (every device) and the allocator's figure (CUDA, MPS).

A storage saved by several nodes (``x * x`` saves ``x`` twice) is counted once.

>>> import torch
>>> from gradgraph.memory import SavedMemory, allocator_reader, storage_facts
>>> mem = SavedMemory()
>>> x = torch.zeros(3)
>>> key, nbytes = storage_facts(x, x.device)
>>> storage_facts(x[1:], x.device) == (key, 12)  # a view: the same storage, all of it
True
>>> mem.add(key, nbytes), mem.add(key, nbytes)
(True, False)
>>> mem.total, allocator_reader(torch.device("cpu")) is None  # the CPU has no allocator figure
(12, True)
>>> mem.remove(key), mem.remove(key)
(False, True)
>>> mem.total
0
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable

import torch

__all__ = ["SavedMemory", "allocator_reader", "storage_facts"]


def storage_facts(t: torch.Tensor, device: torch.device) -> tuple[Hashable, int]:
    """What identifies the storage behind ``t`` (on ``device``, where ``t`` is: views and
    aliases share it) and its size in bytes (the whole base, for a view)."""
    try:
        storage = t.untyped_storage()
        return (device, storage.data_ptr()), storage.nbytes()
    except (RuntimeError, NotImplementedError):  # sparse and other storage-less layouts
        return ("tensor", id(t)), t.numel() * t.element_size()


@functools.cache
def allocator_reader(device: torch.device) -> Callable[[], int] | None:
    """What reads the allocator's figure for ``device`` (CUDA, MPS); None on the CPU.

    Asked once per device (every recording asks as it starts, inside the learner's loop)."""
    kind = device.type
    if kind == "cuda":
        return lambda: torch.cuda.memory_allocated(device)
    if kind == "mps":
        return torch.mps.current_allocated_memory
    return None


class SavedMemory:
    """Reference-counted set of live saved storages and their total size (``total``, in
    bytes).

    Not thread-safe by itself: the event log calls it under its lock.
    """

    def __init__(self) -> None:
        self._counts: dict[Hashable, int] = {}
        self._sizes: dict[Hashable, int] = {}
        self.total = 0

    def __repr__(self) -> str:
        return f"SavedMemory({len(self._counts)} storages, {self.total} B)"

    def add(self, key: Hashable, nbytes: int) -> bool:
        """Count one more saved reference to a storage; True if it was not held yet."""
        count = self._counts.get(key, 0)
        self._counts[key] = count + 1
        if count == 0:
            self._sizes[key] = nbytes
            self.total += nbytes
        return count == 0

    def remove(self, key: Hashable) -> bool:
        """Drop one saved reference; True if that was the last one (storage released)."""
        count = self._counts.pop(key) - 1
        if count:
            self._counts[key] = count
            return False
        self.total -= self._sizes.pop(key)
        return True
