"""A generated class for the grader's end-to-end tests and benchmark: honest, partial and blank
notebooks, one learner per kind of attack, one per kind of bad input, each with the exact
result it must get.

Attacks are added to notebooks whose own answers are known: the blank notebook (0 points), the
first round of kept wrong answers (a known partial score), or the solved one (full marks, for
attacks that must cost an honest answer nothing).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tests.conftest import LAYOUT, answer_rounds, solved_learner_notebook

UNIT = "01_leaf_tensors"


@dataclass(frozen=True)
class Expected:
    """What grading must give one learner: a score, or "not gradable" with part of the reason."""

    score: float | None = None
    reason: str = ""
    note: str = ""


def _blank():
    return nbformat.read(LAYOUT.learner_notebook(UNIT), as_version=4)


def _solved():
    return solved_learner_notebook(UNIT)


# The wrong answers that attacks try to turn into points; the other items stay solved.
_WRONG_CELLS = ("intermediate_grads", "sgd_step", "snapshot", "classify")


def _wrong():
    round_ = answer_rounds(UNIT, "wrong")[0]
    return solved_learner_notebook(UNIT, {cell: round_[cell].code for cell in _WRONG_CELLS})


def _points() -> dict[str, float]:
    source = nbformat.read(LAYOUT.source_notebook(UNIT), as_version=4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: float(cell.metadata["nbgrader"]["points"])
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("grade")
    }


FULL = sum(_points().values())
WRONG = FULL - sum(
    _points()[item] for cell in _WRONG_CELLS for item in answer_rounds(UNIT, "wrong")[0][cell].loses
)


def _with_cells(notebook, *sources: str, at: int = 1):
    """``notebook`` with new code cells (no nbgrader metadata) inserted at ``at``."""
    changed = copy.deepcopy(notebook)
    for offset, source in enumerate(sources):
        changed.cells.insert(at + offset, nbformat.v4.new_code_cell(source))
    return changed


def _with_answer(notebook, grade_id: str, source: str):
    changed = copy.deepcopy(notebook)
    for cell in changed.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            cell.source = source
    return changed


# The rest of a right intermediate_grads once x is a leaf that requires grad: attacks that keep
# a right answer and add something of their own end with it.
_RETAINING_REST = """    h = torch.tanh(x)
    h.retain_grad()
    y = h * h
    y.retain_grad()
    y.sum().backward()
    return {"x": x.grad, "h": h.grad, "y": y.grad}
"""

_INPUT_TRANSFORMER = """
ip = get_ipython()
ip.input_transformers_cleanup.append(lambda lines: [])
"""
_AST_TRANSFORMER = """
import ast
class Blank(ast.NodeTransformer):
    def visit_Module(self, node):
        return ast.Module(body=[], type_ignores=[])
get_ipython().ast_transformers.append(Blank())
"""
_TRACE = """
import sys, threading
def skip(frame, event, arg):
    return None
sys.settrace(skip)
threading.settrace(skip)
"""
_AUDIT = """
import sys
sys.addaudithook(lambda event, args: None)
"""
_PATCH_TORCH = """
import torch, torch.testing
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.isclose = lambda a, b, *x, **k: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *a, **k: None
"""
_PATCH_TENSOR = """
import torch
torch.Tensor.is_leaf = property(lambda self: True)
torch.Tensor.requires_grad = property(lambda self: True)
torch.Tensor.grad_fn = property(lambda self: None)
torch.Tensor.__eq__ = lambda self, other: True
torch.Tensor.tolist = lambda self: [0.0]
"""
_PATCH_CHECKS = """
import sys, types
import autograder.checks as checks
for name in dir(checks):
    if name.startswith("expect") or name == "call_learner":
        setattr(checks, name, lambda *args, **kwargs: None)
fake = types.ModuleType("autograder.checks")
fake.__dict__.update({name: (lambda *args, **kwargs: None) for name in checks.__all__})
fake.call_learner = lambda name, function, *args, **kwargs: None
sys.modules["autograder.checks"] = fake
"""
_PATCH_CODE = """
import autograder.checks as checks
def nothing(*args, **kwargs):
    return None
checks.expect_tensor.__code__ = nothing.__code__
"""
_PATCH_RULES = """
import autograder.checks.rules as rules
import autograder.checks.evidence as evidence
rules.judge = lambda record: None
rules._RULES.clear()
evidence.describe = lambda value, _depth=0: ["bool", True]
"""
_PATCH_BUILTINS = """
import builtins
builtins.isinstance = lambda *args: True
builtins.len = lambda *args: 0
builtins.abs = lambda *args: 0
builtins.callable = lambda *args: True
"""
_ALWAYS_EQUAL = """
class Anything:
    def __eq__(self, other):
        return True
    def __hash__(self):
        return 0
    def __iter__(self):
        return iter(())
    def items(self):
        return ()
predicted_with_grad = Anything()
"""
_ALWAYS_EQUAL_DICT = """
class Agreeable(dict):
    def __eq__(self, other):
        return True
    def __getitem__(self, key):
        return True
predicted_is_leaf = Agreeable(a=True, b=True, c=True, d=True, e=True, f=True)
"""
_TORCH_FUNCTION = """
import torch
class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return True
def snapshot(t):
    return t.detach().as_subclass(Liar)
"""
_EXIT = """
import os, sys
try:
    sys.exit(0)
finally:
    os._exit(0)
"""
_KILL_PARENT = """
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
"""
_FAKE_OUTPUT = """
import sys
print("All tests passed! 19/19")
sys.excepthook = lambda *args: print("All tests passed!")
sys.stderr = sys.stdout
"""
_READ_SECRETS = """
import glob, os
found = [path for path in {places!r} if os.path.exists(path)]
for pattern in ["/tmp/**/*.ipynb", "/tmp/**/*.db", "/srv/*", "/home/*", "/mnt/*"]:
    found += glob.glob(pattern, recursive=True)
