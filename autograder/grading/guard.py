"""What keeps a submission's code from reaching the grading machinery inside the worker.

Three layers, each set up before any learner code runs:

* :func:`autograder.grading.audit.install_audit_hook` refuses what could reach past the rest;
  once armed it stays armed until the child is thrown away, so a finalizer, a weakref
  callback or a test-called function of the notebook runs guarded too;
* :func:`seal` gives a module's functions a private copy of its globals: a later
  ``module.name = ...`` changes what the notebook sees, never what those functions call;
* :func:`take_snapshot` records what tests rely on (builtins, the modules in ``sys.modules``,
  the namespaces of torch, the course's packages (with the private copies :func:`seal` made)
  and the standard-library modules the worker uses, the functions and classes of every other
  torch module, the class attributes of torch's Python classes and the course's own, the
  hooks torch runs for every module or optimizer, the garbage collector's callbacks, and
  autograd's process-wide switches: grad mode, saved-tensor hooks, torch function and dispatch
  modes, dispatch keys, and torch's settings such as anomaly detection and the default dtype)
  and returns a function that reports what changed and puts it back.

Example::

    >>> import types
    >>> module = types.ModuleType("demo")
    >>> code = "def double(x):\\n    return twice(x)\\ndef twice(x):\\n    return 2 * x"
    >>> exec(code, vars(module))
    >>> seal(module)
    >>> module.twice = lambda x: 0
    >>> module.double(21)
    42
"""

from __future__ import annotations

import builtins
import contextlib
import copyreg
import gc
import sys
import types
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import repeat
from operator import is_not, ne
from typing import Any

from autograder.grading.audit import PROTECTED

__all__ = ["seal", "settle_optimizers", "take_snapshot", "withdraw_unaudited"]

# The standard-library modules the worker's channel and runner, and the checks, use.
_STDLIB = (
    *("json", "json.encoder", "json.decoder", "os", "io", "struct", "pickle", "codecs"),
    *("re", "stat", "textwrap", "contextlib", "dataclasses", "functools", "pathlib", "types"),
    "traceback",
)
# Where torch keeps hooks that run for every module or optimizer (register_module_forward_hook,
# register_optimizer_step_pre_hook): tables of ``_global_...`` names
_GLOBAL_HOOKS = ("torch.nn.modules.module", "torch.optim.optimizer")
# What torch sets and never puts back itself (which kind the global backward hooks are, left
# set after they are removed): it changes nothing while their table is empty
_FLAGS = frozenset({"torch.nn.modules.module._global_is_full_backward_hook"})
_FunctionType = types.FunctionType
_dict_get = dict.get
_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, partial)
_MISSING = object()
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a static type; setting an attribute fails
_proxy_get = types.MappingProxyType.get
_PLAIN_DATA = frozenset({int, float, bool, str, bytes, type(None)})


def seal(module: types.ModuleType) -> None:
    """Rebind every function defined in ``module`` to a private copy of its namespace."""
    namespace = vars(module)
    private = dict(namespace)
    for name, value in namespace.items():
        if type(value) is _FunctionType and value.__globals__ is namespace:
            copy = _FunctionType(
                value.__code__, private, value.__name__, value.__defaults__, value.__closure__
            )
            copy.__kwdefaults__ = value.__kwdefaults__
            copy.__qualname__, copy.__doc__ = value.__qualname__, value.__doc__
            copy.__module__, copy.__annotations__ = value.__module__, value.__annotations__
            copy.__dict__.update(value.__dict__)
            private[name] = copy
    namespace.update({key: value for key, value in private.items() if value is not namespace[key]})


