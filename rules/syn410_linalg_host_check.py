import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR

from ._util import kwarg, not_a_device_tensor, short

# Measured on an H100 (torch 2.11, benchmarks/linalg_sync.py): each of these reads the GPU on the host on every
# call, with no `_ex` variant that skips it (the solver's `info`, a host-side eigen solver, or a norm that picks
# the algorithm). qr, det, slogdet, lu, solve_triangular, cholesky_solve / _inverse and the `_ex` variants do not.
FUNCS = frozenset({
    "torch.linalg.eigh", "torch.linalg.eigvalsh", "torch.linalg.svd", "torch.linalg.svdvals", "torch.linalg.pinv",
    "torch.linalg.eig", "torch.linalg.eigvals", "torch.linalg.lstsq", "torch.linalg.matrix_rank",
    "torch.linalg.cond", "torch.linalg.matrix_exp", "torch.svd", "torch.pinverse", "torch.matrix_exp",
    # built on the above (torch's OpInfo sweep, benchmarks/opinfo_sync.py)
    "torch.svd_lowrank", "torch.pca_lowrank", "torch.linalg.tensorinv", "torch.linalg.tensorsolve",
    # torch's own helper of MultivariateNormal(precision_matrix=...): a Cholesky factorisation
    "torch.distributions.multivariate_normal._precision_to_scale_tril",
})
METHODS = {"svd": "torch.svd", "pinverse": "torch.pinverse", "matrix_exp": "torch.matrix_exp"}
_MVN = ("torch.distributions.MultivariateNormal", "torch.distributions.multivariate_normal.MultivariateNormal")
# matrix norms computed from singular values: ord 2, -2 and "nuc"
_SPECTRAL = (2, -2, "nuc")
# every qualified name this rule reads
_NAMES = FUNCS | set(_MVN) | {"torch.linalg.matrix_norm", "torch.linalg.matrix_power"}


def _spectral_norm(ctx, node: ast.Call, q: str) -> bool:
    """`torch.linalg.matrix_norm(A, ord=2)` (or -2, "nuc"): the singular values, read like svdvals."""
    if q != "torch.linalg.matrix_norm":
        return False
    o = node.args[1] if len(node.args) > 1 else kwarg(node, "ord")
    if isinstance(o, ast.UnaryOp) and isinstance(o.op, ast.USub) and isinstance(o.operand, ast.Constant):
        return type(o.operand.value) is int and o.operand.value == 2  # ord=-2
    return isinstance(o, ast.Constant) and o.value in _SPECTRAL and type(o.value) is not bool


def _negative_power(node: ast.Call, q: str) -> bool:
    """`torch.linalg.matrix_power(A, -k)`: an inverse first (`linalg.inv`, which raises on a singular A)."""
    if q != "torch.linalg.matrix_power":
        return False
    n = node.args[1] if len(node.args) > 1 else kwarg(node, "n")
    return isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant)