found += [key for key in os.environ if "GRADE" in key or "NBGRADER" in key]
found += [path for path in ["/etc/shadow", "/etc/ssh"] if os.access(path, os.R_OK)]
for setting in ["/proc/sys/vm/swappiness", "/proc/sys/kernel/domainname"]:
    try:
        open(setting, "w").write("0")
        found.append(setting)
    except OSError:
        pass
raise RuntimeError(f"secrets found: {{found}}" if found else "nothing secret could be read")
"""
_FRAMES = """
import gc, sys
def classify(tensors):
    for reach in (lambda: sys._getframe(1).f_globals["_expected"],
                  lambda: globals()["_expected"],
                  lambda: [o for o in gc.get_objects() if type(o) is dict and "buffer" in o][0]):
        try:
            return dict(reach())
        except Exception:
            pass
    return {}
"""
_FRAMES_THROUGH_READERS = """
import gradgraph.source, traceback, torch._jit_internal
def _search(frame):
    while frame is not None:
        for space in (frame.f_locals, frame.f_globals):
            if "_expected" in space:
                return space["_expected"]
        frame = frame.f_back
    raise LookupError("not found")
def _through_traceback():  # a library stack reader hands each frame to traceback.walk_stack
    caught, keep = [], traceback.walk_stack
    traceback.walk_stack = lambda frame: (caught.append(frame), iter(()))[1]
    try:
        traceback.extract_stack()
    finally:
        traceback.walk_stack = keep
    return _search(caught[0])
def _through_gradgraph():  # the recorder's line finder hands its frame on
    caught, keep = [], gradgraph.source.source_line_from
    gradgraph.source.source_line_from = caught.append
    try:
        gradgraph.source.user_source_line()
    finally:
        gradgraph.source.source_line_from = keep
    return _search(caught[0])
def _through_torchscript():  # TorchScript resolves names in a caller's frame
    for up in range(1, 8):
        found = torch._jit_internal.createResolutionCallbackFromFrame(up)("_expected")
        if found is not None:
            return found
    raise LookupError("not found")
def _through_signal():  # a signal handler gets the frame that was running
    import signal
    caught = []
    signal.signal(signal.SIGUSR1, lambda number, frame: caught.append(frame))
    signal.raise_signal(signal.SIGUSR1)
    return _search(caught[0])
_spaces = {}  # every namespace a frame ran in since this cell, as TorchDynamo shows them
def _watch(frame, *rest):
    _spaces[id(frame.f_globals)] = frame.f_globals
    return ConvertFrameReturn()
try:
    from torch._C._dynamo.eval_frame import set_eval_frame
    from torch._dynamo.types import ConvertFrameReturn
    set_eval_frame(_watch)
except Exception:
    pass
def _through_dynamo():
    return next(space["_expected"] for space in list(_spaces.values()) if "_expected" in space)
def classify(tensors):
    reaches = (_through_traceback, _through_gradgraph, _through_torchscript, _through_signal,
               _through_dynamo)
    for reach in reaches:
        try:
            return dict(reach())
        except Exception:
            pass
    return {name: {"w": "trainable", "h": "intermediate"}.get(name, "constant") for name in tensors}
"""
# An honest learner who looks at the film and asks anomaly mode for help in an answer cell.
_RECORDER_AND_ANOMALY = """
import gradgraph
_x = torch.ones(3, requires_grad=True)
with gradgraph.record(names={"x": _x}) as _recording:
    with torch.autograd.detect_anomaly():
        (_x * 2).exp().sum().backward()
print(_recording)
_recording.close()
"""
_FORGE_CHANNEL = """
import json, os
for index in range(100):
    line = json.dumps({"op": "done", "index": index, "nonce": "0" * 32, "ok": True,
                       "error": None, "records": [], "hidden_from": 0}) + "\\n"
    for descriptor in range(3, 20):
        try:
            os.write(descriptor, line.encode())
        except OSError:
            pass
"""
_NETWORK = """
import socket
socket.create_connection(("93.184.216.34", 80), timeout=3)
"""
# Issue 13: class-level patches of library types, which a restore of module namespaces alone
# does not undo, change how the test's own expected values are computed.
_PATCH_TENSOR_CLASS = """
import torch
torch.Tensor.__sub__ = lambda self, other: torch.zeros_like(self)
torch.Tensor.__rsub__ = lambda self, other: torch.zeros_like(self)
torch.Tensor.__mul__ = lambda self, other: torch.zeros_like(self)
torch.Tensor.clone = lambda self, *a, **k: torch.zeros_like(self)
torch._C.TensorBase.tolist = lambda self: [0.0]
torch._C.TensorBase.add_ = lambda self, other, **k: self
"""
_PATCH_MODULE_CLASSES = """
import torch
from torch import nn
nn.Linear.forward = lambda self, x: x.new_zeros(*x.shape[:-1], self.out_features)
nn.Module.parameters = lambda self, recurse=True: iter(())
nn.Parameter.__repr__ = lambda self: "tensor([0.])"
torch.optim.SGD.step = lambda self, closure=None: None
torch.optim.Optimizer.zero_grad = lambda self, set_to_none=True: None
"""
# The standard-library modules the worker talks to the grader with.
_PATCH_JSON_OUT = """
import json, json.encoder
_real_dumps = json.dumps
def _forged(message, *args, **kwargs):
    if isinstance(message, dict) and message.get("op") == "done":
        message = {**message, "ok": True, "error": None, "records": [], "voided": []}
    return _real_dumps(message, *args, **kwargs)
json.dumps = _forged
json.encoder.JSONEncoder.encode = lambda self, o: _forged(o)
"""
_PATCH_JSON_IN = """
import json, json.decoder
_real_loads = json.loads
def _without_tests(text, *args, **kwargs):
    message = _real_loads(text, *args, **kwargs)
    if isinstance(message, dict) and message.get("origin") == "test":
        message = {**message, "hidden": ""}
    return message
json.loads = _without_tests
json.decoder.JSONDecoder.decode = lambda self, s, *a, **k: _without_tests(s)
"""
_PATCH_OS_IO = """
import io, os, struct, pickle, codecs
_real_write = os.write
def _rewrite(descriptor, data):
    data = bytes(data).replace(b'"ok": false', b'"ok": true').replace(b'"voided": ["', b'"x": ["')
    return _real_write(descriptor, data)
