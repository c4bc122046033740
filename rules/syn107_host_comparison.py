import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, TENSOR

from ._util import method, not_a_device_tensor, short

FUNCS = {"torch.equal": "equal", "torch.allclose": "allclose", "torch.is_nonzero": "is_nonzero"}


class HostComparison(Rule):
    code = "SYN107"
    name = "host-comparison"
    summary = "`torch.equal`, `torch.allclose`, `torch.is_nonzero` and `Tensor.equal` / `Tensor.allclose`."
    why = ("They return a Python `bool`, so the comparison's result is copied to the host: the CPU waits for "
           "all queued GPU work (`equal` twice in the measurements: once for the shapes' values, once for the "
           "result).")
    rewrite = ("Keep the answer on the device: `torch.isclose(a, b).all()` / `(a == b).all()` as a 0-dim tensor, "
               "used with `torch.where`, or checked with `torch._assert_async(...)`.")
    triggers = TORCH_CODE
    ops = ("aten::equal", "aten::allclose")
    rewrite_hint = "keep the comparison a tensor: torch.isclose(a, b).all(), no Python bool"
    footprint = Footprint(ops=2)  # isclose + all
    bad = (
        Bad("""
import torch
def _check_rotation(R, tol: float = 1e-7):
    eye = torch.eye(3, dtype=R.dtype, device=R.device)
    if not torch.allclose(R.bmm(R.transpose(1, 2)), eye, atol=tol):
        raise ValueError("not a rotation")
class Rotate:
    def __init__(self, R, dtype=torch.float32, device: str = "cpu"):  # public: its callers choose the device
        R = R.to(dtype=dtype).to(device=device)
        _check_rotation(R.view(-1, 3, 3))
        self.R = R
""", line=5),
        Bad("""
import torch
def forward(self, x, y):
    if torch.allclose(x, y):
        return x
    return y
""", line=4),
        Bad("""
from torch import equal
def compute_loss(a, b):
    same = equal(a, b)
    return same
""", line=4),
        Bad("""
import torch
def forward(self, x: torch.Tensor, prev: torch.Tensor):
    return x.equal(prev), x.allclose(prev, atol=1e-3), torch.is_nonzero(x.sum())
""", line=4, count=3),
    )
    good = (
        Good("""
import torch
def forward(self, x, y):
    return torch.isclose(x, y).all(), (x == y).all()
"""),
        Good("""
import torch
a = torch.zeros(3)
b = torch.ones(3)
print(torch.equal(a, b))  # CPU tensors
"""),
        Good("""
import numpy as np
def f(a, b, s):
    return np.allclose(a, b), s.equal("x"), a.equals(b)
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q in FUNCS:
            args = [a for a in node.args if not isinstance(a, ast.Starred)]
            if args and all(not_a_device_tensor(ctx, a) for a in args):
                return
            self._report(ctx, node, FUNCS[q], f"torch.{FUNCS[q]}")
            return
        recv = method(node, "equal", "allclose")
        if recv is None or q is not None or len(node.args) != 1:
            return
        k, ko = ctx.kind(recv), ctx.kind(node.args[0])
        if k == TENSOR or (k is None and ko == TENSOR) or (k == CPU and ko == TENSOR):
            self._report(ctx, node, node.func.attr, f"Tensor.{node.func.attr}")

    def _report(self, ctx, node, op, what):
        sug = {"equal": "`(a == b).all()` (and a shape check on the host) kept as a tensor",
               "allclose": "`torch.isclose(a, b, rtol, atol).all()` kept as a tensor",
               "is_nonzero": "keep the value as a tensor (`t != 0`) and use it with `torch.where`"}[op]
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: {what} returns a Python bool, so the result is copied "
                    "to the host, which waits for all queued GPU work", sug)
