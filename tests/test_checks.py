"""The check helpers refuse look-alikes: subclasses, permissive __eq__, wrong dtype or device."""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from autograder.checks import (
    CheckFailed,
    call_learner,
    expect,
    expect_choice,
    expect_equal,
    expect_leaf,
    expect_mapping,
    expect_tensor,
    shows_outcome,
)


class AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class SneakyTensor(torch.Tensor):
    pass


class TruthyBool(int):
    def __bool__(self):
        return True


@pytest.mark.parametrize(
    ("check", "message"),
    [
        (lambda: expect_equal("a", AlwaysEqual(), True), "should be of type bool"),
        (lambda: expect_equal("a", 1, True), "should be of type bool"),
        (lambda: expect_choice("a", AlwaysEqual(), ["x", "y"]), "must be one of"),
        (lambda: expect_mapping("m", {"a": 1, "b": 2}, ["a"]), "unexpected key(s) 'b'"),
        (lambda: expect_mapping("m", [("a", 1)], ["a"]), "should be of type dict"),
        (
            lambda: expect_tensor("t", torch.ones(2).as_subclass(SneakyTensor), torch.ones(2)),
            "should be of type torch.Tensor",
        ),
        (lambda: expect_tensor("t", torch.ones(3), torch.ones(2)), "has shape (3,)"),
        (lambda: expect_tensor("t", torch.ones(2).double(), torch.ones(2)), "dtype torch.float64"),
        (lambda: expect_tensor("t", torch.tensor([1.0, float("nan")]), torch.ones(2)), "index 1"),
        (lambda: expect_leaf("w", torch.ones(2)), "does not require grad"),
        (lambda: expect_leaf("w", torch.ones(2, requires_grad=True) + 1), "AddBackward0"),
        (lambda: expect(TruthyBool(1), "not the True object"), "not the True object"),
        (lambda: call_learner("f", 42), "should be a function"),
    ],
)
def test_look_alikes_are_refused_with_a_message(check, message):
    with pytest.raises(CheckFailed) as raised:
        check()
    assert message in str(raised.value)


def test_tensor_on_another_device_type_is_refused():
    meta = torch.ones(2, device="meta")
    with pytest.raises(CheckFailed, match="on device 'meta'; expected 'cpu'"):
        expect_tensor("t", meta, torch.ones(2))


def test_lazy_zero_tensor_of_forward_mode_is_read_and_compared():
    # forward-mode AD gives a derivative that is zero as a lazy zero tensor without storage
    weight = torch.tensor(2.5, requires_grad=True)
    lazy = torch.func.vmap(torch.func.jacfwd(torch.func.jacfwd(lambda t: weight * t)))(
        torch.ones(3)
    )
    assert lazy._is_zerotensor()
    expect_tensor("t", lazy, torch.zeros(3))
    with pytest.raises(CheckFailed, match="index 0"):
        expect_tensor("t", lazy, torch.ones(3))


def test_first_forward_mode_call_is_not_blamed_for_torchs_own_warning():
    # a fresh process, as a learner's kernel: torch's first forward-mode use warns from inside
    code = (
        "import torch\n"
        "from autograder.checks import call_learner\n"
        "call_learner('d', torch.func.jacfwd(torch.sin), torch.ones(2))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parents[1],
    )
    assert done.returncode == 0, done.stderr


def test_call_learner_explains_unwritten_code_warnings_and_errors():
    def unwritten():
        raise NotImplementedError()

    def warns():
        return (torch.ones(1, requires_grad=True) * 2).grad

    def unsupported():
        raise NotImplementedError("Could not run 'aten::nonzero' with the 'Meta' backend.")

    with pytest.raises(CheckFailed, match="not written yet"):
        call_learner("unwritten", unwritten)
    # torch's own NotImplementedError (an op a device lacks) is an error, not a stub
    with pytest.raises(CheckFailed, match=r"raised NotImplementedError: Could not run") as told:
        call_learner("unsupported", unsupported)
    assert "not written yet" not in str(told.value)
    with pytest.raises(CheckFailed, match="gave a UserWarning: The .grad attribute"):
        call_learner("warns", warns)
    with pytest.raises(CheckFailed, match=r"raised KeyError: 'k'"):
        call_learner("fails", lambda: {}["k"])


def test_call_learner_and_shows_outcome_see_torchs_once_per_process_warnings_every_time(capsys):
    """torch gives some warnings once per process: the same answer must not pass on its
    second call (a learner who had called it before) where it failed on its first."""

    def leaky_second_derivative(x):  # against unit 06's instructions: .backward, not grad
        x = x.detach().requires_grad_()
        x.exp().sum().backward(create_graph=True)
        (g,), x.grad = (x.grad,), None
        g.sum().backward()
        return x.grad

    for _ in range(3):
        with pytest.raises(CheckFailed, match="gave a UserWarning: Using backward"):
            call_learner("second_derivative", leaky_second_derivative, torch.ones(2))
    for _ in range(2):
        with shows_outcome():
            leaky_second_derivative(torch.ones(2))
    shown = capsys.readouterr().out
    assert shown.count("UserWarning: Using backward() with create_graph=True") == 2, shown
    assert "no warning" not in shown
    assert not torch.is_warn_always_enabled()  # put back as it was