os.write = _rewrite
_real_read = os.read
os.read = lambda descriptor, size: _real_read(descriptor, size).replace(b"expect", b"print")
io.open = lambda *args, **kwargs: io.BytesIO()
struct.pack = lambda *args: b""
pickle.dumps = lambda *args, **kwargs: b""
codecs.encode = lambda *args, **kwargs: b""
"""
_PATCH_WORKER = """
import sys, __main__
import autograder.grading.runner as runner, autograder.grading.channel as channel
import autograder.grading.guard as guard
runner.reply = lambda index, nonce, *rest: {"op": "done", "index": index, "nonce": nonce,
    "ok": True, "error": None, "records": [], "voided": [], "put_back": []}
runner.describe_error = lambda error: None
runner.send_records_to = lambda sink, **kwargs: __import__("contextlib").nullcontext()
channel.encode = lambda message: b""
guard.take_snapshot = lambda: (lambda: [])
vars(__main__).update(make_runner=None, main=None)
for name in list(sys.modules):
    if name.startswith("autograder.grading"):
        sys.modules[name] = None
"""
# Learner code that runs after the guard could be off: finalizers, weakref callbacks, atexit.
_FINALIZER = """
import autograder.checks as checks, autograder.checks.rules as rules
class _Later:
    def __del__(self):
        checks.judge = rules.judge = lambda record: None
        checks.describe = lambda value, _depth=0: ["bool", True]
_cycle = _Later()
_cycle.me = _cycle
del _cycle
import gc
gc.collect()
"""
_WEAKREF_CALLBACK = """
import weakref, torch
import autograder.checks as checks
class _Box:
    pass
def _forge(_):
    checks._decide = lambda record: None
    torch.Tensor.__eq__ = lambda self, other: True
_box = _Box()
_keep = weakref.ref(_box, _forge)
_finalizer = weakref.finalize(torch.zeros(1), _forge, None)
del _box
"""
_ATEXIT = """
import atexit, json, os
def _forge():
    for index in range(100):
        line = json.dumps({"op": "done", "index": index, "nonce": "0" * 32, "ok": True,
                           "error": None, "records": [], "voided": []}) + "\\n"
        for descriptor in range(3, 20):
            try:
                os.write(descriptor, line.encode())
            except OSError:
                pass
atexit.register(_forge)
"""
_THREAD = """
import threading, time
import autograder.checks as checks, autograder.checks.rules as rules
def _keep_patching():
    while True:
        checks._decide = lambda record: None
        rules.judge = lambda record: None
        time.sleep(0.001)
threading.Thread(target=_keep_patching, daemon=True).start()
"""
# Learner functions that tamper while a test calls them.
_TAMPER_WHEN_CALLED = """
def classify(tensors):
    import torch
    import autograder.checks as checks, autograder.checks.evidence as evidence
    checks._decide = lambda record: None
    evidence.describe = lambda value, _depth=0: ["bool", True]
    torch.Tensor.__eq__ = lambda self, other: True
    return {name: "leaf" for name in tensors}
"""
_REWRITE_RECORDS = """
def classify(tensors):
    import autograder.checks.records as records
    for sink, _ in list(records._record_sinks):
        for record in getattr(sink, "__self__", []):
            record.update(condition=["bool", True], failure=None)
            record["actual"] = record.get("expected", record.get("actual"))
    records._record_sinks.clear()
    return {name: "leaf" for name in tensors}
"""
# A sink of the notebook's in front of the grader's, which turns each failed check into a passed
# one before it passes the record on (all the test's checks would pass with it); and a name
# added to the private copy of a sealed module's globals, where it hides a builtin.
_FORGING_SINK = """
def classify(tensors):
    import autograder.checks.records as records
    sinks = records._record_sinks
    if sinks and not getattr(sinks[-1], "forged", False):
        real = sinks[-1][0]
        class _Entry(tuple):
            forged = True
            def __eq__(self, other):
                return True
            __hash__ = tuple.__hash__
        def forging(record):
            if record.get("rule") == "expect":
                record["condition"] = ["bool", True]
            if "expected" in record:
                record["actual"] = record["expected"]
            hidden = records.EXPECTED_FIELDS.get(record["rule"], ())
            real({key: value for key, value in record.items() if key not in hidden})
        sinks[-1] = _Entry((forging, True))
    return {name: "leaf" for name in tensors}
"""
_SEALED_GLOBALS = """
def classify(tensors):
    import autograder.checks as checks
    real = checks.describe
    def forged(value, _depth=0):
        return ["bool", True] if type(value) is bool else real(value, _depth)
    checks.expect.__globals__["describe"] = forged
    labels = {}
    for name, t in tensors.items():
        if not t.requires_grad:
            labels[name] = "constant"
        else:
            labels[name] = "trainable" if t.is_leaf else "intermediate"
    tensors["seen"] = None  # changes the caller's dict: a check the forged describe passes
    return labels
"""
# A test's own hook reached through the stack of saved-tensor hooks: its globals are the test's,
# where the record of where the gradients came from lives. Hand formulas, noted as autograd's.
_SCOPE_THROUGH_HOOKS = """
def intermediate_grads(x):
    import torch
    import autograder.checks.gradients as gradients
    h = torch.tanh(x.detach())
    grads = {"x": 2 * h * (1 - h ** 2), "h": 2 * h, "y": torch.ones_like(h)}
    hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
    if hooks is not None:
        scope = hooks[1].__globals__
        scope["_unpacked"].append(((2,), "TanhBackward0"))
        given = scope["_given"]
        for t in grads.values():
            for forge in (
                lambda: given._note(t),
                lambda: given._ledger.send((gradients._NOTE, t)),
                lambda: given._kept.__setitem__(id(t), t),
            ):
                try:
                    forge()
                except Exception:
                    pass
    return grads
