import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR

from ._util import is_literal_true, kwarg, not_a_device_tensor, short, surely_tensor

# checked function -> (its _ex variant, the field of the _ex result that is the checked result, or None when
# the checked function returns the first fields of the _ex result)
CHECKED = {
    "torch.linalg.inv": ("inv_ex", "inverse"),
    "torch.inverse": ("inv_ex", "inverse"),
    "torch.linalg.cholesky": ("cholesky_ex", "L"),
    "torch.cholesky": ("cholesky_ex", "L"),
    "torch.linalg.solve": ("solve_ex", "result"),
    "torch.linalg.lu_factor": ("lu_factor_ex", None),
    "torch.linalg.ldl_factor": ("ldl_factor_ex", None),
}
METHODS = {"inverse": "torch.inverse", "cholesky": "torch.cholesky"}
EX = {"torch.linalg.inv_ex", "torch.linalg.cholesky_ex", "torch.linalg.solve_ex", "torch.linalg.lu_factor_ex",
      "torch.linalg.ldl_factor_ex"}


class LinalgWithoutEx(Rule):
    code = "SYN404"
    name = "linalg-without-ex"
    summary = ("`torch.linalg.cholesky` / `inv` / `solve` / `lu_factor` / `ldl_factor`, `torch.cholesky`, "
               "`torch.inverse`, `Tensor.inverse()`, `Tensor.cholesky()`, and the `_ex` variants with "
               "`check_errors=True`.")
    why = ("These check the factorisation's `info` to raise on a singular or non-positive-definite input: the "
           "check reads `info` on the host, which waits for the GPU. The `_ex` variants return `info` instead.")
    rewrite = ("`torch.linalg.inv_ex(A).inverse`, `cholesky_ex(A).L`, `solve_ex(A, B).result`, "
               "`lu_factor_ex(A)` (LU, pivots, info), `ldl_factor_ex(A)`; check `info` off the hot path if needed.")
    # No automatic fix: the `_ex` variant returns nan/inf or garbage for a singular or non-positive-definite
    # input where the checked one raises, and code relies on that error (kornia's own tests check that its
    # inverse helper raises on a singular matrix: the fix broke one when applied, see docs/fix-proof.md).
    fix_safety = "none"
    triggers = TORCH_CODE
    ops = ("aten::linalg_cholesky_ex", "aten::linalg_cholesky", "aten::linalg_inv",
           "aten::linalg_inv_ex", "aten::linalg_solve", "aten::linalg_lu_factor", "aten::linalg_ldl_factor")
    rewrite_hint = "use the *_ex variant (linalg.cholesky_ex, inv_ex, ...) and check info on the GPU"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # the _ex variant does the same factorisation
    bad = (
        Bad("""
import torch
ch = torch  # the module under a second name
def solve_xtx(grads, xtx):
    return grads @ ch.linalg.inv(xtx.float())
""", line=5),
        Bad("""
import torch
def forward(self, A, b):
    return torch.linalg.solve(A, b)
""", line=4),
        Bad("""
import torch
def forward(self, cov):
    L = torch.linalg.cholesky(cov, upper=False)
    return L @ L.mT, cov.inverse()
""", line=4, count=2),
        Bad("""
import torch
def forward(self, A, B):
    LU, piv = torch.linalg.lu_factor(A)
    return torch.linalg.lu_solve(LU, piv, B)
""", line=4),
        Bad("""
from torch import linalg as LA
def forward(self, A):
    return 2 * LA.inv(A + 1)
""", line=4),
        Bad("""
import torch
def forward(self, A):
    return torch.linalg.cholesky_ex(A, check_errors=True).L
""", line=4),
    )
    good = (
        Good("""
import torch
def forward(self, A, b):
    return torch.linalg.solve_ex(A, b).result, torch.linalg.cholesky_ex(A).L
"""),
        Good("""
import numpy as np
inv = np.linalg.inv(a)
"""),
        Good("""
import torch
A = torch.eye(3)
x = torch.linalg.inv(A)  # a CPU tensor
"""),
        Good("""
def f(transform):
    return transform.inverse()  # not known to be a tensor
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q in EX:
            if is_literal_true(kwarg(node, "check_errors")):
                self.report(ctx, node, f"`{short(ctx, node)}` syncs: `check_errors=True` reads `info` on the host",
                            "drop `check_errors=True` and check `info` off the hot path")
            return
        if q in CHECKED:
            a = node.args[0] if node.args else (kwarg(node, "A") or kwarg(node, "input"))
            if a is not None and not_a_device_tensor(ctx, a):
                return
            what = q
        elif q is None and isinstance(node.func, ast.Attribute) and node.func.attr in METHODS \
                and ctx.kind(node.func.value) == TENSOR:
            what = METHODS[node.func.attr]
        else:
            return
        new = _ex_rewrite(ctx, node, what)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: it reads the factorisation's `info` on the host to "
                    "raise on bad input", (f"`{new}`" if new else f"use `torch.linalg.{CHECKED[what][0]}`") +
                    " if nothing relies on the error for a singular or non-positive-definite input (the result "
                    "then holds nan/inf or garbage: check `info` off the hot path)")


def _ex_rewrite(ctx, node, what) -> str | None:
    """The call spelled with its `_ex` variant, or None where that cannot be said exactly."""
    ex, field = CHECKED[what]
    if any(k.arg in (None, "out") for k in node.keywords):
        return None
    f = node.func
    if what.startswith("torch.linalg.") and isinstance(f, ast.Attribute):
        func = ctx.text(f) + "_ex"
    else:
        func = f"torch.linalg.{ex}"
    is_method = ctx.call_name(node) is None
    if is_method and not surely_tensor(ctx, f.value):
        return None  # `op.inverse()` of something that may not be a tensor: torch.linalg would not take it
    args = ([ctx.text(f.value)] if is_method else []) + [ctx.text(a) for a in node.args]
    if what == "torch.cholesky" and len(args) > 1:  # torch.cholesky(A, upper): keyword-only in linalg
        args[1] = f"upper={args[1]}"
    args += [f"{k.arg}={ctx.text(k.value)}" for k in node.keywords]
    call = f"{func}({', '.join(args)})"
    if field is not None:
        new = f"{call}.{field}"  # a primary: no parentheses needed anywhere
    else:
        parent = ctx.parent(node)
        if isinstance(parent, ast.Attribute) and parent.attr in ("LU", "LD", "pivots"):
            new = call  # the same field names
        elif isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.slice, ast.Constant) \
                and parent.slice.value in (0, 1):
            new = call
        elif (isinstance(parent, ast.Assign) and parent.value is node and isinstance(parent.targets[0], (ast.Tuple, ast.List))) \
                or isinstance(parent, ast.Starred):
            new = f"{call}[:2]"
        else:
            return None  # a named tuple passed on: its type would change
    return new
