"""Array namespaces of a backend, told by how a module calls them (syncscan.lint.namespaces)."""

import ast

from syncscan.lint.imports import import_map
from syncscan.lint.namespaces import array_namespaces


def _found(src: str) -> frozenset[str]:
    tree = ast.parse(src)
    return array_namespaces(tree, import_map(tree), src, lambda q: q.split(".")[0] == "tensorly")


def test_a_backend_module_and_an_attribute_holding_one():
    src = """
import tensorly as tl
def parafac(x, rank):
    w = tl.ones(rank)
    return tl.sqrt(tl.abs(tl.norm(x, 2))) * w
def lanczos(A):
    xnp = A.xnp
    V = xnp.zeros((3, 3))
    return xnp.sum(xnp.conj(V) * V, axis=-1), A.xnp.eigh(V), A.xnp.stack([V]), A.xnp.exp(V)
"""
    assert _found(src) == {"tl", "xnp", "A.xnp"}


def test_arrays_and_known_modules_are_not_namespaces():
    src = """
import numpy as np
import torch
import math
def f(x: torch.Tensor, a):
    b = np.asarray(a)
    y = x.sum(0) + x.max(1)[0] + x.reshape(4, -1).mean(1)  # methods of a tensor, never `x.abs(y)`
    z = b.reshape(2, -1).sum(0) + b.max(1) + b.clip(0, 1)
    return torch.sqrt(torch.abs(y)), np.exp(np.log(z)), math.sqrt(math.exp(1.0)) + self.norm(y)
"""
    assert _found(src) == frozenset()


def test_another_packages_namespace_is_not_taken():
    src = """
import eagerpy as ep
def f(x):
    return ep.sqrt(ep.abs(x)) + ep.sum(ep.zeros(x, 3))  # a wrapper library of its own semantics
"""
    assert _found(src) == frozenset()


def test_too_few_functions_are_not_enough():
    src = """
from . import ops
def f(x):
    return ops.abs(x) + ops.sum(x)  # two of numpy's names: maybe a module of helpers
"""
    assert _found(src) == frozenset()
