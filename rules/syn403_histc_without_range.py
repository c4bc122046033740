import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule

from ._util import add_keyword, kwarg, last_assign, method, not_a_device_tensor, short


def _zero(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def _number(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def clamp_bounds(ctx, x, at) -> tuple[str, str] | None:
    """Literal bounds of `x` when it was visibly clamped: `x = y.clamp(a, b)`, `torch.clamp(y, min=a, max=b)`."""
    if isinstance(x, ast.Name):
        a = last_assign(ctx, x.id, at)
        return clamp_bounds(ctx, a.value, a) if a is not None else None
    if not isinstance(x, ast.Call):
        return None
    q = ctx.call_name(x)
    if q in ("torch.clamp", "torch.clip"):
        args = x.args[1:]
    elif isinstance(x.func, ast.Attribute) and x.func.attr in ("clamp", "clip", "clamp_", "clip_") and q is None:
        args = x.args
    else:
        return None
    lo = args[0] if args else kwarg(x, "min")
    hi = args[1] if len(args) > 1 else kwarg(x, "max")
    if lo is not None and hi is not None and _number(lo) and _number(hi):
        return ctx.text(lo), ctx.text(hi)
    return None


class HistcWithoutRange(Rule):
    code = "SYN403"
    name = "histc-without-range"
    summary = "`torch.histc(x, bins)` / `x.histc(bins)` without `min`/`max` (both default to 0)."
    why = ("With `min == max` (the default 0, 0) the range is the data's own minimum and maximum, which the "
           "host reads from the GPU before binning (two reads, measured).")
    rewrite = "Pass the range: `torch.histc(x, bins, min=lo, max=hi)` with bounds known on the host."
    fix_safety = "unsafe"
    fix_assumption = ("the data reaches both clamp bounds; otherwise the bins span the clamp range instead of the "
                      "data's own minimum and maximum (a fixed range is usually what was meant).")
    triggers = TORCH_CODE
    ops = ("aten::histc",)
    rewrite_hint = "pass min= and max= to histc"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # with min= and max=
    bad = (
        Bad("""
import torch
def forward(self, x):
    return torch.histc(x, bins=10)
""", line=4),
        Bad("""
import torch
def forward(self, x):
    p = x.clamp(0.0, 1.0)
    return p.histc(20)
""", line=5, fixed="""
import torch
def forward(self, x):
    p = x.clamp(0.0, 1.0)
    return p.histc(20, min=0.0, max=1.0)
""", unsafe=True),
        Bad("""
import torch
def forward(self, x):
    return torch.histc(x, 100, 0, 0)
""", line=4),
    )
    good = (
        Good("""
import torch
def forward(self, x):
    return torch.histc(x, bins=10, min=0, max=1)
"""),
        Good("""
import torch
def forward(self, x, lo, hi):
    return x.histc(10, lo, hi)
"""),
        Good("""
import numpy as np
h = np.histogram(a, bins=10)
"""),
        Good("""
import torch
h = torch.histc(torch.rand(100), bins=10)  # a CPU tensor
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q == "torch.histc":
            x = node.args[0] if node.args else kwarg(node, "input")
            rest = node.args[1:]
        else:
            x = method(node, "histc")
            if x is None or q is not None:
                return
            rest = node.args
        if x is None or not_a_device_tensor(ctx, x):
            return
        lo = rest[1] if len(rest) > 1 else kwarg(node, "min")
        hi = rest[2] if len(rest) > 2 else kwarg(node, "max")
        if any(k.arg is None for k in node.keywords):
            return
        # a range given by anything but the literal default: assumed a real range
        if (lo is not None and not _zero(lo)) or (hi is not None and not _zero(hi)):
            return
        bounds = clamp_bounds(ctx, x, node)
        fix = None
        if bounds is not None and lo is None and hi is None:
            fix = Fix("unsafe", (add_keyword(ctx, node, "min", f"{bounds[0]}, max={bounds[1]}"),),
                      message=f"pass `min={bounds[0]}, max={bounds[1]}` (the clamp bounds)",
                      assumption=self.fix_assumption)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: with min == max the data's minimum and maximum are "
                    "read on the host", f"pass the range: `min={bounds[0] if bounds else 'lo'}, "
                    f"max={bounds[1] if bounds else 'hi'}`", fix=fix)
