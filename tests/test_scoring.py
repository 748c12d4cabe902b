"""Issue 13, the trusted side: checks judged against the solution's run by place, references
that must be reproducible, and the worker's guard, channel and sealed modules, each shown
failing the way an attack would need them to fail."""

from __future__ import annotations

import contextlib
import json
import os

import pytest
import torch

from autograder.checks import (
    CheckFailed,
    expect,
    expect_equal,
    expect_tensor,
    send_records_to,
)
from autograder.grading.channel import encode, open_channel
from autograder.grading.guard import take_snapshot
from autograder.grading.scoring import Reference, check_cell, first_difference
from autograder.grading.worker_pool import CellOutcome


def _records(expected: bool, run) -> tuple[dict, ...]:
    made: list[dict] = []
    with send_records_to(made.append, expected=expected), contextlib.suppress(CheckFailed):
        run()
    return tuple(made)


def _solution(run) -> Reference:
    return Reference.from_outcome(CellOutcome(0, True, records=_records(True, run)))


def _learner(run, **outcome) -> CellOutcome:
    return CellOutcome(0, True, records=_records(False, run), **outcome)


def test_a_check_is_known_by_its_place_not_by_its_message():
    """The solved notebook of unit 02 lost 3 points when a message held numbers that depend on
    nn.Linear's random init; the message is no part of a check's identity."""
    reference = _solution(lambda: expect(True, "the loss is 0.4213"))
    assert check_cell(_learner(lambda: expect(True, "the loss is 0.9871")), reference) == []


def test_the_expected_value_comes_from_the_solutions_run():
    """A learner's process that computes the same wrong value on both sides gains nothing."""
    reference = _solution(lambda: expect_tensor("g", torch.ones(2), torch.ones(2)))
    zeros = _learner(lambda: expect_tensor("g", torch.zeros(2), torch.zeros(2)))
    assert "expected" not in zeros.records[0]
    assert check_cell(zeros, reference)[0].startswith("`g` has the right dtype, shape and device")


def test_a_check_declared_answer_may_differ_keeps_its_own_expected_value():
    reference = _solution(lambda: expect_equal("n", 3, 3, answer_may_differ=True))
    other = _learner(lambda: expect_equal("n", 4, 4, answer_may_differ=True))
    assert check_cell(other, reference) == []
    wrong = _learner(lambda: expect_equal("n", 4, 5, answer_may_differ=True))
    assert check_cell(wrong, reference) == ["`n` is 4; expected 5."]


def test_a_different_or_missing_check_fails():
    reference = _solution(lambda: (expect_equal("a", 1, 1), expect_equal("b", 2, 2)))
    swapped = _learner(lambda: (expect_equal("b", 2, 2), expect_equal("a", 1, 1)))
    assert "is not the one the solution's run made there" in check_cell(swapped, reference)[0]
    fewer = _learner(lambda: expect_equal("a", 1, 1))
    assert check_cell(fewer, reference) == [
        "the test made 1 of its 2 checks: something in the notebook stopped them."
    ]


def test_a_voided_cell_earns_nothing_and_says_why():
    reference = _solution(lambda: expect(True, "m"))
    voided = _learner(lambda: expect(True, "m"), voided=("a thread was running",))
    assert check_cell(voided, reference) == ["a thread was running"]


def test_two_runs_must_make_the_same_records():
    first = _records(True, lambda: expect(True, "drawn 0.1"))
    second = _records(True, lambda: expect(True, "drawn 0.7"))
    assert first_difference(first, first) is None
    assert first_difference(first, second) == "check 1 ('expect') differs between two runs"


def test_put_back_restores_patched_library_classes_and_names_them():
    import stat  # what the checks use to read first predictions

    put_back = take_snapshot()
    original = torch.Tensor.__sub__, torch.nn.Linear.forward, json.dumps, stat.S_ISREG
    try:
        torch.Tensor.__sub__ = lambda self, other: self
        torch.nn.Linear.forward = lambda self, x: x
        json.dumps = lambda *args, **kwargs: ""
        stat.S_ISREG = lambda mode: True
    finally:
        changed = put_back()
    assert {"json.dumps", "torch.nn.modules.linear.Linear.forward", "stat.S_ISREG"} <= set(changed)
    assert any(name.endswith("Tensor.__sub__") for name in changed)
    assert (torch.Tensor.__sub__, torch.nn.Linear.forward, json.dumps, stat.S_ISREG) == original
    assert put_back() == []


