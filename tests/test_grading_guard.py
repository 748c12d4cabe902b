"""The grading worker's guard, armed in a process of its own as the worker arms it: what a
notebook could use to reach a frame or native code is refused, and what honest code uses
still works. (test_grade.py grades a whole class of attacks through the sandboxed worker.)"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

_ARMED = """
import json, sys
import torch, torch._decomp.decompositions_for_jvp, torch._dynamo, torch.optim
import torch._functorch.predispatch
import gradgraph, gradgraph.player
torch._functorch.predispatch.lazy_load_decompositions()  # as the worker preloads it
from autograder.grading import stack
from autograder.grading.audit import install_audit_hook
from autograder.grading.guard import withdraw_unaudited
stack.install()
withdraw_unaudited()
install_audit_hook()()
results = {}
def attempt(name, run):
    try:
        results[name] = ["ran", repr(run())[:200]]
    except BaseException as error:
        results[name] = [type(error).__name__, str(error)[:200]]
"""


def _armed(code: str, tmp_path) -> dict[str, list[str]]:
    """Run ``code`` after arming the guard; return its ``attempt`` results by name."""
    script = _ARMED + textwrap.dedent(code) + "\nprint(json.dumps(results))\n"
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_no_frame_reaches_a_notebook_through_a_stack_reader_a_signal_or_torch(tmp_path):
    results = _armed(
        """
        import signal, traceback, gradgraph.source, torch._jit_internal
        from torch._C._dynamo.eval_frame import set_eval_frame
        caught = []
        def keep(frame, *rest):
            caught.append(frame)
            return iter(())
        def through_traceback():
            traceback.walk_stack = keep
            traceback.extract_stack()
            return sorted({type(item).__name__ for item in caught})
        def through_gradgraph():
            gradgraph.source.source_line_from = keep
            gradgraph.source.user_source_line()
            return sorted({type(item).__name__ for item in caught})
        attempt("traceback", through_traceback)
        attempt("gradgraph", through_gradgraph)
        attempt("torchscript", lambda: torch._jit_internal.createResolutionCallbackFromFrame(1))
        attempt("signal", lambda: signal.signal(signal.SIGUSR1, keep))
        attempt("dynamo", lambda: set_eval_frame(keep))
        attempt("rebuilt signal", lambda: __import__("_imp").create_builtin(None))
        """,
        tmp_path,
    )
    assert results["traceback"][0] == results["gradgraph"][0] == "ran"
    assert "frame" not in results["traceback"][1] + results["gradgraph"][1]
    refused = {name: message for name, (kind, message) in results.items() if kind != "ran"}
    assert set(refused) == {"torchscript", "signal", "dynamo", "rebuilt signal"}
    assert all("the grading sandbox does not allow" in message for message in refused.values())


def test_native_code_is_out_of_reach_but_installed_modules_still_import(tmp_path):
    cffi = pytest.importorskip("_cffi_backend")
    copied = tmp_path / "mine.cpython-311-x86_64-linux-gnu.so"
    copied.write_bytes(Path(cffi.__file__).read_bytes())
    results = _armed(
        f"""
        import importlib.machinery, importlib.util
        def load(name, path):
            spec = importlib.util.spec_from_file_location(name, path)
            return importlib.util.module_from_spec(spec)
        attempt("cffi", lambda: __import__("cffi"))
        attempt("test module", lambda: __import__("_testcapi"))
        attempt("subinterpreter", lambda: __import__("_xxsubinterpreters").create())
        attempt("renamed", lambda: load("x._cffi_backend", {str(copied)!r}))
        attempt("own library", lambda: load("mine", {str(copied)!r}))
        def emptied_suffixes():
            importlib.machinery.EXTENSION_SUFFIXES.clear()
            loader = importlib.machinery.ExtensionFileLoader("mine", {str(copied)!r})
            spec = importlib.util.spec_from_loader("mine", loader)
            return importlib.util.module_from_spec(spec)
        attempt("own library, suffixes emptied", emptied_suffixes)
        attempt("installed", lambda: __import__("sqlite3").sqlite_version)
        """,
        tmp_path,
    )
    assert results.pop("installed")[0] == "ran"
    assert all(kind == "RuntimeError" for kind, _ in results.values()), results
    assert all("the grading sandbox does not allow" in message for _, message in results.values())


def test_no_program_runs_outside_the_audit_hook(tmp_path):
    """subprocess raises an audit event, the function under it does not: a Python it started
    would run without the hook (and could read the worker's memory)."""
    results = _armed(
        """
        import os, subprocess, multiprocessing.util

        def fork_exec(fork_exec):
            out, into = os.pipe()
            errors, errors_into = os.pipe()
            arguments = [[b"/bin/sh", b"-c", b"echo outside"], [b"/bin/sh"], True, (into,)]
            arguments += [None, None, -1, -1, -1, into, -1, -1, errors, errors_into]
            arguments += [False, False, -1, None, None, -1, -1, None, False]
            fork_exec(*arguments)
            os.close(into)
            return os.read(out, 100)

        attempt("direct", lambda: fork_exec(__import__("_posixsubprocess").fork_exec))
        attempt("subprocess's", lambda: fork_exec(subprocess._fork_exec))
        attempt("multiprocessing's", lambda: multiprocessing.util.spawnv_passfds(
            "/bin/sh", ["/bin/sh", "-c", "echo outside"], ()))
        attempt("reloaded", lambda: fork_exec(__import__("importlib").reload(
            __import__("_posixsubprocess")).fork_exec))
        attempt("subprocess", lambda: subprocess.run(["/bin/true"]))
        """,
        tmp_path,
    )
    assert all(kind == "RuntimeError" for kind, _ in results.values()), results
    assert all("the grading sandbox does not allow" in message for _, message in results.values())


def test_no_notebook_opens_a_process_memory(tmp_path):
    """/proc/self/mem reads and writes anything in the process (the hook's own state too)."""
    link = tmp_path / "innocent.txt"
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"notes")
    results = _armed(
        f"""
        import os, pathlib
        secret = "hidden-expected-value"

        def read(path, opener=open, **options):
            with opener(path, "rb", buffering=0, **options) as memory:
                memory.seek(id(secret))
                return memory.read(80)

        def through_a_directory():
            folder = os.open("/proc/self", os.O_RDONLY)
            return os.read(os.open("mem", os.O_RDONLY, dir_fd=folder), 1)

        def after_chdir():
            os.chdir("/proc/self")
            return read("mem")

        class Shifty:  # one name for the hook, the other for open: whichever asks first
            def __init__(self, *names):
                self.names = list(names)
            def __fspath__(self):
                return self.names.pop(0) if len(self.names) > 1 else self.names[0]

        def shifty(*names):
            with open(Shifty(*names), "rb") as opened:
                return opened.read(5)

        def fooled_fspath():
            os.fspath = lambda path: {str(notes)!r}
            os.path.realpath = lambda path: {str(notes)!r}
            return read("/proc/self/mem")

        attempt("own", lambda: read("/proc/self/mem"))
        attempt("bytes", lambda: read(b"/proc/self/task/%d/mem" % os.getpid()))
        attempt("parent's", lambda: read(f"/proc/{{os.getppid()}}/mem"))
        attempt("pathlib", lambda: read(pathlib.Path("/proc/self/mem")))
        attempt("os.open", lambda: os.read(os.open("/proc/self/mem", os.O_RDONLY), 1))
        attempt("through a directory", through_a_directory)
        attempt("symlink", lambda: os.symlink("/proc/self/mem", {str(link)!r}))
        attempt("shifty path", lambda: shifty({str(notes)!r}, "/proc/self/mem"))
        attempt("shifty path, other order", lambda: shifty("/proc/self/mem", {str(notes)!r}))
        attempt("after chdir", after_chdir)
        attempt("fooled fspath", fooled_fspath)
        """,
        tmp_path,
    )
    notes_read = ["ran", repr(b"notes")]  # open was given one name, and read that file
    let_through = {
        name: result
        for name, result in results.items()
        if result[0] != "RuntimeError" and not (name.startswith("shifty") and result == notes_read)
    }
    assert not let_through, let_through
    refused = [message for kind, message in results.values() if kind == "RuntimeError"]
    assert all("the grading sandbox" in message for message in refused), results