def withdraw_unaudited() -> dict[str, Callable[..., Any]]:
    """Put a function that refuses in place of each library function that would hand a
    notebook a running frame, a process of its own, torch's kernels or a test's own hooks,
    where the audit hook cannot see it, in every namespace that holds it (found through the
    garbage collector, before any learner code runs). Return the real functions by name, for
    the guard alone (:func:`take_snapshot`'s ``kept``).

    A signal handler is called with the frame that was running (``signal.signal``), TorchDynamo
    calls back with each frame about to run (``set_eval_frame`` and its kin), and
    ``_imp.create_builtin`` would make a fresh ``_signal`` module with its ``signal``.
    ``_posixsubprocess.fork_exec`` runs any program (``subprocess`` raises the audit event, not
    it): a Python started that way would have no audit hook, and could read the worker's
    memory. ``torch._C._dispatch_library`` (under ``torch.library.Library``) would put a
    kernel of the notebook's in place of torch's own (``aten::eq`` answering True), under
    every test's computations; what torch registers lazily is loaded before (see the
    worker's preload). ``torch._C._autograd._top_saved_tensors_default_hooks`` would hand back
    the saved-tensor hooks a test set around the call of a notebook's function (functions of
    the test's, which record what autograd saved and read back, and hold the test's globals):
    the notebook's code could call them itself, and forge what they record; in its place, a
    stand-in says whether hooks are set (what ``gradgraph`` asks) and hands out two that
    refuse to run (:func:`_withheld_hooks`).

    Example (in a child process of its own: what it withdraws stays withdrawn)::

        >>> import subprocess, sys
        >>> code = ("import signal; from autograder.grading.guard import withdraw_unaudited;"
        ...         "withdraw_unaudited(); signal.signal(signal.SIGUSR1, print)")
        >>> run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        >>> "does not allow signal.signal" in run.stderr
        True
    """
    import _imp
    import _posixsubprocess
    import _signal
    import importlib
    import signal

    import torch

    for module in sys.builtin_module_names:  # loaded now: no later import needs create_builtin
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    frames = torch._C._dynamo.eval_frame
    givers = {
        "signal.signal": [_signal.signal, signal.signal],
        "_imp.create_builtin": [_imp.create_builtin],
        "_posixsubprocess.fork_exec": [_posixsubprocess.fork_exec],
        "torch._C._dispatch_library": [torch._C._dispatch_library],
        "torch._C._autograd._top_saved_tensors_default_hooks": [
            torch._C._autograd._top_saved_tensors_default_hooks
        ],
        **{
            f"torch._C._dynamo.eval_frame.{name}": [getattr(frames, name)]
            for name in (
                "set_eval_frame",
                "set_bytecode_debugger_callback",
                "set_code_exec_strategy",
                "set_guard_complete_hook",
                "set_guard_error_hook",
                "_get_frame_value_stack_with_depth",
            )
            if hasattr(frames, name)
        },
    }
    kept = {name: functions[0] for name, functions in givers.items()}
    for name, functions in givers.items():
        refusal = _refusal(name, clears=name.endswith(".set_eval_frame"))
        if name.endswith("._top_saved_tensors_default_hooks"):
            refusal = _withheld_hooks(functions[0])
        for function in functions:
            for holder in gc.get_referrers(function):
                if type(holder) is dict and holder is not kept:
                    for key in [key for key, value in holder.items() if value is function]:
                        holder[key] = refusal
    return kept


