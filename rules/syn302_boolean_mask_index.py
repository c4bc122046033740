import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule

from ._indexing import torch_only_module, visibly_mask
from ._util import atom, elementwise_of, in_context, is_mask, shape_changing_mask, short

from .syn306_masked_cross_entropy import is_inline_masked_loss_arg


class BooleanMaskIndex(Rule):
    code = "SYN302"
    name = "boolean-mask-index"
    summary = "Reading a tensor through a boolean mask: `x[mask]`."
    why = ("Indexing with a boolean mask is `nonzero` in disguise: the number of selected elements sets "
           "the output size, so it is copied to the host first and the host waits for the GPU.")
    rewrite = ("Keep the full shape and zero out the rest: `torch.where(mask, x, 0)`; for a masked sum "
               "`torch.where(m, x, 0).sum()`, a masked mean `torch.where(m, x, 0).sum() / m.sum()`; for a "
               "masked cross-entropy, its `ignore_index` (SYN306 reports those reads).")
    fix_safety = "unsafe"
    fix_assumption = ("the mask has the tensor's shape (certain when it is elementwise in it, like `x > 0`); equal up "
                      "to float rounding, since the sum runs over more elements in another order (exact for integers); "
                      "for `.mean()` -> `torch.where(m, x, 0).sum() / m.sum()`, a floating `x` (nan for an empty mask "
                      "in both).")
    triggers = TORCH_CODE
    ops = ("aten::index",)
    rewrite_hint = "torch.where(m, x, 0); masked mean as (x * m).sum() / m.sum()"
    footprint = Footprint(ops=1)  # where / multiply by the mask / an ignore_index fill
    bad = (
        Bad("""
import torch
def loss_fn(pred, target):
    valid = target != -1
    return pred[valid].mean()
""", line=5, fixed="""
import torch
def loss_fn(pred, target):
    valid = target != -1
    return torch.where(valid, pred, 0).sum() / valid.sum()
""", unsafe=True),
        Bad("""
def forward(self, x, mask):
    return x[mask]
""", line=3),
        Bad("""
import torch
def f(x: torch.Tensor):
    return 2 * x[x > 0].sum()
""", line=4, fixed="""
import torch
def f(x: torch.Tensor):
    return 2 * torch.where(x > 0, x, 0).sum()
""", unsafe=True),
        Bad("""
import torch
def compute_loss(loss, is_valid):
    return torch.sum(loss[is_valid]) / 8
""", line=4, fixed="""
import torch
def compute_loss(loss, is_valid):
    return torch.where(is_valid, loss, 0).sum() / 8
""", unsafe=True),
        Bad("""
import torch
from torchvision.ops import boxes as box_ops
def postprocess(scores, boxes, threshold: float):
    out = []
    for s, b in zip(scores, box_ops.clip_boxes_to_image(boxes, (800, 800))):
        out.append({"scores": s[s > threshold], "boxes": b[s > threshold]})
    return out
""", line=7, count=2),
        Bad("""
import torch
class Sanitize:
    def transform(self, inpt, params: dict):
        return inpt[params["valid"]]  # a mask stored with the transform's parameters
""", line=5),
    )
    good = (
        Good("""
import numpy as np
import torch
def keep(scores, boxes, t):
    return boxes[scores > t]  # numpy arrays as often as tensors here
"""),
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
        Good("""
import torchvision
def forward(self, boxes, scores):
    keep = torchvision.ops.nms(boxes, scores, 0.5)  # indices, whatever the name says
    return boxes[keep]
"""),
        Good("""
import torch.nn.functional as F
def loss_fn(pred, target):
    m = target >= 0
    return F.cross_entropy(pred[m], target[m])  # one finding for the call: SYN306
"""),
    )

    def visit_Subscript(self, node, ctx):
        if not isinstance(node.ctx, ast.Load):
            return
        # an array of unknown kind in a module that uses no other array library: a tensor, when the mask
        # is visibly one (`boxes[score > t]`, `inpt[params["valid"]]`)
        unknown = ctx.kind(node.value) is None and torch_only_module(ctx)
        if not unknown and not ctx.infer.is_any_tensor(node.value):
            return
        sl = node.slice
        masks = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        for m in masks:
            if isinstance(m, (ast.Slice, ast.Constant)):
                continue
            if unknown or not ctx.infer.is_any_tensor(m) and not isinstance(m, ast.Compare):
                if not visibly_mask(ctx, m):
                    continue
            elif not is_mask(ctx, m):
                continue
            if ctx.kind(node.value) == "cpu_tensor" and ctx.kind(m) == "cpu_tensor":
                return  # both on the host: nothing to wait for
            if is_inline_masked_loss_arg(ctx, node):
                return  # SYN306 reports the loss call
            fix, new = (_reduction_fix(ctx, node, m) if m is sl else None) or (None, None)
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: a boolean-mask read sizes its output by the "
                        "number of selected elements, which the host must read from the GPU",
                        f"`{new}`" if fix else
                        f"keep the shape: `torch.where({short(ctx, m, 30)}, {short(ctx, node.value, 30)}, 0)`"
                        " (masked mean: `torch.where(m, x, 0).sum() / m.sum()`)", fix=fix)
            return


def _reduction_fix(ctx, sub, m) -> tuple[Fix, str] | None:
    """`x[m].sum()` / `x[m].mean()` / `torch.sum(x[m])` / `torch.mean(x[m])` over the full tensor."""
    parent = ctx.parent(sub)
    call, op = None, None
    if isinstance(parent, ast.Attribute) and parent.value is sub and parent.attr in ("sum", "mean"):
        c = ctx.parent(parent)
        if isinstance(c, ast.Call) and c.func is parent and not c.args and not c.keywords:
            call, op = c, parent.attr
    elif isinstance(parent, ast.Call) and len(parent.args) == 1 and parent.args[0] is sub and not parent.keywords \
            and ctx.call_name(parent) in ("torch.sum", "torch.mean"):
        call, op = parent, ctx.call_name(parent)[6:]
    if call is None or shape_changing_mask(ctx, m):
        return None
    kept = f"torch.where({ctx.text(m)}, {ctx.text(sub.value)}, 0).sum()"
    new = kept if op == "sum" else in_context(ctx, call, f"{kept} / {atom(ctx, m)}.sum()")
    shape = "" if elementwise_of(ctx, m, sub.value) else f"`{short(ctx, m, 30)}` has `{short(ctx, sub.value, 30)}`'s shape; "
    return Fix("unsafe", (ctx.edit(call, new),), message="reduce over the full tensor, the masked-out elements as 0",
               imports=("torch",), assumption=shape + BooleanMaskIndex.fix_assumption), new
