"""Array namespaces a module reaches under a name of its own: a backend object or module whose functions mirror
numpy's (`tl.abs(x)`, `bd.zeros(shape)`, `xnp.eigh(A)` with `xnp = A.xnp`), told by how the module calls it.

Backend-agnostic libraries (tensor decompositions, quadrature, linear operators, FDTD solvers) compute through
such a namespace and run on torch's CUDA tensors when the user picks that backend. A name is taken for one where
the module calls at least three of numpy's functions on it with arguments, one of them a function no array has
as a method taking an argument: a creation routine (`bd.zeros(shape)`, `xnp.stack(vs)`) or elementwise math
(`tl.abs(x)`, `T.sqrt(v)`). A tensor or numpy array calls `x.sum(0)` and `x.max(1)`, never `x.abs(y)`, so
an array is not taken for a namespace; nor is a name bound by an import of another package (torch, numpy,
a wrapper library).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from syncscan.lint.imports import dotted

# numpy's functions that backend namespaces mirror
NUMPY_FUNCTIONS = frozenset("""
abs absolute sum max min mean sqrt exp log log1p expm1 zeros ones empty full eye arange linspace where any all norm
dot matmul einsum stack concatenate reshape transpose clip maximum minimum argmax argmin argsort sort cumsum cumprod
prod sign floor ceil isnan isfinite isinf sin cos tan tanh arctan2 conj real imag diag tril triu zeros_like
ones_like full_like empty_like outer kron trace var std square power logsumexp array asarray tensor squeeze
expand_dims flip roll tile nonzero count_nonzero searchsorted solve inv det svd qr eigh eig cholesky lstsq pinv
logical_and logical_or logical_not moveaxis swapaxes""".split())
# ... of them, those no array has as a method taking an array or a shape: only a namespace calls them so
_NAMESPACE_ONLY = frozenset("""
zeros ones empty full eye arange linspace stack concatenate zeros_like ones_like full_like empty_like array asarray
tensor abs absolute sqrt exp log log1p expm1 sign floor ceil isnan isfinite isinf sin cos tan tanh conj square
logical_not""".split())
# the heads of names that are never an array namespace of a backend (`self.norm(x)`, `math.sqrt(v)`)
_NOT_NAMESPACES = frozenset({"self", "cls", "super"})
_MIN_FUNCTIONS = 3
# `base.fn(arg` with `fn` one of _NAMESPACE_ONLY: the text a namespace must show before its tree is read
# (the regex starts at the dot: one starting at the name would be tried at every character of the module)
_CANDIDATE = re.compile(r"\.(?:" + "|".join(sorted(_NAMESPACE_ONLY)) + r")\(\s*[A-Za-z_(\[]")
_NAME_TAIL = re.compile(r"[\w.]*$")


def _heads(source: str) -> set[str]:
    """The first names of the bases in the module's text that call one of _NAMESPACE_ONLY with an argument."""
    heads = set()
    for m in _CANDIDATE.finditer(source):
        start = m.start()
        base = _NAME_TAIL.search(source, max(0, start - 80), start).group()
        if base:
            heads.add(base.split(".", 1)[0])
    return heads


def array_namespaces(tree: ast.Module, imports: dict[str, str], source: str,
                     own: Callable[[str], bool]) -> frozenset[str]:
    """The dotted names (`tl`, `bd`, `A.xnp`) the module calls as array namespaces. `own(module)`: the module is
    of the package the file is in. A namespace is the library's own backend layer (`import tensorly as tl` in
    tensorly, `from . import backend as T`, `xnp = A.xnp`), never another package's: a wrapper library (eagerpy)
    has semantics of its own, and the libraries the inference knows are modelled as such."""
    def foreign(head: str) -> bool:
        q = imports.get(head)
        return q is not None and not own(q)

    heads = _heads(source)
    if not any(h not in _NOT_NAMESPACES and not foreign(h) for h in heads):
        return frozenset()  # (most modules: every such call is torch's or numpy's)
    seen: dict[str, set[str]] = {}
    only: set[str] = set()
    for node in ast.walk(tree):
        if node.__class__ is not ast.Call:
            continue
        func = node.func
        if func.__class__ is not ast.Attribute or func.attr not in NUMPY_FUNCTIONS or not node.args:
            continue
        base = dotted(func.value)
        if base is None:
            continue
        head = base.split(".", 1)[0]
        if head in _NOT_NAMESPACES:
            continue
        if foreign(head):
            continue
        seen.setdefault(base, set()).add(func.attr)
        first = node.args[0]
        if func.attr in _NAMESPACE_ONLY and not isinstance(first, (ast.Constant, ast.Starred)):
            only.add(base)
    return frozenset(b for b in only if len(seen[b]) >= _MIN_FUNCTIONS)
