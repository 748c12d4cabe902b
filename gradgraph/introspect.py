"""Read facts off autograd nodes: their class name, output metadata, saved-tensor slots.

>>> import torch
>>> from gradgraph.introspect import node_class, saved_slots
>>> x = torch.ones(3, requires_grad=True)
>>> y = (x * x).exp()
>>> node_class(y.grad_fn), [name for name, _ in saved_slots(y.grad_fn)]
('ExpBackward0', ['result'])
>>> sorted(name for name, _ in saved_slots(y.grad_fn.next_functions[0][0]))
['other', 'self']
>>> exp_node = y.grad_fn
>>> _ = y.add_(1)  # exp saved its result, which is now modified
>>> saved_slots(exp_node) is None
True
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["node_class", "output_meta", "saved_hooks_active", "saved_slots"]

_SAVED_PREFIX = "_raw_saved_"
_top_saved_hooks = getattr(torch._C._autograd, "_top_saved_tensors_default_hooks", None)
_slot_names: dict[type, tuple[tuple[str, str, str], ...]] = {}
_SavedTensor = torch._C._autograd.SavedTensor


def node_class(node: Any) -> str:
    """``"ExpBackward0"``, ``"AccumulateGrad"``, ``"MyFunctionBackward"``..."""
    return type(node).__name__


def output_meta(node: Any) -> tuple[Any, Any, Any]:
    """Shape, dtype and device of what an operation's node produced (its first output), as
    torch has them (``torch.Size``, ``torch.dtype``, ``torch.device``), or Nones."""
    metas = node._input_metadata
    if not metas:
        return None, None, None
    first = metas[0]
    return first.shape, first.dtype, first.device


def saved_hooks_active() -> bool:
    """Whether the user's ``saved_tensors_hooks`` (checkpoint, save_on_cpu...) are on now.

    Nodes made under them already carry hooks: reading their saved tensors would run
    the user's unpack (a checkpoint would recompute), so the recorder leaves them alone.
    PyTorch has no public query for this; the private one is looked up defensively.
    """
    return _top_saved_hooks is not None and _top_saved_hooks(False) is not None


def _slot_attrs(node: Any) -> tuple[tuple[str, str, str], ...]:
    """``(slot, "_saved_" + slot, "_raw_saved_" + slot)`` for each slot of the node's class
    (a custom ``autograd.Function``'s node has one: ``saved_tensors``)."""
    kind = type(node)
    names = _slot_names.get(kind)
    if names is None:
        if hasattr(kind, "_raw_saved_tensors"):
            names = (("tensors", "saved_tensors", "_raw_saved_tensors"),)
        else:
            slots = [a[len(_SAVED_PREFIX) :] for a in dir(node) if a.startswith(_SAVED_PREFIX)]
            names = tuple((slot, "_saved_" + slot, _SAVED_PREFIX + slot) for slot in slots)
        _slot_names[kind] = names
    return names


def saved_slots(node: Any) -> list[tuple[str, Any]] | None:
    """``(slot name, SavedTensor)`` of each tensor the node saved for backward (slots that
    hold None are left out), or None where PyTorch could no longer unpack one of them
    (freed by an earlier backward, or modified in place since saving): reading them runs
    PyTorch's own checks.
    """
    slots: list[tuple[str, Any]] = []
    try:
        for slot, saved, raw_name in _slot_attrs(node):
            value = getattr(node, saved)  # PyTorch's checks: raises if freed or modified
            if value is None:
                continue
            raw = getattr(node, raw_name)
            if isinstance(raw, _SavedTensor):
                slots.append((slot, raw))
            elif isinstance(raw, (list, tuple)):
                slots += [
                    (f"{slot}[{i}]", item)
                    for i, (item, unpacked) in enumerate(zip(raw, value, strict=False))
                    if unpacked is not None and isinstance(item, _SavedTensor)
                ]
    except RuntimeError:
        return None
    return slots
