"""Event sequences, oracles and misuse of gradgraph's recorder (CPU, real autograd)."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest
import torch
from torch.autograd.graph import get_gradient_edge

import gradgraph
from gradgraph import EventKind

SECOND_BACKWARD = "backward through the graph a second time"


def kinds_and_names(recording: gradgraph.Recording) -> list[tuple[str, str]]:
    return [(e.kind.value, e.name) for e in recording.events]


def of_kind(recording: gradgraph.Recording, kind: EventKind) -> list:
    return [e for e in recording.events if e.kind is kind]


@pytest.fixture
def xw() -> tuple[torch.Tensor, torch.Tensor]:
    return (
        torch.tensor([1.0, 2.0, 3.0], requires_grad=True),
        torch.tensor([0.5, -0.5, 0.25], requires_grad=True),
    )


FORWARD_EXP = [
    ("node", "x"),
    ("node", "w"),
    ("node", "MulBackward0"),
    ("saved", "MulBackward0"),
    ("saved", "MulBackward0"),
    ("node", "ExpBackward0"),
    ("saved", "ExpBackward0"),
    ("node", "SumBackward0"),
]
BACKWARD_KEEP = [
    ("backward", "SumBackward0"),
    ("backward", "ExpBackward0"),
    ("backward", "MulBackward0"),
    ("backward", "x"),
    ("grad", "x"),
    ("backward", "w"),
    ("grad", "w"),
]
BACKWARD_FREE = [
    ("backward", "SumBackward0"),
    ("backward", "ExpBackward0"),
    ("freed", "ExpBackward0"),
    ("backward", "MulBackward0"),
    ("freed", "MulBackward0"),
    ("freed", "MulBackward0"),
    ("backward", "x"),
    ("grad", "x"),
    ("backward", "w"),
    ("grad", "w"),
]


def test_exp_sum_one_backward_exact_sequence(xw):
    x, w = xw
    with gradgraph.record(names={"x": x, "w": w}) as rec:
        (x * w).exp().sum().backward()
    assert kinds_and_names(rec) == FORWARD_EXP + BACKWARD_FREE
    saved = of_kind(rec, EventKind.SAVED)
    assert [e.details["slot"] for e in saved] == ["other", "self", "result"]
    assert all(e.details["bytes"] == 12 and e.details["shape"] == (3,) for e in saved)
    assert saved[-1].memory.saved_bytes == 36
    assert rec.events[-1].memory.saved_bytes == 0
    node = of_kind(rec, EventKind.NODE)[3]
    assert node.details["op"] == "exp" and "exp()" in node.details["source"]
    assert node.details["dtype"] == "torch.float32" and node.details["device"] == "cpu"
    assert all(e.memory.allocator_bytes is None for e in rec.events)  # CPU has no allocator figure
    rec.close()


class _Block(torch.nn.Module):
    """A learner's module: ops in its forward belong to its own lines."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inner(x)  # the Sequential's ops: this line
        return h.exp()  # an op of its own: this line


def test_an_op_inside_modules_is_labelled_with_the_learners_line_that_led_to_it():
    net = torch.nn.Sequential(_Block(), torch.nn.Linear(2, 1))
    with gradgraph.record(net) as rec:
        out = net(torch.ones(1, 2))  # the outer Linear's op: this line
        out.sum().backward()
    ops = {
        (e.details["op"], e.details["module"]): e.details["source"]
        for e in of_kind(rec, EventKind.NODE)
        if e.details["op"] is not None
    }
    assert "h = self.inner(x)" in ops[("linear", "0.inner.0")]
    assert "h = self.inner(x)" in ops[("tanh", "0.inner.1")]
    assert "return h.exp()" in ops[("exp", "0")]
    assert "out = net(torch.ones(1, 2))" in ops[("linear", "1")]
    assert "out.sum().backward()" in ops[("sum", None)]
    assert torch.nn.Module._call_impl is torch.nn.Module.__dict__["_call_impl"]
    rec.close()


def test_module_tracking_changes_nothing_in_torch_and_ends_with_the_block_even_when_it_raises():
    original = dict(vars(torch.nn.Module))
    with pytest.raises(ValueError), gradgraph.record():
        assert dict(vars(torch.nn.Module)) == original  # modules are read off the stack
        raise ValueError("learner's mistake")
    assert dict(vars(torch.nn.Module)) == original
    assert torch.nn.Linear(2, 2)(torch.ones(2)).shape == (2,)