def _refusal(name: str, clears: bool = False) -> Callable[..., Any]:
    """A function that refuses to do what ``name`` does; with ``clears``, it lets a caller set
    the callback to none (torch's ``disable`` wrappers, around optimizers and checkpoints, set
    none and put back what was there: none, since nothing else can be set)."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        if clears and len(args) == 1 and args[0] in (None, False) and not kwargs:
            return None
        raise RuntimeError(f"the grading sandbox does not allow {name}")

    refused.__qualname__ = refused.__name__ = name.rsplit(".", 1)[-1]
    return refused


def _withheld_hooks(top: Callable[[bool], Any]) -> Callable[..., Any]:
    """A stand-in for torch's ``_top_saved_tensors_default_hooks`` (``top``): ``None`` where no
    saved-tensor hooks are set, else a pair of functions that refuse to run, never the hooks
    themselves. ``top`` is held in a generator's frame, which no notebook can read (the audit
    hook refuses ``gi_frame``), not in a closure or a default that it could.

    >>> stand_in = _withheld_hooks(lambda ignore: None)
    >>> stand_in(False) is None
    True
    >>> pack, unpack = _withheld_hooks(lambda ignore: ("the test's", "hooks"))(False)
    >>> pack(1)
    Traceback (most recent call last):
    ...
    RuntimeError: the grading sandbox does not hand a test's saved-tensor hooks to other code
    """
    def hook(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "the grading sandbox does not hand a test's saved-tensor hooks to other code"
        )

    answers = _hooks_answers(top, (hook, hook))
    next(answers)
    send = answers.send

    def _top_saved_tensors_default_hooks(ignore_is_tracing: bool = False) -> Any:
        return send(ignore_is_tracing is True)

    return _top_saved_tensors_default_hooks


def _hooks_answers(
    top: Callable[[bool], Any], stand_ins: tuple[Any, Any]
) -> Iterator[tuple[Any, Any] | None]:
    """The generator behind :func:`_withheld_hooks`: sent whether to ignore tracing, it yields
    ``None`` or ``stand_ins``."""
    ignore = yield None
    while True:
        ignore = yield None if top(ignore) is None else stand_ins


def _classes(modules: Iterable[types.ModuleType]) -> list[type]:
    """Torch's Python classes tests rely on (tensors, modules, parameters, optimizers,
    autograd functions), the classes of the standard-library modules the worker uses, and the
    course's own, each once."""
    import torch

    bases = (torch.Tensor, torch.nn.Module, torch.optim.Optimizer, torch.autograd.Function)
    found = {id(kind): kind for kind in (torch.Tensor, torch._C.TensorBase, type(torch.Tensor))}
    for module in modules:
        owner = module.__name__.split(".")[0]
        for value in list(vars(module).values()):
            if not isinstance(value, type):
                continue
            if str(value.__module__).lstrip("_").startswith(owner) and (
                owner != "torch" or issubclass(value, bases)
            ):
                found[id(value)] = value
    return list(found.values())


def _other_torch_classes(modules: Iterable[types.ModuleType], known: list[type]) -> list[type]:
    """Every other class of torch's Python code that ``modules`` (torch's) hold, each once:
    context managers and modes a test or a check uses (``torch.autograd.graph``'s
    ``saved_tensors_hooks``, ``torch.overrides.TorchFunctionMode``, grad-mode classes) whose
    methods a notebook could replace. Found by type alone (no attribute of a module is asked
    for); types that cannot be changed (torch's C types) are left out."""
    seen = {id(kind) for kind in known}
    found: dict[int, type] = {}
    for module in modules:
        for value in list(vars(module).values()):
            if not issubclass(type(value), type) or id(value) in seen:
                continue
            if value.__flags__ & _IMMUTABLE_TYPE:
                continue
            if str(vars(value).get("__module__", "")).startswith("torch"):
                found[id(value)] = value
    return list(found.values())


def _functions(namespace: dict[str, Any]) -> dict[str, Any]:
    """The functions and classes in a module's namespace (by type alone: nothing in it is
    asked anything, so a lazy or deprecated attribute runs no code)."""
    return {
        key: value
        for key, value in namespace.items()
        if type(value) in _FUNCTION_TYPES or issubclass(type(value), type)
    }


def _same_items(current: Any, saved: Any) -> bool:
    """Whether a container still holds the very objects it held (compared by identity, so that
    no object of the notebook's is asked to compare itself)."""
    if len(current) != len(saved):
        return False
    if type(saved) in (dict, OrderedDict):
        return all(current.get(key, _MISSING) is value for key, value in saved.items())
    if type(saved) is list:
        return all(a is b for a, b in zip(current, saved, strict=True))
    return all(item in current for item in saved)


def settle_optimizers() -> None:
    """Make one instance of every optimizer class: torch wraps a class's ``step`` the first
    time it is instantiated, which must not look like a change made by a notebook."""
    import torch

    parameter = torch.nn.Parameter(torch.zeros(1))
    for kind in _classes(
        [
            module
            for name, module in sys.modules.items()
            if module is not None and name.startswith("torch.optim")
        ]
    ):
        if issubclass(kind, torch.optim.Optimizer) and kind is not torch.optim.Optimizer:
            with contextlib.suppress(Exception):  # some need arguments; they stay unwrapped
                kind([parameter])


