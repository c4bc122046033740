import ast
import re

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR

from ._util import add_keyword, has_arg, kwarg, method, short

# names that hold a count on the host, whatever the inference says about parameters
_HOST_COUNT = re.compile(r"^(n|k|num|n_\w+|num_\w+|\w+_(size|dim|len|count|times|groups|heads|reps?|rep_\w+|factor))$")
# a value in scope that is the total output size, by its name
OUTPUT_SIZE_NAMES = ("output_size", "total", "total_size", "total_length", "total_len", "out_size")


def size_in_scope(ctx, names) -> str | None:
    """A function parameter, or a `self.` attribute the class sets, named for the size."""
    f = ctx.function
    if f is not None and not isinstance(f, ast.Lambda):
        a = f.args
        params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
        for n in names:
            if n in params:
                return n
    if ctx.class_stack:
        attrs = set()
        for n in ast.walk(ctx.class_stack[-1]):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) \
                    and n.value.id == "self":
                attrs.add(n.attr)
        for n in names:
            if n in attrs and ctx.kind(ast.Attribute(ast.Name("self", ast.Load()), n, ast.Load())) != TENSOR:
                return f"self.{n}"
    return None


class RepeatInterleaveWithoutOutputSize(Rule):
    code = "SYN401"
    name = "repeat-interleave-without-output-size"
    summary = "`torch.repeat_interleave` / `Tensor.repeat_interleave` with a tensor of repeats and no `output_size=`."
    why = ("With repeats given as a tensor, the output length is `repeats.sum()`, which the host must read "
           "from the GPU to allocate the output (twice, measured). An integer repeat count does not sync.")
    rewrite = ("Pass `output_size=` when the total is known on the host (for example the padded length or a "
               "size the caller already has); it skips the read.")
    fix_safety = "unsafe"
    fix_assumption = "the value named for it (`output_size`, `total`, ...) equals `repeats.sum()` along that dimension."
    triggers = TORCH_CODE
    ops = ("aten::repeat_interleave",)
    rewrite_hint = "pass output_size= to repeat_interleave"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # the same op with output_size=
    bad = (
        Bad("""
import torch
def forward(self, x, counts):
    return torch.repeat_interleave(x, counts, dim=0)
""", line=4),
        Bad("""
import torch
def forward(self, x, lengths, total_length: int):
    return x.repeat_interleave(lengths, dim=0)
""", line=4, fixed="""
import torch
def forward(self, x, lengths, total_length: int):
    return x.repeat_interleave(lengths, dim=0, output_size=total_length)
""", unsafe=True),
        Bad("""
import torch
def forward(self, lengths):
    return torch.repeat_interleave(lengths)
""", line=4),
    )
    good = (
        Good("""
import torch
def forward(self, x, n_rep: int):
    return x.repeat_interleave(2, dim=1), x.repeat_interleave(n_rep, dim=1)
"""),
        Good("""
import torch
def forward(self, x, counts):
    return torch.repeat_interleave(x, counts, dim=0, output_size=x.shape[0] * 2)
"""),
        Good("""
import torch
def forward(self, hidden, num_key_value_groups):
    return hidden.repeat_interleave(num_key_value_groups, dim=2)
"""),
        Good("""
import numpy as np
r = np.repeat(a, counts)
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q == "torch.repeat_interleave":
            repeats = node.args[1] if len(node.args) > 1 else kwarg(node, "repeats") or (
                node.args[0] if len(node.args) == 1 else None)
        else:
            x = method(node, "repeat_interleave")
            if x is None or q is not None or ctx.kind(x) not in (TENSOR, None):
                return
            repeats = node.args[0] if node.args else kwarg(node, "repeats")
        if repeats is None or has_arg(node, "output_size") or ctx.kind(repeats) != TENSOR:
            return
        if isinstance(repeats, ast.Name) and _HOST_COUNT.match(repeats.id):
            return
        size = size_in_scope(ctx, OUTPUT_SIZE_NAMES)
        fix = None
        if size is not None:
            fix = Fix("unsafe", (add_keyword(ctx, node, "output_size", size),),
                      message=f"add `output_size={size}`", assumption=self.fix_assumption)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: without `output_size` the output length "
                    "`repeats.sum()` is read on the host", f"add `output_size={size or 'N'}` (N: the total, known "
                    "on the host)", fix=fix)

