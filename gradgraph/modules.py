"""What the recorder learns from ``torch.nn`` modules: parameter names, the module
being run, and the firing of hooks the user registered on a module.

>>> import torch
>>> from gradgraph.modules import ModuleTracker
>>> from gradgraph.names import LeafNames
>>> names = LeafNames()
>>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
>>> tracker = ModuleTracker(names)
>>> with tracker.installed():
...     _ = net(torch.ones(1, 2))
>>> names.get(net[0].weight), names.get(net[0].bias)
('0.weight', '0.bias')
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

from .names import LeafNames

__all__ = ["ModuleTracker", "observe_module_hooks"]

_HOOK_DICTS = {
    "_forward_pre_hooks": "forward pre-hook",
    "_forward_hooks": "forward hook",
    "_backward_pre_hooks": "backward pre-hook",
    "_backward_hooks": "backward hook",
}


class ModuleTracker:
    """Names parameters after the outermost module called, and tracks the module stack.

    Names already given (by the learner) are kept.
    """

    def __init__(self, leaf_names: LeafNames) -> None:
        self._leaf_names = leaf_names
        self._paths: dict[int, str] = {}
        self._stack: list[str] = []
        self._owner = threading.get_ident()

    def __repr__(self) -> str:
        return f"ModuleTracker(depth={len(self._stack)})"

    def current_path(self) -> str | None:
        """Qualified name of the module running now (forward, main thread), or None."""
        if threading.get_ident() != self._owner or not self._stack:
            return None
        return self._stack[-1]

    def name_module(self, module: torch.nn.Module, prefix: str = "") -> None:
        """Name ``module``'s parameters by their qualified names, after ``prefix``."""
        names, paths = self._leaf_names, self._paths
        for qualname, sub in module.named_modules(prefix=prefix):  # as named_parameters does
            paths.setdefault(id(sub), qualname or type(sub).__name__)
            for name, param in sub._parameters.items():
                if param is not None:
                    names.setdefault(param, f"{qualname}.{name}" if qualname else name)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Install the global module hooks for the duration of the block."""
        handles = [
            register_module_forward_pre_hook(self._enter),
            register_module_forward_hook(self._leave, always_call=True),
        ]
        try:
            yield
        finally:
            for handle in handles:
                handle.remove()

    def _enter(self, module: torch.nn.Module, args: Any) -> None:
        if threading.get_ident() != self._owner:
            return
        if not self._stack and id(module) not in self._paths:
            self.name_module(module)
        self._stack.append(self._paths.get(id(module), type(module).__name__))

    def _leave(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        if threading.get_ident() == self._owner and self._stack:
            self._stack.pop()


@contextlib.contextmanager
def observe_module_hooks(
    modules: tuple[torch.nn.Module, ...], on_fire: Callable[[str, str, str], None]
) -> Iterator[None]:
    """Wrap the hooks registered on ``modules`` (and their submodules) for the block.

    Each wrapped hook calls ``on_fire(module name, hook kind, hook name)`` and then the
    user's hook. Backward hooks are captured by PyTorch at forward time, so those of a
    forward run inside the block stay observed for a later backward. The module's own
    hook tables are restored when the block ends.
    """
    restore: list[tuple[dict, int, Callable, Callable]] = []
    try:
        for root in modules:
            for qualname, module in root.named_modules():
                for attr, kind in _HOOK_DICTS.items():
                    table = getattr(module, attr)
                    for key, hook in list(table.items()):
                        wrapped = _observed(hook, qualname or type(module).__name__, kind, on_fire)
                        table[key] = wrapped
                        restore.append((table, key, hook, wrapped))
        yield
    finally:
        for table, key, hook, wrapped in restore:
            if table.get(key) is wrapped:
                table[key] = hook


def _observed(
    hook: Callable, module_name: str, kind: str, on_fire: Callable[[str, str, str], None]
) -> Callable:
    hook_name = getattr(hook, "__name__", repr(hook))

    def observed(*args: Any, **kwargs: Any) -> Any:
        on_fire(module_name, kind, hook_name)
        return hook(*args, **kwargs)

    return observed