def _settle_slot_names(kinds: Iterable[type]) -> None:
    """Fill the cache that copying or pickling an object keeps on its class (copyreg's
    ``__slotnames__``: ``copy.deepcopy(model)``, ``torch.save(tensor, buffer)``) for each of
    ``kinds``, so that a test's copy is no change made by a notebook, while a notebook that
    changes the cache still changes a class."""
    for kind in kinds:
        with contextlib.suppress(Exception):  # a class that refuses the attribute keeps none
            copyreg._slotnames(kind)


def _stray_key_remover(
    spaces: Iterable[tuple[str, dict[Any, Any]]],
) -> Callable[[list[Any]], list[str]]:
    """``take_out(graveyard)``: take every key that is not an exact ``str`` out of ``spaces``
    (module namespaces, the builtins, ``sys.modules``) and name the spaces that held one.

    A key of a notebook's own class, hashed as a name (``"print"``, ``"decide"``), runs its
    ``__eq__`` at every lookup of that name there, by the checks or by the grader: the
    notebook's code, at a moment of its choosing. Keys are told by their type alone and taken
    out without being hashed or compared; what the spaces held goes to ``graveyard``.

    >>> space = {"name": 1}
    >>> class Named:
    ...     def __hash__(self):
    ...         return hash("name")
    >>> space[Named()] = 2
    >>> take_out = _stray_key_remover([("demo", space)])
    >>> take_out([]), space, take_out([])
    (['demo'], {'name': 1}, [])
    """
    spaces = tuple(spaces)

    def take_out(
        graveyard: list[Any],
        _any=any, _map=map, _type=type, _str=str, _repeat=repeat, _is_not=is_not, _list=list,
    ) -> list[str]:  # fmt: skip
        found = []
        for label, space in spaces:
            if _any(_map(_is_not, _map(_type, space), _repeat(_str))):
                found.append(label)
                held = _list(space.items())
                graveyard.append(held)
                space.clear()
                space.update({key: value for key, value in held if _type(key) is _str})
        return found

    return take_out


def _autograd_switches(
    kept: dict[str, Callable[..., Any]] | None = None,
) -> Callable[[list[Any]], list[str]]:
    """Record autograd's switches that change what a test sees, not held in any namespace:
    the thread's included and excluded dispatch keys (the Python dispatcher, which runs
    kernels a notebook can write, is one), the stacks of torch function and dispatch modes,
    grad mode and torch's other process-wide settings (see :func:`_settings`), the stack of
    default saved-tensor hooks (a ``saved_tensors_hooks`` left open would hook every graph a
    test builds, and a hook decides what reading a saved tensor says) and whether
    saved-tensor hooks are allowed. Return ``put_back(graveyard)``, which restores them
    (what it pops goes to ``graveyard``) and names what had changed. ``kept``: the real
    functions :func:`withdraw_unaudited` withdrew from notebooks."""
    import torch

    autograd = torch._C._autograd
    top_hooks = (kept or {}).get(
        "torch._C._autograd._top_saved_tensors_default_hooks",
        autograd._top_saved_tensors_default_hooks,
    )
    pop_hooks = autograd._pop_saved_tensors_default_hooks
    hooks_allowed = autograd._saved_tensors_hooks_is_enabled
    allow_hooks = autograd._saved_tensors_hooks_enable
    keys = tuple(torch._C.DispatchKey.__members__.values())
    key_sets = [  # the thread's dispatch keys: the Python dispatcher's among them
        ("torch's included dispatch keys", torch._C._dispatch_tls_local_include_set,
         torch._C._dispatch_tls_set_dispatch_key_included),
        ("torch's excluded dispatch keys", torch._C._dispatch_tls_local_exclude_set,
         torch._C._dispatch_tls_set_dispatch_key_excluded),
    ]  # fmt: skip
    stacks = [
        ("a torch function mode", torch._C._len_torch_function_stack,
         torch._C._pop_torch_function_stack),
        ("a torch dispatch mode", torch._C._len_torch_dispatch_stack,
         partial(torch._C._pop_torch_dispatch_stack, None)),  # None: a mode of no infra key
    ]  # fmt: skip
    settings = [(label, read, write, read()) for label, read, write in _settings(torch)]
    depths = [depth() for _, depth, _ in stacks]
    key_sets_were = [tuple(map(read().has, keys)) for _, read, _ in key_sets]
    if top_hooks(False) is not None or not hooks_allowed():
        raise RuntimeError("take_snapshot() must run with no saved-tensor hooks set")

    def put_back(graveyard: list[Any]) -> list[str]:
        changed = []
        for (label, read, switch), was in zip(key_sets, key_sets_were, strict=True):
            now = tuple(map(read().has, keys))  # by key: a set's bits may differ, not its keys
            if now != was:
                changed.append(label)
                for key, key_was, key_now in zip(keys, was, now, strict=True):
                    if key_now != key_was:
                        switch(key, key_was)
        for (label, depth, pop), was in zip(stacks, depths, strict=True):  # then modes: a mode
            if depth() != was:  # sees the torch calls below
                changed.append(label)
                while depth() > was:
                    graveyard.append(pop())
        for label, read, write, was in settings:
            if read() != was:
                changed.append(label)
                write(was)
        if top_hooks(False) is not None:
            changed.append("torch.autograd.graph.saved_tensors_hooks")
            while (hooks := top_hooks(False)) is not None:
                graveyard.append(hooks)
                pop_hooks()
        if not hooks_allowed():
            changed.append("torch.autograd.graph.disable_saved_tensors_hooks")
            allow_hooks()
        return changed

    return put_back


