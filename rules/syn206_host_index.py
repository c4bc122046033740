import ast

from syncscan.lint.rule import Bad, Good, Rule
from syncscan.lint.tensors import CPU, HOST, NDARRAY, TENSOR, TENSORS

from ._util import element_kind_of, last_assign, short


def _host_list(ctx, e: ast.AST) -> bool:
    if isinstance(e, ast.List):
        return bool(e.elts) and all(not isinstance(x, (ast.Starred, ast.Slice)) and ctx.kind(x) not in (TENSOR, TENSORS)
                                    for x in e.elts)
    if isinstance(e, ast.ListComp):
        return element_kind_of(ctx, e) not in (TENSOR, TENSORS)
    return False


def _host_index(ctx, e: ast.AST) -> str | None:
    """What kind of host index `e` is: a Python list, a CPU tensor, a numpy array; None if none."""
    if _host_list(ctx, e):
        return "a Python list"
    k = ctx.kind(e)
    if k == CPU:
        return "a CPU tensor"
    if k == NDARRAY:
        return "a numpy array"
    if k == HOST and isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, e)
        if a is not None and _host_list(ctx, a.value):
            return "a Python list"
    return None


class HostIndex(Rule):
    code = "SYN206"
    name = "host-index"
    summary = ("Indexing a tensor that may live on the GPU with a host index: a Python list (`x[[1, 2, 3]]`), "
               "a CPU index tensor (`x[idx_cpu]`, `x[torch.arange(n)]`), a numpy array; reading or writing.")
    why = ("Advanced indexing needs the index on the tensor's device, so PyTorch first copies the host index "
           "there: a blocking copy from pageable memory that waits for all queued GPU work.")
    rewrite = ("Make the index on the device once, outside the step (`torch.arange(n, device=x.device)`, a "
               "buffer registered in `__init__`), or use a slice for a contiguous range (`x[1:4]`, a view).")
    triggers = ("[",)
    bad = (
        Bad("""
import torch
def forward(self, x):
    return x[[0, 2, 5]]
""", line=4),
        Bad("""
import torch
def forward(self, x):
    perm = torch.randperm(x.shape[0])
    x[:, perm] = 0.0
    return x[perm]
""", line=5, count=2),
        Bad("""
import numpy as np
import torch
def forward(self, x):
    keep = [0, 1, 3]
    sel = np.array([1, 2])
    return x[:, keep], x[sel]
""", line=7, count=2),
    )
    good = (
        Good("""
import torch
def forward(self, x, idx):
    perm = torch.randperm(x.shape[0], device=x.device)
    return x[perm], x[idx], x[0, 1:3], x[..., None]
"""),
        Good("""
import torch
def f(rows):
    table = torch.zeros(10, 3)  # a CPU tensor indexed on the host
    return table[[0, 1]], table[torch.arange(2)], rows[[0, 1]]
"""),
        Good("""
import torch
def forward(self, x):
    idx = torch.tensor([0, 2], device=x.device)  # on the device (SYN202 reports its copy)
    return x[idx], x[x.argsort()[:2]]
"""),
    )

    def visit_Subscript(self, node, ctx):
        if ctx.kind(node.value) != TENSOR:
            return
        sl = node.slice
        for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]):
            what = _host_index(ctx, e)
            if what is not None:
                verb = "writing through" if isinstance(node.ctx, ast.Store) else "indexing with"
                self.report(ctx, node, f"`{short(ctx, node)}` syncs: {verb} {what} copies the index to the device "
                            "first, a blocking copy that waits for all queued GPU work",
                            "make the index on the device once, outside the step (e.g. `torch.arange(n, "
                            "device=x.device)` or a buffer), or use a slice for a contiguous range")
                return
