"""Every sentence and label the film shows, in one place: whole-sentence templates with
named fields, filled with ``str.format`` where they are used (never glued from pieces).

A translation replaces this module's values and keeps its names and fields. What fills
a field is data (a node's name, a size, PyTorch's own error text) or another entry here
(a hook's kind, a counted noun such as "3 floats").

>>> from gradgraph.wording import BACKWARD_RUNS, shape_text
>>> BACKWARD_RUNS.format(node="ExpBackward0")
'Backward runs ExpBackward0: it turns the gradient of its output into the gradients of its inputs.'
>>> shape_text((2, 3)), shape_text(())
('2x3', 'scalar')
"""

from __future__ import annotations

from collections.abc import Sequence

# -- sizes and shapes ------------------------------------------------------------------

SIZE_BYTES = "{n} B"
SIZE_KIB = "{n:.1f} KiB"
SIZE_MIB = "{n:.1f} MiB"
TICK_UNITS = {1: "{n} B", 1024: "{n} KiB", 2**20: "{n} MiB"}  # whole units, on the memory axis
SHAPE_SCALAR = "scalar"
FLOAT_COUNT = "{count} floats"
VALUE_COUNT = "{count} values"


def shape_text(shape: Sequence[int] | None) -> str:
    """``"2x3"``, or "scalar" for a tensor with no dimensions."""
    return "x".join(map(str, shape)) if shape else SHAPE_SCALAR


# -- captions: one or two whole sentences about each event -----------------------------

NODE_PARAMETER_JOINS = (
    "Parameter {name!r} ({shape}) joins the graph: its gradients will add up in .grad."
)
NODE_LEAF_JOINS = "Leaf {name!r} ({shape}) joins the graph: its gradients will add up in .grad."
NODE_BUILT_BY_BACKWARD = "Backward built {node} (create_graph): a node of the second-order graph."
NODE_MADE_BY_OP_AT = "{op}() made {node} (output {shape}) at `{source}`."
NODE_MADE_BY_OP = "{op}() made {node} (output {shape})."
NODE_MADE_AT = "{node} was made (output {shape}) at `{source}`."
NODE_MADE = "{node} was made (output {shape})."

SAVED_RESULT = "{node} saved its result ({values}, {size}): {why}."
SAVED_INPUT = "{node} saved its input {slot!r} ({values}, {size}): {why}."
SAVED_ALIAS = "Same storage as a tensor already saved: no new memory."  # a second sentence
SENTENCES = "{first} {second}"  # two sentences of one caption
FREED_RESULT = "{node} freed its result ({values}, {size}): backward no longer needs it."
FREED_INPUT = "{node} freed its input {slot!r} ({values}, {size}): backward no longer needs it."
FREED_RESULT_SHARED = (
    "{node} freed its result ({values}, {size}): backward no longer needs it "
    "(its storage is still saved by another node)."
)
FREED_INPUT_SHARED = (
    "{node} freed its input {slot!r} ({values}, {size}): backward no longer needs it "
    "(its storage is still saved by another node)."
)