def _settings(torch: Any) -> list[tuple[str, Callable[[], Any], Callable[[Any], None]]]:
    """Torch's process-wide settings that change what a test computes, each as ``(label,
    read, write)`` (``write(read())`` changes nothing), bound now: grad mode, and what a
    right answer's cell may leave set: a cell that debugs with
    ``torch.autograd.set_detect_anomaly(True)`` (which makes every backward check for NaN, by
    reading values that the meta device does not have, and warn when one raises), or that
    follows gradcheck's advice with ``torch.set_default_dtype(torch.float64)``, would otherwise
    leave it on for every test after it."""
    C = torch._C
    anomaly, anomaly_nan, set_anomaly = (
        C.is_anomaly_enabled,
        C.is_anomaly_check_nan_enabled,
        C.set_anomaly_enabled,
    )
    deterministic, warn_only, set_deterministic = (
        C._get_deterministic_algorithms,
        C._get_deterministic_algorithms_warn_only,
        C._set_deterministic_algorithms,
    )
    return [
        ("torch.is_grad_enabled()", C.is_grad_enabled, C._set_grad_enabled),
        ("torch.autograd.set_detect_anomaly", lambda: (anomaly(), anomaly_nan()),
         lambda was: set_anomaly(*was)),
        ("torch.set_default_dtype", C.get_default_dtype, C._set_default_dtype),
        ("torch.use_deterministic_algorithms", lambda: (deterministic(), warn_only()),
         lambda was: set_deterministic(was[0], warn_only=was[1])),
        ("torch.set_float32_matmul_precision", C._get_float32_matmul_precision,
         C._set_float32_matmul_precision),
        ("forward-mode AD switched off", C._is_fwd_grad_enabled, C._set_fwd_grad_enabled),
    ]  # fmt: skip


