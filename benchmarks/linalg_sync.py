"""Which torch.linalg (and legacy) factorisations read the GPU on the host: each op is run once to warm up,
then again under `torch.cuda.set_sync_debug_mode("error")`; an op that synchronises raises. Prints one line
per op (`sync` / `no sync`), the table rules/syn410_linalg_host_check.py and SYN404 rest on.

    python benchmarks/linalg_sync.py        # on a CUDA machine
"""

from __future__ import annotations

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_sync import check  # noqa: E402 - the one sync check both scripts use


def ops(A, S, B):
    L = torch.linalg
    return {
        "torch.linalg.eigh": lambda: L.eigh(S), "torch.linalg.eigvalsh": lambda: L.eigvalsh(S),
        "torch.linalg.svd": lambda: L.svd(A), "torch.linalg.svd(full_matrices=False)": lambda: L.svd(A, full_matrices=False),
        "torch.linalg.svdvals": lambda: L.svdvals(A), "torch.linalg.pinv": lambda: L.pinv(A),
        "torch.linalg.pinv(hermitian=True)": lambda: L.pinv(S, hermitian=True),
        "torch.linalg.eig": lambda: L.eig(A), "torch.linalg.eigvals": lambda: L.eigvals(A),
        "torch.linalg.lstsq": lambda: L.lstsq(A, B), "torch.linalg.matrix_rank": lambda: L.matrix_rank(A),
        "torch.linalg.qr": lambda: L.qr(A), "torch.linalg.det": lambda: L.det(A), "torch.linalg.slogdet": lambda: L.slogdet(A),
        "torch.linalg.matrix_norm(ord=2)": lambda: L.matrix_norm(A, ord=2), "torch.linalg.cond": lambda: L.cond(A),
        "torch.linalg.matrix_power(-1)": lambda: L.matrix_power(A, -1), "torch.linalg.matrix_exp": lambda: L.matrix_exp(A),
        "torch.linalg.solve_triangular": lambda: L.solve_triangular(torch.triu(A) + 4 * torch.eye(A.shape[-1], device=A.device), B, upper=True),
        "torch.linalg.lu": lambda: L.lu(A), "torch.linalg.lu_factor": lambda: L.lu_factor(A),
        "torch.linalg.cholesky": lambda: L.cholesky(S), "torch.linalg.cholesky_ex": lambda: L.cholesky_ex(S),
        "torch.linalg.inv": lambda: L.inv(A), "torch.linalg.solve": lambda: L.solve(A, B),
        "torch.linalg.householder_product": lambda: L.householder_product(A, torch.rand(A.shape[-1], device=A.device)),
        "torch.svd": lambda: torch.svd(A), "torch.pinverse": lambda: torch.pinverse(A),
        "torch.cholesky_inverse": lambda: torch.cholesky_inverse(L.cholesky_ex(S).L),
        "torch.cholesky_solve": lambda: torch.cholesky_solve(B, L.cholesky_ex(S).L),
        "torch.lu_unpack": lambda: torch.lu_unpack(*L.lu_factor_ex(A)[:2]),
        "torch.logdet": lambda: torch.logdet(S), "torch.det": lambda: torch.det(A),
        "torch.distributions.multivariate_normal._precision_to_scale_tril":
            lambda: torch.distributions.multivariate_normal._precision_to_scale_tril(S),
        "MultivariateNormal(precision_matrix=)": lambda: torch.distributions.MultivariateNormal(
            torch.zeros(S.shape[-1], device=S.device), precision_matrix=S, validate_args=False),
        "MultivariateNormal(covariance_matrix=)": lambda: torch.distributions.MultivariateNormal(
            torch.zeros(S.shape[-1], device=S.device), covariance_matrix=S, validate_args=False),
    }


def main() -> None:
    dev = torch.device("cuda")
    for n, batch in ((8, ()), (64, ()), (16, (4,))):
        A = torch.randn(*batch, n, n, device=dev) + n * torch.eye(n, device=dev)
        S = A @ A.mT + torch.eye(n, device=dev)
        B = torch.randn(*batch, n, 2, device=dev)
        for name, f in ops(A, S, B).items():
            print(f"{name:60} n={n:3} batch={batch!s:5} {check(f, 80)}", flush=True)


if __name__ == "__main__":
    main()
