import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR

from ._util import kwarg, method, short


def _simple(node) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


class MaskedFillTensorValue(Rule):
    code = "SYN308"
    name = "masked-fill-tensor-value"
    summary = "`x.masked_fill(m, v)` / `masked_fill_` / `torch.masked_fill` where the value `v` is a (0-dim) tensor."
    why = ("`masked_fill` takes its value as a scalar: given a 0-dim tensor on the GPU, it reads it on the host "
           "first (`.item()`), which waits for the GPU. A Python number does not.")
    rewrite = ("`torch.where(m, v.to(x.dtype), x)` keeps the value on the device; or pass a Python number "
               "(`torch.finfo(x.dtype).min`, `float('-inf')`).")
    fix_safety = "safe"
    triggers = TORCH_CODE
    ops = ("aten::masked_fill", "aten::masked_fill_")
    rewrite_hint = "masked_fill(m, python_scalar) or torch.where(m, v, x)"
    footprint = Footprint(ops=1)  # masked_fill with a Python scalar, or where
    bad = (
        Bad("""
import torch
def forward(self, scores, mask):
    neg = scores.min()
    return scores.masked_fill(mask, neg)
""", line=5, fixed="""
import torch
def forward(self, scores, mask):
    neg = scores.min()
    return torch.where(mask, neg.to(scores.dtype), scores)
"""),
        Bad("""
import torch
def forward(self, x, mask):
    x.masked_fill_(mask, x.amax())
    return x
""", line=4, fixed="""
import torch
def forward(self, x, mask):
    x.copy_(torch.where(mask, x.amax(), x))
    return x
"""),
        Bad("""
import torch
def forward(self, scores, mask):
    fill = torch.full((), -1e4, device=scores.device, dtype=scores.dtype)
    return scores.masked_fill(mask, fill)
""", line=5, fixed="""
import torch
def forward(self, scores, mask):
    fill = torch.full((), -1e4, device=scores.device, dtype=scores.dtype)
    return torch.where(mask, fill.to(scores.dtype), scores)
"""),
        Bad("""
import torch
def forward(self, x, mask, fill):
    return torch.masked_fill(x, mask, fill)
""", line=4),
    )
    good = (
        Good("""
import torch
def forward(self, scores, mask):
    return scores.masked_fill(mask, torch.finfo(scores.dtype).min)
"""),
        Good("""
import torch
def forward(self, scores, mask):
    return scores.masked_fill(mask, -float("inf")).masked_fill(~mask, 0.0)
"""),
        Good("""
import torch
def forward(self, scores, mask):
    return scores.masked_fill(mask, torch.tensor(-1e4))  # a CPU scalar: read without waiting
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q == "torch.masked_fill" and len(node.args) == 3:
            x, m, v = node.args
        else:
            x = method(node, "masked_fill", "masked_fill_")
            if x is None or q is not None:
                return
            args = list(node.args) + [kwarg(node, "mask"), kwarg(node, "value")]
            args = [a for a in args if a is not None]
            if len(args) != 2:
                return
            m, v = args
        if ctx.kind(v) != TENSOR or ctx.kind(x) not in (TENSOR, None):
            return
        fix, new = _where_fix(ctx, node, x, m, v) or (None, None)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: a tensor value is read on the host as a scalar",
                    f"`{new}`" if fix else f"`torch.where({short(ctx, m, 30)}, {short(ctx, v, 30)}, "
                    f"{short(ctx, x, 30)})`, or a Python number as the value", fix=fix)


def _where_fix(ctx, node, x, m, v) -> tuple[Fix, str] | None:
    if not _simple(x):
        return None
    xs = ctx.text(x)
    inplace = isinstance(node.func, ast.Attribute) and node.func.attr == "masked_fill_"
    if inplace:
        stmt = ctx.parent(node)
        if not isinstance(stmt, ast.Expr):
            return None  # the result is used: keep it simple
        new = f"{xs}.copy_(torch.where({ctx.text(m)}, {ctx.text(v)}, {xs}))"  # copy_ casts to x's dtype
    else:
        vs = ctx.text(v)
        dt = kwarg(v, "dtype") if isinstance(v, ast.Call) else None
        if dt is not None and ctx.text(dt) == f"{xs}.dtype":
            cast = vs  # made with x's dtype already
        else:
            cast = f"{vs}.to({xs}.dtype)" if isinstance(v, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) \
                else f"({vs}).to({xs}.dtype)"
        new = f"torch.where({ctx.text(m)}, {cast}, {xs})"
    return Fix("safe", (ctx.edit(node, new),), message="select with `torch.where`: the value stays on the device",
               imports=("torch",)), new