class _Recorder(torch.nn.Module):
    """A module whose forward records a block and runs a layer it makes on the spot."""

    def forward(self, x: torch.Tensor) -> gradgraph.Recording:
        with gradgraph.record() as rec:
            y = torch.nn.Tanh()(x)  # a module that belongs to no tree
            y.exp().sum().backward()
        rec.close()
        return rec


def test_modules_running_before_the_block_are_not_the_blocks_and_a_loose_module_has_its_type():
    rec = torch.nn.Sequential(_Recorder())(torch.ones(2, requires_grad=True))
    nodes = of_kind(rec, EventKind.NODE)
    modules = {e.details["op"]: e.details["module"] for e in nodes if e.details["op"]}
    assert modules == {"tanh": "Tanh", "exp": None, "sum": None}


def test_retain_graph_then_free_then_error(xw):
    x, w = xw
    with gradgraph.record(names={"x": x, "w": w}) as rec:
        loss = (x * w).exp().sum()
        loss.backward(retain_graph=True)
        loss.backward()
        with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
            loss.backward()
    assert kinds_and_names(rec) == (
        FORWARD_EXP
        + BACKWARD_KEEP
        + BACKWARD_FREE
        + [("backward", "SumBackward0"), ("backward", "ExpBackward0"), ("error", "RuntimeError")]
    )
    error = rec.events[-1]
    assert SECOND_BACKWARD in error.details["message"] and error.details["op"] == "backward"
    rec.close()


def test_backward_after_block_is_recorded_and_close_stops_it(xw):
    x, w = xw
    with gradgraph.record(names={"x": x, "w": w}) as rec:
        loss = (x * w).exp().sum()
    loss.backward(retain_graph=True)
    assert kinds_and_names(rec) == FORWARD_EXP + BACKWARD_KEEP
    loss.backward()
    assert kinds_and_names(rec)[-len(BACKWARD_FREE) :] == BACKWARD_FREE
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        rec.backward(loss)  # after the block, rec.backward records the error too
    assert rec.events[-1].kind is EventKind.ERROR
    assert SECOND_BACKWARD in rec.events[-1].details["message"]
    count = len(rec)
    rec.close()
    assert rec.closed
    x.grad = None
    y = (x * w).sum()
    y.backward()
    assert len(rec) == count
    assert x.grad is not None  # closing removed only the recording's hooks


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_a_saved_tensors_values_and_bytes_are_torchs_own(dtype):
    """numel and bytes are worked out from the shape and dtype when the events are read:
    they must be what torch itself says, for views and for every element size."""
    base = torch.rand(4, 6, dtype=dtype, requires_grad=True)
    view = base[1:, ::2]  # a strided view: 3 x 3 values of a 4 x 6 storage
    with gradgraph.record() as rec:
        (view * view.detach().t()).sum()
    saved = of_kind(rec, EventKind.SAVED)
    assert saved, "mul saves its operands"
    operand = view.detach()
    for e in saved:
        assert e.details["shape"] == (3, 3)
        assert e.details["numel"] == operand.numel() == 9
        assert e.details["bytes"] == operand.numel() * operand.element_size()
        assert e.details["dtype"] == str(dtype)
    rec.close()


def test_every_nodes_output_facts_are_torchs_own_also_for_nodes_made_inside_an_op():
    """linear makes TBackward0 and AddmmBackward0 in one call: the output of the one inside
    is read from torch's own record of it when the events are read, the same plain values."""
    weight = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
    inputs = torch.rand(4, 3, dtype=torch.float64)
    with gradgraph.record() as rec:
        out = torch.nn.functional.linear(inputs, weight, torch.zeros(2, dtype=torch.float64))
    nodes = {e.name: e.details for e in of_kind(rec, EventKind.NODE)}
    transposed = out.grad_fn.next_functions[2][0]
    assert type(transposed).__name__ == "TBackward0" and "TBackward0" in nodes
    expected = {"TBackward0": weight.t(), "AddmmBackward0": out}
    for name, tensor in expected.items():
        assert nodes[name]["shape"] == tuple(tensor.shape)
        assert type(nodes[name]["shape"]) is tuple
        assert nodes[name]["dtype"] == str(tensor.dtype) and nodes[name]["device"] == "cpu"
    rec.close()