def test_call_learner_lets_torchs_advice_about_right_code_pass():
    def logged_loss(x):  # float(loss) is as right as loss.item(); torch advises .detach()
        return float((x * 2).sum())

    for _ in range(2):
        assert call_learner("logged_loss", logged_loss, torch.ones(2, requires_grad=True)) == 4.0
    with pytest.raises(CheckFailed, match="gave a UserWarning: The .grad attribute"):
        call_learner(
            "both", lambda x: (float(x * 2), (x * 2).grad), torch.ones((), requires_grad=True)
        )


def _reads_a_non_leafs_grad():
    return (torch.ones(2, requires_grad=True) * 2).grad  # torch warns: a non-leaf's .grad


def _ignored():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _reads_a_non_leafs_grad()


def _filtered_for_good():
    warnings.filterwarnings("ignore")
    return _reads_a_non_leafs_grad()


def _filter_put_first_by_hand():
    warnings.filters.insert(0, ("ignore", None, Warning, None, 0))
    warnings._filters_mutated()
    return _reads_a_non_leafs_grad()


def _filters_replaced():
    filters, warnings.filters = warnings.filters, [("ignore", None, Warning, None, 0)]
    try:
        return _reads_a_non_leafs_grad()
    finally:
        warnings.filters = filters


def _reset_then_ignored():
    warnings.resetwarnings()
    warnings.simplefilter("ignore")
    return _reads_a_non_leafs_grad()


def _default_action_ignore():
    warnings.filters[:] = []
    warnings.defaultaction = "ignore"
    return _reads_a_non_leafs_grad()


def _made_an_error_and_caught():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return _reads_a_non_leafs_grad()
    except UserWarning:
        return None


def _recorded_in_a_list_of_its_own():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        return _reads_a_non_leafs_grad()


def _showwarning_silenced():
    shown, warnings.showwarning = warnings.showwarning, lambda *args, **kwargs: None
    try:
        return _reads_a_non_leafs_grad()
    finally:
        warnings.showwarning = shown


def _show_implementation_silenced():
    shown, warnings._showwarnmsg_impl = warnings._showwarnmsg_impl, lambda message: None
    try:
        return _reads_a_non_leafs_grad()
    finally:
        warnings._showwarnmsg_impl = shown


def _sent_to_logging():
    logging.captureWarnings(True)
    try:
        return _reads_a_non_leafs_grad()
    finally:
        logging.captureWarnings(False)


def _inside_a_watch_of_its_own():
    from autograder.checks.live import every_warning

    with every_warning():
        return _reads_a_non_leafs_grad()


def _registry_forged():
    """Writes the entry that says the warning was shown at its place already, with the
    filters' version read off an allowed warning (torch's advice) and moved on as one call of
    warnings._filters_mutated moves it."""
    warnings.warn("Converting a tensor with requires_grad=True to a scalar", stacklevel=1)
    registry = globals()["__warningregistry__"]
    registry["version"] += 1
    line = _reads_a_non_leafs_grad.__code__.co_firstlineno + 1
    registry[(_NON_LEAF_GRAD_WARNING, UserWarning, line)] = True
    return _reads_a_non_leafs_grad()


with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always")
    _reads_a_non_leafs_grad()
_NON_LEAF_GRAD_WARNING = str(_caught[0].message)


@pytest.mark.parametrize(
    "hides",
    [
        _ignored,
        _filtered_for_good,
        _filter_put_first_by_hand,
        _filters_replaced,
        _reset_then_ignored,
        _default_action_ignore,
        _made_an_error_and_caught,
        _recorded_in_a_list_of_its_own,
        _showwarning_silenced,
        _show_implementation_silenced,
        _sent_to_logging,
        _inside_a_watch_of_its_own,
        _registry_forged,
    ],
)
def test_call_learner_sees_a_warning_the_learners_code_hides(hides):
    """Whatever the code does to the warnings machinery while it runs, the warning counts;
    and what it changed is put back afterwards."""
    filters, shown, kind = warnings.filters, warnings.showwarning, type(warnings)
    saved = list(filters)
    for _ in range(2):
        with pytest.raises(CheckFailed, match=r"gave a UserWarning:\s+The\s+\.grad\s"):
            call_learner(hides.__name__, hides)
    assert type(warnings) is kind and warnings.filters is filters and filters == saved
    assert warnings.showwarning is shown and not torch.is_warn_always_enabled()


