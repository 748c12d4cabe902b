"""Memory held by saved tensors (every device) and the allocator's figure (CUDA, MPS).

A storage saved by several nodes (``x * x`` saves ``x`` twice) is counted once.

>>> import torch
>>> from gradgraph.memory import SavedMemory, storage_key
>>> mem = SavedMemory(torch.device("cpu"))
>>> x = torch.zeros(3)
>>> mem.add(storage_key(x), 12), mem.add(storage_key(x), 12)
(True, False)
>>> mem.sample()
MemorySample(saved_bytes=12, allocator_bytes=None)
>>> mem.remove(storage_key(x)), mem.remove(storage_key(x))
(False, True)
>>> mem.sample().saved_bytes
0
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import torch

from .events import MemorySample

__all__ = ["SavedMemory", "storage_key", "storage_nbytes"]


def storage_key(t: torch.Tensor) -> Hashable:
    """Identify the storage behind ``t`` (views and aliases share one key)."""
    try:
        return (t.device.type, t.device.index, t.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError):  # sparse and other storage-less layouts
        return ("tensor", id(t))


def storage_nbytes(t: torch.Tensor) -> int:
    """Bytes of the storage behind ``t`` (the whole base, for a view)."""
    try:
        return t.untyped_storage().nbytes()
    except (RuntimeError, NotImplementedError):
        return t.numel() * t.element_size()


def _allocator_reader(device: torch.device) -> Callable[[], int] | None:
    if device.type == "cuda":
        return lambda: torch.cuda.memory_allocated(device)
    if device.type == "mps":
        return torch.mps.current_allocated_memory
    return None


class SavedMemory:
    """Reference-counted set of live saved storages and their total size.

    Not thread-safe by itself: the recorder calls it under its lock.
    """

    def __init__(self, device: torch.device) -> None:
        self._counts: dict[Hashable, int] = {}
        self._sizes: dict[Hashable, int] = {}
        self._total = 0
        self._allocator = _allocator_reader(device)

    def __repr__(self) -> str:
        return f"SavedMemory({len(self._counts)} storages, {self._total} B)"

    def add(self, key: Hashable, nbytes: int) -> bool:
        """Count one more saved reference to a storage; True if it was not held yet."""
        count = self._counts.get(key, 0)
        self._counts[key] = count + 1
        if count == 0:
            self._sizes[key] = nbytes
            self._total += nbytes
        return count == 0

    def remove(self, key: Hashable) -> bool:
        """Drop one saved reference; True if that was the last one (storage released)."""
        count = self._counts.pop(key) - 1
        if count:
            self._counts[key] = count
            return False
        self._total -= self._sizes.pop(key)
        return True

    def sample(self) -> MemorySample:
        """The memory figures right now."""
        allocated = self._allocator() if self._allocator is not None else None
        return MemorySample(saved_bytes=self._total, allocator_bytes=allocated)
