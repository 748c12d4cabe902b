"""Refuse, as a GPU would, every operation that gets a meta tensor together with a CPU tensor.

:func:`autograder.checks.meta.refused_on_meta` runs code with its inputs on the meta device,
which stands in for a GPU, and relies on torch to refuse a CPU tensor beside them. Torch's own
meta kernels check devices for most operations but not for all: an in-place product or sum
(``total.add_(loss)``, ``x.mul_(mask)``), a matrix product (``x @ torch.eye(n)``, ``mm``,
``bmm``, ``linear``), ``einsum`` and the ``_foreach_`` operations take a CPU tensor beside a
meta one without a word, where a GPU raises. Inside :class:`MixedDevicesRefused` every
operation torch dispatches (in the forward and in backward alike) is looked at below autograd,
and one that gets a meta tensor with a tensor elsewhere raises torch's own sentence, unless a
GPU allows it too: a tensor with no dimensions beside others (a Python number made a tensor),
not written in place; a copy or a move from one device to another; indexing with indices on
the CPU.

Example::

    >>> import torch
    >>> x = torch.empty(3, 3, device="meta")
    >>> (x @ torch.eye(3)).device.type  # torch's meta kernel lets it through
    'meta'
    >>> with MixedDevicesRefused():
    ...     x @ torch.eye(3)
    Traceback (most recent call last):
    ...
    RuntimeError: Tensor on device cpu is not on the expected device meta! (aten.mm.default)
    >>> with MixedDevicesRefused():  # a number made a tensor, indices on the CPU: as on a GPU
    ...     tuple((x * torch.tensor(2.0))[torch.tensor([0, 2])].shape)
    (2, 3)
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

__all__ = ["MixedDevicesRefused"]

_aten = torch.ops.aten
# What a GPU does across devices: copy or move (the CPU to the GPU and back), index with indices
# on the CPU, read a value out (.item(), bool(...)), alias what is already there.
_ACROSS = frozenset(
    {
        _aten._to_copy,
        _aten.copy_,
        _aten._copy_from,
        _aten._copy_from_and_resize,
        _aten.index,
        _aten.index_put,
        _aten.index_put_,
        _aten._index_put_impl_,
        _aten._local_scalar_dense,
        _aten.lift_fresh,
        _aten.lift_fresh_copy,
        _aten.alias,
        _aten.detach,
    }
)
_Tensor, _META = torch.Tensor, "meta"


class MixedDevicesRefused(TorchDispatchMode):
    """Refuse each operation that meets a meta tensor with a tensor elsewhere where a GPU would
    (see the module's text)."""

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        if func.overloadpacket not in _ACROSS:
            _refuse_mixed(func, args, kwargs)
        return func(*args, **kwargs)


def _refuse_mixed(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Raise torch's sentence if ``func`` gets a meta tensor and, elsewhere, a tensor with
    dimensions, or a tensor it writes in place (its first argument, where its schema says so)."""
    tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, _Tensor)]
    if not any(t.device.type == _META for t in tensors):
        return
    written = func._schema.arguments[0].alias_info if func._schema.arguments else None
    for t in tensors:
        if t.device.type == _META:
            continue
        if t.dim() > 0 or (written is not None and written.is_write and args and t is args[0]):
            raise RuntimeError(
                f"Tensor on device {t.device.type} is not on the expected device meta! ({func})"
            )