def test_call_learner_sees_warnings_hidden_before_the_call_or_by_torchs_own_switches():
    """An 'ignore' filter set in an earlier cell; torch's once-per-process warning switched
    back to once (torch.set_warn_always(False)); warnings.warn replaced, which torch's Python
    code calls through the module (a full backward hook on a module whose input needs no
    gradient)."""

    def backward_with_create_graph():
        x = torch.ones(2, requires_grad=True)
        (x * x).sum().backward(create_graph=True)
        x.grad = None

    def once_again():
        torch.set_warn_always(False)
        try:
            backward_with_create_graph()
        finally:
            torch.set_warn_always(True)

    def python_warning_silenced():
        warn, warnings.warn = warnings.warn, lambda *args, **kwargs: None
        try:
            layer = torch.nn.Linear(2, 2)
            handle = layer.register_full_backward_hook(lambda *args: None)
            layer(torch.ones(1, 2)).sum().backward()
            handle.remove()
        finally:
            warnings.warn = warn

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backward_with_create_graph()  # torch has given its once-per-process warning
        with pytest.raises(CheckFailed, match=r"gave a UserWarning:\s+The\s+\.grad\s"):
            call_learner("earlier_filter", _reads_a_non_leafs_grad)
    with pytest.raises(CheckFailed, match="gave a UserWarning: Using backward"):
        call_learner("once_again", once_again)
    with pytest.raises(CheckFailed, match=r"gave a UserWarning:\s+Full\s+backward"):
        call_learner("python_warning_silenced", python_warning_silenced)
    assert not torch.is_warn_always_enabled() and torch.set_warn_always.__module__ == "torch"
    assert torch._C._set_warnAlways.__module__ == "torch._C"


def test_call_learner_keeps_the_warnings_torch_silences_itself_silent():
    """gradcheck's batched check runs torch's old vmap, whose warnings torch filters out where
    it gives them: an answer that calls it gives no warning of its own."""

    def checked():
        x = torch.randn(3, dtype=torch.float64, requires_grad=True)
        return torch.autograd.gradcheck(lambda t: t.cummax(0)[0], (x,), check_batched_grad=True)

    assert call_learner("checked", checked) is True


def test_holds_saved_tensors_reads_a_graph_without_the_notebooks_hooks():
    """Held until backward frees it, for as long as the graph was retained; a slot that saved
    nothing (a frozen weight's input) holds nothing; hooks of the notebook's, which could say
    anything, are never run."""
    from autograder.checks import holds_saved_tensors

    def lie(_):
        raise RuntimeError("Trying to backward through the graph a second time")

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = torch.randn(4, 3, requires_grad=True)
    frozen = torch.nn.Linear(3, 1).requires_grad_(False)
    for make in (lambda: x.exp(), lambda: frozen(x), lambda: Square.apply(x)):
        out = make()
        assert holds_saved_tensors(out.grad_fn)
        out.sum().backward(retain_graph=True)
        assert holds_saved_tensors(out.grad_fn)
        out.sum().backward()
        assert not holds_saved_tensors(out.grad_fn)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lie):
        hooked = x.exp()
    lying = x.sin()
    lying.grad_fn._raw_saved_self.register_hooks(lambda t: t, lie)
    assert holds_saved_tensors(hooked.grad_fn) and holds_saved_tensors(lying.grad_fn)
    assert not holds_saved_tensors(None) and not holds_saved_tensors((x + 1).grad_fn)


def test_tensors_made_without_device_are_seen_where_they_meet_the_inputs():
    """A tensor made without device= lands on the meta device, and the first operation that
    gets it together with the inputs is named, as is a 0-dim one written in place with them;
    what runs on a GPU is not counted (a 0-dim tensor added to them, device=x.device, *_like,
    .to(x.device), an index, values read, Adam's own step counters, foreach or not);
    and the mode is gone afterwards, even when the code inside raised."""
    import contextlib

    from autograder.checks import tensors_made_without_device

    x = torch.randn(3, requires_grad=True)
    depth = torch._C._len_torch_function_stack()

    def seen(code):
        with tensors_made_without_device() as made, contextlib.suppress(RuntimeError):
            code()
        assert torch._C._len_torch_function_stack() == depth
        return made.met_in, made.factory, made.shape

    assert seen(lambda: x + torch.zeros(3)) == ("add", "torch.zeros", (3,))
    assert seen(lambda: torch.nn.functional.mse_loss(x, torch.tensor([1.0, 2.0, 3.0]))) == (
        "mse_loss",
        "torch.tensor",
        (3,),
    )
    loss = (x * 2).sum()
    assert seen(lambda: torch.autograd.grad(loss.expand(2), x, torch.ones(2))) == (
        "grad",
        "torch.ones",
        (2,),
    )

    def written_in_place():
        total = torch.tensor(0.0)
        total += x.sum()  # on a GPU: a CPU tensor cannot take a GPU tensor's values in place

    assert seen(written_in_place) == ("add_", "torch.tensor", ())
    layer = torch.nn.Linear(3, 2)
    adams = [torch.optim.Adam(layer.parameters(), foreach=f) for f in (False, True)]

    def fair():
        total = torch.tensor(0.0) + x.sum() + torch.zeros((), device=x.device)
        total = total + (torch.ones_like(x) * x.new_zeros(3) * torch.ones(3).to(x.device)).sum()
        total = total + x[torch.arange(2)].sum() + sum(torch.tensor([1.0, 2.0]).tolist())
        total = total + torch.as_tensor(x).sum() + layer(x).sum()
        total = total + 2.0
        total += 1.0
        for adam in adams:
            adam.zero_grad()
        total.backward()
        for adam in adams:
            adam.step()

    assert seen(fair) == (None, None, None)
    with pytest.raises(ZeroDivisionError), tensors_made_without_device():
        torch.zeros(2) / 0 + 1 // 0
    assert torch._C._len_torch_function_stack() == depth
    assert torch.zeros(2).device.type == "cpu"


