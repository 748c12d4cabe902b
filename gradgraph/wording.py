"""Every sentence and label the film shows, in one place: whole-sentence templates with
named fields, filled with ``str.format`` where they are used (never glued from pieces).

Each is English, marked for translation (``N_``); where it is used it is read in the
notebook's language (``_(w.NAME)``: :func:`autograder.i18n.gettext`, from the catalog
``gradgraph/locale/LANG.po``), so a translation keeps the names and the fields. What fills a
field is data (a node's name, a size, PyTorch's own error text) or another entry here (a
hook's kind, a counted noun such as "3 floats").

>>> from gradgraph.wording import BACKWARD_RUNS, shape_text
>>> BACKWARD_RUNS.format(node="ExpBackward0")
'Backward runs ExpBackward0: it turns the gradient of its output into the gradients of its inputs.'
>>> shape_text((2, 3)), shape_text(())
('2x3', 'scalar')
"""

from __future__ import annotations

from collections.abc import Sequence

from autograder.i18n import N_
from autograder.i18n import gettext as _

# -- sizes and shapes ------------------------------------------------------------------

SIZE_BYTES = N_("{n} B")
SIZE_KIB = N_("{n:.1f} KiB")
SIZE_MIB = N_("{n:.1f} MiB")
TICK_UNITS = {
    1: N_("{n} B"),
    1024: N_("{n} KiB"),
    2**20: N_("{n} MiB"),
}  # whole units, on the memory axis
SHAPE_SCALAR = N_("scalar")
FLOAT_COUNT = N_("{count} floats")
VALUE_COUNT = N_("{count} values")


def shape_text(shape: Sequence[int] | None) -> str:
    """``"2x3"``, or "scalar" for a tensor with no dimensions."""
    return "x".join(map(str, shape)) if shape else _(SHAPE_SCALAR)


# -- captions: one or two whole sentences about each event -----------------------------

NODE_PARAMETER_JOINS = N_(
    "Parameter {name!r} ({shape}) joins the graph: its gradients will add up in .grad."
)
NODE_LEAF_JOINS = N_("Leaf {name!r} ({shape}) joins the graph: its gradients will add up in .grad.")
NODE_BUILT_BY_BACKWARD = N_(
    "Backward built {node} (create_graph): a node of the second-order graph."
)
NODE_MADE_BY_OP_AT = N_("{op}() made {node} (output {shape}) at `{source}`.")
NODE_MADE_BY_OP = N_("{op}() made {node} (output {shape}).")
NODE_MADE_AT = N_("{node} was made (output {shape}) at `{source}`.")
NODE_MADE = N_("{node} was made (output {shape}).")

SAVED_RESULT = N_("{node} saved its result ({values}, {size}): {why}.")
SAVED_INPUT = N_("{node} saved its input {slot!r} ({values}, {size}): {why}.")
SAVED_ALIAS = N_("Same storage as a tensor already saved: no new memory.")  # a second sentence
SENTENCES = N_("{first} {second}")  # two sentences of one caption
FREED_RESULT = N_("{node} freed its result ({values}, {size}): backward no longer needs it.")
FREED_INPUT = N_("{node} freed its input {slot!r} ({values}, {size}): backward no longer needs it.")
FREED_RESULT_SHARED = N_(
    "{node} freed its result ({values}, {size}): backward no longer needs it "
    "(its storage is still saved by another node)."
)
FREED_INPUT_SHARED = N_(
    "{node} freed its input {slot!r} ({values}, {size}): backward no longer needs it "
    "(its storage is still saved by another node)."
)

