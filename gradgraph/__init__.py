"""gradgraph: record what PyTorch autograd really does, then play it back.

>>> import torch, gradgraph
>>> x = torch.ones(3, requires_grad=True)
>>> with gradgraph.record(names={"x": x}) as rec:
...     x.exp().sum().backward()
>>> [e.kind.value for e in rec.events]
['node', 'node', 'saved', 'node', 'backward', 'backward', 'freed', 'backward', 'grad']
>>> rec.close()
"""

from .device import pick_device
from .events import Event, EventKind, MemorySample
from .recorder import Recording, record, side_by_side

__all__ = [
    "Event",
    "EventKind",
    "MemorySample",
    "Recording",
    "pick_device",
    "record",
    "side_by_side",
]