def mlp() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))


def test_mlp_parameter_names_and_grad_oracle():
    net = mlp()
    inputs = torch.rand(5, 3)
    with gradgraph.record() as rec:
        net(inputs).pow(2).mean().backward()
    leaves = [e.name for e in of_kind(rec, EventKind.NODE) if e.details["leaf"]]
    assert sorted(leaves) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    assert all(e.details["parameter"] for e in of_kind(rec, EventKind.NODE) if e.details["leaf"])
    grads = {e.name: e.details for e in of_kind(rec, EventKind.GRAD)}
    params = dict(net.named_parameters())
    assert set(grads) == set(params)
    for name, details in grads.items():
        assert details["norm"] == pytest.approx(params[name].grad.norm().item(), rel=1e-6)
        assert details["accumulated_norm"] == pytest.approx(
            params[name].grad.norm().item(), rel=1e-6
        )
    modules = {e.details["module"] for e in of_kind(rec, EventKind.NODE)}
    assert {"0", "1", "2"} <= modules
    rec.close()


def test_parameter_names_come_from_the_modules_passed_or_given_names():
    net = mlp()
    x = torch.rand(2, 3, requires_grad=True)
    with gradgraph.record(net, names={"x": x, "first": net[0].weight}) as rec:
        net[2](net[1](net[0](x))).sum()  # submodules called one by one
    leaves = [e.name for e in of_kind(rec, EventKind.NODE) if e.details["leaf"]]
    assert sorted(leaves) == ["0.bias", "2.bias", "2.weight", "first", "x"]
    rec.close()


def test_leaf_grad_oracle_and_accumulation(xw):
    x, w = xw
    with gradgraph.record(names={"x": x}) as rec:
        (x * w).sum().backward()
        (x * x).sum().backward()
    x_grads = [e.details for e in of_kind(rec, EventKind.GRAD) if e.name == "x"]
    assert x_grads[0]["norm"] == pytest.approx(w.norm().item())
    assert x_grads[1]["norm"] == pytest.approx((2 * x).norm().item())
    assert x_grads[1]["accumulated_norm"] == pytest.approx(x.grad.norm().item())
    rec.close()


@pytest.mark.parametrize("budget", [0, 16 * 2**20], ids=["computed in the hook", "read later"])
def test_the_norm_of_a_gradient_added_into_dot_grad_is_exact_either_way(monkeypatch, budget):
    monkeypatch.setattr(gradgraph.recorder, "_LATE_NORM_BYTES", budget)
    net = torch.nn.Linear(4, 3)
    x = torch.rand(5, 4)
    net(x).pow(2).sum().backward()  # .grad already holds a gradient
    arriving = {name: p.grad.clone() for name, p in net.named_parameters()}
    for p in net.parameters():
        p.grad.mul_(-0.5)  # so that the two norms differ
    before = {name: p.grad.clone() for name, p in net.named_parameters()}
    with gradgraph.record(net) as rec:
        net(x).pow(2).sum().backward()
    grads = {e.name: e.details for e in of_kind(rec, EventKind.GRAD)}
    for name, p in net.named_parameters():
        assert grads[name]["norm"] == pytest.approx(arriving[name].norm().item())
        assert grads[name]["accumulated_norm"] == pytest.approx(p.grad.norm().item())
        assert p.grad.norm().item() != pytest.approx(arriving[name].norm().item())
        assert torch.allclose(p.grad, before[name] + arriving[name])
    rec.close()


def test_what_dot_grad_held_is_read_as_it_was_at_the_event_though_changed_after_the_call():
    """The norm of what .grad holds is computed in the leaf's hook: a clip that
    changes .grad in place after the call (and a later call adding into it) leave each
    event's figure as it was, whether .grad was None before or already held a gradient."""
    torch.manual_seed(0)
    net = torch.nn.Linear(4, 3)
    x = torch.rand(5, 4)
    with gradgraph.record(net) as rec:
        net(x).pow(2).sum().backward()  # .grad was None: it becomes the gradient
        first = {name: p.grad.norm().item() for name, p in net.named_parameters()}
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1e-3)  # in place
        net(2 * x).pow(2).sum().backward()  # added into the clipped .grad
    second = {name: p.grad.norm().item() for name, p in net.named_parameters()}
    events = of_kind(rec, EventKind.GRAD)
    assert len(events) == 4
    for event in events:
        expected = first if event.call.number == 1 else second
        assert event.details["accumulated_norm"] == pytest.approx(expected[event.name])
    assert all(second[name] != pytest.approx(first[name]) for name in first)  # they differ
    rec.close()