def test_no_notebook_puts_its_own_kernel_in_place_of_torchs(tmp_path):
    """torch.library would make aten::eq answer True, or aten::abs return zeros, under every
    test's computations; no way to reach the dispatcher's library maker is left."""
    results = _armed(
        """
        import importlib, torch.library
        probe = lambda: torch.tensor([-1.0]).abs().tolist()
        def impl(kind, namespace="aten"):
            library = torch.library.Library(namespace, kind)
            library.impl("abs", lambda x: torch.zeros_like(x), "CPU")
            return probe()
        attempt("IMPL", lambda: impl("IMPL"))
        attempt("FRAGMENT", lambda: impl("FRAGMENT"))
        attempt("decorator", lambda: torch.library.impl("aten::abs", "CPU")(
            lambda x: torch.zeros_like(x)) and probe())
        def copied(x: torch.Tensor) -> torch.Tensor:
            return x.clone()
        attempt("custom op", lambda: torch.library.custom_op("mine::f", mutates_args=())(copied))
        attempt("through torch._C", lambda: torch._C._dispatch_library(
            "IMPL", "aten", "CPU", "", 0))
        attempt("after a reload", lambda: importlib.reload(torch.library).Library(
            "aten", "IMPL"))
        attempt("still torch's", probe)
        """,
        tmp_path,
    )
    still = results.pop("still torch's")
    assert still == ["ran", "[1.0]"], still
    refused = [message for kind, message in results.values() if kind == "RuntimeError"]
    assert len(refused) == len(results), results
    assert all("the grading sandbox" in message for message in refused), results


