"""Which layers' train/eval mode a call changed.

A training step must leave each layer's ``training`` flag as its caller set it: ``model.train()``
switches every layer inside ``model``, and so undoes an ``eval()`` that the caller gave one
layer. :func:`train_modes` notes every layer's flag by its qualified name before the call, and
:func:`modes_changed` lists the layers whose flag differs afterwards (a layer added or removed
meanwhile counts as changed).

Example::

    >>> from torch import nn
    >>> head = nn.Sequential(nn.Dropout(0.5), nn.Linear(2, 1))
    >>> _ = head[0].eval()
    >>> before = train_modes("head", head)
    >>> before
    {'head': True, 'head.0': False, 'head.1': True}
    >>> _ = head.train()
    >>> modes_changed(before, train_modes("head", head))
    ['head.0']
"""

from __future__ import annotations

from torch import nn

__all__ = ["modes_changed", "train_modes"]

# Bound once at import: a later patch of nn.Module's method changes nothing here.
_named_modules = nn.Module.named_modules


def train_modes(label: str, model: nn.Module) -> dict[str, bool]:
    """Each layer's ``training`` flag in ``model``, keyed ``label`` for the model itself and
    ``label.name`` for the layer that ``model.named_modules()`` calls ``name``.

    >>> train_modes("D", nn.Sequential(nn.Linear(1, 1)).eval())
    {'D': False, 'D.0': False}
    """
    return {
        f"{label}.{name}" if name else label: bool(layer.training)
        for name, layer in _named_modules(model)
    }


def modes_changed(before: dict[str, bool], after: dict[str, bool]) -> list[str]:
    """The qualified names whose flag differs between ``before`` and ``after``, in the order
    of ``before`` (then the names only ``after`` has).

    >>> modes_changed({"G": True, "G.0": False}, {"G": True, "G.0": True})
    ['G.0']
    """
    names = [*before, *(name for name in after if name not in before)]
    return [name for name in names if before.get(name) != after.get(name)]