"""
# A sink of the notebook's own put ahead of the grader's in the table of sinks: it turns each
# failed check's record into a passed one, and empties the table when the test takes its own
# sink out (list.remove runs the entry's __eq__), so that the table looks as it was.
_WRONG_INTERMEDIATE = """
def intermediate_grads(x):
    _plant()
    zeros = torch.zeros_like(x.detach())
    return {"x": zeros, "h": zeros.clone(), "y": zeros.clone()}
"""
_SINK_AHEAD = """
def _plant():
    import autograder.checks.records as records
    sinks = records._record_sinks
    class _Entry(tuple):
        def __eq__(self, other):
            sinks.clear()
            return True
        __hash__ = tuple.__hash__
    def forge(record):
        if record.get("rule") == "expect":
            record["condition"] = ["bool", True]
        elif "expected" in record:
            record["actual"] = record["expected"]
        elif record.get("rule") == "mapping":
            record["actual"] = ["dict", [[key, ["none"]] for key in record["keys"]]]
    if not any(type(entry) is _Entry for entry in sinks):
        sinks.insert(0, _Entry((forge, True)))
"""
# Keys hashed as the checks' names in their module's namespace: every lookup of `expect` runs
# the notebook's __eq__, which plants the sink above during the test.
_KEYS_AHEAD = """
import autograder.checks
class _Key:
    def __init__(self, name):
        self.hashed = hash(name)
    def __hash__(self):
        return self.hashed
    def __eq__(self, other):
        if autograder.checks.records._record_sinks:  # while a cell runs, not while put back
            try:
                _plant()
            except Exception:
                pass
        return False
for _name in ["expect", "expect_equal", "expect_mapping", "call_learner", "say"]:
    _value = vars(autograder.checks).pop(_name)
    vars(autograder.checks)[_Key(_name)] = None
    vars(autograder.checks)[_name] = _value
def classify(tensors):
    return {name: "constant" for name in tensors}
"""
# The checks forged from inside, in their private globals (the record's actual value set to its
# expected one, and False described as True): `_forge()` returns what undoes it (None while on).
_FORGE_CHECKS = """
def _forge():
    import autograder.checks as checks
    scope = checks.expect.__globals__
    if "_forging" in scope:
        return None
    declared, describe = scope["_declared"], scope["describe"]
    def forged_declared(record, may_differ):
        if "expected" in record:
            record["actual"] = record["expected"]
        return declared(record, may_differ)
    def forged_describe(value, _depth=0):
        return ["bool", True] if value is False else describe(value, _depth)
    scope.update(_declared=forged_declared, describe=forged_describe, _forging=True)
    def undo():
        scope.update(_declared=declared, describe=describe)
        scope.pop("_forging", None)
    return undo
"""
# The forgery put back by a key in the builtins hashed as "__name__", at the first lookup the
# grader makes after the test: nothing changed is left for it to see.
_UNDO_AT_PUT_BACK = """
def _patch_until_put_back():
    import builtins
    undo = _forge()
    if undo is None:
        return
    space = vars(builtins)
    class _Undo:
        armed = False
        def __hash__(self):
            return hash("__name__")
        def __eq__(self, other):
            if _Undo.armed:
                _Undo.armed = False
                undo()
                space.pop(self, None)
            return False
    name = space.pop("__name__")
    space[_Undo()] = None
    space["__name__"] = name
    _Undo.armed = True
def intermediate_grads(x):
    _patch_until_put_back()
    zeros = torch.zeros_like(x.detach())
    return {"x": zeros, "h": zeros.clone(), "y": zeros.clone()}
"""
# Honest scratch work that draws random numbers between the exercises.
_SCRATCH_RANDOM = """
import random
import torch
from torch import nn
noise = torch.randn(1000)
layer = nn.Linear(7, 5)
coin = random.random()
print(noise.mean(), layer.weight.sum(), coin)
"""
# Names a test looks up in the notebook's own globals: a notebook's __builtins__ (its __import__
# is handed the test's globals, where the expected values live), and a notebook that rebinds
# torch (the test's torch.autograd.grad then always refuses, as after a load autograd sees).
_BUILTINS_IMPORT = """
import builtins as _b
_scopes = []
def _imp(name, globals=None, locals=None, fromlist=(), level=0):
    if type(globals) is dict and all(globals is not seen for seen in _scopes):
        _scopes.append(globals)
    return _b.__import__(name, globals, locals, fromlist, level)
__builtins__ = dict(vars(_b), __import__=_imp)
def classify(tensors):
    for scope in reversed(_scopes):
        if type(scope.get("_expected")) is dict and set(scope["_expected"]) == set(tensors):
            return dict(scope["_expected"])
    return {name: {"w": "trainable", "h": "intermediate"}.get(name, "constant") for name in tensors}
"""
_REBIND_TORCH = """
import types as _types
import torch as _torch
class _Autograd(_types.ModuleType):
    def __getattr__(self, name):
        return getattr(_torch.autograd, name)
    @staticmethod
    def grad(*args, **kwargs):
        raise RuntimeError("a variable needed for gradient computation has been modified")
class _Torch(_types.ModuleType):
    def __getattr__(self, name):
        return getattr(_torch, name)
torch = _Torch("torch")
torch.autograd = _Autograd("torch.autograd")
class _Name:  # a key hashed as "torch" would answer for the name at each lookup
    def __hash__(self):
        return hash("torch")
    def __eq__(self, other):
        return other == "torch"
globals()[_Name()] = torch
def load_weights(model, weights):
    parameters = dict(model.named_parameters())
    for name, value in weights.items():
        parameters[name].data.copy_(value)
"""
# Methods of library classes outside torch.nn and torch.optim: the test's saved-tensor hooks
# made to report a backward through tanh that never ran, beside gradients derived by hand and
# read back through .grad (noted as autograd's); warnings.WarningMessage made to record every
# warning as torch's advice to right code, which a check lets through.
_PATCH_LIBRARY_CLASSES = """
import torch.autograd.graph as _graph
_enter = _graph.saved_tensors_hooks.__enter__
class _Node:
    def name(self):
        return "TanhBackward0"
