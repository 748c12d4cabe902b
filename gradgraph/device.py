"""Choose the best available device: cuda, then mps, then cpu.

>>> from gradgraph import pick_device
>>> pick_device().type in {"cuda", "mps", "cpu"}
True
"""

from __future__ import annotations

import torch

__all__ = ["pick_device"]


def pick_device() -> torch.device:
    """Return ``cuda`` if available, else ``mps`` if available, else ``cpu``."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
