import ast

from syncscan.lint.rule import Bad, Good, Rule

from ._util import short


class BooleanMaskIndex(Rule):
    code = "SYN302"
    name = "boolean-mask-index"
    summary = "Reading a tensor through a boolean mask: `x[mask]`."
    why = ("Indexing with a boolean mask is `nonzero` in disguise: the number of selected elements sets "
           "the output size, so it is copied to the host first and the host waits for the GPU.")
    rewrite = ("Keep the full shape and zero out the rest: `torch.where(mask, x, 0)`; for a masked mean "
               "`(x * mask).sum() / mask.sum()`; for a masked loss, the loss's `ignore_index` or "
               "`reduction='none'` times the mask.")
    bad = (
        Bad("""
import torch
def loss_fn(pred, target):
    valid = target != -1
    return pred[valid].mean()
""", line=5),
        Bad("""
def forward(self, x, mask):
    return x[mask]
""", line=3),
        Bad("""
import torch
def f(x: torch.Tensor):
    return x[x > 0].sum()
""", line=4),
    )
    good = (
        Good("""
import torch
def f(x: torch.Tensor, idx: torch.Tensor):
    return x[idx]  # an index tensor (gather): the output size is known
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    return x[:, 0], x[..., 1:]
"""),
        Good("""
def f(d):
    return d["mask"]
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    x[x > 0] = 0.0  # assignment of a Python scalar is masked_fill: no sync
    return x
"""),
    )

    def visit_Subscript(self, node, ctx):
        if not isinstance(node.ctx, ast.Load) or not ctx.infer.is_any_tensor(node.value):
            return
        sl = node.slice
        masks = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        for m in masks:
            if isinstance(m, (ast.Slice, ast.Constant)) or not ctx.infer.is_any_tensor(m) and not isinstance(m, ast.Compare):
                continue
            if ctx.infer.is_bool(m):
                self.report(ctx, node, f"`{short(ctx, node)}` syncs: a boolean-mask read sizes its output by the "
                            "number of selected elements, which the host must read from the GPU",
                            f"keep the shape: `torch.where({short(ctx, m, 30)}, {short(ctx, node.value, 30)}, 0)`"
                            " (masked mean: `(x * m).sum() / m.sum()`)")
                return