def test_put_back_restores_functions_deep_in_torch_that_tests_call_through():
    """torch.autograd.grad runs torch.autograd.graph's engine call, torch.equal's kin live in
    private modules: a patch anywhere in torch is put back and named, and an honest cell that
    only imports more of torch changes nothing."""
    import torch.autograd.graph
    import torch.testing._comparison

    put_back = take_snapshot()
    original = torch.autograd.graph._engine_run_backward, torch.testing._comparison.assert_close
    try:
        torch.autograd.graph._engine_run_backward = lambda *args, **kwargs: None
        torch.testing._comparison.assert_close = lambda *args, **kwargs: None
        del torch.autograd.graph.register_multi_grad_hook
    finally:
        changed = put_back()
    assert sorted(changed) == [
        "torch.autograd.graph._engine_run_backward",
        "torch.autograd.graph.register_multi_grad_hook",
        "torch.testing._comparison.assert_close",
    ]
    assert (torch.autograd.graph._engine_run_backward, torch.testing._comparison.assert_close) == (
        original
    )
    x = torch.ones(2, requires_grad=True)
    assert torch.autograd.grad((x * 3).sum(), x)[0].tolist() == [3.0, 3.0]
    import torch.distributions  # noqa: F401  (more of torch, loaded by honest code)

    assert put_back() == []


def test_put_back_removes_hooks_left_on_every_module_or_optimizer():
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    put_back = take_snapshot()
    layer = torch.nn.Linear(2, 2)
    try:
        torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: o * 0)
        torch.nn.modules.module.register_module_full_backward_hook(lambda m, gi, go: None)
        register_optimizer_step_pre_hook(lambda *args: None)
    finally:
        changed = put_back()
    assert changed == [
        "torch.nn.modules.module._global_backward_hooks",
        "torch.nn.modules.module._global_forward_hooks",
        "torch.optim.optimizer._global_optimizer_pre_hooks",
    ]
    assert layer(torch.ones(1, 2)).abs().sum() > 0
    assert put_back() == []


def test_copying_a_model_or_saving_a_tensor_changes_no_class():
    """Copying or pickling an object caches ``__slotnames__`` on its class (copyreg): a test that
    copies a model or saves a tensor changes nothing, and a notebook's change of the cache is
    still a change."""
    import copy
    import io

    kinds = (torch.Tensor, torch.nn.Parameter, torch.nn.Linear, torch.nn.Sequential)
    for kind in kinds:  # as in a fresh worker: no copy made yet
        if "__slotnames__" in vars(kind):
            type.__delattr__(kind, "__slotnames__")
    put_back = take_snapshot()
    torch.save(torch.ones(2), io.BytesIO())
    copy.deepcopy(torch.nn.Sequential(torch.nn.Linear(2, 2)))
    copy.copy(torch.nn.Parameter(torch.ones(1)))
    assert put_back() == []
    torch.Tensor.__slotnames__ = ["forged"]
    assert [name for name in put_back() if name.endswith("__slotnames__")] == [
        "torch.Tensor.__slotnames__"
    ]
    assert torch.Tensor.__slotnames__ == []


def test_put_back_removes_callbacks_left_on_the_garbage_collector():
    """A gc callback runs at any moment of a test: one could patch and unpatch around a check."""
    import gc

    put_back = take_snapshot()
    try:
        gc.callbacks.append(lambda phase, info: None)
    finally:
        changed = put_back()
    assert changed == ["gc.callbacks"]
    assert put_back() == []


