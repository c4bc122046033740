import ast
import re

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule

from ._util import add_keyword, has_arg, kwarg, not_a_device_tensor, short
from .syn401_repeat_interleave_without_output_size import size_in_scope

CLASS_COUNT_NAMES = ("num_classes", "n_classes", "nclasses", "num_class", "n_class", "num_labels", "n_labels",
                     "classes_num", "num_categories")
_CONST = re.compile(r"^(NUM_CLASSES|N_CLASSES|NCLASSES|NUM_LABELS|N_LABELS|NUM_CLASS)$")


def _module_constant(ctx) -> str | None:
    # once per file (a scan of the module per call is quadratic in a big module)
    return ctx.file.get(_find_module_constant)


def _find_module_constant(file) -> str | None:
    found = {}
    for n in file.tree.body:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and _CONST.match(n.targets[0].id):
            found.setdefault(n.targets[0].id, []).append(n.value)
    for name, values in found.items():
        if len(values) == 1 and isinstance(values[0], ast.Constant) and isinstance(values[0].value, int):
            return name
    return None


def _is_minus_one(node) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
        and node.operand.value == 1


class OneHotWithoutNumClasses(Rule):
    code = "SYN402"
    name = "one-hot-without-num-classes"
    summary = "`F.one_hot(t)` without `num_classes` (or with `num_classes=-1`)."
    why = ("Without `num_classes`, the number of columns is `t.max() + 1`, which the host must read from the GPU "
           "before it can allocate the output.")
    rewrite = "Pass `num_classes=K` (the model's number of classes); it is also what you want when a batch lacks the top class."
    fix_safety = "unsafe"
    fix_assumption = ("the number of classes in scope equals `t.max() + 1`; otherwise the output gets K columns "
                      "instead (usually what was meant).")
    triggers = TORCH_CODE
    ops = ("aten::one_hot",)
    rewrite_hint = "pass num_classes= to one_hot"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # with num_classes=
    bad = (
        Bad("""
import torch.nn.functional as F
def compute_loss(logits, target, num_classes):
    return (logits - F.one_hot(target)).pow(2).mean()
""", line=4, fixed="""
import torch.nn.functional as F
def compute_loss(logits, target, num_classes):
    return (logits - F.one_hot(target, num_classes=num_classes)).pow(2).mean()
""", unsafe=True),
        Bad("""
import torch
import torch.nn.functional as F
NUM_CLASSES = 10
def forward(self, y):
    return F.one_hot(y, -1).float()
""", line=6, fixed="""
import torch
import torch.nn.functional as F
NUM_CLASSES = 10
def forward(self, y):
    return F.one_hot(y, NUM_CLASSES).float()
""", unsafe=True),
        Bad("""
import torch
def forward(self, y):
    return torch.nn.functional.one_hot(y.long())
""", line=4),
    )
    good = (
        Good("""
import torch.nn.functional as F
def forward(self, y):
    return F.one_hot(y, num_classes=self.num_classes)
"""),
        Good("""
import torch.nn.functional as F
def forward(self, y):
    return F.one_hot(y, 10)
"""),
        Good("""
import torch
import torch.nn.functional as F
y = F.one_hot(torch.tensor([0, 2]))  # a CPU tensor
"""),
    )

    def visit_Call(self, node, ctx):
        if ctx.call_name(node) != "torch.nn.functional.one_hot":
            return
        given = node.args[1] if len(node.args) > 1 else kwarg(node, "num_classes")
        if given is None and has_arg(node, "num_classes", 1):
            return  # **kwargs
        if given is not None and not _is_minus_one(given):
            return
        t = node.args[0] if node.args else kwarg(node, "tensor")
        if t is not None and not_a_device_tensor(ctx, t):
            return
        k = size_in_scope(ctx, CLASS_COUNT_NAMES) or _module_constant(ctx)
        fix = None
        if k is not None:
            edit = ctx.edit(given, k) if given is not None else add_keyword(ctx, node, "num_classes", k)
            fix = Fix("unsafe", (edit,), message=f"pass `num_classes={k}`", assumption=self.fix_assumption)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: without `num_classes` the width `t.max() + 1` is read "
                    "on the host", f"pass `num_classes={k or 'K'}`", fix=fix)