def test_sparse_gradients_are_recorded_with_their_norms_and_backward_still_runs():
    """nn.Embedding(sparse=True): the second backward adds a sparse gradient into .grad."""
    torch.manual_seed(0)
    table = torch.nn.Embedding(6, 3, sparse=True)
    rows = torch.tensor([1, 2, 1])
    with gradgraph.record(names={"table": table}) as rec:
        (table(rows) ** 2).sum().backward()
        first = table.weight.grad.to_dense().clone()
        (table(rows) ** 2).sum().backward()
    held = table.weight.grad.to_dense()
    grads = [e.details for e in of_kind(rec, EventKind.GRAD)]
    assert len(grads) == 2
    assert grads[0]["norm"] == pytest.approx(first.norm().item())
    assert grads[0]["accumulated_norm"] == pytest.approx(first.norm().item())
    assert grads[1]["norm"] == pytest.approx((held - first).norm().item())
    assert grads[1]["accumulated_norm"] == pytest.approx(held.norm().item())
    rec.close()


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors:UserWarning")
def test_a_nested_tensor_without_one_shape_is_recorded_without_breaking_the_program():
    """torch.nested tensors have no single shape: their facts say so (None), the learner's
    forward and backward run as without the recorder, and the film still plays."""
    parts = [torch.rand(2, 3), torch.rand(4, 3)]
    nested = torch.nested.nested_tensor(parts, requires_grad=True)
    with gradgraph.record(names={"a": nested}) as rec:
        torch.nested.to_padded_tensor((nested * nested).relu(), 0.0).sum().backward()
    expected = torch.nested.to_padded_tensor(nested.grad, 0.0).norm().item()
    (grad,) = of_kind(rec, EventKind.GRAD)
    assert grad.details["accumulated_norm"] == pytest.approx(expected)
    leaf = next(e for e in of_kind(rec, EventKind.NODE) if e.name == "a")
    assert leaf.details["shape"] is None and leaf.details["dtype"] == "torch.float32"
    saved = of_kind(rec, EventKind.SAVED)
    assert saved and all(e.details["bytes"] > 0 for e in saved)
    assert rec.play().slider.max == len(rec) - 1
    rec.close()


def test_a_gradient_without_values_to_read_shows_no_number_and_the_film_still_plays():
    """On the meta device a gradient has a shape but no values: its norms are None, and the
    leaf's badge shows no number rather than one it does not have."""
    x = torch.empty(3, device="meta", requires_grad=True)
    with gradgraph.record(names={"x": x}) as rec:
        (x * x).sum().backward()
    (grad,) = of_kind(rec, EventKind.GRAD)
    assert grad.details["norm"] is None and grad.details["accumulated_norm"] is None
    player = rec.play()
    assert all(not scene.grads for scene in player.frames.film.scenes)
    assert player.frames.svg(len(rec) - 1)  # the last frame draws
    rec.close()


def test_an_arriving_gradient_changed_before_the_events_are_read_shows_no_norm_not_a_wrong_one():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.grad = torch.ones(3)
    upstream = torch.tensor([3.0, 0.0, 4.0])
    with gradgraph.record(names={"x": x}) as rec:
        x.view(3).backward(upstream)  # the gradient reaching x is a view of `upstream`
    upstream.mul_(10)  # changed in place after backward, before anyone looked
    (grad,) = of_kind(rec, EventKind.GRAD)
    assert grad.details["norm"] in (None, pytest.approx(5.0))  # never 50
    assert grad.details["accumulated_norm"] == pytest.approx(x.grad.norm().item())
    rec.close()