def test_put_back_restores_autograds_switches_and_names_them():
    """A saved_tensors_hooks left open would hook every graph a test builds (and its unpack
    hook decides what reading a saved tensor says); grad mode and torch's modes likewise."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    put_back = take_snapshot()
    try:
        torch.set_grad_enabled(False)
        python_dispatcher = torch._C._EnablePythonDispatcher()  # runs kernels of the notebook's
        torch._C._dispatch_tls_set_dispatch_key_excluded(torch._C.DispatchKey.AutogradCPU, True)
        torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
        torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1 / 0).__enter__()
        TorchFunctionMode().__enter__()  # each of them refuses every call
        TorchDispatchMode().__enter__()
    finally:
        changed = put_back()
    assert changed == [
        "torch's included dispatch keys",
        "torch's excluded dispatch keys",
        "a torch function mode",
        "a torch dispatch mode",
        "torch.is_grad_enabled()",
        "torch.autograd.graph.saved_tensors_hooks",
    ]
    assert torch.is_grad_enabled()
    assert torch._C._autograd._top_saved_tensors_default_hooks(False) is None
    assert torch._C._autograd._saved_tensors_hooks_is_enabled()
    assert torch._C._len_torch_function_stack() == torch._C._len_torch_dispatch_stack() == 0
    include = torch._C._dispatch_tls_local_include_set()
    assert not include.has(torch._C.DispatchKey.PythonDispatcher)
    assert not torch._C._dispatch_tls_local_exclude_set().has(torch._C.DispatchKey.AutogradCPU)
    x = torch.ones(2, requires_grad=True)
    assert x.exp().grad_fn is not None
    del python_dispatcher  # its end puts back what it found: put back already
    assert put_back() == []
    left_open = torch.autograd.graph.disable_saved_tensors_hooks("no hooks")
    left_open.__enter__()
    assert put_back() == ["torch.autograd.graph.disable_saved_tensors_hooks"]
    assert torch._C._autograd._saved_tensors_hooks_is_enabled()
    assert put_back() == []


def test_put_back_restores_torchs_process_wide_settings_and_names_them():
    """A right answer's cell may leave a setting on while debugging (anomaly detection, which
    makes every backward read values the meta device lacks, and warn) or for gradcheck (a
    float64 default dtype, which changes every tensor a test makes without dtype=)."""
    put_back = take_snapshot()
    try:
        torch.autograd.set_detect_anomaly(True, check_nan=False)
        torch.set_default_dtype(torch.float64)
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.set_float32_matmul_precision("medium")
        torch._C._set_fwd_grad_enabled(False)
    finally:
        changed = put_back()
    assert changed == [
        "torch.Storage",  # set_default_dtype sets it too: put back with torch's namespace
        "torch.autograd.set_detect_anomaly",
        "torch.set_default_dtype",
        "torch.use_deterministic_algorithms",
        "torch.set_float32_matmul_precision",
        "forward-mode AD switched off",
    ]
    assert not torch.is_anomaly_enabled() and torch.is_anomaly_check_nan_enabled()
    assert torch.get_default_dtype() == torch.float32 and torch.ones(1).dtype == torch.float32
    assert not torch.are_deterministic_algorithms_enabled()
    assert not torch.is_deterministic_algorithms_warn_only_enabled()
    assert torch.get_float32_matmul_precision() == "highest"
    assert torch._C._is_fwd_grad_enabled()
    assert put_back() == []
    torch.autograd.set_detect_anomaly(True)  # the NaN check alone changed: named too
    torch.autograd.set_detect_anomaly(False, check_nan=False)
    assert put_back() == ["torch.autograd.set_detect_anomaly"]
    assert torch.is_anomaly_check_nan_enabled()


def test_the_channel_ignores_later_patches_of_json_and_os(monkeypatch):
    reading, writing = os.pipe()
    receive, send = open_channel(reading, writing)
    monkeypatch.setattr(json, "dumps", lambda *args, **kwargs: '{"op": "forged"}')
    monkeypatch.setattr(json, "loads", lambda *args, **kwargs: {"op": "forged"})
    monkeypatch.setattr(os, "write", lambda descriptor, data: len(data))
    send({"op": "done", "ok": False})
    assert receive() == {"op": "done", "ok": False}
    os.close(reading)
    os.close(writing)


def test_the_channel_sends_plain_data_only():
    with pytest.raises(ValueError, match="not plain data"):
        encode({"value": object()})
