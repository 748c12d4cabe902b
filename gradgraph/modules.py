"""What the recorder learns from ``torch.nn`` modules: parameter names, the module
running an op, and the firing of hooks the user registered on a module.

Nothing is installed for the first two. The module running an op is read off the call
stack: every module call runs ``Module.__call__``, and the innermost such frame holds
the module (its only locals are the module and the call's arguments: cheap to read).
Parameters are named after the outermost module on the stack when an op inside it is
first seen. (Putting a function in place of ``Module._call_impl`` for a block, to keep
a stack of module calls, costs more: Python forgets what it knew about each of torch's
module classes when it is set, and again when it is put back.)

>>> import sys, torch
>>> from gradgraph.modules import ModuleTracker
>>> from gradgraph.names import LeafNames
>>> names = LeafNames()
>>> tracker = ModuleTracker(names)
>>> class Spy(torch.nn.Module):
...     def forward(self, x):
...         return tracker.where(sys._getframe())
>>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), Spy())
>>> line, module = net(torch.ones(1, 2))
>>> module, names.get(net[0].weight), names.get(net[0].bias)
('1', '0.weight', '0.bias')
"""

from __future__ import annotations

from collections.abc import Callable
from types import FrameType
from typing import Any

import torch

from .names import LeafNames
from .source import SourceLine, walk_out

__all__ = ["ModuleTracker", "observe_module_hooks"]

_MODULE_CALL = torch.nn.Module.__call__.__code__  # what every module(...) call runs
_HOOK_DICTS = {
    "_forward_pre_hooks": "forward pre-hook",
    "_forward_hooks": "forward hook",
    "_backward_pre_hooks": "backward pre-hook",
    "_backward_hooks": "backward hook",
}


class ModuleTracker:
    """Names parameters after the outermost module called, and finds the module running
    an op.

    Names already given (by the learner) are kept. Walks go outwards from an op's caller
    and no further than :attr:`stop`, the frame that opened the recording while its block
    runs: modules that were running before the block are not the block's.
    """

    def __init__(self, leaf_names: LeafNames) -> None:
        self._leaf_names = leaf_names
        self._paths: dict[int, str] = {}  # id of a module -> its qualified name
        self.stop: FrameType | None = None

    def __repr__(self) -> str:
        return f"ModuleTracker({len(self._paths)} modules named)"

    def where(self, frame: FrameType | None) -> tuple[SourceLine | None, str | None]:
        """The learner's line that led to an op called from ``frame``, and the qualified
        name of the innermost module running it (None: none)."""
        line, call = walk_out(frame, _MODULE_CALL, self.stop)
        if call is None:
            return line, None
        module = call.f_locals["self"]
        path = self._paths.get(id(module))
        if path is None:  # the first op inside this module: name from the outermost one
            self.name_module(_outermost_call(call, self.stop).f_locals["self"])
            path = self._paths.setdefault(id(module), type(module).__name__)
        return line, path

    def name_module(self, module: torch.nn.Module, prefix: str = "") -> None:
        """Name ``module``'s parameters by their qualified names, after ``prefix``."""
        named: list[tuple[torch.Tensor, str]] = []  # named in one call, in this order
        _name_tree(module, prefix, self._paths, set(), named)
        self._leaf_names.setdefaults(named)


def _name_tree(
    module: torch.nn.Module,
    qualname: str,
    paths: dict[int, str],
    seen: set[int],
    named: list[tuple[torch.Tensor, str]],
) -> None:
    """Add ``module``'s path and those of its submodules to ``paths``, and their parameters
    to ``named``, in ``named_modules``' order (each module once, where it is first met)."""
    seen.add(id(module))
    paths.setdefault(id(module), qualname or type(module).__name__)
    dot = qualname + "." if qualname else ""
    for name, parameter in module._parameters.items():
        if parameter is not None:
            named.append((parameter, dot + name))
    for name, child in module._modules.items():
        if child is not None and id(child) not in seen:
            _name_tree(child, dot + name, paths, seen, named)


def _outermost_call(call: FrameType, stop: FrameType | None) -> FrameType:
    """The outermost frame running ``Module.__call__`` from ``call`` (one) out to ``stop``."""
    frame = call.f_back
    while frame is not None:
        if frame.f_code is _MODULE_CALL:
            call = frame
        if frame is stop:
            break
        frame = frame.f_back
    return call


def observe_module_hooks(
    modules: tuple[torch.nn.Module, ...], on_fire: Callable[[str, str, str], None]
) -> Callable[[], None]:
    """Wrap the hooks registered on ``modules`` (and their submodules) until the function
    returned is called, which puts the module's own hooks back.

    Each wrapped hook calls ``on_fire(module name, hook kind, hook name)`` and then the
    user's hook. Backward hooks are captured by PyTorch at forward time, so those of a
    forward run while they are wrapped stay observed for a later backward.
    """
    wrapped_hooks: list[tuple[dict, int, Callable, Callable]] = []

    def restore() -> None:
        for table, key, hook, wrapped in wrapped_hooks:
            if table.get(key) is wrapped:
                table[key] = hook

    for root in modules:
        for qualname, module in root.named_modules():
            for attr, kind in _HOOK_DICTS.items():
                table = getattr(module, attr)
                for key, hook in list(table.items()):
                    wrapped = _observed(hook, qualname or type(module).__name__, kind, on_fire)
                    table[key] = wrapped
                    wrapped_hooks.append((table, key, hook, wrapped))
    return restore


def _observed(
    hook: Callable, module_name: str, kind: str, on_fire: Callable[[str, str, str], None]
) -> Callable:
    hook_name = getattr(hook, "__name__", repr(hook))

    def observed(*args: Any, **kwargs: Any) -> Any:
        on_fire(module_name, kind, hook_name)
        return hook(*args, **kwargs)

    return observed
