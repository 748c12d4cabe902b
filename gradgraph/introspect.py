"""Read facts off autograd nodes: their class name, output metadata, saved-tensor slots.

>>> import torch
>>> from gradgraph.introspect import node_class, output_facts, output_metadata, saved_slots
>>> x = torch.ones(3, requires_grad=True)
>>> y = (x * x).exp()
>>> node_class(y.grad_fn), [name for name, _ in saved_slots(y.grad_fn)]
('ExpBackward0', ['result'])
>>> output_facts(output_metadata(y.grad_fn))
((3,), torch.float32, device(type='cpu'))
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

__all__ = [
    "OutputMetadata",
    "node_class",
    "output_facts",
    "output_metadata",
    "saved_slots",
]

_SAVED_PREFIX = "_raw_saved_"
# the pack and unpack hooks of the innermost ``saved_tensors_hooks`` open now, or None
_top_saved_hooks = torch._C._autograd._top_saved_tensors_default_hooks
_slot_names: dict[type, tuple[tuple[str, str, str], ...]] = {}
_SavedTensor = torch._C._autograd.SavedTensor
OutputMetadata = torch._C._autograd._InputMetadata  # what output_metadata gives


def node_class(node: Any) -> str:
    """``"ExpBackward0"``, ``"AccumulateGrad"``, ``"MyFunctionBackward"``..."""
    return type(node).__name__


def output_metadata(node: Any) -> Any:
    """Torch's record of what an operation's node produced (its first output), or None;
    :func:`output_facts` reads it (later: reading it costs three calls into torch)."""
    metas = node._input_metadata
    return metas[0] if metas else None


def output_facts(metadata: Any) -> tuple[Any, Any, Any]:
    """Shape (a tuple), dtype and device in an :func:`output_metadata`, or Nones."""
    if metadata is None:
        return None, None, None
    try:
        shape = tuple(metadata.shape)
    except RuntimeError:  # a nested tensor has no one shape
        shape = None
    return shape, metadata.dtype, metadata.device


def _slot_attrs(node: Any) -> tuple[tuple[str, str, str], ...]:
    """``(slot, "_saved_" + slot, "_raw_saved_" + slot)`` for each slot of the node's class
    (a custom ``autograd.Function``'s node has one: ``saved_tensors``), found once a class."""
    kind = type(node)
    if hasattr(kind, "_raw_saved_tensors"):
        names: tuple[tuple[str, str, str], ...] = (
            ("tensors", "saved_tensors", "_raw_saved_tensors"),
        )
    else:
        slots = [a[len(_SAVED_PREFIX) :] for a in dir(node) if a.startswith(_SAVED_PREFIX)]
        names = tuple((slot, "_saved_" + slot, _SAVED_PREFIX + slot) for slot in slots)
    _slot_names[kind] = names
    return names


def saved_slots(node: Any) -> list[tuple[str, Any]] | None:
    """``(slot name, SavedTensor)`` of each tensor the node saved for backward (slots that
    hold None are left out), or None where PyTorch could no longer unpack one of them
    (freed by an earlier backward, or modified in place since saving): reading them runs
    PyTorch's own checks. None of them while the user's ``saved_tensors_hooks``
    (checkpoint, save_on_cpu...) are on: nodes made under them already carry hooks, and
    reading their saved tensors would run the user's unpack (a checkpoint would recompute).
    """
    slots: list[tuple[str, Any]] = []
    attrs = _slot_names.get(type(node))
    if attrs is None:
        attrs = _slot_attrs(node)
    if not attrs or _top_saved_hooks(False) is not None:  # asked of nodes with slots alone
        return slots
    try:
        for slot, saved, raw_name in attrs:
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
