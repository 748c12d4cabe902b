"""Explain one event in plain words: each caption is one whole-sentence template of
``gradgraph.wording``, chosen by what happened and filled with the event's facts.

>>> from gradgraph.events import Event, EventKind
>>> facts = {"slot": "result", "numel": 3, "dtype": "torch.float32", "bytes": 12, "alias": False}
>>> saved = Event(6, EventKind.SAVED, 3, "ExpBackward0", facts)
>>> caption(saved)
'ExpBackward0 saved its result (3 floats, 12 B): the derivative of exp is exp.'
>>> caption(Event(9, EventKind.BACKWARD, 3, "ExpBackward0", {"grad_fn": "ExpBackward0"}))
'Backward runs ExpBackward0: it turns the gradient of its output into the gradients of its inputs.'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from autograder.i18n import gettext as _

from . import wording as w
from .events import Event, EventKind

__all__ = ["caption", "first_sentence", "format_bytes", "hook_kind"]


def format_bytes(n: int) -> str:
    """``12`` -> ``"12 B"``, ``3072`` -> ``"3.0 KiB"``.

    >>> format_bytes(12), format_bytes(3072), format_bytes(5 * 2**20)
    ('12 B', '3.0 KiB', '5.0 MiB')
    """
    if n < 1024:
        return _(w.SIZE_BYTES).format(n=n)
    if n < 2**20:
        return _(w.SIZE_KIB).format(n=n / 1024)
    return _(w.SIZE_MIB).format(n=n / 2**20)


def hook_kind(kind: str) -> str:
    """What the film calls a hook of the recording's ``kind`` ("tensor hook", ...)."""
    return _(w.HOOK_KINDS.get(kind, kind))


def caption(event: Event) -> str:
    """One or two plain sentences about ``event``."""
    return _WRITERS[event.kind](event)


def _tensor_facts(e: Event) -> dict[str, Any]:
    """The fields of a saved or freed tensor's sentence."""
    d = e.details
    count = _(w.FLOAT_COUNT) if "float" in d["dtype"] else _(w.VALUE_COUNT)
    return {
        "node": e.name,
        "slot": d["slot"],
        "values": count.format(count=d["numel"]),
        "size": format_bytes(d["bytes"]),
    }


def _node(e: Event) -> str:
    d = e.details
    shape = w.shape_text(d.get("shape"))
    if d.get("leaf"):
        joins = _(w.NODE_PARAMETER_JOINS) if d.get("parameter") else _(w.NODE_LEAF_JOINS)
        return joins.format(name=e.name, shape=shape)
    if d.get("during_backward"):
        return _(w.NODE_BUILT_BY_BACKWARD).format(node=e.name)
    source = d["source"].split(": ", 1)[-1] if d.get("source") else None
    templates = {
        (True, True): _(w.NODE_MADE_BY_OP_AT),
        (True, False): _(w.NODE_MADE_BY_OP),
        (False, True): _(w.NODE_MADE_AT),
        (False, False): _(w.NODE_MADE),
    }
    template = templates[(bool(d.get("op")), source is not None)]
    return template.format(op=d.get("op"), node=e.name, shape=shape, source=source)


def _saved(e: Event) -> str:
    template = _(w.SAVED_RESULT) if e.details["slot"] == "result" else _(w.SAVED_INPUT)
    why = _(w.WHY_SAVED.get(e.name, w.WHY_SAVED_DEFAULT))
    sentence = template.format(why=why, **_tensor_facts(e))
    if e.details.get("alias"):
        return _(w.SENTENCES).format(first=sentence, second=_(w.SAVED_ALIAS))
    return sentence


def _freed(e: Event) -> str:
    result, released = e.details["slot"] == "result", bool(e.details.get("released"))
    templates = {
        (True, True): _(w.FREED_RESULT),
        (False, True): _(w.FREED_INPUT),
        (True, False): _(w.FREED_RESULT_SHARED),
        (False, False): _(w.FREED_INPUT_SHARED),
    }
    return templates[(result, released)].format(**_tensor_facts(e))


def _backward(e: Event) -> str:
    if e.details.get("grad_fn") == "AccumulateGrad":
        return _(w.BACKWARD_REACHES_LEAF).format(name=e.name)
    return _(w.BACKWARD_RUNS).format(node=e.name)


def _grad(e: Event) -> str:
    d: Mapping[str, Any] = e.details
    norm, held = d.get("norm"), d.get("accumulated_norm")
    if d.get("target") == "retained":
        template = _(w.GRAD_RETAINED) if norm is None else _(w.GRAD_RETAINED_NORM)
        return template.format(node=e.name, norm=norm)
    templates = {
        (False, False): _(w.GRAD_ARRIVED),
        (True, False): _(w.GRAD_ARRIVED_NORM),
        (False, True): _(w.GRAD_ARRIVED_HELD),
        (True, True): _(w.GRAD_ARRIVED_NORM_HELD),
    }
    return templates[(norm is not None, held is not None)].format(name=e.name, norm=norm, held=held)


def _hook(e: Event) -> str:
    d = e.details
    fields = {"kind": hook_kind(d["kind"]), "hook": d["hook"], "node": e.name}
    if d.get("target") == "module":
        return _(w.HOOK_ON_MODULE).format(module=d["module"], **fields)
    if d.get("target") == "node":
        before = d["kind"] == "node pre-hook"
        return (_(w.HOOK_ON_NODE_BEFORE) if before else _(w.HOOK_ON_NODE_AFTER)).format(**fields)
    return _(w.HOOK_ON_TENSOR).format(**fields)


def _error(e: Event) -> str:
    return _(w.ERROR_IN).format(op=e.details["op"], message=first_sentence(e.details["message"]))


def first_sentence(message: str) -> str:
    """The first sentence of PyTorch's error text (what fits a caption or the header)."""
    return message.split(". ")[0].strip()


_WRITERS: dict[EventKind, Callable[[Event], str]] = {
    EventKind.NODE: _node,
    EventKind.SAVED: _saved,
    EventKind.FREED: _freed,
    EventKind.BACKWARD: _backward,
    EventKind.GRAD: _grad,
    EventKind.HOOK: _hook,
    EventKind.ERROR: _error,
}
