"""Count what autograd ran, through hooks that the code under test can neither remove nor edit.

A test that counts backward passes with hooks on the tensors and modules it hands to a
learner's function (``p.register_hook``, ``module.register_forward_hook``) keeps the count
where that function can reach it: the hooks sit in ``p._backward_hooks`` and
``module._forward_hooks``, and what they collected in their closures. Code that empties those
tables while it runs, or edits what a hook collected, makes the count say what it likes.

Inside :func:`count_runs` the counting is done by hooks on autograd nodes instead
(``node.register_hook``, ``register_prehook``): torch keeps those to itself (no attribute lists
them), and so the code never holds them or what they count. A leaf's gradient arrivals are
counted on its ``AccumulateGrad`` node (with whether the backward call kept its graph, as
``retain_graph=True`` does); a module's backward passes on the node that made each
of its outputs, hooked when the module returns it. What the code can still reach only adds to a
count: a tensor hook on each leaf, for gradients that ``torch.autograd.grad`` takes without
running the leaf's node (a leaf counts the larger of the two), and the forward hook that finds
the outputs (calling it by hand hooks one node more). Both send to generators, whose counts
live in frames a notebook cannot read in the grading worker, and nothing that runs during the
call looks up a global of this module, where a notebook could change a name for as long as its
own call lasts. The block fails the item when one of its
hooks was taken away before it ended, as emptying a hook table does. What it cannot see is a
forward hook taken away and put back before the block ends: the outputs made meanwhile go
uncounted (the leaves' counts do not depend on it), so a test that can also tell the answer by
its values should.

Example::

    >>> import torch
    >>> layer = torch.nn.Linear(3, 2)
    >>> with count_runs("demo", leaves=layer.parameters(), modules=[layer]) as runs:
    ...     out = layer(torch.ones(1, 3))
    ...     out.sum().backward(retain_graph=True)
    ...     out.sum().backward()
    >>> runs.arrivals(), runs.arrivals(layer.bias), runs.passes(), runs.kept_graph()
    (4, 2, 2, True)
    >>> with count_runs("demo", leaves=layer.parameters()) as runs:
    ...     layer.weight._backward_hooks.clear()
    Traceback (most recent call last):
    ...
    autograder.checks.CheckFailed: `demo` took away a hook the test had put on what it gave ...
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from typing import Any

import torch
from torch.autograd.graph import get_gradient_edge

from autograder.checks.records import CHECK_BEGINS, checkpoint, decide

__all__ = ["Runs", "count_runs"]

# Bound once at import: a later patch of torch's names changes none of these.
_gradient_edge = get_gradient_edge
_Tensor = torch.Tensor
_grad_fn_of = torch._C.TensorBase.grad_fn.__get__
_requires_grad_of = torch._C.TensorBase.requires_grad.__get__
_register_tensor_hook = torch.Tensor.register_hook
_register_forward_hook = torch.nn.Module.register_forward_hook
_instance_namespace = object.__getattribute__
_dict_values = dict.values
# whether the backward call running now keeps its graph (retain_graph or create_graph); private
# in torch, so looked up defensively (without it, no call is seen to keep its graph)
_keeps_graph = getattr(torch._C._autograd, "_get_current_graph_task_keep_graph", lambda: False)
_type, _len, _max, _isinstance = type, len, max, isinstance
_HOOK_TABLES = (dict, OrderedDict)


class Runs:
    """What autograd ran inside :func:`count_runs`."""

    def __init__(
        self, leaves: list[tuple[Any, list[bool], Any]], outputs: Any, read: object
    ) -> None:
        # per leaf: (the leaf, per run of its node whether the backward call kept its graph,
        # the tally of its tensor hook's calls)
        self._leaves = leaves
        self._outputs = outputs  # the ledger of the outputs' nodes (see _ledger)
        self._read = read  # what asks the ledger: held here and in the block only

    def __repr__(self) -> str:
        return f"Runs({self.arrivals()} arrivals, {self.passes()} passes)"

    def arrivals(self, leaf: torch.Tensor | None = None) -> int:
        """How many gradients reached ``leaf`` (None: the leaves, summed)."""
        return sum(
            _max(_len(executed), tally.send(self._read))
            for watched, executed, tally in self._leaves
            if leaf is None or watched is leaf
        )

    def kept_graph(self) -> bool:
        """Whether a backward call that ran a leaf's node kept its graph (``retain_graph=True``,
        or ``create_graph=True``)."""
        return any(any(executed) for _, executed, _ in self._leaves)

    def passes(self) -> int:
        """How many times backward ran through the modules' outputs, summed over the outputs."""
        return sum(count for _, count in self._outputs.send(self._read))

    def nodes_that_ran(self) -> list[Any]:
        """The nodes that made the modules' outputs and that backward ran through."""
        return [node for node, count in self._outputs.send(self._read) if count]