# Why a node keeps what it saves (the {why} of SAVED_*): the derivative it will compute needs it.
WHY_SAVED_DEFAULT = N_("its backward formula needs it")
WHY_SAVED = {
    "ExpBackward0": N_("the derivative of exp is exp"),
    "MulBackward0": N_("d(a*b)/da = b and d(a*b)/db = a, so each factor is kept for the other"),
    "DivBackward0": N_("d(a/b)/da = 1/b and d(a/b)/db = -a/b^2"),
    "TanhBackward0": N_("the derivative of tanh is 1 - tanh^2"),
    "SigmoidBackward0": N_("the derivative of sigmoid is s * (1 - s)"),
    "ReluBackward0": N_("relu lets the gradient through only where its output is positive"),
    "PowBackward0": N_("d(x^n)/dx = n * x^(n-1) needs x"),
    "LogBackward0": N_("the derivative of log x is 1/x"),
    "SinBackward0": N_("the derivative of sin is cos, which needs x"),
    "CosBackward0": N_("the derivative of cos is -sin, which needs x"),
    "SqrtBackward0": N_("the derivative of sqrt x is 1/(2 sqrt x)"),
    "AddmmBackward0": N_("the gradient of a matrix product needs the other factor"),
    "MmBackward0": N_("the gradient of a matrix product needs the other factor"),
    "BmmBackward0": N_("the gradient of a matrix product needs the other factor"),
    "SoftmaxBackward0": N_("the derivative of softmax is written with its output"),
    "LogSoftmaxBackward0": N_("the derivative of log-softmax is written with its output"),
}

BACKWARD_REACHES_LEAF = N_(
    "Backward reaches leaf {name!r}: its gradient is about to be added into .grad."
)
BACKWARD_RUNS = N_(
    "Backward runs {node}: it turns the gradient of its output into the gradients of its inputs."
)

GRAD_RETAINED = N_("retain_grad: the output of {node} keeps its gradient.")
GRAD_RETAINED_NORM = N_("retain_grad: the output of {node} keeps its gradient of norm {norm:.4g}.")
GRAD_ARRIVED = N_("A gradient arrived at {name!r}.")
GRAD_ARRIVED_NORM = N_("A gradient of norm {norm:.4g} arrived at {name!r}.")
GRAD_ARRIVED_HELD = N_("A gradient arrived at {name!r}; .grad norm is now {held:.4g}.")
GRAD_ARRIVED_NORM_HELD = N_(
    "A gradient of norm {norm:.4g} arrived at {name!r}; .grad norm is now {held:.4g}."
)

HOOK_ON_MODULE = N_("Module {module!r}: your {kind} ({hook}) fired.")
HOOK_ON_TENSOR = N_("Your {kind} ({hook}) fired on the gradient flowing into {node}.")
HOOK_ON_NODE_BEFORE = N_(
    "Your node pre-hook ({hook}) fired on {node}: it gets the gradients arriving at the node, "
    "before the node runs."
)
HOOK_ON_NODE_AFTER = N_(
    "Your node post-hook ({hook}) fired on {node}: it gets the gradients the node computed "
    "and the ones it received, after it ran."
)

ERROR_IN = N_("Error in {op}: {message}.")

# What each kind of hook is called ({kind} in HOOK_ON_*, ⚑ rows and labels); keys are the
# recording's own names for them (events' details["kind"]).
HOOK_KINDS = {
    "tensor hook": N_("tensor hook"),
    "post-accumulate-grad hook": N_("post-accumulate-grad hook"),
    "node pre-hook": N_("node pre-hook"),
    "node post-hook": N_("node post-hook"),
    "forward pre-hook": N_("forward pre-hook"),
    "forward hook": N_("forward hook"),
    "backward pre-hook": N_("backward pre-hook"),
    "backward hook": N_("backward hook"),
}

# -- the header above the picture -------------------------------------------------------

EVENT_KINDS = {
    "node": N_("NODE"),
    "saved": N_("SAVED"),
    "backward": N_("BACKWARD"),
    "grad": N_("GRAD"),
    "freed": N_("FREED"),
    "hook": N_("HOOK"),
    "error": N_("ERROR"),
}
HEADER_STEP = N_("step {step} of {steps}  ·  {kind}")
HEADER_STEP_IN_CALL = N_(
    "step {step} of {steps}  ·  {kind}  ·  backward call {call} of {calls}: {loss}"
)
HEADER_ERROR_AT = N_("✗ {error} in {op} at {node}: {message}")
HEADER_ERROR = N_("✗ {error} in {op}: {message}")

# -- the legend: one entry for each thing the frame draws -------------------------------

