"""Small helpers the rule files share (not a rule: the registry skips files starting with _)."""

from __future__ import annotations

import ast

from syncscan.lint.tensors import CPU, HOST, NDARRAY, OTHER, MODULE, LOADER, OPTIMIZER

NOT_TENSOR = (CPU, HOST, NDARRAY, OTHER, MODULE, LOADER, OPTIMIZER)


def method(node: ast.AST, *names: str) -> ast.AST | None:
    """The receiver of `recv.<name>(...)` when `node` is such a call, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names:
        return node.func.value
    return None


def kwarg(call: ast.Call, name: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def has_arg(call: ast.Call, name: str, position: int | None = None) -> bool:
    """Whether the argument is given, by keyword or (if it has one) by position."""
    if kwarg(call, name) is not None:
        return True
    if any(k.arg is None for k in call.keywords):  # **kwargs: cannot tell, assume given
        return True
    return position is not None and len(call.args) > position


def is_literal_true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def not_a_device_tensor(ctx, node: ast.AST) -> bool:
    """Known to be something that cannot sync when read: a host value or a CPU tensor."""
    return ctx.kind(node) in NOT_TENSOR


def torch_call(ctx, node: ast.AST, *names: str) -> bool:
    """`node` calls one of the fully qualified torch functions named."""
    return isinstance(node, ast.Call) and ctx.call_name(node) in names


def short(ctx, node: ast.AST, limit: int = 60) -> str:
    t = " ".join(ctx.text(node).split())
    return t if len(t) <= limit else t[: limit - 3] + "..."
