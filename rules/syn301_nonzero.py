import ast

from syncscan.lint.rule import Bad, Good, Rule

from ._util import is_literal_true, kwarg, method, not_a_device_tensor, short

FUNCS = ("torch.nonzero", "torch.argwhere", "torch.where")


class Nonzero(Rule):
    code = "SYN301"
    name = "nonzero"
    summary = "`torch.nonzero`, `Tensor.nonzero`, `torch.argwhere` and one-argument `torch.where`."
    why = ("The size of the result depends on the data, so PyTorch must copy the count of non-zero "
           "elements to the host before it can allocate the output: the host waits for the GPU.")
    rewrite = ("Use the mask directly: `x.masked_fill(cond, v)` or 3-argument `torch.where(cond, a, b)` "
               "for assignments, `torch.count_nonzero` for counts, `torch.nonzero_static(m, size=k)` "
               "when an upper bound is known.")
    bad = (
        Bad("""
import torch
inds = torch.nonzero(target == 9, as_tuple=True)
""", line=3),
        Bad("""
import torch as T
def forward(self, x):
    return (x > 0).nonzero()
""", line=4),
        Bad("""
from torch import where
idx = where(mask)
""", line=3),
        Bad("""
import torch
pos = torch.argwhere(labels > 0)
""", line=3),
    )
    good = (
        Good("""
import torch
y = torch.where(cond, a, b)
"""),
        Good("""
import torch
n = torch.count_nonzero(mask)
"""),
        Good("""
import numpy as np
idx = np.nonzero(arr)
idx2 = arr.nonzero()
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q in FUNCS:
            if q == "torch.where" and (len(node.args) + len(node.keywords) != 1):
                return
            what = "one-argument torch.where" if q == "torch.where" else q
            self._report(ctx, node, what)
            return
        recv = method(node, "nonzero", "argwhere")
        if recv is not None and ctx.qualname(recv) is None and not not_a_device_tensor(ctx, recv):
            if ctx.kind(recv) is None and not ctx.infer.is_bool(recv):
                # unknown receiver: numpy arrays have .nonzero() too; flag only what looks like a tensor mask
                if not isinstance(recv, (ast.Compare, ast.BinOp, ast.UnaryOp)):
                    return
            self._report(ctx, node, f"Tensor.{node.func.attr}")

    def _report(self, ctx, node, what):
        tup = is_literal_true(kwarg(node, "as_tuple"))
        self.report(ctx, node, f"{what} syncs: its output size depends on the data, so the host waits for the GPU",
                    "replace the indices with the mask itself: `x.masked_fill(cond, v)` / `torch.where(cond, a, b)`"
                    + ("" if tup else "; `torch.count_nonzero(cond)` if only the count is used"))