LEGEND = {
    "leaf": N_("leaf tensor (gets .grad)"),
    "op": N_("operation (grad_fn node)"),
    "second": N_("made by backward (create_graph)"),
    "folded": N_("folded module"),
    "group": N_("module"),
    "ran": N_("✓ ran in backward"),
    "tensor hook": N_("your tensor hook fired (on the node its gradient goes to)"),
    "node hook": N_("your hook on this grad_fn node fired"),
    "module hook": N_("your module hook fired (on the module's frame)"),
    "edge": N_("forward; green once the gradient went back"),
    "now": N_("the current event"),
}

# -- inside a node's box, and a module's frame ------------------------------------------

BOX_TITLE_RAN = N_("✓ {name}")
BOX_TITLE_RAN_TIMES = N_("✓×{runs} {name}")
BOX_FOLDED = N_("folded module")
BOX_PARAMETER = N_("parameter · {shape}")
BOX_LEAF = N_("leaf · {shape}")
BOX_GLOSS = N_("{gloss} · {shape}")
BOX_OP_CALL = N_("{op}() · {shape}")
BOX_OPERATION = N_("operation · {shape}")
BOX_SAVED = N_("saved {count} · {size}")
BOX_FREED = N_("freed {count} · {size}")
BOX_GRAD = N_("grad {norm:.4g}")
BOX_HOOK = N_("⚑ {kind}")
BOX_FAILED = N_("✗ backward failed here")
FOLDED_LABEL = N_("{module} ({count} nodes)")
MODULE_HOOK = N_("{module}  ⚑ {kind}")
MODULE_HOOK_SHORT = N_("{module} ⚑")

# What a node class does, where its name does not say it plainly ({gloss} of BOX_GLOSS).
GLOSS = {
    "AccumulateGrad": N_("leaf"),
    "TBackward0": N_("transpose (Wᵀ)"),
    "AddmmBackward0": N_("x·Wᵀ + b"),
    "MmBackward0": N_("matrix product"),
    "MvBackward0": N_("matrix · vector"),
    "BackwardHookFunctionBackward": N_("module hook point"),
    "CloneBackward0": N_("copy"),
    "ViewBackward0": N_("reshape"),
    "ReshapeAliasBackward0": N_("reshape"),
    "ExpandBackward0": N_("broadcast"),
    "UnsafeViewBackward0": N_("reshape"),
}

# -- the memory strip under the picture -------------------------------------------------

MEMORY_NOW = N_("held by saved tensors: {size} now")
MEMORY_NOW_ALLOCATOR = N_("held by saved tensors: {size} now (allocator, dashed: {allocated})")

# -- the node inspector (the player's inspect menu and the HTML page's) ----------------

INSPECT_WHAT = N_("{name} ({what} · {shape} · {dtype} on {device})")
INSPECT_MADE_BY = N_("made by: {source}")
INSPECT_SAVED = N_("saved: {tensors}")
INSPECT_SAVED_TENSOR = N_("{slot!r} {shape} ({dtype}, {size}, {device})")
INSPECT_FREED_TENSOR = N_("{slot!r} {shape} ({dtype}, {size}, {device}), freed")
INSPECT_SEPARATOR = N_("; ")
INSPECT_GRAD = N_(".grad norm now: {norm:.4g}")
INSPECT_GOES_TO = N_("its gradient goes next to: {targets}")
INSPECT_TARGET_SEPARATOR = N_(", ")
INSPECT_STOPS = N_("its gradient stops here (a leaf: it lands in .grad)")
INSPECT_NOT_MADE = N_("not made yet at this step")
INSPECT_PICK = N_("pick a node…")
INSPECT_LABEL = N_("inspect")
INSPECT_OPTION = N_("{name} (#{node})")
INSPECT_HIT = N_("inspect {name}")  # a node's box in the HTML page, for screen readers

# -- the player's controls (the widget and the HTML page) -------------------------------

CONTROL_PLAY = N_("play")
CONTROL_PAUSE = N_("pause")
CONTROL_PLAY_PAUSE = N_("play/pause")
CONTROL_BACK = N_("◀ step back")
CONTROL_NEXT = N_("step ▶")
CONTROL_RESET = N_("reset")
CONTROL_SPEED = N_("speed")
CONTROL_EVENT = N_("event")
FRAME_ALT = N_("step {step}")

__all__ = sorted([name for name in dir() if name.isupper()] + ["shape_text"])