def test_an_input_read_into_numpy_without_cpu_is_seen():
    """A GPU tensor refuses .numpy(): an input read that way is noted, and fails the device
    check with its own lesson; brought to the CPU first (or made there), it is not."""
    import numpy as np

    from autograder.checks import CheckFailed, expect_made_with_device, tensors_made_without_device

    x = torch.randn(3, requires_grad=True)

    def noted(code):
        with tensors_made_without_device() as made:
            code()
        return made.read_into_numpy

    assert noted(lambda: x.detach().numpy())
    assert noted(lambda: np.asarray(x.detach()))
    assert noted(lambda: torch.as_tensor(np.round(x.detach().numpy()), device=x.device))
    assert not noted(lambda: x.detach().cpu().numpy())
    assert not noted(lambda: x.detach().to("cpu").numpy() + x.cpu().detach().numpy())
    assert not noted(lambda: x.detach().numpy(force=True))
    assert not noted(lambda: torch.zeros(3).numpy() + torch.ones(3, device="cpu").numpy())
    with tensors_made_without_device() as made:
        x.detach().numpy()
    with pytest.raises(CheckFailed, match=r"without bringing it to the CPU first"):
        expect_made_with_device("round_ste", made)


def test_tensors_made_without_device_see_the_cpu_only_constructors():
    """torch.Tensor(n), the legacy types (DCGAN-era labels: torch.FloatTensor(n).fill_(1)),
    torch.from_numpy and torch.frombuffer make CPU tensors that no torch mode sees: inside the
    block they are seen as the factories are. isinstance, .type(torch.DoubleTensor), a tensor
    wrapped by torch.Tensor(t) and subclasses are left as they were; everything is put back
    afterwards, even when the code inside raised or replaced it. In a fresh process, where the
    first meta kernel imports torch._dynamo (which registers torch.Tensor.__new__), the import
    still works inside the block."""
    import contextlib
    import subprocess
    import sys
    from pathlib import Path

    import numpy as np

    from autograder.checks import tensors_made_without_device

    x = torch.randn(3, requires_grad=True)
    originals = (torch.FloatTensor, torch.LongTensor, torch.from_numpy, torch.frombuffer)

    def seen(code):
        with tensors_made_without_device() as made, contextlib.suppress(RuntimeError):
            code()
        assert (torch.FloatTensor, torch.LongTensor, torch.from_numpy, torch.frombuffer) == (
            originals
        )
        assert "__new__" not in vars(torch.Tensor) and torch.Tensor(2).device.type == "cpu"
        return made.met_in, made.factory, made.shape

    labels = torch.nn.functional.binary_cross_entropy
    assert seen(lambda: labels(x.sigmoid(), torch.FloatTensor(3).fill_(1.0))) == (
        "binary_cross_entropy",
        "torch.FloatTensor",
        (3,),
    )
    assert seen(lambda: x + torch.Tensor(3).zero_()) == ("add", "torch.Tensor", (3,))
    assert seen(lambda: x * torch.Tensor([1.0, 2.0, 3.0])) == ("mul", "torch.Tensor", (3,))
    ones = np.ones(3, dtype=np.float32)
    assert seen(lambda: x - torch.from_numpy(ones)) == ("sub", "torch.from_numpy", (3,))
    assert seen(lambda: x + torch.frombuffer(bytearray(12), dtype=torch.float32)) == (
        "add",
        "torch.frombuffer",
        (3,),
    )

    class Sub(torch.Tensor):
        pass

    def fair():
        assert isinstance(x, torch.FloatTensor) and not isinstance(x, torch.DoubleTensor)
        assert issubclass(torch.Tensor, torch.Tensor) and torch.LongTensor.dtype == torch.int64
        assert x.type(torch.DoubleTensor).dtype == torch.float64
        assert x.detach().type(dtype=torch.HalfTensor).dtype == torch.float16
        total = x + torch.Tensor(x.detach()) + torch.FloatTensor(3).to(x.device).fill_(0)
        total = total + Sub(3).zero_() + torch.from_numpy(ones).to(x.device)
        total.sum().backward()

    assert seen(fair) == (None, None, None)

    def vandal():
        torch.FloatTensor = torch.from_numpy = None
        del torch.Tensor.__new__
        raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError), tensors_made_without_device():
        vandal()
    assert (torch.FloatTensor, torch.LongTensor, torch.from_numpy, torch.frombuffer) == originals
    assert "__new__" not in vars(torch.Tensor)
    fresh = (
        "import torch, sys\n"
        "from autograder.checks import tensors_made_without_device\n"
        "x = torch.ones(2)\n"
        "with tensors_made_without_device() as made:\n"
        "    try:\n"
        "        x + torch.Tensor(2)\n"
        "    except RuntimeError as error:\n"
        "        print('RuntimeError', made.met_in, made.factory)\n"
        "import torch._dynamo\n"
        "print(torch.Tensor(2).device)\n"
    )
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run([sys.executable, "-c", fresh], capture_output=True, text=True, cwd=root)
    assert run.stdout.split() == ["RuntimeError", "add", "torch.Tensor", "cpu"], run.stderr


