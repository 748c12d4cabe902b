"""Turn what a check is given into plain evidence that :mod:`autograder.checks.rules` can judge.

Only exact built-in types, the standard library's dicts (``Counter``, ``defaultdict``,
``OrderedDict``, read as dicts) and plain tensors are read; anything else (a subclass, an
object with a permissive ``__eq__``, a tensor subclass with ``__torch_function__``) becomes
``["other", type name]``, which never equals anything. Everything used here is bound at
import, and tensors are read with torch-function handling off and refused while a torch
function or dispatch mode is active, so a later monkeypatch or mode cannot change what is read.

Example::

    >>> import torch
    >>> describe({"a": (1, 2.5)})
    ['dict', [[['str', 'a'], ['tuple', [['int', 1], ['float', 2.5]]]]]]
    >>> describe(torch.tensor([1.0, float("nan")]))[1]["values"]
    [1.0, 'nan']
    >>> class Sneaky(int):
    ...     pass
    >>> describe(Sneaky(1))[1].endswith("Sneaky (defined by the notebook)")
    True
"""

from __future__ import annotations

import collections
import math
import sys
import types
from typing import Any

import torch

from autograder.i18n import N_

__all__ = ["MAX_ELEMENTS", "describe", "type_label"]

MAX_ELEMENTS = 1 << 20
_MAX_DEPTH = 20

# Bound once at import: a learner's later patch of torch, Tensor or builtins changes none of
# these.
_type = type
_len = len
_isinstance = isinstance
_float_repr = float.__repr__
_qualname = type.__dict__["__qualname__"].__get__
_module = type.__dict__["__module__"].__get__
_modules = sys.modules
_ModuleType = types.ModuleType
_module_namespace = types.ModuleType.__dict__["__dict__"].__get__
_class_namespace = type.__dict__["__dict__"].__get__
_Tensor = torch.Tensor
_Parameter = torch.nn.Parameter
_TensorBase = torch._C.TensorBase
_detach = _TensorBase.detach
_cpu = _TensorBase.cpu
_clone = _TensorBase.clone
_reshape = _TensorBase.reshape
_tolist = _TensorBase.tolist
_numel = _TensorBase.numel
_dtype_of = _TensorBase.dtype.__get__
_shape_of = _TensorBase.shape.__get__
_device_of = _TensorBase.device.__get__
_requires_grad_of = _TensorBase.requires_grad.__get__
_grad_fn_of = _TensorBase.grad_fn.__get__
_torch_function_off = torch._C.DisableTorchFunction
_function_modes = torch._C._len_torch_function_stack
_dispatch_modes = torch._C._len_torch_dispatch_stack
_dtype = torch.dtype
_device = torch.device
# the standard library's dicts, read as the plain dicts they are (through dict.items: no
# method of theirs runs); a class of the notebook's built on them is not one of them
_Counter, _defaultdict, _OrderedDict = (
    collections.Counter,
    collections.defaultdict,
    collections.OrderedDict,
)
_dict_items = dict.items
_TRUSTED_MODULES = ("builtins", "torch", "math", "collections")
_issubclass, _str, _str_copy = issubclass, str, str.__str__  # a str subclass's copy, as a str


def type_label(kind: type) -> str:
    """The name messages use for ``kind``: ``int``, ``torch.Tensor``; a class the notebook
    defined (even one that calls itself ``torch.Tensor``) is marked so, and never matches.

    >>> type_label(bool), type_label(torch.nn.Parameter)
    ('bool', 'torch.nn.parameter.Parameter')
    """
    module, qualname = _plain_text(_module(kind)), _plain_text(_qualname(kind))
    if module is None or qualname is None:  # its own object as its name: compared, it would run
        return "a class (defined by the notebook)"
    name = qualname if module == "builtins" else f"{module}.{qualname}"
    return name if _is_trusted(kind, module, qualname) else f"{name} (defined by the notebook)"