def test_a_recording_lets_the_gradients_it_measures_go_once_its_events_are_read():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.grad = torch.ones(3)
    arrived: list[weakref.ref] = []
    x.register_hook(lambda g: arrived.append(weakref.ref(g)))
    with gradgraph.record(names={"x": x}) as rec:
        (x * torch.tensor([0.5, -0.5, 0.25])).sum().backward()
    assert [e.details["norm"] for e in of_kind(rec, EventKind.GRAD)] == [pytest.approx(0.75)]
    assert arrived[0]() is None
    rec.close()


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_a_create_graph_gradient_is_measured_at_once_and_not_held_with_its_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.grad = torch.ones(2)
    arrived: list[weakref.ref] = []
    x.register_hook(lambda g: arrived.append(weakref.ref(g)))
    with gradgraph.record(names={"x": x}) as rec:
        (x**3).sum().backward(create_graph=True)
    assert arrived[0]() is None  # no event read yet, and nothing holds it
    (grad,) = of_kind(rec, EventKind.GRAD)
    assert grad.details["norm"] == pytest.approx((3 * x**2).norm().item())
    rec.close()
    x.grad = None  # the cycle torch warns about: .grad's graph reaches x


def test_tensor_hook_and_module_hooks_fire_in_order():
    net = mlp()
    fired: list[str] = []
    net[1].register_forward_hook(lambda module, args, out: fired.append("forward"))

    def backward_hook(module, grad_input, grad_output):
        fired.append("backward")

    net[2].register_full_backward_hook(backward_hook)
    with gradgraph.record(net) as rec:
        out = net(torch.rand(2, 3)).sum()
        out.register_hook(lambda g: fired.append("tensor"))
        out.backward()
    hooks = [
        (e.details["target"], e.details["kind"], e.details.get("module"))
        for e in of_kind(rec, EventKind.HOOK)
    ]
    assert hooks == [
        ("module", "forward hook", "1"),
        ("tensor", "tensor hook", None),
        ("module", "backward hook", "2"),
    ]
    assert fired == ["forward", "tensor", "backward"]  # the user's hooks still ran
    tensor_hook = of_kind(rec, EventKind.HOOK)[1]
    first_backward = of_kind(rec, EventKind.BACKWARD)[0]
    assert tensor_hook.index < first_backward.index  # tensor hooks run before the node
    assert tensor_hook.name == first_backward.name == "SumBackward0"
    rec.close()
    assert all(getattr(h, "__name__", "") != "observed" for h in net[1]._forward_hooks.values())


def test_hooks_on_grad_fn_nodes_are_recorded_on_their_node_and_still_run(xw):
    x, w = xw
    fired: list[str] = []

    def before(grad_outputs):
        fired.append("pre")

    def after(grad_inputs, grad_outputs):
        fired.append("post")

    with gradgraph.record(names={"x": x, "w": w}) as rec:
        product = x * w
        loss = product.exp().sum()
        loss.grad_fn.register_prehook(before)
        handle = product.grad_fn.register_hook(after)
        loss.backward(retain_graph=True)
        handle.remove()  # the user's handle removes the hook the recorder wrapped
        loss.backward()
    # put back after the block: torch files node hooks through its own function again
    assert "_register_hook" not in torch.autograd.Function.__dict__
    assert "_register_hook" not in type(torch.autograd.Function).__dict__
    torch_own = torch.autograd.function._HookMixin._register_hook
    assert torch.autograd.Function._register_hook is torch_own
    hooks = [(e.name, e.details["target"], e.details["kind"], e.details["hook"])
             for e in of_kind(rec, EventKind.HOOK)]  # fmt: skip
    assert hooks == [
        ("SumBackward0", "node", "node pre-hook", "before"),
        ("MulBackward0", "node", "node post-hook", "after"),
        ("SumBackward0", "node", "node pre-hook", "before"),
    ]
    assert fired == ["pre", "post", "pre"]
    names = [(e.kind.value, e.name) for e in rec.events if e.kind.value in ("backward", "hook")]
    assert names[:4] == [
        ("backward", "SumBackward0"),
        ("hook", "SumBackward0"),  # after the node's turn began, before it ran
        ("backward", "ExpBackward0"),
        ("backward", "MulBackward0"),
    ]
    assert names[4] == ("hook", "MulBackward0")  # after MulBackward0 ran, before x's turn
    late = (x * w).sum()
    late.grad_fn.register_prehook(before)  # after the block: it runs, and is not recorded
    late.backward()
    assert fired[-1] == "pre" and len(of_kind(rec, EventKind.HOOK)) == 3
    rec.close()