def test_tensors_made_without_device_keep_their_values_and_taint_what_they_make():
    """What code computes from tensors made without device= alone is computed on their values
    (filled in place, set by index, reduced, moved with .to or .type_as, copied into a given
    tensor, used as an index): it gets the values a GPU would give it. A tensor computed from
    them alone still counts as made so where it meets the inputs (named after the factory
    that started it); a 0-dim one stays on the CPU, as PyTorch lets it join any device."""
    import contextlib

    from autograder.checks import tensors_made_without_device

    x = torch.randn(4, dtype=torch.float64)

    def run(code):
        with tensors_made_without_device() as made, contextlib.suppress(RuntimeError):
            return code(), (made.met_in, made.factory)
        return None, (made.met_in, made.factory)

    def labels():
        made = torch.zeros(4)
        made[:2] = 1.0
        return made.to(x.device).tolist()

    fair = {
        "filled in place": (lambda: torch.FloatTensor(4).fill_(1.0).to(x).tolist(), [1.0] * 4),
        "set by index": (labels, [1.0, 1.0, 0.0, 0.0]),
        "computed, moved": (
            lambda: ((torch.arange(4) + 1).float() * 2).to(x.device).tolist(),
            [2.0, 4.0, 6.0, 8.0],
        ),
        "reduced": (lambda: torch.arange(4).sum().item(), 6),
        "moved by type_as": (lambda: torch.ones(2).cumsum(0).type_as(x).tolist(), [1.0, 2.0]),
        "as an index": (lambda: x[torch.tensor([0, 2]) + 1].tolist(), x[[1, 3]].tolist()),
        "copied in": (lambda: x.clone().copy_(torch.arange(4.0) * 3).tolist(), [0.0, 3, 6, 9]),
        "stacked, unbound": (
            lambda: [t.to(x.device).tolist() for t in torch.stack([torch.eye(2)] * 2)[1]],
            [[1.0, 0.0], [0.0, 1.0]],
        ),
        "a 0-dim total": (lambda: (torch.ones(3).sum() + x.sum()).item(), 3 + x.sum().item()),
        "keywords only": (
            lambda: torch.cat(tensors=[torch.ones(1), torch.zeros(1)]).to(x.device).tolist(),
            [1.0, 0.0],
        ),
    }
    for what, (code, expected) in fair.items():
        assert run(code) == (expected, (None, None)), what
    assert run(lambda: x + (torch.zeros(2) + 1).repeat(2))[1] == ("add", "torch.zeros")
    assert run(lambda: x * torch.eye(2).flatten()[[0, 1, 2, 3]])[1] == ("mul", "torch.eye")
    assert run(lambda: torch.add(input=x, other=torch.ones(4)))[1] == ("add", "torch.ones")

    def total_written_in_place():
        total = torch.ones(2).sum()
        total += x.sum()

    assert run(total_written_in_place)[1] == ("add_", "torch.ones")


def test_gradients_from_autograd_tells_a_gradient_autograd_gave_from_one_written_by_hand():
    """Read from .grad (after retain_grad or backward(inputs=...)), returned by
    torch.autograd.grad, passed to a hook, or copied from one of those: given. The same
    numbers written as a formula: not given. A hook's own return value still replaces the
    gradient, and the mode is gone after the block, even when it raised."""
    import copy

    from autograder.checks import gradients_from_autograd

    x = torch.tensor([0.5, -1.0], requires_grad=True)
    passed = {}

    def doubled(grad):
        passed["y"] = grad
        return grad * 2

    with gradients_from_autograd() as given:
        h = torch.tanh(x)
        h.retain_grad()
        y = h * h
        y.register_hook(doubled)
        y.sum().backward()
        read = h.grad
        copies = [read.clone(), read.detach(), read.to(torch.float64), read.data,
                  copy.deepcopy(read), torch.empty_like(read).copy_(read)]  # fmt: skip
        returned = torch.autograd.grad((torch.tanh(x) ** 2).sum(), [x])[0]
        z = torch.tanh(x)
        z.sum().backward(inputs=[z])
        as_input = z.grad
        hand = h.detach()
        formulas = [2 * hand, torch.ones_like(hand), read * 1, (1 - hand**2) * 2 * hand]
    assert all(given.includes(t) for t in [read, *copies, returned, passed["y"], as_input])
    assert not any(given.includes(t) for t in [*formulas, x, h, None, [read]])
    assert torch.equal(read, 4 * h.detach())  # the hook's doubled gradient reached h
    with pytest.raises(RuntimeError), gradients_from_autograd():
        raise RuntimeError("the code inside failed")
    assert torch._C._len_torch_function_stack() == 0


