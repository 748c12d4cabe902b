"""Read facts off autograd nodes: their class name, output metadata, saved-tensor slots.

>>> import torch
>>> from gradgraph.introspect import node_class, saved_intact, saved_slots
>>> x = torch.ones(3, requires_grad=True)
>>> y = (x * x).exp()
>>> node_class(y.grad_fn), [name for name, _ in saved_slots(y.grad_fn)]
('ExpBackward0', ['result'])
>>> sorted(name for name, _ in saved_slots(y.grad_fn.next_functions[0][0]))
['other', 'self']
>>> exp_node = y.grad_fn
>>> saved_intact(exp_node)
True
>>> _ = y.add_(1)  # exp saved its result, which is now modified
>>> saved_intact(exp_node)
False
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["node_class", "output_meta", "saved_hooks_active", "saved_intact", "saved_slots"]

_SAVED_PREFIX = "_raw_saved_"
_slot_names: dict[type, tuple[str, ...]] = {}


def node_class(node: Any) -> str:
    """``"ExpBackward0"``, ``"AccumulateGrad"``, ``"MyFunctionBackward"``..."""
    return type(node).__name__


def output_meta(node: Any) -> dict[str, Any]:
    """Shape, dtype and device of what the node's forward produced (its leaf, for a leaf)."""
    variable = getattr(node, "variable", None)
    if isinstance(variable, torch.Tensor):
        return {
            "shape": tuple(variable.shape),
            "dtype": str(variable.dtype),
            "device": str(variable.device),
        }
    metas = node._input_metadata
    if not metas:
        return {"shape": None, "dtype": None, "device": None}
    first = metas[0]
    return {"shape": tuple(first.shape), "dtype": str(first.dtype), "device": str(first.device)}


def saved_hooks_active() -> bool:
    """Whether the user's ``saved_tensors_hooks`` (checkpoint, save_on_cpu...) are on now.

    Nodes made under them already carry hooks: reading their saved tensors would run
    the user's unpack (a checkpoint would recompute), so the recorder leaves them alone.
    PyTorch has no public query for this; the private one is looked up defensively.
    """
    top = getattr(torch._C._autograd, "_top_saved_tensors_default_hooks", None)
    return top is not None and top(False) is not None


def saved_intact(node: Any) -> bool:
    """Whether PyTorch can still unpack all the node's saved tensors (not freed, not
    modified in place since saving): reading them runs PyTorch's own checks."""
    try:
        if hasattr(node, "_raw_saved_tensors"):  # a custom autograd.Function
            node.saved_tensors  # noqa: B018 - the read is the check
        else:
            for attr in _slot_attrs(node):
                getattr(node, "_saved_" + attr[len(_SAVED_PREFIX) :])
    except RuntimeError:
        return False
    return True


def _slot_attrs(node: Any) -> tuple[str, ...]:
    names = _slot_names.get(type(node))
    if names is None:
        names = tuple(a for a in dir(node) if a.startswith(_SAVED_PREFIX))
        _slot_names[type(node)] = names
    return names


def saved_slots(node: Any) -> Iterator[tuple[str, Any]]:
    """Yield ``(slot name, SavedTensor)`` for each tensor slot a node saved for backward.

    Slots whose value is None are included; registering hooks on them raises, which
    the recorder treats as "nothing saved there".
    """
    for attr in _slot_attrs(node):
        try:
            value = getattr(node, attr)
        except RuntimeError:  # already freed by an earlier backward
            continue
        slot = attr[len(_SAVED_PREFIX) :]
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if isinstance(item, torch._C._autograd.SavedTensor):
                    yield f"{slot}[{i}]", item
        elif isinstance(value, torch._C._autograd.SavedTensor):
            yield slot, value
