"""Watch a node's saved tensors: the pack hook logs ``saved``, the death of what it packed
logs ``freed``, and the unpack hook repeats PyTorch's in-place check.

Autograd keeps what the pack hook returns (a :class:`Holder`) instead of the tensor, and
drops it when backward frees the node's buffers or the graph dies: the holder's death is
the observed free. PyTorch skips its version-counter check for saved tensors that have
hooks, so the holder remembers the version at saving time and :func:`unpack` checks it.

>>> import torch
>>> from gradgraph.eventlog import EventLog
>>> log = EventLog(torch.device("cpu"))
>>> x = torch.ones(3, requires_grad=True)
>>> y = x.exp()
>>> pack = packer(log, 1, "ExpBackward0", "result", None)
>>> y.grad_fn._raw_saved_result.register_hooks(pack, unpack)
>>> y.sum().backward()  # backward frees the buffer: autograd drops the holder
>>> [(e.kind.value, e.details["slot"]) for e in log.snapshot()]
[('saved', 'result'), ('freed', 'result')]
>>> z = x.exp()
>>> pack = packer(log, 2, "ExpBackward0", "result", None)
>>> z.grad_fn._raw_saved_result.register_hooks(pack, unpack)
>>> _ = z.add_(1)  # the saved result is modified in place
>>> z.sum().backward()
Traceback (most recent call last):
RuntimeError: one of the variables needed for gradient computation has been modified by ...
"""

from __future__ import annotations

import atexit
from collections.abc import Callable
from functools import partial

import torch

from .eventlog import EventLog
from .events import EventKind
from .memory import storage_facts

__all__ = ["Holder", "packer", "unpack"]

_exiting = False  # set at interpreter exit: a holder dying then logs nothing
_SAVED, _FREED = EventKind.SAVED, EventKind.FREED


@atexit.register
def _at_exit() -> None:
    global _exiting
    _exiting = True


class Holder(tuple):
    """What autograd keeps instead of a saved tensor: ``(tensor, version, log, node, name,
    facts)``.

    The tensor has no history (it shares storage and version counter); the version is
    the one it had when saved; the rest is what ``log`` logged as ``saved``, which the
    ``freed`` event repeats. A tuple: one is made for every saved tensor inside the
    learner's forward, and a tuple subclass is made without running any Python code.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Holder({tuple(self[0].shape)}, version {self[1]})"

    def __del__(self) -> None:  # autograd dropped it: backward freed it, or the graph died
        if not _exiting:
            _, _, log, node, name, facts = self
            log.emit(_FREED, node, name, facts)


def _pack(
    log: EventLog, node: int, name: str, slot: str, task: int | None, t: torch.Tensor
) -> Holder:
    device = t.device
    key, size = storage_facts(t, device)
    try:
        shape = t.shape
    except RuntimeError:  # a nested tensor has no one shape
        shape = None
    facts = (slot, shape, t.dtype, device, size, key)  # see EventLog.emit
    log.emit(_SAVED, node, name, facts, task)
    # PyTorch hands pack a tensor without history (an alias sharing the version
    # counter); one that had history would make a reference cycle through the graph
    return Holder((t.detach() if t.requires_grad else t, t._version, log, node, name, facts))


# ``packer(log, node, name, slot, task)``: the pack hook of ``slot`` of node ``node`` (named
# ``name``); it logs ``saved`` in autograd's graph task ``task`` (None: the one running
# when it packs, see ``EventLog.emit``). A partial of a partial: made with no Python call, once
# for every saved tensor inside the learner's forward.
packer: Callable[..., Callable[[torch.Tensor], Holder]] = partial(partial, _pack)


def unpack(holder: Holder) -> torch.Tensor:
    """The unpack hook: the saved tensor, unless it was modified in place since saving."""
    t, version, _, _, name, facts = holder
    if t._version != version:
        dims = ", ".join(map(str, t.shape))
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{t.type()} [{dims}]], saved by {name} as "
            f"{facts[0]!r}, is at version {t._version}; expected version "
            f"{version} instead. (Checked by gradgraph: PyTorch skips this check for "
            "saved tensors with hooks.)"
        )
    return t
