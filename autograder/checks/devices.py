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
ones follow their tensor), and the constructors that always make a CPU tensor, which no torch
mode sees and old tutorials still teach: ``torch.Tensor(n)``, the legacy types
(``torch.FloatTensor(n).fill_(1)``, a GAN's labels in DCGAN-era code), ``torch.from_numpy``
and ``torch.frombuffer``. For the block, ``torch.Tensor.__new__`` and those names of the
``torch`` module answer through the watch (``isinstance(t, torch.FloatTensor)`` and
``t.type(torch.DoubleTensor)`` keep working); they are put back afterwards.

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
from importlib import import_module as _import_module
from sys import modules as _modules
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
_MOVE, _TO_CPU, _CAST, _parse_to = _Base.to, _Base.cpu, _Base.type, torch._C._nn._parse_to
_empty_like, _isinstance, _id, _getattr, _str = torch.empty_like, isinstance, id, getattr, str
_list, _tuple, _dict, _next, _issubclass, _repr = list, tuple, dict, next, issubclass, repr
_staticmethod = staticmethod
_type_setattr, _type_delattr, _module_setattr = type.__setattr__, type.__delattr__, setattr
# The CPU-only constructors (see above): torch.Tensor's own __new__ is inherited, not its own
_tensor_new = _Base.__new__
_LEGACY_TYPES = {
    kind.__name__: kind
    for kind in torch._tensor_classes
    if kind.__module__ == "torch" and vars(torch).get(kind.__name__) is kind
}
_FROM_MEMORY = {"from_numpy": torch.from_numpy, "frombuffer": torch.frombuffer}
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
        if func is _CAST:  # t.type(torch.FloatTensor): the type itself, not what stands for it
            args, kwargs = (
                _real_types(args),
                _dict(zip(kwargs, _real_types(kwargs.values()), strict=True)),
            )
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
        return self.made(f"torch.{_name(func)}", func(*args, **kwargs), args)

    def made(self, factory: str, made: Any, args: tuple[Any, ...]) -> Any:
        """What the code gets for ``made``, which ``factory`` made from ``args`` without
        ``device=``: on the meta device (with some dimensions, and not made from a tensor)."""
        self.kept.append(made)
        if not _isinstance(made, _Tensor) or made.layout != _STRIDED:
            return made
        if _next(_tensors(args), None) is not None:  # from a tensor: it stays on that device
            return made
        origin = (factory, _tuple(made.shape))
        if made.dim() == 0:  # a 0-dim CPU tensor joins tensors on any device
            self.scalars[_id(made)] = origin
            return made
        _load_meta_kernels()
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


class _LegacyType:
    """What a legacy tensor type's name (``torch.FloatTensor``) stands for in the block: it
    makes its tensors through the watch, and answers ``isinstance``, ``issubclass`` and
    attribute reads as the type itself."""

    __slots__ = ("real", "_mode")

    def __init__(self, real: Any, mode: _MadeOnMeta) -> None:
        self.real, self._mode = real, mode

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._mode.made(f"torch.{self.real.__name__}", self.real(*args, **kwargs), args)

    def __instancecheck__(self, value: Any) -> bool:
        return _isinstance(value, self.real)

    def __subclasscheck__(self, kind: Any) -> bool:
        return _issubclass(kind, self.real)

    def __getattr__(self, name: str) -> Any:
        return _getattr(self.real, name)

    def __repr__(self) -> str:
        return _repr(self.real)


def _load_meta_kernels() -> None:
    """Import what runs torch's Python meta kernels (``torch._dynamo``, imported on their
    first use), with ``torch.Tensor.__new__`` as torch made it: the import registers a stand-in
    for it and refuses one whose signature it does not expect. (Imported on first use as
    elsewhere: it costs about a second, and is needed only where a tensor lands on meta.)"""
    if "torch._dynamo" in _modules:
        return
    watched = _Tensor.__dict__.get("__new__")
    if watched is not None:
        _type_delattr(_Tensor, "__new__")
    try:
        _import_module("torch._dynamo")
    finally:
        if watched is not None:
            _type_setattr(_Tensor, "__new__", watched)


def _real_types(values: Any) -> list[Any]:
    return [value.real if _isinstance(value, _LegacyType) else value for value in values]


@contextmanager
def _constructors_watched(mode: _MadeOnMeta) -> Iterator[None]:
    """For the block, the CPU-only constructors that no torch mode sees make their tensors
    through ``mode``; each is put back afterwards, whatever the code inside did to it."""

    def tensor_new(*args: Any, **kwargs: Any) -> Any:  # (kind, *args): see _load_meta_kernels
        made = _tensor_new(*args, **kwargs)
        return mode.made("torch.Tensor", made, args[1:]) if args[0] is _Tensor else made

    def wrapped(name: str, function: Any) -> Any:
        def make(*args: Any, **kwargs: Any) -> Any:
            return mode.made(f"torch.{name}", function(*args, **kwargs), ())

        return make

    names = {name: _LegacyType(kind, mode) for name, kind in _LEGACY_TYPES.items()}
    names.update((name, wrapped(name, function)) for name, function in _FROM_MEMORY.items())
    _type_setattr(_Tensor, "__new__", _staticmethod(tensor_new))
    try:
        for name, stand_in in names.items():
            _module_setattr(torch, name, stand_in)
        yield
    finally:
        if "__new__" in _Tensor.__dict__:  # the inherited one answers again
            _type_delattr(_Tensor, "__new__")
        for name, original in {**_LEGACY_TYPES, **_FROM_MEMORY}.items():
            _module_setattr(torch, name, original)


@contextmanager
def tensors_made_without_device() -> Iterator[MadeWithoutDevice]:
    """Inside the block, tensors made without ``device=`` land on the meta device (0-dim ones
    aside), and the record yielded says which were made and where one first met a tensor from
    elsewhere. The block's torch mode and constructors are gone afterwards, whatever the code
    inside raised."""
    log = MadeWithoutDevice()
    mode = _MadeOnMeta(log)
    with mode, _constructors_watched(mode):
        yield log