def test_gradients_from_autograd_notes_what_a_node_hook_is_called_with():
    """A pre-hook on h.grad_fn is called with h's gradient, a post-hook with its node's input
    and output gradients: all given. Outside the block, and inside a gradgraph recording (which
    observes node hooks itself), nodes' hooks are torch's own again."""
    import gradgraph
    from autograder.checks import gradients_from_autograd

    x = torch.tensor([0.5, -1.0], requires_grad=True)
    passed = {}
    with gradients_from_autograd() as given:
        h = torch.tanh(x)
        h.grad_fn.register_prehook(lambda grad_outputs: passed.update(h=grad_outputs[0]))
        y = h * h
        y.grad_fn.register_hook(lambda grad_in, grad_out: passed.update(mul=grad_in, y=grad_out))
        y.sum().backward()
    assert all(given.includes(t) for t in [passed["h"], passed["y"][0], *passed["mul"]])
    assert torch.equal(passed["h"], 2 * h.detach())
    assert "_register_hook" not in vars(type(torch.autograd.Function))
    with gradgraph.record() as recording, gradients_from_autograd() as given:
        z = torch.tanh(x)
        z.grad_fn.register_prehook(lambda grad_outputs: passed.update(z=grad_outputs[0]))
        z.sum().backward()
    recording.close()
    assert not given.includes(passed["z"])  # the recording's watch came first: not noted
    assert "_register_hook" not in vars(type(torch.autograd.Function))


def test_every_sink_gets_its_own_copy_of_a_record_made_before_any_sink_runs():
    """A sink put ahead of the grader's (a notebook's) that rewrites its record, nested lists
    included, changes nothing the grader's sink or the rule is given; and a block takes its own
    sink out by identity, running no other entry's __eq__."""
    import autograder.checks.records as records
    from autograder.checks import CheckFailed, expect, send_records_to

    seen, called = [], []

    def forge(record):
        record["condition"][1] = True
        record["condition"] = ["bool", True]

    class Entry(tuple):
        def __eq__(self, other):
            called.append("__eq__")
            return True

        __hash__ = tuple.__hash__

    ahead = Entry((forge, True))
    with send_records_to(seen.append, expected=False):
        records._record_sinks.insert(0, ahead)
        with pytest.raises(CheckFailed):
            expect(False, "a failed check")
    assert seen[0]["condition"] == ["bool", False]
    assert records._record_sinks == [ahead] and called == []
    records._record_sinks.clear()


def test_the_device_watch_sees_through_disable_torch_function():
    """torch._C.DisableTorchFunction would switch the watch's mode off: inside the watch it
    switches off only subclasses' __torch_function__, and it is torch's own again after."""
    from autograder.checks import call_watched

    real = torch._C.DisableTorchFunction

    def clip(grad):
        with torch._C.DisableTorchFunction():
            return grad * torch.minimum(torch.ones(grad.shape), 1 / grad.norm())

    made, _ = call_watched(clip, torch.ones(3))
    assert (made.met_in, made.factory) == ("minimum", "torch.ones")
    assert torch._C.DisableTorchFunction is real


def test_the_device_watch_takes_every_argument_of_to():
    """.to(copy=True) is a right way to copy (torch's parser of .to's arguments refuses copy=):
    a copy of the input stays where it is, and one of a tensor made without device= is seen."""
    from autograder.checks import call_watched

    x = torch.ones(3)
    made, value = call_watched(lambda t: t.to(copy=True) * 2, x)
    assert made.met_in is None and torch.equal(value, 2 * x)
    made, value = call_watched(lambda t: t + torch.zeros(3).to(copy=True), x)
    assert (made.met_in, made.factory, value) == ("add", "torch.zeros", None)
    made, value = call_watched(lambda t: t + torch.zeros(3).to(t.device, copy=True), x)
    assert made.met_in is None and torch.equal(value, x)


def test_meta_values_read_as_zeros_lets_code_read_what_a_gpu_tensor_gives():
    """A GPU tensor's values can be read (.tolist(), .cpu(), bool()); the meta tensor that
    stands in for one answers with zeros inside the mode, and where results land still shows."""
    from autograder.checks import meta_values_read_as_zeros

    t = torch.empty(2, 3, device="meta", requires_grad=True)
    with meta_values_read_as_zeros():
        back = t.detach().cpu().clone().to(t.device)
        stays = t.detach().cpu()
        flag = bool(t.detach().any())
        with pytest.raises(RuntimeError, match="meta"):  # mixing devices fails, as on a GPU
            t + torch.ones(2, 3)
    assert back.device.type == "meta" and stays.device.type == "cpu" and flag is False
    with pytest.raises((RuntimeError, NotImplementedError)):
        t.tolist()  # outside the mode, as torch has it


def _shared_trunk_step(trunk, heads, x, *, per_loss, between=lambda i: None):
    """One backward of the summed head losses, or (``per_loss``) one per loss; ``between(i)``
    runs after the i-th backward (what a forging answer does to the test's hooks)."""
    features = trunk(x)
    losses = [head(features).pow(2).mean() for head in heads]
    if not per_loss:
        sum(losses).backward()
        return
    for i, loss in enumerate(losses):
        loss.backward(retain_graph=i < len(losses) - 1)
        between(i)


