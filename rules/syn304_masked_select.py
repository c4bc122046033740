from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule

from ._util import method, not_a_device_tensor, short


class MaskedSelect(Rule):
    code = "SYN304"
    name = "masked-select"
    summary = "`torch.masked_select(x, m)` and `x.masked_select(m)`."
    why = ("The output holds one element per True in the mask: its size is data-dependent, so the count is "
           "copied to the host before the output can be allocated, and the host waits for the GPU.")
    rewrite = ("Keep the full shape: `torch.where(m, x, 0)` and reduce over it (a masked sum "
               "`torch.where(m, x, 0).sum()`, a masked mean `... / m.sum()`).")
    triggers = TORCH_CODE
    ops = ("aten::masked_select",)
    rewrite_hint = "torch.where(m, x, 0) and reduce, instead of masked_select"
    footprint = Footprint(ops=1)  # where(m, x, 0) and the reduction
    bad = (
        Bad("""
import torch
def forward(self, x, mask):
    return torch.masked_select(x, mask).mean()
""", line=4),
        Bad("""
def compute_loss(loss, valid):
    return loss.masked_select(valid).sum()
""", line=3),
        Bad("""
from torch import masked_select
def f(a, b):
    return masked_select(a, b > 0)
""", line=4),
    )
    good = (
        Good("""
import torch
def forward(self, x, mask):
    return torch.where(mask, x, 0).sum()
"""),
        Good("""
import torch
x = torch.arange(4)
y = x.masked_select(x > 1)  # a CPU tensor
"""),
        Good("""
import torch
def forward(self, x, mask):
    return x.masked_fill(~mask, 0).sum()
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q == "torch.masked_select":
            x = node.args[0] if node.args else None
        else:
            x = method(node, "masked_select")
            if x is None or q is not None:
                return
        if x is not None and not_a_device_tensor(ctx, x):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: its output size is the mask's count, which the host "
                    "must read from the GPU",
                    "keep the full shape: `torch.where(m, x, 0)`, then reduce (masked mean: `.sum() / m.sum()`)")
