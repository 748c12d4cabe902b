"""The meta device as a stand-in for a GPU: code given tensors there may read their values, and
is run there once more to see whether torch refuses to mix its tensors with the CPU's.

A tensor made without ``device=`` lands on the CPU whatever device the code's inputs are on.
Beside inputs on a GPU, torch refuses the first operation that gets both ("Expected all tensors
to be on the same device"), and torch refuses the same mix with inputs on the meta device
("Tensor on device cpu is not on the expected device meta!"), with no torch mode involved.
:func:`refused_on_meta` calls a function on copies of what it is given moved there (its
tensors, and the parameters, buffers and optimizer states of its modules and optimizers) and
returns what torch said. It backs up :func:`autograder.checks.devices.tensors_made_without_device`,
which sees each tensor made without ``device=`` through a torch function mode: code can take a
mode off torch's stack while it makes one, and put it back, and no mode sees that; torch's own
refusal here needs none. Torch's meta kernels check fewer operations than a GPU's (an in-place
product or a matrix product of a meta and a CPU tensor goes through): the run is also watched
below autograd, where every operation that mixes the two is refused as a GPU would refuse it
(:mod:`autograder.checks.mixed_devices`). Code can take that watch off torch's stack too, so
this is the second check, not the first.

Example::

    >>> import torch
    >>> def total_of(losses):
    ...     total = torch.zeros(1)  # on the CPU, whatever the losses' device
    ...     for loss in losses:
    ...         total = total + loss
    ...     return total
    >>> refused_on_meta(total_of, [torch.ones(1), torch.ones(1)])
    'Tensor on device cpu is not on the expected device meta! (aten.add.Tensor)'
    >>> def weighted(losses):
    ...     return torch.stack(losses)[None] @ torch.ones(len(losses), 1)  # a meta kernel allows it
    >>> refused_on_meta(weighted, [torch.ones(()), torch.ones(())])
    'Tensor on device cpu is not on the expected device meta! (aten.mm.default)'
    >>> refused_on_meta(lambda losses: sum(losses), [torch.ones(1)]) is None
    True
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any
from warnings import catch_warnings as _catch_warnings
from warnings import simplefilter as _simplefilter

import torch
from torch.overrides import TorchFunctionMode

from autograder.checks.mixed_devices import MixedDevicesRefused

__all__ = ["meta_values_read_as_zeros", "on_meta", "refused_on_meta", "tensors_in"]

_Tensor, _Parameter, _Module = torch.Tensor, torch.nn.Parameter, torch.nn.Module
_Optimizer = torch.optim.Optimizer
_META = torch.device("meta")
_zeros, _empty = torch.zeros, torch.empty
_isinstance, _id, _str, _tuple, _list, _dict = isinstance, id, str, tuple, list, dict
_deepcopy = copy.deepcopy
# what each of torch's refusals to mix a meta and a CPU tensor says (in one order or the other)
_MIXED = ("device", "meta", "cpu")


class _MetaValuesReadAsZeros(TorchFunctionMode):
    """Runs each torch call as it is; one that fails because it reads a meta tensor's values
    runs again on zeros in their place, on the CPU (see :func:`meta_values_read_as_zeros`)."""

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        try:
            return func(*args, **kwargs)
        except (NotImplementedError, RuntimeError) as error:
            if "meta tensor" not in _str(error):  # not a read of values: raised as on a GPU
                raise
        args = _tuple(
            _zeros(arg.shape, dtype=arg.dtype) if _isinstance(arg, _Tensor) and arg.is_meta else arg
            for arg in args
        )
        return func(*args, **kwargs)


def meta_values_read_as_zeros() -> TorchFunctionMode:
    """A mode (``with meta_values_read_as_zeros(): ...``) in which code given tensors on the
    meta device, which stands in for a GPU, may read their values as it could a GPU tensor's
    (``.tolist()``, ``.cpu()``, ``.item()``, ``bool(...)``): each read gives zeros on the CPU.
    Where the code's results land is what a test then checks, not their values; mixing devices
    still fails, as on a GPU.

    >>> t = torch.empty(2, 3, device="meta")
    >>> with meta_values_read_as_zeros():
    ...     copy = torch.tensor(t.tolist(), device=t.device)
    >>> copy.device.type, tuple(copy.shape)
    ('meta', (2, 3))
    """
    return _MetaValuesReadAsZeros()


def on_meta(values: Any) -> Any:
    """A deep copy of ``values`` with every tensor in it on the meta device: tensors in lists,
    tuples and dicts, and the parameters, buffers and ``.grad`` of modules, the parameters and
    state of optimizers (an optimizer's 0-dim step count stays on the CPU, where torch keeps
    it beside parameters on a GPU). Leaves stay leaves; a tensor with a history becomes a leaf.

    >>> layer = torch.nn.Linear(2, 1)
    >>> step = torch.optim.SGD(layer.parameters(), lr=0.1)
    >>> moved, moved_step = on_meta((layer, step))
    >>> moved.weight.device.type, moved_step.param_groups[0]["params"][0] is moved.weight
    ('meta', True)
    """
    memo: dict[int, Any] = {}
    for tensor in tensors_in(values, held=True):
        if _id(tensor) not in memo:
            memo[_id(tensor)] = _meta_copy(tensor)
    return _deepcopy(values, memo)


def refused_on_meta(function: Callable[..., Any], *args: Any) -> str | None:
    """What torch said when it refused to mix the meta device with the CPU in
    ``function(*on_meta(args))``, values read as zeros (see the module's text); None where it
    did not (whatever else went wrong: the other checks say), or where the arguments could not
    be copied."""
    try:
        moved = on_meta(args)
    except Exception:  # an argument that cannot be copied: nothing to say
        return None
    return _refusal(lambda: function(*moved))


def _refusal(run: Callable[[], Any]) -> str | None:
    """What torch said when ``run()`` mixed the meta device with the CPU, or None (every
    operation is looked at, as a GPU would: see :mod:`autograder.checks.mixed_devices`)."""
    with _catch_warnings(), meta_values_read_as_zeros(), MixedDevicesRefused():
        _simplefilter("ignore")
        try:
            run()
        except Exception as error:  # the learner's code may raise anything
            said = _str(error)
            if all(word in said for word in _MIXED):
                return said
    return None


def tensors_in(value: Any, *, held: bool = False) -> Iterator[torch.Tensor]:
    """The tensors in ``value``: itself, or those in its lists, tuples and dicts; with ``held``,
    also the parameters and buffers of its modules and the parameters and state (0-dim step
    counts aside) of its optimizers.

    >>> [tuple(t.shape) for t in tensors_in([torch.ones(2), {"b": (torch.ones(3), 4)}])]
    [(2,), (3,)]
    """
    if _isinstance(value, _Tensor):
        yield value
    elif _isinstance(value, (_list, _tuple)):
        for item in value:
            yield from tensors_in(item, held=held)
    elif _isinstance(value, _dict):
        for item in value.values():
            yield from tensors_in(item, held=held)
    elif held and _isinstance(value, _Module):
        yield from value.parameters()
        yield from value.buffers()
    elif held and _isinstance(value, _Optimizer):
        for group in value.param_groups:
            yield from group["params"]
        for state in value.state.values():
            for item in state.values():
                if _isinstance(item, _Tensor) and item.dim() > 0:
                    yield item


def _meta_copy(tensor: torch.Tensor) -> torch.Tensor:
    """A tensor of ``tensor``'s shape and dtype on the meta device (a parameter for a
    parameter), requiring grad as it does, with its ``.grad`` there too."""
    moved = _empty(tensor.shape, dtype=tensor.dtype, device=_META)
    if _isinstance(tensor, _Parameter):
        moved = _Parameter(moved, requires_grad=tensor.requires_grad)
    elif tensor.requires_grad:
        moved.requires_grad_()
    grad = tensor.grad if tensor.is_leaf else None  # (a non-leaf's .grad warns)
    if grad is not None:
        moved.grad = _empty(grad.shape, dtype=grad.dtype, device=_META)
    return moved