def _trunk_and_heads(tasks=3):
    torch.manual_seed(0)
    trunk = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh())
    return trunk, [torch.nn.Linear(4, 1) for _ in range(tasks)], torch.randn(5, 3)


def test_count_runs_counts_every_backward_that_reaches_a_leaf_whatever_the_code_does():
    from autograder.checks import CheckFailed, count_runs

    trunk, heads, x = _trunk_and_heads()
    params = list(trunk.parameters())
    with count_runs("step", leaves=params, modules=[trunk[-1]]) as runs:
        _shared_trunk_step(trunk, heads, x, per_loss=False)
    assert (runs.arrivals(), runs.passes(), runs.kept_graph()) == (2, 1, False)
    with count_runs("step", leaves=params, modules=[trunk[-1]]) as runs:
        _shared_trunk_step(trunk, heads, x, per_loss=True)
    assert (runs.arrivals(), runs.arrivals(params[0]), runs.passes()) == (6, 3, 3)
    assert runs.kept_graph()  # retain_graph=True on all but the last
    with count_runs("step", leaves=params, modules=[trunk[-1]]) as runs:
        features = trunk(x)
        grads = torch.autograd.grad(sum(h(features).sum() for h in heads), params)
    assert runs.arrivals() == 2 and grads[0].shape == params[0].shape  # taken, never accumulated

    # Emptying the hook tables after the first backward and filling them again before the
    # block ends: the hooks on autograd's nodes still see every backward.
    taken = {}

    def hide(i):
        if i == 0:
            for t in params:
                taken[t] = dict(t._backward_hooks)
                t._backward_hooks.clear()

    with count_runs("step", leaves=params, modules=[trunk[-1]]) as runs:
        _shared_trunk_step(trunk, heads, x, per_loss=True, between=hide)
        for t, hooks in taken.items():
            t._backward_hooks.update(hooks)
    assert (runs.arrivals(), runs.passes()) == (6, 3)

    # Left empty, or replaced: the block fails, naming what was taken.
    taken_away = "took away a hook.*{}"
    with (
        pytest.raises(CheckFailed, match=taken_away.format("tensor hook")),
        count_runs("step", leaves=params),
    ):
        params[1]._backward_hooks.clear()
    with (
        pytest.raises(CheckFailed, match=taken_away.format("forward hook")),
        count_runs("step", modules=[trunk[-1]]),
    ):
        trunk[-1]._forward_hooks = type(trunk[-1]._forward_hooks)()
    assert not trunk[-1]._forward_hooks and params[1]._backward_hooks in (None, {})


def test_count_runs_gives_the_code_nothing_that_takes_from_a_count():
    from autograder.checks import CheckFailed, count_runs

    trunk, heads, x = _trunk_and_heads()
    params = list(trunk.parameters())
    with count_runs("step", leaves=params, modules=[trunk[-1]]) as runs:
        _shared_trunk_step(trunk, heads, x, per_loss=False)
        # what the code can reach: the tensor hook and the forward hook, and what they hold
        tensor_hook = next(iter(params[0]._backward_hooks.values()))
        forward_hook = next(iter(trunk[-1]._forward_hooks.values()))
        reachable = [tensor_hook.__self__]  # a bound method of the count's generator
        reachable += [cell.cell_contents for cell in forward_hook.__closure__]
        reachable += [value.__self__ for value in reachable if hasattr(value, "__self__")]
        assert not any(isinstance(value, (list, dict, set)) for value in reachable)
        for value in reachable:
            if hasattr(value, "send"):  # whatever it is sent adds, or changes nothing
                for message in (False, None, 0, -1, "read", ("read", None)):
                    value.send(message)
        tensor_hook(torch.ones(4, 3))  # called by hand: one more, never one less
        forward_hook(trunk[-1], (), trunk(x))  # an output no backward runs through
    assert (runs.arrivals(params[0]), runs.arrivals(params[1]), runs.passes()) == (8, 1, 1)

    # A count the code closed (a generator's close()) is a count taken away.
    with (
        pytest.raises(CheckFailed, match="the count those hooks keep"),
        count_runs("step", leaves=params),
    ):
        next(iter(params[0]._backward_hooks.values())).__self__.close()


