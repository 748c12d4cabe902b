"""The recorder's event order against PyTorch itself.

Each program runs twice: once with plain hooks only, which note what PyTorch calls and in
which order (a node pre-hook on every node, a post-accumulate-grad hook on every leaf,
registered before any other), and once inside ``gradgraph.record()``. The recorder's
``backward``, ``grad`` and ``hook`` events must be exactly that sequence: a recorder that
reorders, drops or invents one fails here.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch.autograd.graph import get_gradient_edge

import gradgraph
from gradgraph import EventKind

Log = Callable[[str, str], None]
BeforeBackward = Callable[[torch.Tensor], None]


class Square(torch.autograd.Function):
    """A custom Function that saves its input."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def _net(log: Log) -> torch.nn.Sequential:
    """Linear-Tanh-Linear with module forward, backward pre- and full backward hooks."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    net[0].register_forward_pre_hook(lambda m, args: log("hook", "0 forward pre-hook"))
    net[1].register_forward_hook(lambda m, args, out: log("hook", "1 forward hook"))
    net[2].register_full_backward_pre_hook(lambda m, go: log("hook", "2 backward pre-hook"))
    net[2].register_full_backward_hook(lambda m, gi, go: log("hook", "2 backward hook"))
    return net


def every_hook_kind(net: torch.nn.Sequential, log: Log, before_backward: BeforeBackward) -> None:
    """Module hooks, a custom Function, retain_grad, a tensor hook that changes the gradient,
    a post-accumulate-grad hook, an in-place op, node pre- and post-hooks (on a built-in
    node and on a custom Function's), retain_graph."""
    x = torch.rand(2, 3, requires_grad=True)
    h = Square.apply(net(x))
    h.retain_grad()
    h.register_hook(lambda g: (log("hook", "SquareBackward"), g * 2)[1])
    net[0].weight.register_post_accumulate_grad_hook(lambda p: log("hook", "0.weight"))
    y = h.clone()
    y.mul_(3)
    loss = y.sum()
    # The recorder hooks each node as the op that made it returns, before the user can:
    # the plain hooks that note the truth go on first too.
    before_backward(loss)
    loss.grad_fn.register_prehook(lambda go: log("hook", "SumBackward0"))
    loss.grad_fn.register_hook(lambda gi, go: log("hook", "SumBackward0"))
    h.grad_fn.register_hook(lambda gi, go: log("hook", "SquareBackward"))
    for retain in (True, False):
        before_backward(loss)
        loss.backward(retain_graph=retain)


def second_order(net: torch.nn.Sequential, log: Log, before_backward: BeforeBackward) -> None:
    """create_graph: a gradient of a gradient, through nodes made during backward."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (net[1](x) ** 3).sum()
    before_backward(loss)
    (g,) = torch.autograd.grad(loss, x, create_graph=True)
    total = g.sum()
    before_backward(total)
    total.backward()


def leaf_hooks(net: torch.nn.Sequential, log: Log, before_backward: BeforeBackward) -> None:
    """Hooks on leaves: a post-accumulate-grad hook registered before the forward made the
    leaf's node, node pre- and post-hooks on a leaf's ``AccumulateGrad``; two backward
    calls, the first setting ``.grad``, the second adding to it."""
    net[2].bias.register_post_accumulate_grad_hook(lambda p: log("hook", "2.bias"))
    loss = net(torch.rand(2, 3)).sum()
    before_backward(loss)
    weight = get_gradient_edge(net[2].weight).node
    weight.register_prehook(lambda go: log("hook", "2.weight"))
    weight.register_hook(lambda gi, go: log("hook", "2.weight"))
    loss.backward(retain_graph=True)
    loss.backward()


PROGRAMS = [every_hook_kind, second_order, leaf_hooks]


def torch_order(program: Callable) -> list[tuple[str, str]]:
    """What PyTorch itself calls, seen through plain hooks only."""
    truth: list[tuple[str, str]] = []

    def log(kind: str, name: str) -> None:
        truth.append((kind, name))

    net = _net(log)
    leaf_names = {id(p): name for name, p in net.named_parameters()}
    for name, p in net.named_parameters():  # first: .grad is set before any user hook sees it
        p.register_post_accumulate_grad_hook(lambda t, n=name: log("grad", n))
    seen: set[int] = set()
    retained: dict[int, torch.Tensor] = {}

    def hook_new_nodes(root: torch.Tensor) -> None:
        stack = [root.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            variable = getattr(node, "variable", None)
            if variable is not None and id(variable) not in leaf_names:
                leaf_names[id(variable)] = "AccumulateGrad"
                variable.register_post_accumulate_grad_hook(lambda t: log("grad", "AccumulateGrad"))
            name = leaf_names[id(variable)] if variable is not None else type(node).__name__
            node.register_prehook(lambda go, n=name, node=node: on_node(n, node))
            stack.extend(child for child, _ in node.next_functions)

    def on_node(name: str, node: object) -> None:
        if id(node) in retained:  # the retained .grad is stored before the node runs
            log("grad", name)
        log("backward", name)

    original_retain = torch.Tensor.retain_grad

    def retain_grad(t: torch.Tensor) -> None:
        retained[id(t.grad_fn)] = t
        original_retain(t)

    torch.Tensor.retain_grad = retain_grad
    try:
        program(net, log, hook_new_nodes)
    finally:
        torch.Tensor.retain_grad = original_retain
    return truth


def recorded(program: Callable) -> gradgraph.Recording:
    net = _net(lambda kind, name: None)
    with gradgraph.record(net) as rec:
        program(net, lambda kind, name: None, lambda root: None)
    rec.close()
    return rec


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_recorder_order_is_torchs_order(program):
    truth = torch_order(program)
    rec = recorded(program)
    kinds = {EventKind.BACKWARD, EventKind.GRAD, EventKind.HOOK}
    seen = [(e.kind.value, e.name) for e in rec.events if e.kind in kinds]
    assert seen == truth


def test_frees_happen_inside_the_backward_of_the_node_that_saved():
    rec = recorded(every_hook_kind)
    running = None
    for e in rec.events:
        if e.kind is EventKind.BACKWARD:
            running = e.node
        elif e.kind is EventKind.FREED:
            assert e.node == running, f"{e} freed outside its node's backward"
            assert e.call is not None and e.call.number == 2  # only the call without retain_graph
    saved = sum(e.kind is EventKind.SAVED for e in rec.events)
    assert saved == sum(e.kind is EventKind.FREED for e in rec.events) > 0


def test_grad_events_show_what_dot_grad_holds_when_the_hooks_see_it():
    seen: list[float] = []
    net = _net(lambda kind, name: None)
    x = torch.rand(2, 3, requires_grad=True)
    with gradgraph.record(net) as rec:
        weight = net[0].weight
        weight.register_post_accumulate_grad_hook(lambda p: seen.append(float(p.grad.norm())))
        for _ in range(2):
            net(x).sum().backward()
    rec.close()
    grads = [e for e in rec.events if e.kind is EventKind.GRAD and e.name == "0.weight"]
    hooks = [e for e in rec.events if e.kind is EventKind.HOOK and e.name == "0.weight"]
    assert [e.details["accumulated_norm"] for e in grads] == pytest.approx(seen)
    assert all(g.index + 1 == h.index for g, h in zip(grads, hooks, strict=True))
    assert grads[1].details["accumulated_norm"] == pytest.approx(2 * grads[0].details["norm"])


def test_backward_calls_are_numbered_and_name_their_loss():
    rec = recorded(every_hook_kind)
    calls = {e.call for e in rec.events if e.call is not None}
    assert sorted((c.number, c.loss) for c in calls) == [(1, "loss"), (2, "loss")]
    assert all(e.call is None for e in rec.events if e.kind is EventKind.NODE)


def test_the_error_names_the_node_that_failed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with gradgraph.record(names={"x": x}) as rec:
        loss = x.exp().sum()
        loss.backward()
        with pytest.raises(RuntimeError, match="second time"):
            loss.backward()
    rec.close()
    error = rec.events[-1]
    assert error.kind is EventKind.ERROR and error.details["failed_node"] == "ExpBackward0"
    assert rec.events[error.node + 0].details["grad_fn"] == "ExpBackward0"  # node ids are indices
    assert error.call.number == 2 and error.call.loss == "loss"
