"""Tensors that code makes without ``device=``, and whether one meets the tensors it was given:
what fails on a GPU, seen on a machine without one.

A tensor made from nothing (``torch.zeros(n)``, ``torch.tensor([...])``) lands on the default
device, the CPU, wherever the code's inputs live. On the CPU nothing shows; beside inputs on a
GPU the first operation that gets both fails ("Expected all tensors to be on the same device").
Inside :func:`tensors_made_without_device` the code gets, for such a tensor, a stand-in on the
**meta** device, away from the inputs, and the first operation that gets one together with a
tensor from elsewhere is recorded (and refused by torch, as a GPU would refuse it). The
stand-in's values live on beside it, on the CPU: what the code computes from stand-ins alone
is computed on those values, and its tensors are stand-ins in turn, so that it gets every value
a GPU would give it (``(torch.arange(n) + 1).float().to(x.device)``, ``labels[:k] = 1``,
``.sum().item()``) and a tensor derived from one made so still counts as made so.

PyTorch's own rules are kept where they matter:

* a tensor with no dimensions stays on the CPU, as it is: PyTorch lets a 0-dim CPU tensor join
  tensors on any device (``total = torch.tensor(0.0); total = total + loss`` runs on a GPU), but
  not be written in place with them (``total += loss`` fails there), which is counted;
* ``.to(...)`` (or ``.type_as``) moves a tensor made so where it is told, with its values;
* indexing with, and copying between, tensors on different devices is allowed on a GPU, so
  those operations are not counted, and take the values.

The factories are those that ``torch.set_default_device`` redirects (``torch.tensor``,
``zeros``, ``ones``, ``full``, ``arange``, ``eye``, ``randn`` and the like; the ``*_like``
ones follow their tensor), and the constructors that always make a CPU tensor, which no torch
mode sees and old tutorials still teach: ``torch.Tensor(n)``, the legacy types
(``torch.FloatTensor(n).fill_(1)``, a GAN's labels in DCGAN-era code), ``torch.from_numpy``
and ``torch.frombuffer``. For the block, ``torch.Tensor.__new__`` and those names of the
``torch`` module answer through the watch (``isinstance(t, torch.FloatTensor)`` and
``t.type(torch.DoubleTensor)`` keep working), and ``torch._C.DisableTorchFunction``, which
would switch the watch off too, switches off only tensor subclasses' ``__torch_function__``;
they are put back afterwards.

The inputs stay where they are: code that reads its inputs' device (``device=x.device``,
``torch.ones_like(x)``, ``x.new_zeros(n)``) makes its tensors there, as it would on a GPU. An
input read into NumPy without being brought to the CPU first (``x.detach().numpy()``, which a
GPU tensor refuses; ``x.detach().cpu().numpy()`` is right) is noted too.
Everything used here is bound at import, so a later patch of torch's names changes nothing.
Code can still take the watch's mode off torch's stack for a moment, or switch modes off with
a ``DisableTorchFunction`` it kept from before: where the watch saw nothing while a class is
graded (the checks' records go to the grader), :func:`call_watched` and
:func:`differentiate_watched` run the code once more with what it was given on the meta device,
where torch itself refuses a CPU tensor beside the inputs (:mod:`autograder.checks.meta`; not in
a learner's own run, where loading torch's meta kernels would cost a second, and where the
grading worker has them loaded already).

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
    >>> with tensors_made_without_device() as made:
    ...     values = x.numpy()  # a GPU tensor refuses: x.cpu().numpy() is right
    >>> made.read_into_numpy
    True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextlib import suppress as _suppress
from dataclasses import dataclass, field
from importlib import import_module as _import_module
from sys import modules as _modules
from typing import Any
from warnings import catch_warnings as _catch_warnings
from warnings import simplefilter as _simplefilter

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

from autograder.checks.meta import meta_values_read_as_zeros, refused_on_meta
from autograder.checks.meta import tensors_in as _tensors
from autograder.checks.notebook_reads import devices_held, notebook_globals
from autograder.checks.records import sending as _sending

__all__ = [
    "MadeWithoutDevice",
    "call_watched",
    "differentiate_away_from_notebook_device",
    "differentiate_watched",
    "meta_values_read_as_zeros",
    "notebook_device_elsewhere",
    "tensors_made_without_device",
]

_Tensor, _Base = torch.Tensor, torch._C.TensorBase
_META, _STRIDED = torch.device("meta"), torch.strided
_FACTORIES = frozenset(_device_constructors())  # those torch.set_default_device redirects
# Operations that take tensors on different devices on purpose: a CPU index for a GPU tensor,
# a copy from one device to another.
_ACROSS_DEVICES = frozenset(
    {_Base.__getitem__, _Base.__setitem__, _Base.to, _Base.copy_, _Base.type_as}
)
_MOVE, _TYPE_AS, _CAST, _parse = _Base.to, _Base.type_as, _Base.type, torch._C._nn._parse_to
# What reads a tensor's values into NumPy (a GPU tensor refuses, unless forced), and what
# brings a tensor to the CPU first
_TO_NUMPY, _TO_ARRAY, _TO_CPU, _CPU = _Base.numpy, _Tensor.__array__, _Base.cpu, torch.device("cpu")
_ones_like, _autograd_grad = torch.ones_like, torch.autograd.grad
_BackwardCFunction = torch.autograd.function.BackwardCFunction  # a custom Function's node
_empty_like, _isinstance, _id, _getattr, _str = torch.empty_like, isinstance, id, getattr, str
_list, _tuple, _dict, _next, _issubclass, _repr = list, tuple, dict, next, issubclass, repr
_all, _device = all, torch.device
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
_TORCH_C = torch._C
_ALL_OFF, _SUBCLASSES_OFF = _TORCH_C.DisableTorchFunction, _TORCH_C.DisableTorchFunctionSubclass
Made = tuple[str, tuple[int, ...]]  # a factory's name, and the shape it made


@dataclass
class MadeWithoutDevice:
    """What the code inside :func:`tensors_made_without_device` made without ``device=`` (each
    factory's name and the shape it made, in order), and the first operation that got one of
    those tensors together with a tensor from elsewhere (``met_in``; ``None`` when none did)."""

    made: list[Made] = field(default_factory=list)
    met_in: str | None = None
    culprit: Made | None = None
    read_into_numpy: bool = False  # a tensor from elsewhere read by .numpy(), not on the CPU
    # what torch said when the code, run once more with what it was given on the meta device,
    # mixed devices (see autograder.checks.meta): where the watch saw nothing
    refused_on_meta: str | None = None

    @property
    def factory(self) -> str | None:
        """The factory that made the tensor that met the others, such as ``'torch.ones'``."""
        return None if self.culprit is None else self.culprit[0]

    @property
    def shape(self) -> tuple[int, ...] | None:
        """The shape that factory made."""
        return None if self.culprit is None else self.culprit[1]


def _name(func: Any) -> str:
    return _getattr(func, "__name__", None) or _str(func)


def _moved_to(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The device that ``tensor.to(*args[1:], **kwargs)`` moves a tensor to (None: it stays);
    torch's parser of those arguments refuses ``copy=``, which ``to`` takes."""
    return _parse(*args[1:], **{key: value for key, value in kwargs.items() if key != "copy"})[0]


class _MadeOnMeta(TorchFunctionMode):
    """Gives the code a stand-in on the meta device for each tensor a factory makes (no
    ``device=``, no tensor among its arguments, some dimensions) and for each tensor computed
    from stand-ins alone, computes on their values, and records the first operation that gets
    a stand-in together with a tensor from elsewhere, and a tensor from elsewhere read into
    NumPy without being brought to the CPU (``x.detach().numpy()``: a GPU tensor refuses)."""

    def __init__(self, log: MadeWithoutDevice) -> None:
        super().__init__()
        self.log = log
        self.values: dict[int, tuple[torch.Tensor, Made]] = {}  # by id of a stand-in
        self.scalars: dict[int, Made] = {}  # by id of a 0-dim tensor made, on the CPU
        self.kept: list[torch.Tensor] = []  # every tensor made, alive so that no id is reused
        self.on_cpu: set[int] = set()  # ids of tensors brought to the CPU, or computed from such

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        if func in _FACTORIES and kwargs.get("device") is None and "out" not in kwargs:
            return self._make(func, args, kwargs)
        if (func is _TO_NUMPY or func is _TO_ARRAY) and args and not kwargs.get("force"):
            self._read_into_numpy(args[0])
        if func is _CAST:  # t.type(torch.FloatTensor): the type itself, not what stands for it
            args, kwargs = (
                _real_types(args),
                _dict(zip(kwargs, _real_types(kwargs.values()), strict=True)),
            )
        tensors = _list(_tensors((args, kwargs)))
        values = self.values
        stand_ins = [t for t in tensors if _id(t) in values]
        if not stand_ins:
            if self.log.met_in is None:
                self._notice(func, tensors)
            return self._placed(func, args, kwargs, tensors, func(*args, **kwargs))
        mine = values.get(_id(args[0])) if args else None  # (torch.cat(tensors=...): none)
        if mine is not None and func is _MOVE:
            target = _moved_to(args, kwargs)
            if target is not None and target != _META:  # moved, with its values
                return func(mine[0], *args[1:], **kwargs)
        given = [t for t in tensors if _id(t) not in values and _id(t) not in self.scalars]
        if mine is not None and func is _TYPE_AS and given:  # moved to a given tensor's device
            return func(mine[0], *args[1:], **kwargs)
        if given and func not in _ACROSS_DEVICES:  # as on a GPU: refused
            if self.log.met_in is None:
                self._notice(func, tensors)
            return func(*args, **kwargs)
        if given and mine is None:  # an index or a copy across devices, into a given tensor
            return func(*self._real(args), **self._real(kwargs))
        return self._computed(func, args, kwargs, values[_id(stand_ins[0])][1])

    def _read_into_numpy(self, tensor: Any) -> None:
        """Note a tensor from elsewhere (not made in the block, not brought to the CPU) whose
        values are read into NumPy: beside inputs on a GPU, it is on the GPU."""
        key = _id(tensor)
        if key not in self.values and key not in self.scalars and key not in self.on_cpu:
            self.log.read_into_numpy = True

    def _placed(
        self,
        func: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tensors: list[torch.Tensor],
        result: Any,
    ) -> Any:
        """``result``, noted as on the CPU where ``func`` brought a tensor there (``cpu()``,
        ``to("cpu")``, a factory told ``device="cpu"``) or computed it from such alone. (Here
        the inputs are on the CPU already, so ``x.cpu()`` is ``x`` itself: an input brought to
        the CPU once counts as there afterwards.)"""
        if func is _TO_CPU:
            to_cpu = True
        elif func is _MOVE:
            to_cpu = _moved_to(args, kwargs) == _CPU
        elif tensors:
            to_cpu = _all(_id(t) in self.on_cpu for t in tensors)
        else:
            device = kwargs.get("device")
            to_cpu = func in _FACTORIES and device is not None and _device(device) == _CPU
        if to_cpu:
            for made in _tensors(result):
                self.kept.append(made)
                self.on_cpu.add(_id(made))
        return result

    def _computed(
        self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], origin: Made
    ) -> Any:
        """``func`` run on the values behind the stand-ins among its arguments (the first of
        them a stand-in, or no tensor from elsewhere among them); the tensors it gives are
        stand-ins in turn (0-dim ones stay on the CPU), of the tensor ``origin`` names."""
        real_args, real_kwargs = self._real(args), self._real(kwargs)
        result = func(*real_args, **real_kwargs)
        name = _name(func)
        if name == "__set__" or (args and result is real_args[0] is not args[0]):  # in place
            with _suppress(Exception):  # keep the stand-in's shape and flags in step
                func(*args, **kwargs)
        if name == "__get__" and not _isinstance(result, _Tensor):
            return func(*args, **kwargs)  # .device, .is_leaf...: the stand-in's
        return self._stand_ins(result, args, real_args, origin)

    def _real(self, value: Any) -> Any:
        """``value`` with each stand-in in it replaced by the tensor behind it."""
        if _isinstance(value, _Tensor):
            behind = self.values.get(_id(value))
            return value if behind is None else behind[0]
        if _isinstance(value, (_list, _tuple)):
            return type(value)(self._real(item) for item in value)
        if _isinstance(value, _dict):
            return {key: self._real(item) for key, item in value.items()}
        return value

    def _stand_ins(self, result: Any, args: tuple[Any, ...], real_args: Any, origin: Made) -> Any:
        """What the code gets for ``result``, computed from stand-ins: the stand-in of an
        argument it returned (changed in place), a new stand-in for a tensor with dimensions,
        the 0-dim tensor itself (it may join any device), anything else as it is."""
        if _isinstance(result, (_list, _tuple)):
            return type(result)(self._stand_ins(item, args, real_args, origin) for item in result)
        if not _isinstance(result, _Tensor):
            return result
        for passed, real in zip(args, real_args, strict=False):
            if result is real:
                return passed
        self.kept.append(result)
        if result.dim() == 0 or result.layout != _STRIDED:
            self.scalars[_id(result)] = origin
            return result
        return self._stand_in(result, origin)

    def _stand_in(self, real: torch.Tensor, origin: Made) -> torch.Tensor:
        _load_meta_kernels()
        stand_in = _empty_like(real, device=_META, requires_grad=real.requires_grad)
        self.kept.append(stand_in)
        self.values[_id(stand_in)] = (real, origin)
        return stand_in

    def _make(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self.made(f"torch.{_name(func)}", func(*args, **kwargs), args)

    def made(self, factory: str, made: Any, args: tuple[Any, ...]) -> Any:
        """What the code gets for ``made``, which ``factory`` made from ``args`` without
        ``device=``: a stand-in on the meta device (with some dimensions, and not made from a
        tensor)."""
        self.kept.append(made)
        if not _isinstance(made, _Tensor) or made.layout != _STRIDED:
            return made
        if _next(_tensors(args), None) is not None:  # from a tensor: it stays on that device
            return made
        origin = (factory, _tuple(made.shape))
        if made.dim() == 0:  # a 0-dim CPU tensor joins tensors on any device
            self.scalars[_id(made)] = origin
            return made
        self.log.made.append(origin)
        return self._stand_in(made, origin)

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
def _watch_kept_on() -> Iterator[None]:
    """For the block, ``torch._C.DisableTorchFunction``, which switches every torch function
    mode off (the watch's too), switches off only tensor subclasses' ``__torch_function__``,
    as ``DisableTorchFunctionSubclass`` does: what is made under it is still seen."""
    _module_setattr(_TORCH_C, "DisableTorchFunction", _SUBCLASSES_OFF)
    try:
        yield
    finally:
        _module_setattr(_TORCH_C, "DisableTorchFunction", _ALL_OFF)


@contextmanager
def tensors_made_without_device() -> Iterator[MadeWithoutDevice]:
    """Inside the block, tensors made without ``device=`` land on the meta device (0-dim ones
    aside), and the record yielded says which were made and where one first met a tensor from
    elsewhere. The block's torch mode and constructors are gone afterwards, whatever the code
    inside raised."""
    log = MadeWithoutDevice()
    mode = _MadeOnMeta(log)
    with mode, _constructors_watched(mode), _watch_kept_on():
        yield log


def call_watched(function: Callable[..., Any], *args: Any) -> tuple[MadeWithoutDevice, Any]:
    """Call ``function(*args)`` inside :func:`tensors_made_without_device`, its warnings
    silenced: the record, and what the call returned (None where it raised; what else goes
    wrong, the other checks say).

    >>> x = torch.ones(3)
    >>> made, value = call_watched(lambda t: t + torch.zeros(3), x)
    >>> made.met_in, made.factory, value
    ('add', 'torch.zeros', None)
    """
    value = None
    with _catch_warnings(), tensors_made_without_device() as made:
        _simplefilter("ignore")
        with _suppress(Exception):
            value = function(*args)
    if args:  # (with none, nothing would be moved to the meta device)
        _run_again_on_meta(made, function, *args)
    return made, value


def _run_again_on_meta(made: MadeWithoutDevice, function: Callable[..., Any], *args: Any) -> None:
    """Where the watch saw nothing while a class is graded, note in ``made`` what torch said
    when ``function(*args)`` mixed devices on the meta device (see the module's text)."""
    if made.met_in is None and not made.read_into_numpy and _sending():
        made.refused_on_meta = refused_on_meta(function, *args)


def differentiate_watched(
    function: Callable[..., Any], x: torch.Tensor, *args: Any
) -> tuple[MadeWithoutDevice, list[Any] | None]:
    """:func:`call_watched` of ``y = function(x, *args)`` and of its backward with a gradient
    of ones: the record, and ``[y, the gradient of x]`` (None where either raised).

    The engine runs backward outside torch function modes, where the watch would not see it,
    so the backward of a custom ``autograd.Function`` is called by hand from its node, as the
    engine would call it (any other ``y`` is differentiated by ``torch.autograd.grad``: its
    backward is torch's own).

    >>> class Shift(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, t):
    ...         return t + 1
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         return grad_output * torch.ones(3)  # made on the CPU, beside a GPU gradient
    >>> x = torch.zeros(3, requires_grad=True)
    >>> made, returned = differentiate_watched(Shift.apply, x)
    >>> made.met_in, made.factory, returned
    ('mul', 'torch.ones', None)
    >>> differentiate_watched(torch.exp, x)[1][1]
    tensor([1., 1., 1.])
    """

    def forward_and_backward() -> list[Any]:
        y = function(x, *args)
        node = y.grad_fn
        if _isinstance(node, _BackwardCFunction):
            grad = node.apply(_ones_like(y))
            grad = grad[0] if _isinstance(grad, _tuple) else grad
        else:
            (grad,) = _autograd_grad(y, x, _ones_like(y))
        return [y, grad]

    made, value = call_watched(forward_and_backward)
    _run_again_on_meta(made, _differentiated, function, x, *args)  # the engine runs backward
    return made, value


def _differentiated(function: Callable[..., Any], x: torch.Tensor, *args: Any) -> Any:
    """The gradient of ``y = function(x, *args)`` at ``x``, for a gradient of ones."""
    y = function(x, *args)
    return _autograd_grad(y, x, _ones_like(y))


# What the course's notebooks call the device they put their own tensors on
_NOTEBOOK_DEVICES = ("device", "device64")


@contextmanager
def notebook_device_elsewhere(*functions: Any) -> Iterator[None]:
    """Inside the block, the notebook's ``device`` and ``device64`` variables, as the learner's
    ``functions`` read them (functions, or ``autograd.Function`` classes), name the meta
    device; they are put back afterwards, whatever the block raised.

    They name where a notebook puts its own tensors, not where an input lives (a CPU tensor
    on a GPU machine): code that makes a tensor with ``device=device`` rather than on its
    input's device then makes it away from its inputs, and the first operation that gets
    both fails, as it would there. The globals are those the functions really run with, and a
    function that holds the notebook's device itself, in a default argument or a closure,
    where no change of the name reaches, makes the block raise at once
    (:mod:`autograder.checks.notebook_reads`).

    >>> notebook = {"__name__": "__main__", "device": torch.device("cpu"), "torch": torch}
    >>> exec("def scale(t):\\n    return t * torch.ones(t.shape, device=device)", notebook)
    >>> with notebook_device_elsewhere(notebook["scale"]):
    ...     notebook["scale"](torch.ones(2))
    Traceback (most recent call last):
    ...
    RuntimeError: ...
    >>> notebook["scale"](torch.ones(2)), notebook["device"]
    (tensor([1., 1.]), device(type='cpu'))
    """
    spaces = notebook_globals(functions)
    held = devices_held(functions, spaces, _NOTEBOOK_DEVICES)
    if held:  # where no change of the name reaches
        raise RuntimeError(
            f"it keeps the notebook's `{held[0]}` in a default argument or a closure, so it uses "
            "that device whatever device the tensors it is given are on"
        )
    kept = [(space, {n: space[n] for n in _NOTEBOOK_DEVICES if n in space}) for space in spaces]
    try:
        for space, names in kept:
            space.update(dict.fromkeys(names, _META))
        yield
    finally:
        for space, names in kept:
            space.update(names)


def differentiate_away_from_notebook_device(
    function: Callable[..., Any],
    x: torch.Tensor,
    grad: torch.Tensor,
    *args: Any,
    reads: tuple[Any, ...] = (),
) -> tuple[list[Any] | None, Exception | None]:
    """``[y, the gradient of x]`` for ``y = function(x, *args)`` and the incoming gradient
    ``grad`` (None where it raised), and what it raised, inside
    :func:`notebook_device_elsewhere` (of ``function`` and ``reads``, the learner's
    ``autograd.Function`` classes that ``function`` runs).

    >>> x = torch.ones(2, requires_grad=True)
    >>> differentiate_away_from_notebook_device(torch.exp, x, x)
    ([tensor([2.7183, 2.7183], grad_fn=<ExpBackward0>), tensor([2.7183, 2.7183])], None)
    """
    try:
        with notebook_device_elsewhere(function, *reads):
            y = function(x, *args)
            (gradient,) = _autograd_grad(y, x, grad)
        return [y, gradient], None
    except Exception as error:  # the learner's code may raise anything
        return None, error