def test_the_device_watch_is_backed_by_torchs_own_refusal_on_the_meta_device():
    """Code that takes the watch's torch mode off the stack while it makes a tensor without
    device= is still caught when a class is graded: run again with its inputs on the meta
    device, torch refuses to mix them with a CPU tensor, as a GPU would. Right code passes
    both runs. (In a learner's own run, with no grader taking the records, it runs once.)"""
    from autograder.checks import call_watched, expect_made_with_device, send_records_to
    from autograder.checks.meta import on_meta

    def hidden_total(losses):
        taken = []
        while torch._C._len_torch_function_stack():
            taken.append(torch._C._pop_torch_function_stack())
        total = torch.zeros(1)  # unseen by any mode
        for mode in reversed(taken):
            torch._C._push_on_torch_function_stack(mode)
        for loss in losses:
            total = total + loss
        return total

    losses = [torch.ones(1, requires_grad=True) * 2 for _ in range(3)]
    assert call_watched(hidden_total, losses)[0].refused_on_meta is None  # a learner's own run
    records = []
    with send_records_to(records.append, expected=False):
        made, _ = call_watched(hidden_total, losses)
        assert made.met_in is None and "not on the expected device" in made.refused_on_meta
        with pytest.raises(CheckFailed, match="mixed devices"):
            expect_made_with_device("hidden_total", made)
        for right in (
            lambda losses: sum(losses),
            lambda losses: torch.zeros(1, device=losses[0].device) + sum(losses),
            lambda losses: torch.tensor(0.0) + sum(losses),  # 0-dim: joins tensors anywhere
            lambda losses: torch.tensor([loss.item() for loss in losses], device=losses[0].device),
        ):
            made, _ = call_watched(right, losses)
            assert made.refused_on_meta is None
            expect_made_with_device("right", made)
    assert [record["refused_on_meta"] is None for record in records] == [False] + [True] * 4

    # What a step function is given moves together: modules' parameters, the optimizer's
    # references to them and its state; Adam's 0-dim step count stays on the CPU, as on a GPU.
    layer = torch.nn.Linear(2, 1)
    adam = torch.optim.Adam(layer.parameters())
    layer(torch.ones(1, 2)).sum().backward()
    adam.step()
    moved_layer, moved_adam = on_meta((layer, adam))
    moved_params = moved_adam.param_groups[0]["params"]
    assert [id(p) for p in moved_params] == [id(moved_layer.weight), id(moved_layer.bias)]
    state = moved_adam.state[moved_layer.weight]
    assert state["exp_avg"].is_meta and not state["step"].is_meta
    assert moved_layer.weight.grad.is_meta and layer.weight.device.type == "cpu"


def test_the_meta_run_refuses_what_torchs_meta_kernels_let_through():
    """Torch's meta kernels let a CPU tensor meet the inputs in an in-place sum or product and in
    a matrix product, where a GPU refuses; the run with the inputs on the meta device refuses
    them too. What a GPU allows still runs: a number made a tensor, indices on the CPU, a copy
    from one device to another."""
    from autograder.checks.meta import refused_on_meta

    def added_in_place(losses):
        total = torch.zeros(1)
        for loss in losses:
            total.add_(loss)
        return total

    def weighted(losses):
        return torch.stack(losses)[None] @ torch.ones(len(losses), 1)

    def through_identity(x):
        return (x @ torch.eye(x.shape[1])).sum()

    losses = [torch.ones((), requires_grad=True) * 2 for _ in range(3)]
    x = torch.ones(2, 3)
    for function, given in [(added_in_place, losses), (weighted, losses), (through_identity, x)]:
        said = refused_on_meta(function, given)
        assert said is not None and "not on the expected device" in said, function.__name__
    for right, given in [
        (lambda losses: torch.tensor(2.0) * sum(losses), losses),
        (lambda x: x[torch.tensor([0, 1])].sum(), x),
        (lambda x: (x @ torch.eye(x.shape[1], device=x.device)).sum(), x),
        (lambda x: x.sum().to("cpu", copy=True), x),
    ]:
        assert refused_on_meta(right, given) is None


def test_a_function_holding_the_notebooks_device_is_not_vouched_for():
    """The notebook's `device` pointed elsewhere reaches a function through its globals only: a
    default argument or a closure holding the device, or a callable object with a decoy
    `__globals__`, would keep making tensors there. The block raises for the first two, and
    reads the third through its class's `__call__`."""
    from autograder.checks import notebook_device_elsewhere

    notebook = {"__name__": "__main__", "torch": torch, "device": torch.device("cpu")}
    notebook["device64"] = notebook["device"]
    exec(
        "def by_default(t, device=device):\n"
        "    return t + torch.ones(t.shape, device=device)\n"
        "def make():\n"
        "    kept = device\n"
        "    def by_closure(t):\n"
        "        return t + torch.ones(t.shape, device=kept)\n"
        "    return by_closure\n"
        "def by_global(t):\n"
        "    return t + torch.ones(t.shape, device=device)\n"
        "class Decoy:\n"
        "    __globals__ = {'__name__': '__main__', 'device': device}\n"
        "    def __call__(self, t):\n"
        "        return by_global(t)\n",
        notebook,
    )
    for function in (notebook["by_default"], notebook["make"]()):
        with (
            pytest.raises(RuntimeError, match="keeps the notebook's `device`"),
            notebook_device_elsewhere(function),
        ):
            function(torch.ones(2))
    with pytest.raises(RuntimeError), notebook_device_elsewhere(notebook["Decoy"]()):
        notebook["Decoy"]()(torch.ones(2))
    assert notebook["device"] == torch.device("cpu")
    right = lambda t: t + torch.ones(t.shape, device=t.device)  # noqa: E731
    with notebook_device_elsewhere(right):
        assert right(torch.ones(2)).tolist() == [2.0, 2.0]
