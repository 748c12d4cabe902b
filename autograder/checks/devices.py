"""Tensors that code makes without ``device=``, and whether one meets the tensors it was given:
what fails on a GPU, seen on a machine without one.

A tensor made from nothing (``torch.zeros(n)``, ``torch.tensor([...])``) lands on the default
device, the CPU, wherever the code's inputs live. On the CPU nothing shows; beside inputs on a
GPU the first operation that gets both fails ("Expected all tensors to be on the same device").
Inside :func:`tensors_made_without_device` such a tensor is made on the **meta** device
instead, away from the inputs, and the first operation that gets one together with a tensor
from elsewhere is recorded (and refused by torch, as a GPU would refuse it).

PyTorch's own rules are kept where they matter:

* a tensor with no dimensions stays on the CPU, as it is: PyTorch lets a 0-dim CPU tensor join
  tensors on any device (``total = torch.tensor(0.0); total = total + loss`` runs on a GPU), but
  not be written in place with them (``total += loss`` fails there), which is counted;
* ``.to(...)`` moves a tensor made so where it is told, with its values;
* indexing with, and copying between, tensors on different devices is allowed on a GPU, so
  those operations are not counted.

The factories are those that ``torch.set_default_device`` redirects (``torch.tensor``,
``zeros``, ``ones``, ``full``, ``arange``, ``eye``, ``randn`` and the like; the ``*_like``
ones follow their tensor). ``torch.Tensor(n)``, ``torch.FloatTensor`` and
``torch.from_numpy`` are not among them: what they make stays on the CPU, unseen.

The inputs stay where they are: code that reads its inputs' device (``device=x.device``,
``torch.ones_like(x)``, ``x.new_zeros(n)``) makes its tensors there, as it would on a GPU.
Everything used here is bound at import, so a later patch of torch's names changes nothing.

Example::

    >>> import torch
    >>> x = torch.ones(3)
    >>> with tensors_made_without_device() as made:
    ...     y = x + torch.zeros(3, device=x.device) + torch.tensor(1.0)  # both right on a GPU
    >>> made.met_in is None, y.device.type
    (True, 'cpu')
    >>> with tensors_made_without_device() as made:
    ...     try:
    ...         y = x + torch.zeros(3)
    ...     except RuntimeError:
    ...         pass
    >>> made.met_in, made.factory, made.shape
    ('add', 'torch.zeros', (3,))
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

__all__ = ["MadeWithoutDevice", "tensors_made_without_device"]

_Tensor, _Base = torch.Tensor, torch._C.TensorBase
_META, _STRIDED = torch.device("meta"), torch.strided
_FACTORIES = frozenset(_device_constructors())  # those torch.set_default_device redirects
# Operations that take tensors on different devices on purpose: a CPU index for a GPU tensor,
# a copy from one device to another.
_ACROSS_DEVICES = frozenset(
    {_Base.__getitem__, _Base.__setitem__, _Base.to, _Base.copy_, _Base.type_as}
)
# What reads a tensor made so as the CPU tensor it would be beside a GPU: its values.
_READ_VALUES = frozenset({_Base.item, _Base.tolist, _Base.numpy})
_MOVE, _TO_CPU, _parse_to = _Base.to, _Base.cpu, torch._C._nn._parse_to
_empty_like, _isinstance, _id, _getattr, _str = torch.empty_like, isinstance, id, getattr, str
_list, _tuple, _dict, _next = list, tuple, dict, next
Made = tuple[str, tuple[int, ...]]  # a factory's name, and the shape it made


@dataclass
class MadeWithoutDevice:
    """What the code inside :func:`tensors_made_without_device` made without ``device=`` (each
    factory's name and the shape it made, in order), and the first operation that got one of
    those tensors together with a tensor from elsewhere (``met_in``; ``None`` when none did)."""

    made: list[Made] = field(default_factory=list)
    met_in: str | None = None
    culprit: Made | None = None

    @property
    def factory(self) -> str | None:
        """The factory that made the tensor that met the others, such as ``'torch.ones'``."""
        return None if self.culprit is None else self.culprit[0]

    @property
    def shape(self) -> tuple[int, ...] | None:
        """The shape that factory made."""
        return None if self.culprit is None else self.culprit[1]


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if _isinstance(value, _Tensor):
        yield value
    elif _isinstance(value, (_list, _tuple)):
        for item in value:
            yield from _tensors(item)
    elif _isinstance(value, _dict):
        for item in value.values():
            yield from _tensors(item)


def _name(func: Any) -> str:
    return _getattr(func, "__name__", None) or _str(func)


class _MadeOnMeta(TorchFunctionMode):
    """Makes a factory's tensor (no ``device=``, no tensor among its arguments, some
    dimensions) on the meta device, and records the first operation that gets one together
    with a tensor from elsewhere."""

    def __init__(self, log: MadeWithoutDevice) -> None:
        super().__init__()
        self.log = log
        self.values: dict[int, tuple[torch.Tensor, Made]] = {}  # by id of a meta tensor made
        self.scalars: dict[int, Made] = {}  # by id of a 0-dim tensor made, on the CPU
        self.kept: list[torch.Tensor] = []  # every tensor made, alive so that no id is reused

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        if func in _FACTORIES and kwargs.get("device") is None and "out" not in kwargs:
            return self._make(func, args, kwargs)
        mine = self.values.get(_id(args[0])) if args else None
        if mine is not None and func in _READ_VALUES:
            return func(mine[0], *args[1:], **kwargs)
        if mine is not None and func is _TO_CPU:  # already where a CPU tensor is
            return args[0]
        if mine is not None and func is _MOVE:
            target = _parse_to(*args[1:], **kwargs)[0]
            if target is not None and target != _META:  # moved, with its values
                return func(mine[0], *args[1:], **kwargs)
        if self.log.met_in is None and func not in _ACROSS_DEVICES:
            self._notice(func, _list(_tensors((args, kwargs))))
        return func(*args, **kwargs)

    def _make(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        made = func(*args, **kwargs)
        self.kept.append(made)
        if not _isinstance(made, _Tensor) or made.layout != _STRIDED:
            return made
        if _next(_tensors(args), None) is not None:  # from a tensor: it stays on that device
            return made
        origin = (f"torch.{_name(func)}", _tuple(made.shape))
        if made.dim() == 0:  # a 0-dim CPU tensor joins tensors on any device
            self.scalars[_id(made)] = origin
            return made
        on_meta = _empty_like(made, device=_META, requires_grad=made.requires_grad)
        self.kept.append(on_meta)
        self.values[_id(on_meta)] = (made, origin)
        self.log.made.append(origin)
        return on_meta

    def _notice(self, func: Any, tensors: list[torch.Tensor]) -> None:
        made = [t for t in tensors if t.device == _META and t.dim() > 0]
        given = [t for t in tensors if t.device != _META and _id(t) not in self.scalars]
        if made and given:
            self.log.met_in = _name(func)
            known = [self.values[_id(t)][1] for t in made if _id(t) in self.values]
            self.log.culprit = known[0] if known else (self.log.made or [None])[0]
        elif given and _name(func).endswith("_") and _id(tensors[0]) in self.scalars:
            self.log.met_in = _name(func)  # a 0-dim CPU tensor written with the inputs' values
            self.log.culprit = self.scalars[_id(tensors[0])]


@contextmanager
def tensors_made_without_device() -> Iterator[MadeWithoutDevice]:
    """Inside the block, tensors made without ``device=`` land on the meta device (0-dim ones
    aside), and the record yielded says which were made and where one first met a tensor from
    elsewhere. The block's torch mode is gone afterwards, whatever the code inside raised."""
    log = MadeWithoutDevice()
    with _MadeOnMeta(log):
        yield log