class LinalgHostCheck(Rule):
    code = "SYN410"
    name = "linalg-host-check"
    summary = ("`torch.linalg.eigh` / `eigvalsh` / `svd` / `svdvals` / `pinv` / `eig` / `eigvals` / `lstsq` / "
               "`matrix_rank` / `cond` / `matrix_exp` / `tensorinv` / `tensorsolve`, a spectral `matrix_norm`, a "
               "negative `matrix_power`, `torch.svd` / `pinverse` / `svd_lowrank` / `pca_lowrank`, and "
               "`MultivariateNormal` built from a covariance or precision matrix.")
    why = ("On CUDA these read the GPU on the host every call: the solver's convergence `info` is checked to "
           "raise (eigh, svd and what is built on them: pinv, matrix_rank, cond, spectral norms), the general "
           "eigen solver runs on the host (eig), or a norm of the matrix picks the algorithm (matrix_exp). "
           "Unlike `cholesky` / `inv` / `solve` (SYN404) there is no `_ex` variant that skips the check. "
           "`MultivariateNormal(covariance_matrix=...)` factorises with the checked `cholesky`.")
    rewrite = ("Sync once for many matrices: stack them and make one batched call (`torch.linalg.eigh(torch.stack("
               "mats))`) instead of one call per matrix; refresh factorisations every k steps, as preconditioners "
               "do, not every step; for `MultivariateNormal`, pass `scale_tril=torch.linalg.cholesky_ex(cov).L` "
               "(no check) instead of `covariance_matrix=cov`.")
    fix_safety = "none"
    triggers = TORCH_CODE
    ops = ("aten::linalg_eigh", "aten::_linalg_eigh", "aten::linalg_eigvalsh", "aten::linalg_svd", "aten::_linalg_svd",
           "aten::linalg_svdvals", "aten::linalg_pinv", "aten::linalg_eig", "aten::linalg_eigvals",
           "aten::linalg_lstsq", "aten::linalg_matrix_rank", "aten::linalg_cond", "aten::linalg_matrix_exp",
           "aten::svd", "aten::pinverse", "aten::matrix_exp")
    rewrite_hint = "one batched call for many matrices, or refresh every k steps; MultivariateNormal(scale_tril=cholesky_ex(cov).L)"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # the same factorisation, checked less often
    bad = (
        Bad("""
import torch
def step(self, grads):
    for g in grads:
        q, _ = torch.linalg.eigh(g @ g.mT)
        self.precond.append(q)
""", line=5),
        Bad("""
import torch
def forward(self, A):
    u, s, vh = torch.linalg.svd(A, full_matrices=False)
    return u @ vh, torch.linalg.pinv(A)
""", line=4, count=2),
        Bad("""
import torch
from torch.distributions import MultivariateNormal
def forward(self, mu, cov):
    return MultivariateNormal(mu, covariance_matrix=cov).rsample()
""", line=5),
        Bad("""
import torch
def forward(self, w):
    return w / torch.linalg.matrix_norm(w, ord=2)
""", line=4),
        Bad("""
import torch
def forward(self, x: torch.Tensor):
    return x.svd()
""", line=4),
        Bad("""
import numpy as np
import torch
def pca(Y, embedding_dim):
    \"\"\"PCA embedding of a data matrix.

    Arguments
    ---------
    Y: torch.Tensor(shape=(n, k))
        data matrix, with n >= k
    embedding_dim: int
        the number of eigenvectors to keep
    \"\"\"
    Y = Y - Y.mean(axis=0)[None, :]
    U, _, _ = torch.svd(Y)  # the docstring says `Y` is a tensor
    return np.sqrt(float(Y.shape[0])) * U[:, :embedding_dim]
""", line=15),
    )
    good = (
        Good("""
import torch
def forward(self, A):
    # no host check: QR, log-determinant, unchecked Cholesky
    return torch.linalg.qr(A).Q, torch.linalg.slogdet(A), torch.linalg.cholesky_ex(A @ A.mT).L
"""),
        Good("""
import torch
from torch.distributions import MultivariateNormal
def forward(self, mu, cov):
    return MultivariateNormal(mu, scale_tril=torch.linalg.cholesky_ex(cov).L).rsample()
"""),
        Good("""
import numpy as np
u, s, vh = np.linalg.svd(a)
"""),
        Good("""
import torch
A = torch.randn(4, 4)
w = torch.linalg.eigvalsh(A @ A.T)  # a CPU tensor
"""),
        Good("""
import torch
def forward(self, w):
    return torch.linalg.matrix_norm(w), torch.linalg.matrix_power(w, 2)  # Frobenius; no inverse
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q is None:
            f = node.func
            if f.__class__ is ast.Attribute and f.attr in METHODS and ctx.kind(f.value) == TENSOR:
                self._report(ctx, node, f.attr)
            return
        if q not in _NAMES:  # (one set lookup for most calls: every rule's handler sees every call)
            return
        if q in _MVN:
            cov = kwarg(node, "covariance_matrix") or kwarg(node, "precision_matrix") or \
                (node.args[1] if len(node.args) > 1 else None)
            if cov is None or isinstance(node.args[1] if len(node.args) > 1 else None, ast.Starred) \
                    or not_a_device_tensor(ctx, cov):
                return
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: it factorises `{short(ctx, cov, 30)}` with the "
                        "checked `torch.linalg.cholesky`, which reads `info` on the host",
                        "pass `scale_tril=torch.linalg.cholesky_ex(cov).L` (for a covariance matrix): the same "
                        "factor, not checked")
            return
        if q in FUNCS or _spectral_norm(ctx, node, q) or _negative_power(node, q):
            a = node.args[0] if node.args else (kwarg(node, "A") or kwarg(node, "input"))
            if a is None or isinstance(a, ast.Starred) or not_a_device_tensor(ctx, a):
                return
            self._report(ctx, node, q.rsplit(".", 1)[-1])

    def _report(self, ctx, node, what: str) -> None:
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: on CUDA `{what}` reads the result of the solver on "
                    "the host (no `_ex` variant skips it)",
                    "make one batched call for many matrices (stack them) so a step syncs once, or refresh "
                    "it every k steps, not every step")