def test_no_notebook_gets_back_the_saved_tensor_hooks_a_test_set(tmp_path):
    """A test sets saved-tensor hooks of its own around the call of a notebook's function, to
    count what autograd saves and reads back: torch's stack of them would hand those functions
    to the notebook's code, which could call them (forging the count) or reach the test's
    globals through them. Saved-tensor hooks themselves still work."""
    results = _armed(
        """
        packed = []
        def pack(saved):
            packed.append(saved.shape)
            return saved
        def reach(which):
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
                hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
            return hooks[which](torch.ones(1))  # called: a test's hook forged
        def through_gradgraph():
            import gradgraph.introspect
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
                hooks = gradgraph.introspect._top_saved_hooks(False)
            return hooks[0].__globals__["packed"]  # the test's globals
        def hooks_work():
            x = torch.ones(2, requires_grad=True)
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda saved: saved):
                torch.tanh(x).sum().backward()
            return len(packed) > 0 and x.grad is not None
        attempt("pack", lambda: reach(0))
        attempt("unpack", lambda: reach(1))
        attempt("through gradgraph", through_gradgraph)
        attempt("none set", lambda: torch._C._autograd._top_saved_tensors_default_hooks(False))
        attempt("hooks work", hooks_work)
        """,
        tmp_path,
    )
    assert results.pop("hooks work") == ["ran", "True"]
    assert results.pop("none set") == ["ran", "None"]
    assert results.pop("through gradgraph")[0] in ("KeyError", "RuntimeError")
    assert [kind for kind, _ in results.values()] == ["RuntimeError"] * len(results), results
    assert all("the grading sandbox" in message for _, message in results.values()), results


def test_what_honest_code_uses_still_works_under_the_guard(tmp_path):
    results = _armed(
        """
        import traceback
        x = torch.randn(3, requires_grad=True)
        def anomaly():
            with torch.autograd.detect_anomaly():
                (x.exp() * 2).sum().backward()
            return x.grad.shape
        def optimizer():
            layer = torch.nn.Linear(2, 2)
            step = torch.optim.Adam(layer.parameters())
            layer(torch.ones(1, 2)).sum().backward()
            step.step()
            return "stepped"
        def film():
            with gradgraph.record(names={"x": x}) as recording:
                (x * 2).sum().backward()
            recording.play()
            return len(recording.events)
        def where():
            return [entry.name for entry in traceback.extract_stack(limit=2)]
        attempt("anomaly", anomaly)
        attempt("optimizer", optimizer)
        attempt("hessian", lambda: torch.func.hessian(lambda t: t.pow(3).sum())(x.detach()).shape)
        attempt("film", film)
        attempt("stack", where)
        """,
        tmp_path,
    )
    assert {name: kind for name, (kind, _) in results.items()} == dict.fromkeys(results, "ran")
    assert results["stack"][1] == "['attempt', 'where']"