def test_a_failure_names_the_node_that_failed_and_none_once_the_engine_finished(xw):
    x, w = xw

    class Broken(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError("Broken's backward raised")

    def failing(grad_inputs, grad_outputs):
        raise RuntimeError("the node hook raised")

    with gradgraph.record(names={"x": x, "w": w}) as rec:
        with pytest.raises(RuntimeError, match="Broken's backward raised"):
            Broken.apply(x).exp().sum().backward()
        product = x * w
        product.grad_fn.register_hook(failing)
        with pytest.raises(RuntimeError, match="the node hook raised"):
            product.sum().backward()
        with pytest.raises(RuntimeError, match="appears to not have been used"):
            torch.autograd.grad((x * 2).sum(), [x, w])  # raised after the engine ran
    failed = [e.details["failed_node"] for e in of_kind(rec, EventKind.ERROR)]
    assert failed == ["BrokenBackward", "MulBackward0", None]
    rec.close()


def test_create_graph_shows_second_order_nodes():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with gradgraph.record(names={"x": x}) as rec:
        (g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
        g.sum().backward()
    nodes = of_kind(rec, EventKind.NODE)
    second_order = [e.name for e in nodes if e.details["during_backward"]]
    assert second_order == ["PowBackward0", "MulBackward1", "MulBackward0"]
    first_backward = of_kind(rec, EventKind.BACKWARD)[0]
    assert all(e.index > first_backward.index for e in nodes if e.details["during_backward"])
    (grad_event,) = of_kind(rec, EventKind.GRAD)
    assert grad_event.details["norm"] == pytest.approx(x.grad.norm().item())  # d2/dx2 x^3 = 6x
    assert torch.equal(x.grad, 6 * x.detach())
    rec.close()


def test_frozen_layer_parameters_are_absent():
    net = mlp()
    for p in net[0].parameters():
        p.requires_grad_(False)
    with gradgraph.record() as rec:
        net(torch.rand(2, 3)).sum().backward()
    leaves = sorted(e.name for e in of_kind(rec, EventKind.NODE) if e.details["leaf"])
    assert leaves == ["2.bias", "2.weight"]
    rec.close()


def test_additions_only_backward_twice_no_free_no_error(xw):
    x, w = xw
    with gradgraph.record(names={"x": x, "w": w}) as rec:
        total = (x + w + 1).sum()
        total.backward()
        total.backward()
    kinds = {e.kind for e in rec.events}
    assert (
        EventKind.FREED not in kinds
        and EventKind.ERROR not in kinds
        and EventKind.SAVED not in kinds
    )
    assert [e.name for e in of_kind(rec, EventKind.GRAD)] == ["x", "w", "x", "w"]
    assert torch.equal(x.grad, torch.full((3,), 2.0))
    rec.close()


def test_no_grad_and_detach_cut_edges(xw):
    x, w = xw
    with gradgraph.record(names={"x": x, "w": w}) as rec:
        with torch.no_grad():
            scale = w * 2
        y = (x * scale).sum() + (w.detach() * x).sum()
        y.backward()
    leaves = [e.name for e in of_kind(rec, EventKind.NODE) if e.details["leaf"]]
    assert leaves == ["x"]
    assert [e.name for e in of_kind(rec, EventKind.GRAD)] == ["x"]
    rec.close()


def test_alias_saved_twice_counted_once(xw):
    x, _ = xw
    with gradgraph.record() as rec:
        y = x * x
    saved = of_kind(rec, EventKind.SAVED)
    assert [e.details["alias"] for e in saved] == [False, True]
    assert [e.details["storage"] for e in saved] == [0, 0]  # one storage, named once
    assert saved[-1].memory.saved_bytes == 12
    del y
    freed = of_kind(rec, EventKind.FREED)
    assert [e.details["released"] for e in freed] == [False, True]  # dropping the graph frees too
    rec.close()


def test_in_place_change_of_a_saved_tensor_still_fails_backward(xw):
    x, _ = xw
    plain = x.exp()
    plain.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as without:
        plain.sum().backward()
    with gradgraph.record() as rec:
        y = x.exp()
        y.add_(1)  # exp saved its result; the recorder's saved-tensor hooks must not hide this
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        late = x.exp()
    (error,) = of_kind(rec, EventKind.ERROR)
    assert "is at version 1; expected version 0 instead" in error.details["message"]
    assert "is at version 1; expected version 0 instead" in str(without.value)
    assert x.grad is None
    late.add_(1)  # modified after recording: the check still holds after the block
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        late.sum().backward()
    rec.close()


def test_node_modified_before_it_was_seen_is_left_to_pytorch(xw):
    x, _ = xw
    y = x.exp()
    y.add_(1)  # before recording: PyTorch's own check and message apply
    modified = pytest.raises(RuntimeError, match="modified by an inplace operation")
    with modified as err, gradgraph.record() as rec:
        y.sum().backward()
    assert "gradgraph" not in str(err.value)
    assert not of_kind(rec, EventKind.SAVED)
    assert of_kind(rec, EventKind.ERROR)[0].details["message"] == str(err.value)
    rec.close()


def test_users_saved_tensor_hooks_run_exactly_as_without_recording():
    """Like checkpoint or save_on_cpu: the recorder must not call the user's unpack."""
    calls: list[str] = []

    def pack(t):
        calls.append("pack")
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    def run(x):
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x).tanh().sum()
        y.backward()

    run(torch.ones(3, requires_grad=True))
    plain = list(calls)
    calls.clear()
    with gradgraph.record() as rec:
        run(torch.ones(3, requires_grad=True))
    assert calls == plain == ["pack", "pack", "pack", "unpack", "unpack", "unpack"]
    assert not of_kind(rec, EventKind.SAVED)  # the user's hooks own those tensors
    assert [e.name for e in of_kind(rec, EventKind.BACKWARD)][:3] == [
        "SumBackward0",
        "TanhBackward0",
        "MulBackward0",
    ]
    rec.close()


def test_retain_grad_records_gradient_of_non_leaf(xw):
    x, w = xw
    with gradgraph.record() as rec:
        h = x * w
        h.retain_grad()
        h.sum().backward()
    retained = [e for e in of_kind(rec, EventKind.GRAD) if e.details["target"] == "retained"]
    assert [e.name for e in retained] == ["MulBackward0"]
    assert retained[0].details["norm"] == pytest.approx(h.grad.norm().item())
    rec.close()


def test_hooks_from_a_worker_thread_are_logged_with_their_thread(xw):
    x, w = xw
    with gradgraph.record(names={"x": x}) as rec:
        loss = (x * w).exp().sum()
    worker = threading.Thread(target=loss.backward, name="backward-worker")
    worker.start()
    worker.join()
    threads = {e.thread for e in rec.events if e.kind is EventKind.BACKWARD}
    assert threads == {"backward-worker"}
    assert {e.thread for e in of_kind(rec, EventKind.NODE)} == {threading.main_thread().name}
    rec.close()


def test_recording_backward_inside_the_block_logs_an_error_once(xw):
    x, w = xw
    with gradgraph.record() as rec:
        loss = (x * w).exp().sum()
        loss.backward()
        with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
            rec.backward(loss)
    assert len(of_kind(rec, EventKind.ERROR)) == 1
    rec.close()


def test_nesting_is_a_runtime_error_and_the_outer_block_survives(xw):
    x, w = xw
    with gradgraph.record() as outer:
        with pytest.raises(RuntimeError, match="cannot be nested"), gradgraph.record():
            pass
        (x * w).sum()
    assert of_kind(outer, EventKind.NODE)
    outer.close()
    with gradgraph.record() as again:  # the slot is free again
        pass
    assert len(again) == 0


def test_empty_recording_says_so():
    with gradgraph.record() as rec:
        torch.ones(3).exp()  # nothing requires grad
    assert len(rec) == 0
    assert "empty" in repr(rec) and "requiring grad" in repr(rec)
    assert "<table>" in rec._repr_html_()


def test_forward_error_is_recorded_with_the_real_message():
    a = torch.ones(2, requires_grad=True)
    leaf_in_place = pytest.raises(RuntimeError, match="leaf Variable that requires grad")
    with leaf_in_place, gradgraph.record() as rec:
        a.add_(1)
    (error,) = of_kind(rec, EventKind.ERROR)
    assert error.details["op"] == "add" and "in-place operation" in error.details["message"]


def test_hook_on_a_tensor_without_grad_raises_torchs_own_error():
    with pytest.raises(RuntimeError, match="doesn't require gradient"), gradgraph.record() as rec:
        torch.ones(2).register_hook(lambda g: g)
    (error,) = of_kind(rec, EventKind.ERROR)
    assert error.details["op"] == "register_hook"
    assert "cannot register a hook" in error.details["message"]


def test_a_leafs_node_hook_filed_before_the_recorders_own_still_fires_after_its_grad():
    """The user's hooks on a leaf's node come in order after its start, and a post-hook
    after its gradient, even where the user filed them first (the node was got before
    the block, the hooks before the forward that uses the leaf)."""
    b = torch.ones(2, requires_grad=True)
    node = get_gradient_edge(b).node  # held: a leaf keeps its node only weakly
    with gradgraph.record(names={"b": b}) as rec:
        node.register_hook(lambda grad_inputs, grad_outputs: None)
        node.register_prehook(lambda grad_outputs: None)
        (b * 2).sum().backward()
    rec.close()
    order = [
        (e.kind.value, e.details.get("kind", e.name))
        for e in rec.events
        if e.kind.value in ("backward", "grad", "hook") and e.name == "b"
    ]
    assert order == [
        ("backward", "b"),
        ("hook", "node pre-hook"),
        ("grad", "b"),
        ("hook", "node post-hook"),
    ]


def test_a_post_accumulate_grad_hook_refused_on_a_non_leaf_changes_nothing_recorded():
    x = torch.ones(2, requires_grad=True)
    with gradgraph.record(names={"x": x}) as rec:
        y = x.exp()
        with pytest.raises(RuntimeError, match="non-leaf"):
            y.register_post_accumulate_grad_hook(lambda p: None)
        y.sum().backward()
    rec.close()
    order = [(e.kind.value, e.name) for e in rec.events if e.kind.value in ("backward", "grad")]
    assert order == [
        ("backward", "SumBackward0"),
        ("backward", "ExpBackward0"),
        ("backward", "x"),
        ("grad", "x"),
    ]


def test_name_rejects_other_objects():
    rec = gradgraph.Recording()
    with pytest.raises(TypeError, match="tensor or an nn.Module"):
        rec.name(3, "three")


def test_pick_device_on_this_machine():
    expected = (
        "cuda"
        if torch.cuda.is_available()
        else "mps"
        if torch.backends.mps.is_available()
        else "cpu"
    )
    assert gradgraph.pick_device() == torch.device(expected)


def test_a_dropped_recording_is_freed_at_once_not_by_the_garbage_collector(xw):
    """No reference cycle: a recording (its log, watcher and names) goes with its last
    reference, so recording leaves no work for the garbage collector."""
    x, w = xw
    net = mlp()
    gc.disable()
    try:
        with gradgraph.record(net, names={"x": x}) as rec:
            h = net(torch.rand(2, 3)).exp() * (x * w).sum()
            h.retain_grad()
            h.register_hook(lambda g: g)
            h.sum().backward()
        rec.close()
        parts = [weakref.ref(part) for part in (rec, rec._log, rec._watcher, rec._leaf_names)]
        del rec, h
        assert [part() for part in parts] == [None] * len(parts)
    finally:
        gc.enable()


def test_a_saved_view_counts_its_whole_storage():
    """A saved view keeps its base alive: the memory figure counts the base's bytes, and so do
    the details (storage_bytes) beside the view's own (bytes)."""
    base = torch.ones(4, 3, requires_grad=True)
    with gradgraph.record() as rec:
        y = base[:1].exp()  # saves its result, whose storage is its own
        z = base.expand(2, 4, 3).sin()  # saves the expanded leaf: a view of base's storage
    del y, z
    saved = of_kind(rec, EventKind.SAVED)
    facts = [(e.name, e.details["bytes"], e.details["storage_bytes"]) for e in saved]
    assert facts == [("ExpBackward0", 12, 12), ("SinBackward0", 96, 48)]
    assert saved[-1].memory.saved_bytes == 12 + 48
    rec.close()