def _plain_text(value: object) -> str | None:
    """``value`` as an exact ``str`` where it is a ``str`` (a copy of a subclass's, made without
    any of its methods), else None.

    >>> class Sly(str):
    ...     def __eq__(self, other):
    ...         raise AssertionError("the notebook's code ran")
    >>> type(_plain_text(Sly("torch"))), _plain_text(3)
    (<class 'str'>, None)
    """
    return _str_copy(value) if _issubclass(_type(value), _str) else None


def _is_trusted(kind: type, module: str, qualname: str) -> bool:
    """Whether ``module.qualname`` really names ``kind`` in a library module (read through
    the namespaces' own dictionaries, so that no code of the notebook's runs)."""
    if not (module in _TRUSTED_MODULES or module.startswith("torch.")):
        return False
    found: Any = _modules.get(module)
    for part in qualname.split("."):
        if _type(found) is _ModuleType:
            namespace = _module_namespace(found)
        elif _isinstance(found, type):
            namespace = _class_namespace(found)
        else:
            return False
        found = namespace.get(part)
    return found is kind


def describe(value: object, _depth: int = 0) -> list[Any]:
    """Plain evidence for ``value`` (see :mod:`autograder.checks.rules` for its shape)."""
    kind = _type(value)
    if _depth > _MAX_DEPTH:
        return ["other", "a value nested too deeply"]
    if value is None:
        return ["none"]
    if kind is bool or kind is int or kind is str:
        return [kind.__name__, value]
    if kind is float:
        return ["float", value if math.isfinite(value) else _float_repr(value)]
    if kind is list or kind is tuple:
        return [kind.__name__, [describe(item, _depth + 1) for item in value]]
    if kind is set or kind is frozenset:
        return ["set", [describe(item, _depth + 1) for item in value]]
    if kind is dict or kind is _Counter or kind is _defaultdict or kind is _OrderedDict:
        pairs = _dict_items(value)
        return ["dict", [[describe(k, _depth + 1), describe(v, _depth + 1)] for k, v in pairs]]
    if kind is _dtype:
        return ["dtype", str(value)]
    if kind is _device:
        return ["device", value.type]
    if kind is type:
        return ["type", type_label(value)]
    if kind is _Tensor or kind is _Parameter:  # by identity: a metaclass may define __eq__
        return ["tensor", _describe_tensor(value, kind)]
    if _isinstance(value, _Tensor):
        return ["tensor", {"class": type_label(kind), "unreadable": N_("not a plain tensor")}]
    return ["other", type_label(kind)]


def _describe_tensor(tensor: Any, kind: type) -> dict[str, Any]:
    facts: dict[str, Any] = {"class": type_label(kind)}
    if _function_modes() or _dispatch_modes():
        facts["unreadable"] = N_("a torch function or dispatch mode was left active")
        return facts
    with _torch_function_off():
        grad_fn = _grad_fn_of(tensor)
        facts.update(
            dtype=str(_dtype_of(tensor)),
            shape=list(_shape_of(tensor)),
            device=_device_of(tensor).type,
            requires_grad=bool(_requires_grad_of(tensor)),
            grad_fn=None if grad_fn is None else _type(grad_fn).__name__,
        )
        if facts["device"] == "meta":
            facts["unreadable"] = N_("a meta tensor holds no values")
            return facts
        if _numel(tensor) > MAX_ELEMENTS:
            facts["unreadable"] = N_("it has more than {limit} elements").format(limit=MAX_ELEMENTS)
            return facts
        # clone() materializes a lazy zero tensor (forward-mode AD returns one for a zero
        # derivative), whose storage tolist() refuses to read.
        flat = _tolist(_clone(_reshape(_cpu(_detach(tensor)), (-1,))))
    if flat and _type(flat[0]) is complex:
        facts["unreadable"] = N_("complex values are not compared")
        return facts
    facts["values"] = [
        x if _type(x) is not float or math.isfinite(x) else _float_repr(x) for x in flat
    ]
    return facts