# Why a node keeps what it saves (the {why} of SAVED_*): the derivative it will compute needs it.
WHY_SAVED_DEFAULT = "its backward formula needs it"
WHY_SAVED = {
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

BACKWARD_REACHES_LEAF = (
    "Backward reaches leaf {name!r}: its gradient is about to be added into .grad."
)
BACKWARD_RUNS = (
    "Backward runs {node}: it turns the gradient of its output into the gradients of its inputs."
)

GRAD_RETAINED = "retain_grad: the output of {node} keeps its gradient."
GRAD_RETAINED_NORM = "retain_grad: the output of {node} keeps its gradient of norm {norm:.4g}."
GRAD_ARRIVED = "A gradient arrived at {name!r}."
GRAD_ARRIVED_NORM = "A gradient of norm {norm:.4g} arrived at {name!r}."
GRAD_ARRIVED_HELD = "A gradient arrived at {name!r}; .grad norm is now {held:.4g}."
GRAD_ARRIVED_NORM_HELD = (
    "A gradient of norm {norm:.4g} arrived at {name!r}; .grad norm is now {held:.4g}."
)

HOOK_ON_MODULE = "Module {module!r}: your {kind} ({hook}) fired."
HOOK_ON_TENSOR = "Your {kind} ({hook}) fired on the gradient flowing into {node}."
HOOK_ON_NODE_BEFORE = (
    "Your node pre-hook ({hook}) fired on {node}: it gets the gradients arriving at the node, "
    "before the node runs."
)
HOOK_ON_NODE_AFTER = (
    "Your node post-hook ({hook}) fired on {node}: it gets the gradients the node computed "
    "and the ones it received, after it ran."
)

ERROR_IN = "Error in {op}: {message}."

# What each kind of hook is called ({kind} in HOOK_ON_*, ⚑ rows and labels); keys are the
# recording's own names for them (events' details["kind"]).
HOOK_KINDS = {
    "tensor hook": "tensor hook",
    "post-accumulate-grad hook": "post-accumulate-grad hook",
    "node pre-hook": "node pre-hook",
    "node post-hook": "node post-hook",
    "forward pre-hook": "forward pre-hook",
    "forward hook": "forward hook",
    "backward pre-hook": "backward pre-hook",
    "backward hook": "backward hook",
}

# -- the header above the picture -------------------------------------------------------

EVENT_KINDS = {
    "node": "NODE",
    "saved": "SAVED",
    "backward": "BACKWARD",
    "grad": "GRAD",
    "freed": "FREED",
    "hook": "HOOK",
    "error": "ERROR",
}
HEADER_STEP = "step {step} of {steps}  ·  {kind}"
HEADER_STEP_IN_CALL = (
    "step {step} of {steps}  ·  {kind}  ·  backward call {call} of {calls}: {loss}"
)
HEADER_ERROR_AT = "✗ {error} in {op} at {node}: {message}"
HEADER_ERROR = "✗ {error} in {op}: {message}"

# -- the legend: one entry for each thing the frame draws -------------------------------

LEGEND = {
    "leaf": "leaf tensor (gets .grad)",
    "op": "operation (grad_fn node)",
    "second": "made by backward (create_graph)",
    "folded": "folded module",
    "group": "module",
    "ran": "✓ ran in backward",
    "tensor hook": "your tensor hook fired (on the node its gradient goes to)",
    "node hook": "your hook on this grad_fn node fired",
    "module hook": "your module hook fired (on the module's frame)",
    "edge": "forward; green once the gradient went back",
    "now": "the current event",
}

# -- inside a node's box, and a module's frame ------------------------------------------

BOX_TITLE_RAN = "✓ {name}"
BOX_TITLE_RAN_TIMES = "✓×{runs} {name}"
BOX_FOLDED = "folded module"
BOX_PARAMETER = "parameter · {shape}"
BOX_LEAF = "leaf · {shape}"
BOX_GLOSS = "{gloss} · {shape}"
BOX_OP_CALL = "{op}() · {shape}"
BOX_OPERATION = "operation · {shape}"
BOX_SAVED = "saved {count} · {size}"
BOX_FREED = "freed {count} · {size}"
BOX_GRAD = "grad {norm:.4g}"
BOX_HOOK = "⚑ {kind}"
BOX_FAILED = "✗ backward failed here"
FOLDED_LABEL = "{module} ({count} nodes)"
MODULE_HOOK = "{module}  ⚑ {kind}"
MODULE_HOOK_SHORT = "{module} ⚑"

# What a node class does, where its name does not say it plainly ({gloss} of BOX_GLOSS).
GLOSS = {
    "AccumulateGrad": "leaf",
    "TBackward0": "transpose (Wᵀ)",
    "AddmmBackward0": "x·Wᵀ + b",
    "MmBackward0": "matrix product",
    "MvBackward0": "matrix · vector",
    "BackwardHookFunctionBackward": "module hook point",
    "CloneBackward0": "copy",
    "ViewBackward0": "reshape",
    "ReshapeAliasBackward0": "reshape",
    "ExpandBackward0": "broadcast",
    "UnsafeViewBackward0": "reshape",
}

# -- the memory strip under the picture -------------------------------------------------

MEMORY_NOW = "held by saved tensors: {size} now"
MEMORY_NOW_ALLOCATOR = "held by saved tensors: {size} now (allocator, dashed: {allocated})"

# -- the node inspector (the player's inspect menu and the HTML page's) ----------------

INSPECT_WHAT = "{name} ({what} · {shape} · {dtype} on {device})"
INSPECT_MADE_BY = "made by: {source}"
INSPECT_SAVED = "saved: {tensors}"
INSPECT_SAVED_TENSOR = "{slot!r} {shape} ({dtype}, {size}, {device})"
INSPECT_FREED_TENSOR = "{slot!r} {shape} ({dtype}, {size}, {device}), freed"
INSPECT_SEPARATOR = "; "
INSPECT_GRAD = ".grad norm now: {norm:.4g}"
INSPECT_GOES_TO = "its gradient goes next to: {targets}"
INSPECT_TARGET_SEPARATOR = ", "
INSPECT_STOPS = "its gradient stops here (a leaf: it lands in .grad)"
INSPECT_NOT_MADE = "not made yet at this step"
INSPECT_PICK = "pick a node…"
INSPECT_LABEL = "inspect"
INSPECT_OPTION = "{name} (#{node})"
INSPECT_HIT = "inspect {name}"  # a node's box in the HTML page, for screen readers

# -- the player's controls (the widget and the HTML page) -------------------------------

CONTROL_PLAY = "play"
CONTROL_PAUSE = "pause"
CONTROL_PLAY_PAUSE = "play/pause"
CONTROL_BACK = "◀ step back"
CONTROL_NEXT = "step ▶"
CONTROL_RESET = "reset"
CONTROL_SPEED = "speed"
CONTROL_EVENT = "event"
FRAME_ALT = "step {step}"

__all__ = sorted([name for name in dir() if name.isupper()] + ["shape_text"])