def test_a_test_cell_keeps_only_the_records_its_own_checks_made(tmp_path):
    results = _armed(
        """
        import types
        import autograder.checks as checks
        import autograder.checks.records as records
        from autograder.grading.delivery import cell_code, checks_code, collect
        trusted = checks_code(
            module for name, module in sys.modules.items() if name.startswith("autograder.checks")
        )
        def notebook_calls_expect():  # a learner's function the test calls
            checks.expect(True, "made by the notebook")
        def notebook_sends(sink):
            sink({"rule": "expect", "condition": ["bool", True], "message": "", "hint": None})
        class Entry(tuple):  # taken out again when the block ends: it equals anything
            __eq__ = lambda self, other: True
            __hash__ = tuple.__hash__
        def notebook_forwards():  # a sink of the notebook's in front of the grader's
            real = records._record_sinks[-1][0]
            records._record_sinks[-1] = Entry((lambda record: real({**record}), False))
        copied_expect = types.FunctionType(checks.expect.__code__, dict(vars(checks)))
        cells = {
            "honest": "expect(True, 'a check of the test')\\nexpect(1 == 1, 'another')",
            "notebook calls a check": "notebook_calls_expect()",
            "notebook sends a record": "notebook_sends(sink)",
            "notebook forwards": "notebook_forwards()\\nexpect(True, 'forwarded')",
            "copied check": "copied_expect(True, 'a copy with its own globals', hint=None)",
        }
        for name, source in cells.items():
            take = object()
            scope = {"expect": checks.expect, **globals()}
            code = compile(source, "<cell>", "exec")
            collector = collect({**trusted, **cell_code(code, scope)}, take)
            next(collector)
            scope["sink"] = collector.send
            def run():
                with records.send_records_to(collector.send, expected=False):
                    exec(code, scope)
                kept, refused = collector.send(take)
                records._record_sinks.clear()  # what a notebook left there (the guard's to see)
                return [record["message"] for record in kept], refused
            attempt(name, run)
        """,
        tmp_path,
    )
    assert results["honest"] == ["ran", repr((["a check of the test", "another"], 0))]
    for name in ("notebook calls a check", "notebook sends a record", "notebook forwards"):
        assert results[name] == ["ran", repr(([], 1))], name
    assert results["copied check"] == ["ran", repr(([], 1))]


def test_no_notebook_gives_a_module_a_class_or_a_library_object_a_class_of_its_own(tmp_path):
    """With sys's class swapped, the worker's own `sys.stdout = ...` at each cell's start and
    end would run the notebook's code, after the guard put things back and before it looks; a
    test's parameter given a subclass would answer `detach` as that subclass likes. What the
    checks and torch do still works (the checks' switch of the warnings module, a lazy
    parameter becoming a Parameter), and so does a notebook's own object changing class."""
    results = _armed(
        """
        import types, warnings
        from autograder.checks.live import every_warning
        class Mine(types.ModuleType):
            def __setattr__(self, name, value):
                types.ModuleType.__setattr__(self, name, value)
        class Answering(torch.nn.Parameter):
            def detach(self):
                return torch.zeros(1)
        class Meta(type(torch.Tensor)):
            pass
        def swap(target, kind):
            target.__class__ = kind
            return type(target).__name__
        attempt("sys", lambda: swap(sys, Mine))
        attempt("torch", lambda: swap(torch, Mine))
        attempt("parameter", lambda: swap(torch.nn.Parameter(torch.ones(1)), Answering))
        attempt("layer", lambda: swap(torch.nn.Linear(1, 1), type("L", (torch.nn.Linear,), {})))
        attempt("metaclass", lambda: swap(torch.Tensor, Meta))
        def watched():
            with every_warning() as caught:
                warnings.warn("heard")
            return type(warnings).__name__, len(caught)
        def lazy():
            layer = torch.nn.LazyLinear(2)
            layer(torch.ones(1, 3))
            return type(layer).__name__, type(layer.weight).__name__
        class Own:
            pass
        class Other:
            pass
        attempt("every_warning", watched)
        attempt("lazy", lazy)
        attempt("own", lambda: swap(Own(), Other))
        """,
        tmp_path,
    )
    allowed = {name: results.pop(name) for name in ("every_warning", "lazy", "own")}
    assert allowed == {
        "every_warning": ["ran", "('module', 1)"],
        "lazy": ["ran", "('Linear', 'Parameter')"],
        "own": ["ran", "'Other'"],
    }
    assert set(results) == {"sys", "torch", "parameter", "layer", "metaclass"}
    assert all(kind == "RuntimeError" for kind, _ in results.values()), results
    assert all("a class of the notebook's" in message for _, message in results.values())