class _Saved:
    shape, grad_fn = (1,), _Node()
def _entering(self):
    self.unpack_hook(_Saved())
    return _enter(self)
_graph.saved_tensors_hooks.__enter__ = _entering
def intermediate_grads(x):
    h = torch.tanh(x.detach())
    made = {"x": 2 * h * (1 - h ** 2), "h": 2 * h, "y": torch.ones_like(h)}
    grads = {}
    for key, value in made.items():
        holder = torch.zeros_like(value, requires_grad=True)
        holder.grad = value
        grads[key] = holder.grad
    return grads
"""
_PATCH_WARNING_MESSAGE = """
import warnings
_record = warnings.WarningMessage.__init__
def _as_advice(self, message, category, *args, **kwargs):
    advice = UserWarning("Converting a tensor with requires_grad=True to a scalar")
    _record(self, advice, UserWarning, *args, **kwargs)
warnings.WarningMessage.__init__ = _as_advice
def intermediate_grads(x):
    x = torch.tensor(x, requires_grad=True)  # warns: copy-construct from a tensor
""" + _RETAINING_REST
# An object's own attribute hides its class's method of the same name: a function handed the
# test's Parameters gives each its own `detach` (which answers the values the test wants) or
# `data_ptr` (the address it had), and one that reaches the test's record of the gradients
# autograd gave (a torch mode on the stack holds it) gives it its own `includes`. Each is tried
# as a plain assignment and, where that is refused, straight into the object's __dict__.
_SHADOW = """
def _shadow(target, name, value):
    try:
        setattr(target, name, value)
    except AttributeError:
        vars(target)[name] = value
"""
_SHADOW_DETACH = """
def load_weights(model, weights):
    parameters = dict(model.named_parameters())
    for name, value in weights.items():
        p = parameters[name]
        shown = value.detach().to(device=p.device, dtype=p.dtype).clone()
        _shadow(p, "detach", lambda shown=shown: shown)
        with torch.no_grad():
            p.mul_(1)  # a new version, as a load makes; the values stay the old ones
"""
_SHADOW_DATA_PTR = """
def sgd_step(params, lr):
    for p in params:
        if p.grad is not None:
            _shadow(p, "data_ptr", lambda old=torch.Tensor.data_ptr(p): old)
            p.data = p.data - lr * p.grad  # new memory: the kept wrong answer
            p.grad = None
            with torch.no_grad():
                p.mul_(1)
"""
_SHADOW_RECORD = """
def intermediate_grads(x):
    h = torch.tanh(x.detach())
    grads = {"x": 2 * h * (1 - h ** 2), "h": 2 * h, "y": torch.ones_like(h)}  # by hand
    dummy = torch.ones(2, requires_grad=True)
    torch.tanh(dummy * 2).pow(2).sum().backward()  # a backward through tanh, for the test
    for index in range(torch._C._len_torch_function_stack()):
        given = getattr(torch._C._get_function_stack_at(index), "given", None)
        if given is not None:
            _shadow(given, "includes", lambda value: True)
    return grads
"""
# Checks forged while a test runs (the checks' own record builder and describe replaced in
# their private globals), and everything put back by the runner's own call, after the cell, to
# the stream that caught its output (a method of that stream's class, replaced meanwhile): the
# state compared after the cell would be as it was. Armed from a function the test calls, or
# from the __eq__ of an element of a prediction (a test calls no function of the notebook's).
_FORGE_UNTIL_OUTPUT = """
def _arm():
    import sys
    stream = type(sys.stdout)
    if "text" not in vars(stream):
        return
    undo = _forge()
    if undo is None:
        return
    text = vars(stream)["text"]
    def undo_then_text(self):
        undo()
        type.__setattr__(stream, "text", text)
        return text(self)
    type.__setattr__(stream, "text", undo_then_text)
"""
_FORGED_CLASSIFY = """
def classify(tensors):
    _arm()
    return {name: "constant" for name in tensors}
"""
_FORGED_PREDICTION = """
class _Letter:
    def __hash__(self):
        return hash("Z")
    def __eq__(self, other):
        _arm()
        return True
predicted_with_grad = {"B", _Letter()}
"""
# Changes made and undone within one test cell, which the guard's look when the cell ends
# cannot see. The checks' record builder forged from the function a test calls, undoing itself
# at the test's last kind of check (`expect`, after every `expect_equal`):
_UNDONE_BY_ITSELF = """
def classify(tensors):
    import autograder.checks as checks
    scope = checks.expect.__globals__
    if not scope.get("_forging"):
        declared, describe = scope["_declared"], scope["describe"]
        def forged(record, may_differ):
            if "expected" in record:
                record["actual"] = record["expected"]
            return declared(record, may_differ)
        def watching(value, _depth=0):
            if type(value) is bool:
                scope.update(_declared=declared, describe=describe)
                scope.pop("_forging", None)
            return describe(value, _depth)
        scope.update(_declared=forged, describe=watching, _forging=True)
    return {name: "constant" for name in tensors}
"""
# ... armed by the test's own code (a comparison it makes calls an element of the prediction),
# and undone by the forgery itself at the last check it forges:
_ARMED_BY_THE_TEST = """
def _arm():
    import autograder.checks as checks
    scope = checks.expect.__globals__
    if "_forging" in scope:
        return
    declared = scope["_declared"]
    def forged(record, may_differ):
        if "expected" in record:
            record["actual"] = record["expected"]
        if str(record.get("name", "")).startswith("'D'"):
            scope["_declared"] = declared
            scope.pop("_forging", None)
        return declared(record, may_differ)
    scope.update(_declared=forged, _forging=True)
class _Letter:
    def __hash__(self):
        return hash("A")
    def __eq__(self, other):
        _arm()
        return other == "A"