def take_snapshot(kept: dict[str, Callable[..., Any]] | None = None) -> Callable[..., list[str]]:
    """Record the state tests rely on; return ``put_back()``, which restores it and returns
    the names of what had changed (``[]`` when nothing had). ``put_back(strays_only=True)``
    only takes out the keys that are not plain strings (see :func:`_stray_key_remover`), before
    anything is looked up: the first thing the runner does after a cell. ``kept``: what
    :func:`withdraw_unaudited` returned, where it ran."""
    settle_optimizers()
    saved_builtins = dict(vars(builtins))
    modules = {
        name: module
        for name, module in sys.modules.items()
        if module is not None and (name.split(".")[0] in PROTECTED or name in _STDLIB)
    }
    watched = [
        (name, module)
        for name, module in modules.items()
        if name.split(".")[0] in ("autograder", "gradgraph", "math", "warnings")
        or name in _STDLIB
        or name in ("torch", "torch.nn", "torch.nn.functional", "torch.autograd", "torch.optim")
        or name in _GLOBAL_HOOKS
    ]
    namespaces = [
        (name, vars(module), {k: v for k, v in vars(module).items() if f"{name}.{k}" not in _FLAGS})
        for name, module in watched
    ]
    # a sealed module's functions run with a private copy of its namespace (see seal): it is
    # put back too, strictly (a name added there would hide a builtin from those functions)
    sealed = [
        (f"{name} (sealed)", scope, dict(scope))
        for name, module in watched
        for scope in {
            id(value.__globals__): value.__globals__
            for value in list(vars(module).values())
            if type(value) is _FunctionType
            and value.__module__ == name
            and value.__globals__ is not vars(module)
        }.values()
    ]
    watched_names = {name for name, _ in watched}
    function_spaces = [  # every other torch module: its functions and classes, which a test
        (name, vars(module), _functions(vars(module)))  # may call through (torch.autograd.grad
        for name, module in modules.items()  # runs torch.autograd.graph's engine call)
        if name.startswith("torch.") and name not in watched_names
    ]
    # the same, flat: a thousand namespaces compared in one pass that runs in C
    function_entries = [
        (current, key, value)
        for _, current, saved in function_spaces
        for key, value in saved.items()
    ]
    flat_spaces, flat_keys, flat_values = zip(*function_entries, strict=True)
    torch_modules = [m for n, m in modules.items() if n.startswith(("torch.nn", "torch.optim"))]
    course_modules = [  # with warnings: the checks record warnings as its WarningMessage
        m
        for n, m in modules.items()
        if n.split(".")[0] in ("autograder", "gradgraph", "warnings") or n in _STDLIB
    ]
    class_kinds = _classes([*torch_modules, *course_modules])
    other_kinds = _other_torch_classes(
        [m for n, m in modules.items() if n.split(".")[0] == "torch"], class_kinds
    )
    _settle_slot_names([*class_kinds, *other_kinds])
    classes = [
        (f"{kind.__module__}.{kind.__qualname__}", kind, dict(vars(kind))) for kind in class_kinds
    ]
    # every other class of torch's: what could run code (methods, properties, nested classes),
    # compared in one pass that runs in C (as the functions are); a plain value (a counter
    # such as RemovableHandle.next_id, a flag) is state torch changes as it runs
    others = []
    for kind in other_kinds:
        attributes = dict(vars(kind))
        code = {k: v for k, v in attributes.items() if type(v) not in _PLAIN_DATA}
        data = {k: v for k, v in attributes.items() if type(v) in _PLAIN_DATA}
        others.append((f"{kind.__module__}.{kind.__qualname__}", kind, code, data))
    other_views = [vars(kind) for _, kind, _, _ in others]  # live views of the class dicts
    other_sizes = [len(view) for view in other_views]
    other_entries = [
        (view, key, value)
        for view, (_, _, code, _) in zip(other_views, others, strict=True)
        for key, value in code.items()
    ]
    other_spaces, other_keys, other_values = zip(*other_entries, strict=True)

    contents = [
        (f"{name}.{key}", value, value.copy())
        for name, _, namespace in namespaces
        for key, value in namespace.items()
        if (name.startswith("autograder") and type(value) in (dict, list, set))
        or (name in _GLOBAL_HOOKS and key.startswith("_global_") and type(value) is OrderedDict)
        if value is not sys.modules
    ]
    # code the collector would run at any moment of a test, the checks' included
    contents.append(("gc.callbacks", gc.callbacks, list(gc.callbacks)))
    kwdefaults = [
        (f"{name}.{key}", function.__kwdefaults__, dict(function.__kwdefaults__))
        for name, _, namespace in namespaces
        if name.startswith("autograder")
        for key, function in namespace.items()
        if type(function) is _FunctionType and function.__kwdefaults__
    ]
    put_back_switches = _autograd_switches(kept)
    take_out_strays = _stray_key_remover(
        [
            ("builtins", vars(builtins)),
            ("sys.modules", sys.modules),
            ("sys", vars(sys)),
            *((name, vars(module)) for name, module in modules.items()),
            *((label, scope) for label, scope, _ in sealed),
        ]
    )
    path, meta_path = list(sys.path), list(sys.meta_path)
    # Bound here: put_back runs right after the notebook's code, before builtins are restored.
    builtins_namespace, loaded = vars(builtins), sys.modules
    graveyard: list[Any] = []  # what is put back stays alive: no finalizer runs mid-restore
    set_class_attribute, del_class_attribute = type.__setattr__, type.__delattr__

    def put_back_namespace(
        label: str, current: dict[str, Any], saved: dict[str, Any], *, strict: bool
    ) -> list[str]:
        changed = []
        for key, value in saved.items():
            if current.get(key, _MISSING) is not value:
                changed.append(f"{label}.{key}")
                graveyard.append(current.get(key))
                current[key] = value
        if strict:
            for key in [key for key in current if key not in saved]:
                changed.append(f"{label}.{key}")
                graveyard.append(current.pop(key))
        return changed

    def put_back_class(
        label: str, kind: type, saved: dict[str, Any], plain: dict[str, Any] | None = None
    ) -> list[str]:
        """Put the attributes of class ``kind`` back as ``saved`` and take out those added
        since; ``plain``, where given: its plain values when saved, which torch changes itself
        as it runs (kept as found, unless something else took their place)."""
        changed = []
        current = vars(kind)
        for key, value in saved.items():
            if current.get(key, _MISSING) is not value:
                changed.append(f"{label}.{key}")
                graveyard.append(current.get(key))
                set_class_attribute(kind, key, value)
        for key in [key for key in current if key not in saved]:
            if plain is not None and type(current[key]) in _PLAIN_DATA:
                continue
            changed.append(f"{label}.{key}")
            graveyard.append(current[key])
            if plain is not None and key in plain:
                set_class_attribute(kind, key, plain[key])
            else:
                del_class_attribute(kind, key)
        return changed

    def put_back_others() -> list[str]:
        changed = []
        for index, (label, kind, code, data) in enumerate(others):
            changed += put_back_class(label, kind, code, data)
            other_sizes[index] = len(vars(kind))
        return changed

    def put_back(strays_only: bool = False) -> list[str]:
        strays = take_out_strays(graveyard)
        if strays_only:
            return strays
        changed = [f"{label} (a key that is not a plain string)" for label in strays]
        changed += put_back_namespace("builtins", builtins_namespace, saved_builtins, strict=True)
        for name, module in modules.items():
            if loaded.get(name) is not module:
                changed.append(f"sys.modules[{name!r}]")
                graveyard.append(loaded.get(name))
                loaded[name] = module
        for name, current, saved in namespaces:
            changed += put_back_namespace(name, current, saved, strict=False)
        for name, current, saved in sealed:
            changed += put_back_namespace(name, current, saved, strict=True)
        found = map(_dict_get, flat_spaces, flat_keys, repeat(_MISSING))
        if any(map(is_not, found, flat_values)):
            for name, current, saved in function_spaces:
                changed += put_back_namespace(name, current, saved, strict=False)
        found = map(_proxy_get, other_spaces, other_keys, repeat(_MISSING))
        if any(map(is_not, found, other_values)) or any(
            map(ne, map(len, other_views), other_sizes)
        ):
            changed += put_back_others()
        for label, kind, saved in classes:
            changed += put_back_class(label, kind, saved)
        for label, container, saved in [*contents, *kwdefaults]:
            if not _same_items(container, saved):
                changed.append(label)
                graveyard.append(container.copy())
                if type(container) is list:
                    container[:] = saved
                else:
                    container.clear()
                    container.update(saved)
        if sys.path != path or sys.meta_path != meta_path:
            changed.append("sys.path")
            sys.path[:], sys.meta_path[:] = path, meta_path
        return changed + put_back_switches(graveyard)

    return put_back
