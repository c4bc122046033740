from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule

from ._util import method, not_a_device_tensor, short


class Bincount(Rule):
    code = "SYN307"
    name = "bincount"
    summary = "`torch.bincount(i)` and `i.bincount()`, with or without `minlength`."
    why = ("The output has `max(i) + 1` bins (at least `minlength`): the maximum is read on the host before "
           "the output can be allocated, so the host waits for the GPU. `minlength` does not help.")
    rewrite = ("With the number of bins K known: `torch.zeros(K, device=i.device, dtype=torch.long)"
               ".scatter_add_(0, i, torch.ones_like(i))` (`.index_add_` or `scatter_add_` with weights for "
               "`weights=`); values >= K must not occur.")
    triggers = TORCH_CODE
    ops = ("aten::bincount",)
    rewrite_hint = "torch.zeros(K, device=dev).scatter_add_(0, i, ones) with K known"
    footprint = Footprint(ops=2)  # zeros + scatter_add_
    bad = (
        Bad("""
import torch
def forward(self, labels):
    return torch.bincount(labels, minlength=self.num_classes)
""", line=4),
        Bad("""
def compute_loss(pred, target):
    counts = target.flatten().bincount()
    return counts
""", line=3),
        Bad("""
import torch as T
def f(x):
    return T.bincount(x, weights=x.float())
""", line=4),
    )
    good = (
        Good("""
import numpy as np
c = np.bincount(arr)
"""),
        Good("""
import torch
c = torch.bincount(torch.tensor([1, 2, 2]))  # a CPU tensor
"""),
        Good("""
import torch
def forward(self, i):
    return torch.zeros(10, dtype=torch.long, device=i.device).scatter_add_(0, i, torch.ones_like(i))
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q == "torch.bincount":
            x = node.args[0] if node.args else None
        else:
            x = method(node, "bincount")
            if x is None or q is not None:
                return
        if x is not None and not_a_device_tensor(ctx, x):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: the number of bins is the largest value + 1, which "
                    "the host must read from the GPU (minlength does not avoid it)",
                    "with K bins known: `torch.zeros(K, dtype=torch.long, device=i.device)"
                    ".scatter_add_(0, i, torch.ones_like(i))`")