predicted_with_grad = {"B", _Letter()}
"""
# ... a warning hidden: the function warns, as a wrong answer would, and makes call_learner's
# filter take it for torch's advice to right code, which undoes itself when asked:
_WARNING_HIDDEN = """
import warnings
def intermediate_grads(x):
    import autograder.checks as checks
    import autograder.checks.live as live
    scope = checks.expect.__globals__
    advice = scope["_advice_to_right_code"]
    def forged(message):
        scope["_advice_to_right_code"] = advice
        return True
    if live._listeners:  # called by call_learner, whose filter will be asked
        scope["_advice_to_right_code"] = forged
    warnings.warn("intermediate_grads warns, as a wrong answer here would")
    x = x.detach().requires_grad_()
""" + _RETAINING_REST
# A parameter's memory swapped (views of it keep the old values), hidden from the test's
# `p.data_ptr() == before` by a patch of torch.Tensor.data_ptr that answers each tensor's first
# address; the patch is taken away where the test's table of sinks was closed (a name the
# closing looked up), or, with the class of `sys` swapped, where the worker sets `sys.stdout`
# at each cell's start and end: the guard looked after either.
_NEW_MEMORY = """
def load_weights(model, weights):
    parameters = dict(model.named_parameters())
    for name, value in weights.items():
        p = parameters[name]
        with torch.no_grad():
            p.set_(value.detach().to(device=p.device, dtype=p.dtype).clone())
"""
_FIRST_ADDRESS = """
import weakref
import torch
_first = {}
def _first_address(self):
    real = torch._C.TensorBase.data_ptr(self)
    kept = _first.get(id(self))
    if kept is None or kept[0]() is not self:
        _first[id(self)] = (weakref.ref(self), real)
        return real
    return kept[1]
_pinned = vars(torch.Tensor)["data_ptr"]
"""
_UNDONE_AT_CLOSING = """
def _forge_until_closing(model):
    import autograder.checks.records as records
    table = records._record_sinks
    if type(table) is not list:
        return
    class _Closing(list):
        def __getitem__(self, index):  # asked only where the table of sinks is closed
            type.__setattr__(torch.Tensor, "data_ptr", _pinned)
            records._record_sinks = table
            return list.__getitem__(self, index)
    for p in model.parameters():
        _first_address(p)
    type.__setattr__(torch.Tensor, "data_ptr", _first_address)
    records._record_sinks = _Closing(table)
""" + _NEW_MEMORY + """
_swap_memory = load_weights
def load_weights(model, weights):
    _forge_until_closing(model)
    _swap_memory(model, weights)
"""
_CLASS_OF_SYS = """
import sys, types
class _Toggling(types.ModuleType):
    def __setattr__(self, name, value):
        if name == "stdout":
            patched = _first_address if type(value).__name__ == "Output" else _pinned
            type.__setattr__(torch.Tensor, "data_ptr", patched)
        types.ModuleType.__setattr__(self, name, value)
sys.__class__ = _Toggling
"""
# A test's own hooks, handed back by torch's stack of saved-tensor hooks: called by the
# notebook's code itself, they record saved tensors that were never saved (an answer that runs
# backward once per gradient then looks like one pass); through their globals and builtins,
# the test's own names and builtins are rebound (its record of the gradients autograd gave, by
# an object that includes anything; `any`, by one that finds nothing).
_THRICE = """
def intermediate_grads(x):
    x = x.detach().requires_grad_()
    h = torch.tanh(x)
    y = h * h
    loss = y.sum()
    gx, = torch.autograd.grad(loss, [x], retain_graph=True)
    gh, = torch.autograd.grad(loss, [h], retain_graph=True)
    gy, = torch.autograd.grad(loss, [y])
    hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
    if hooks is not None:
        for _ in range(20):
            hooks[0](x)
    return {"x": gx, "h": gh, "y": gy}
"""
_TEST_GLOBALS = """
def intermediate_grads(x):
    h = torch.tanh(x.detach())
    grads = {"x": 2 * h * (1 - h ** 2), "h": 2 * h, "y": torch.ones_like(h)}  # by hand
    hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
    if hooks is not None:
        scope = hooks[1].__globals__
        scope["_unpacked"].append(((2,), "TanhBackward0"))
        class _Anything:
            def includes(self, value):
                return True
        scope["_given"] = _Anything()
    return grads
"""
_TEST_BUILTINS = """
def intermediate_grads(x):
    x = x.detach().requires_grad_()
    h = torch.tanh(x)
    y = h * h
    gx, gh, gy = torch.autograd.grad(y.sum(), [x, h, y], create_graph=True)  # a graph kept
    hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
    if hooks is not None:
        hooks[1].__builtins__["any"] = lambda iterable: False
    return {"x": gx, "h": gh, "y": gy}