@contextmanager
def count_runs(
    name: str, *, leaves: Iterable[torch.Tensor] = (), modules: Iterable[torch.nn.Module] = ()
) -> Iterator[Runs]:
    """Count, in the :class:`Runs` yielded, the gradients that reach each of ``leaves`` and
    the backward passes through each output of ``modules`` inside the block (see the module's
    text); ``name``: the learner's function the block calls, as failure messages name it."""
    read, close = object(), object()  # only this frame and the Runs hold them
    outputs = _ledger(read, close)
    next(outputs)
    counted: list[tuple[Any, list[bool], Any]] = []
    nodes: list[Any] = []  # each leaf's AccumulateGrad, kept alive: the leaf holds it weakly
    handles: list[Any] = []
    kept: list[tuple[str, Any, str, Any]] = []  # (kind, owner, its hook table, the hook)
    try:
        for leaf in leaves:
            executed: list[bool] = []
            tally = _tally(read)
            next(tally)
            counted.append((leaf, executed, tally))
            node = _gradient_edge(leaf).node
            nodes.append(node)
            handles.append(node.register_hook(partial(_ran, executed, _keeps_graph)))
            hook = tally.send  # called with the gradient: one more, and it answers None
            handles.append(_register_tensor_hook(leaf, hook))
            kept.append(("tensor", leaf, "_backward_hooks", hook))
        for module in modules:
            hook = _forward_hook(outputs.send)
            handles.append(_register_forward_hook(module, hook))
            kept.append(("module", module, "_forward_hooks", hook))
        runs = Runs(counted, outputs, read)
        yield runs
        checkpoint(CHECK_BEGINS)  # the check of the hooks begins
        taken = {kind for kind, owner, table, hook in kept if not _still_there(owner, table, hook)}
        try:
            runs.arrivals(), runs.passes()
        except (RuntimeError, StopIteration, ValueError, TypeError):  # a count closed
            taken.add("count")
        decide({"rule": "hooks_kept", "name": name, "taken": sorted(taken), "hint": None})
    finally:
        for handle in handles:
            handle.remove()
        with suppress(RuntimeError, StopIteration, ValueError, TypeError):
            outputs.send(close)


# What runs while the learner's code does (the hooks, and the generators they send to) looks up
# no global: code that reaches this module's namespace (through a function of it) and changes a
# name there for as long as its own call lasts changes nothing they do.


def _ran(executed: list[bool], keeps_graph: Any, grad_inputs: Any, grad_outputs: Any) -> None:
    """A leaf node's post-hook: one more run, and whether its backward call keeps the graph."""
    executed.append(keeps_graph())


def _tally(read: object) -> Generator[int | None, Any, None]:
    """A count in a generator's frame: sent ``read``, it answers the count; sent anything
    else, it adds one and answers None. Nothing takes one away."""
    count = 0
    answer = None
    while True:
        message = yield answer
        if message is read:
            answer = count
        else:
            count += 1
            answer = None


def _forward_hook(send: Any) -> Any:
    """A forward hook that sends each output to a :func:`_ledger` (through ``send``)."""

    def found(module: torch.nn.Module, inputs: Any, output: Any) -> None:
        send(output)

    return found


def _ledger(
    read: object,
    close: object,
    _tensor=_Tensor,  # noqa: ANN001 - bound for good here, with the rest (see above)
    _isinstance=_isinstance,  # noqa: ANN001
    _requires_grad_of=_requires_grad_of,  # noqa: ANN001
    _grad_fn_of=_grad_fn_of,  # noqa: ANN001
    _len=_len,  # noqa: ANN001
    _none=None,  # noqa: ANN001
) -> Generator[Any, Any, None]:
    """The nodes of the modules' outputs, each with a count of backward's runs through it, in a
    generator's frame. Sent an output that needs a gradient, it hooks the output's node; sent
    ``read``, it answers ``[(node, runs), ...]``; sent ``close``, it removes its hooks (and hooks
    no more nodes). Anything else it is sent changes nothing."""
    found: list[tuple[Any, list[int], Any]] = []
    open_ = True
    answer: Any = _none
    while True:
        message = yield answer
        answer = _none
        if message is read:
            answer = [(node, _len(ran)) for node, ran, _ in found]
        elif message is close:  # the block ended: what ran after it is not counted
            open_ = False
            for _, _, handle in found:
                handle.remove()
        elif open_ and _isinstance(message, _tensor) and _requires_grad_of(message):
            node = _grad_fn_of(message)
            if node is not _none:
                ran: list[int] = []
                handle = node.register_prehook(lambda grad_out, _r=ran: _r.append(1))
                found.append((node, ran, handle))
            node = ran = handle = _none
        message = _none


def _still_there(owner: Any, table: str, hook: Any) -> bool:
    """Whether ``hook`` is still in ``owner``'s hook table ``table`` (read without running any
    of the owner's code)."""
    try:
        hooks = _instance_namespace(owner, table)
    except AttributeError:
        return False
    if _type(hooks) not in _HOOK_TABLES:
        return False
    return any(value is hook for value in _dict_values(hooks))
