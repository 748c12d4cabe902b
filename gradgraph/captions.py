"""Explain one event in plain words.

>>> from gradgraph.events import Event, EventKind
>>> facts = {"slot": "result", "numel": 3, "dtype": "torch.float32", "bytes": 12, "alias": False}
>>> saved = Event(6, EventKind.SAVED, 3, "ExpBackward0", facts)
>>> caption(saved)
'ExpBackward0 saved its result (3 floats, 12 B): the derivative of exp is exp.'
>>> caption(Event(9, EventKind.BACKWARD, 3, "ExpBackward0", {"grad_fn": "ExpBackward0"}))
'Backward runs ExpBackward0: it turns the gradient of its output into the gradients of its inputs.'
"""

from __future__ import annotations

from collections.abc import Callable

from .events import Event, EventKind

__all__ = ["caption", "format_bytes"]

# Why a node keeps what it saves: the derivative it will compute needs it.
_WHY_SAVED = {
    "ExpBackward0": "the derivative of exp is exp",
    "MulBackward0": "d(a*b)/da = b and d(a*b)/db = a, so each factor is kept for the other",
    "DivBackward0": "d(a/b)/da = 1/b and d(a/b)/db = -a/b^2",
    "TanhBackward0": "the derivative of tanh is 1 - tanh^2",
    "SigmoidBackward0": "the derivative of sigmoid is s * (1 - s)",
    "ReluBackward0": "relu lets the gradient through only where its output is positive",
    "PowBackward0": "d(x^n)/dx = n * x^(n-1) needs x",
    "LogBackward0": "the derivative of log x is 1/x",
    "SinBackward0": "the derivative of sin is cos, which needs x",
    "CosBackward0": "the derivative of cos is -sin, which needs x",
    "SqrtBackward0": "the derivative of sqrt x is 1/(2 sqrt x)",
    "AddmmBackward0": "the gradient of a matrix product needs the other factor",
    "MmBackward0": "the gradient of a matrix product needs the other factor",
    "BmmBackward0": "the gradient of a matrix product needs the other factor",
    "SoftmaxBackward0": "the derivative of softmax is written with its output",
    "LogSoftmaxBackward0": "the derivative of log-softmax is written with its output",
}


def format_bytes(n: int) -> str:
    """``12`` -> ``"12 B"``, ``3072`` -> ``"3.0 KiB"``.

    >>> format_bytes(12), format_bytes(3072), format_bytes(5 * 2**20)
    ('12 B', '3.0 KiB', '5.0 MiB')
    """
    if n < 1024:
        return f"{n} B"
    if n < 2**20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 2**20:.1f} MiB"


def caption(event: Event) -> str:
    """One or two plain sentences about ``event``."""
    return _WRITERS[event.kind](event)


def _what(details: dict) -> str:
    slot = details["slot"]
    unit = "floats" if "float" in details["dtype"] else "values"
    thing = "its result" if slot == "result" else f"its input {slot!r}"
    return f"{thing} ({details['numel']} {unit}, {format_bytes(details['bytes'])})"


def _node(e: Event) -> str:
    d = e.details
    shape = "x".join(map(str, d.get("shape") or ())) or "scalar"
    if d.get("leaf"):
        kind = "Parameter" if d.get("parameter") else "Leaf"
        return f"{kind} {e.name!r} ({shape}) joins the graph: its gradients will add up in .grad."
    if d.get("during_backward"):
        return f"Backward built {e.name} (create_graph): a node of the second-order graph."
    made_by = f"{d['op']}() made {e.name}" if d.get("op") else f"{e.name} was made"
    where = f" at `{d['source'].split(': ', 1)[-1]}`" if d.get("source") else ""
    return f"{made_by} (output {shape}){where}."


def _saved(e: Event) -> str:
    why = _WHY_SAVED.get(e.name, "its backward formula needs it")
    alias = (
        " Same storage as a tensor already saved: no new memory." if e.details.get("alias") else ""
    )
    return f"{e.name} saved {_what(e.details)}: {why}.{alias}"


def _freed(e: Event) -> str:
    still = "" if e.details.get("released") else " (its storage is still saved by another node)"
    return f"{e.name} freed {_what(e.details)}: backward no longer needs it{still}."


def _backward(e: Event) -> str:
    if e.details.get("grad_fn") == "AccumulateGrad":
        return f"Backward reaches leaf {e.name!r}: its gradient is about to be added into .grad."
    turns = "it turns the gradient of its output into the gradients of its inputs"
    return f"Backward runs {e.name}: {turns}."


def _grad(e: Event) -> str:
    d = e.details
    norm = f" of norm {d['norm']:.4g}" if d.get("norm") is not None else ""
    if d.get("target") == "retained":
        return f"retain_grad: the output of {e.name} keeps its gradient{norm}."
    total = d.get("accumulated_norm")
    now = f"; .grad norm is now {total:.4g}" if total is not None else ""
    return f"A gradient{norm} arrived at {e.name!r}{now}."


def _hook(e: Event) -> str:
    d = e.details
    if d.get("target") == "module":
        return f"Module {d['module']!r}: your {d['kind']} ({d['hook']}) fired."
    return f"Your {d['kind']} ({d['hook']}) fired on the gradient flowing into {e.name}."


def _error(e: Event) -> str:
    first = e.details["message"].split(". ")[0].strip()
    return f"Error in {e.details['op']}: {first}."


_WRITERS: dict[EventKind, Callable[[Event], str]] = {
    EventKind.NODE: _node,
    EventKind.SAVED: _saved,
    EventKind.FREED: _freed,
    EventKind.BACKWARD: _backward,
    EventKind.GRAD: _grad,
    EventKind.HOOK: _hook,
    EventKind.ERROR: _error,
}