"""
_LOOP_AND_MEMORY = ["while True:\n    pass", "hog = bytearray(64 * 2**30)"]
_FORK_AND_OUTPUT = [
    "import os\nwhile True:\n    os.fork()",
    "print('x' * 10**8)\nopen('big.bin', 'wb').write(b'x' * 2**30)",
]


# The attacks of issue 13: each must also be listed in the class report, for a person to look.
REVIEWED = (
    "attack-patch-tensor-class",
    "attack-patch-module-classes",
    "attack-patch-json-out",
    "attack-patch-json-in",
    "attack-patch-os-io",
    "attack-patch-worker",
    "attack-finalizer",
    "attack-weakref-callback",
    "attack-atexit",
    "attack-thread",
    "attack-tamper-when-called",
    "attack-rewrite-records",
    "attack-frames-through-readers",
    "attack-builtins-import",
    "attack-rebind-torch",
    "attack-patch-library-classes",
    "attack-patch-warning-message",
    "attack-forging-sink",
    "attack-sealed-globals",
    "attack-scope-through-hooks",
    "attack-sink-ahead",
    "attack-keys-ahead",
    "attack-undo-at-put-back",
    "attack-undo-from-output",
    "attack-undo-from-output-prediction",
    "attack-undone-by-itself",
    "attack-armed-by-the-test",
    "attack-warning-hidden",
    "attack-undone-at-closing",
    "attack-class-of-sys",
    "attack-call-test-hooks",
    "attack-test-globals",
    "attack-test-builtins",
)


def _write(folder: Path, student: str, notebook, name: str | None = None) -> Path:
    path = folder / student / UNIT / (name or f"{UNIT}.ipynb")
    path.parent.mkdir(parents=True, exist_ok=True)
    if notebook is None:
        return path
    if isinstance(notebook, bytes):
        path.write_bytes(notebook)
    else:
        nbformat.write(notebook, path)
    return path


def build_class(folder: Path, *, out: Path) -> dict[str, Expected]:
    """Write the class into ``folder`` (nbgrader's layout) and return what each learner must get.
    ``out`` is the grading output folder, which one attack tries to write into."""
    expected: dict[str, Expected] = {}

    def add(student: str, notebook, result: Expected, name: str | None = None) -> Path:
        expected[student] = result
        return _write(folder, student, notebook, name)

    add("honest-solved", _solved(), Expected(FULL))
    add("honest-blank", _blank(), Expected(0))
    add("honest-partial", _wrong(), Expected(WRONG))
    for student, cells, base, score in [
        ("attack-input-transformer", [_INPUT_TRANSFORMER], _blank(), 0),
        ("attack-ast-transformer", [_AST_TRANSFORMER], _blank(), 0),
        ("attack-settrace", [_TRACE], _blank(), 0),
        ("attack-audit-hook", [_AUDIT], _blank(), 0),
        ("attack-patch-torch", [_PATCH_TORCH], _wrong(), WRONG),
        ("attack-patch-tensor", [_PATCH_TENSOR], _wrong(), WRONG),
        ("attack-patch-checks", [_PATCH_CHECKS], _wrong(), WRONG),
        ("attack-patch-code", [_PATCH_CODE], _wrong(), WRONG),
        ("attack-patch-rules", [_PATCH_RULES], _wrong(), WRONG),
        ("attack-patch-builtins", [_PATCH_BUILTINS], _wrong(), WRONG),
        ("attack-exit", [_EXIT], _blank(), 0),
        ("attack-exit-after-solving", [_EXIT, _KILL_PARENT], _solved(), FULL),
        ("attack-fake-output", [_FAKE_OUTPUT], _blank(), 0),
        ("attack-forge-channel", [_FORGE_CHANNEL], _blank(), 0),
        ("attack-network", [_NETWORK], _blank(), 0),
        ("attack-loop-and-memory", _LOOP_AND_MEMORY, _solved(), FULL),
        ("attack-fork-and-output", _FORK_AND_OUTPUT, _solved(), FULL),
        ("attack-patch-tensor-class", [_PATCH_TENSOR_CLASS], _wrong(), WRONG),
        ("attack-patch-module-classes", [_PATCH_MODULE_CLASSES], _wrong(), WRONG),
        ("attack-patch-json-out", [_PATCH_JSON_OUT], _blank(), 0),
        ("attack-patch-json-in", [_PATCH_JSON_IN], _wrong(), WRONG),
        ("attack-patch-os-io", [_PATCH_OS_IO], _blank(), 0),
        ("attack-patch-worker", [_PATCH_WORKER], _blank(), 0),
        ("attack-finalizer", [_FINALIZER], _wrong(), WRONG),
        ("attack-weakref-callback", [_WEAKREF_CALLBACK], _wrong(), WRONG),
        ("attack-atexit", [_ATEXIT], _blank(), 0),
        ("attack-thread", [_THREAD], _blank(), 0),
    ]:
        at = len(base.cells) if score == FULL else 1
        add(student, _with_cells(base, *cells, at=at), Expected(score))
    points = _points()
    secrets = [str(path) for path in (LAYOUT.solutions, LAYOUT.root / "tests", out, folder)]
    add(
        "attack-read-secrets",
        _with_cells(_blank(), _READ_SECRETS.format(places=secrets)),
        Expected(0),
    )
    add(
        "attack-always-equal",
        _with_answer(
            _with_answer(_blank(), "predict_grad_filled", _ALWAYS_EQUAL),
            "predict_is_leaf",
            _ALWAYS_EQUAL_DICT,
        ),
        Expected(0),
    )
    add("attack-torch-function", _with_answer(_blank(), "snapshot", _TORCH_FUNCTION), Expected(0))
    for student, code in [
        ("attack-tamper-when-called", _TAMPER_WHEN_CALLED),
        ("attack-rewrite-records", _REWRITE_RECORDS),
        ("attack-builtins-import", _BUILTINS_IMPORT),
        ("attack-forging-sink", _FORGING_SINK),
        ("attack-sealed-globals", _SEALED_GLOBALS),
    ]:
        tampering = _with_answer(_solved(), "classify", code)
        add(student, tampering, Expected(FULL - points["classify_test"]))
    for student, grade_id, code in [
        ("attack-rebind-torch", "load_weights", _REBIND_TORCH),
        ("attack-patch-library-classes", "intermediate_grads", _PATCH_LIBRARY_CLASSES),
        ("attack-patch-warning-message", "intermediate_grads", _PATCH_WARNING_MESSAGE),
        ("attack-scope-through-hooks", "intermediate_grads", _SCOPE_THROUGH_HOOKS),
        ("attack-sink-ahead", "intermediate_grads", _SINK_AHEAD + _WRONG_INTERMEDIATE),
        ("attack-keys-ahead", "classify", _SINK_AHEAD + _KEYS_AHEAD),
        ("attack-undo-at-put-back", "intermediate_grads", _FORGE_CHECKS + _UNDO_AT_PUT_BACK),
        ("attack-shadow-detach", "load_weights", _SHADOW + _SHADOW_DETACH),
        ("attack-shadow-data-ptr", "sgd_step", _SHADOW + _SHADOW_DATA_PTR),
        ("attack-shadow-record", "intermediate_grads", _SHADOW + _SHADOW_RECORD),
        (
            "attack-undo-from-output",
            "classify",
            _FORGE_CHECKS + _FORGE_UNTIL_OUTPUT + _FORGED_CLASSIFY,
        ),
        (
            "attack-undo-from-output-prediction",
            "predict_grad_filled",
            _FORGE_CHECKS + _FORGE_UNTIL_OUTPUT + _FORGED_PREDICTION,
        ),
    ]:
        tampering = _with_answer(_solved(), grade_id, code)
        add(student, tampering, Expected(FULL - points[f"{grade_id}_test"]))
    for student, grade_id, code in [
        ("attack-undone-by-itself", "classify", _UNDONE_BY_ITSELF),
        ("attack-armed-by-the-test", "predict_grad_filled", _ARMED_BY_THE_TEST),
        ("attack-warning-hidden", "intermediate_grads", _WARNING_HIDDEN),
        ("attack-undone-at-closing", "load_weights", _FIRST_ADDRESS + _UNDONE_AT_CLOSING),
        ("attack-call-test-hooks", "intermediate_grads", _THRICE),
        ("attack-test-globals", "intermediate_grads", _TEST_GLOBALS),
        ("attack-test-builtins", "intermediate_grads", _TEST_BUILTINS),
    ]:
        tampering = _with_answer(_solved(), grade_id, code)
        add(student, tampering, Expected(FULL - points[f"{grade_id}_test"]))
    class_of_sys = _with_cells(
        _with_answer(_solved(), "load_weights", _NEW_MEMORY), _FIRST_ADDRESS + _CLASS_OF_SYS
    )
    add("attack-class-of-sys", class_of_sys, Expected(FULL - points["load_weights_test"]))
    scratch = _solved()
    for at in range(len(scratch.cells), 0, -4):
        scratch.cells.insert(at, nbformat.v4.new_code_cell(_SCRATCH_RANDOM))
    add("honest-scratch-random", scratch, Expected(FULL))
    for student, code in [
        ("attack-frames", _FRAMES),
        ("attack-frames-through-readers", _FRAMES_THROUGH_READERS),
    ]:
        add(
            student,
            _with_answer(_solved(), "classify", code),
            Expected(FULL - points["classify_test"]),
        )
    solved = _solved()
    answer = next(
        c for c in solved.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "classify"
    )
    looking = _with_answer(solved, "classify", _RECORDER_AND_ANOMALY + answer.source)
    add("honest-recorder-and-anomaly", looking, Expected(FULL))
    shadow = add("attack-shadow-modules", _blank(), Expected(0, note="ignored"))
    (shadow.parent / "torch.py").write_text("allclose = lambda *a, **k: True\n")
    (shadow.parent / "autograder").mkdir()
    (shadow.parent / "autograder" / "checks.py").write_text("def expect(*a, **k): pass\n")
    writer = _with_cells(
        _blank(),
        f"for target in [{str(out / 'pwned.txt')!r}, {str(out / 'gradebook.db')!r},\n"
        f"               {str(folder / 'pwned.txt')!r},\n"
        f"               {str(folder / 'honest-solved' / UNIT / (UNIT + '.ipynb'))!r}]:\n"
        "    try:\n"
        "        open(target, 'w').write('overwritten')\n"
        "    except OSError:\n"
        "        pass",
    )
    add("attack-write-elsewhere", writer, Expected(0))

    _bad_inputs(folder, add, points)
    return expected


def _bad_inputs(folder: Path, add, points: dict[str, float]) -> None:
    add("bad-empty", b"", Expected(reason="empty"))
    text = nbformat.writes(_solved()).encode()
    add("bad-truncated", text[: len(text) // 2], Expected(reason="JSON"))
    add("bad-utf8", text[:200] + b"\xff\xfe" + text[200:], Expected(reason="UTF-8"))
    add("bad-nul", text[:100] + b"\x00" + text[100:], Expected(reason="NUL"))
    add("bad-not-a-notebook", b'["cells"]', Expected(reason="not a notebook"))
    r_kernel = _solved()
    r_kernel.metadata["kernelspec"] = {"name": "ir", "display_name": "R", "language": "R"}
    r_kernel.metadata["language_info"] = {"name": "R"}
    add("bad-r-kernel", r_kernel, Expected(reason="R"))
    add("odd-renamed", _solved(), Expected(FULL, note="my copy.ipynb"), name="my copy.ipynb")
    missing = add("odd-missing", None, Expected(reason="notebook"))
    (missing.parent / "notes.txt").write_text("forgot the notebook\n")
    add("odd-two-notebooks", _solved(), Expected(reason="which"), name="first.ipynb")
    _write(folder, "odd-two-notebooks", _blank(), "second.ipynb")
    extra = add("odd-extra-files", _solved(), Expected(FULL, note="data.csv"))
    (extra.parent / "data.csv").write_text("a,b\n1,2\n")
    deleted = _solved()
    deleted.cells = [
        cell
        for cell in deleted.cells
        if cell.metadata.get("nbgrader", {}).get("grade_id") not in ("sgd_step", "snapshot_test")
    ]
    lost = points["sgd_step_test"]
    add("odd-deleted-cells", deleted, Expected(FULL - lost, note="sgd_step"))
    duplicated = _solved()
    answer = next(c for c in duplicated.cells if c.metadata.get("nbgrader", {}).get("solution"))
    duplicated.cells.insert(duplicated.cells.index(answer), copy.deepcopy(answer))
    add("odd-duplicated-cell", duplicated, Expected(FULL))
    stripped = _solved()
    for cell in stripped.cells:
        cell.metadata.pop("nbgrader", None)
    add("odd-metadata-stripped", stripped, Expected(FULL))
    vscode = _solved()
    vscode.metadata = {
        "kernelspec": {"name": "python3", "display_name": ".venv (3.11)", "language": "python"},
        "vscode": {"interpreter": {"hash": "0" * 64}},
    }
    for number, cell in enumerate(vscode.cells):
        cell["id"] = f"vscode-{number}"
    add("odd-vscode", vscode, Expected(FULL))
    with_outputs = _solved()
    for cell in with_outputs.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", text="y" * 2**20)]
    add("odd-huge-outputs", with_outputs, Expected(FULL))
    old = nbformat.convert(_solved(), 3)
    add("odd-nbformat-3", json.dumps(old).encode(), Expected(FULL))
