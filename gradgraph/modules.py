"""What the recorder learns from ``torch.nn`` modules: parameter names, the module
being run, and the firing of hooks the user registered on a module.

>>> import torch
>>> from gradgraph.modules import ModuleTracker
>>> from gradgraph.names import LeafNames
>>> names = LeafNames()
>>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
>>> tracker = ModuleTracker(names)
>>> uninstall = tracker.install()
>>> _ = net(torch.ones(1, 2))
>>> uninstall()
>>> names.get(net[0].weight), names.get(net[0].bias)
('0.weight', '0.bias')
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch

from .names import LeafNames
from .source import SourceLine, resolve_frames, source_line_from

__all__ = ["ModuleTracker", "observe_module_hooks"]

_get_ident = threading.get_ident
_getframe = sys._getframe
_HOOK_DICTS = {
    "_forward_pre_hooks": "forward pre-hook",
    "_forward_hooks": "forward hook",
    "_backward_pre_hooks": "backward pre-hook",
    "_backward_hooks": "backward hook",
}


class ModuleTracker:
    """Names parameters after the outermost module called, and tracks the module stack.

    Names already given (by the learner) are kept. While installed, every module call on
    the recording's thread goes through :meth:`install`'s ``Module._call_impl``, which
    keeps the stack; module hooks would do the same but send every module call down
    PyTorch's slow path. Each entry also remembers the learner's line that called the
    module: the walk for an op's line stops at the innermost module call (see
    ``gradgraph.source``).
    """

    def __init__(self, leaf_names: LeafNames) -> None:
        self._leaf_names = leaf_names
        self._paths: dict[int, str] = {}
        self._stack: list[tuple[str, SourceLine | None]] = []  # (qualified name, calling line)
        self._owner = threading.get_ident()

    def __repr__(self) -> str:
        return f"ModuleTracker(depth={len(self._stack)})"

    def current_path(self) -> str | None:
        """Qualified name of the module running now (forward, main thread), or None."""
        if threading.get_ident() != self._owner or not self._stack:
            return None
        return self._stack[-1][0]

    def name_module(self, module: torch.nn.Module, prefix: str = "") -> None:
        """Name ``module``'s parameters by their qualified names, after ``prefix``."""
        names, paths = self._leaf_names, self._paths
        # the modules in named_modules' order (each once, where it is first met), walked
        # with a stack: its nested generators cost more than the naming itself
        seen: set[int] = set()
        todo = [(prefix, module)]
        while todo:
            qualname, sub = todo.pop()
            key = id(sub)
            if key in seen:
                continue
            seen.add(key)
            if key not in paths:
                paths[key] = qualname or type(sub).__name__
            dot = f"{qualname}." if qualname else ""
            params = sub._parameters
            if params:
                names.setdefaults([(p, dot + n) for n, p in params.items() if p is not None])
            children = sub._modules
            if children:
                todo += reversed([(dot + n, c) for n, c in children.items() if c is not None])

    def install(self) -> Callable[[], None]:
        """Track module calls until the function returned is called."""
        original = torch.nn.Module._call_impl
        stack, paths, owner = self._stack, self._paths, self._owner

        def tracked_call(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            if _get_ident() != owner:
                return original(module, *args, **kwargs)
            if not stack and id(module) not in paths:
                self.name_module(module)
            # the calling line, found before the push: a walk that meets a module call
            # in between (the parent's) takes the parent's line from the top of the stack
            line = source_line_from(_getframe(1))
            stack.append((paths.get(id(module)) or type(module).__name__, line))
            try:
                return original(module, *args, **kwargs)
            finally:
                stack.pop()

        def uninstall() -> None:
            torch.nn.Module._call_impl = original
            forget_frames()

        torch.nn.Module._call_impl = tracked_call  # __call__'s slot: costly to reassign
        forget_frames = resolve_frames(tracked_call.__code__, self._calling_line)
        return uninstall

    def _calling_line(self, frame: FrameType) -> SourceLine | None:
        """The learner's line that called the module whose call ``frame`` runs: on the
        tracker's thread, the innermost module call is the top of the stack."""
        if _get_ident() != self._owner or not self._stack:
            return source_line_from(frame.f_back)
        return self._stack[-1][1]


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
