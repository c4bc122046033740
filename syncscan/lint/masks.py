"""Which of a function's returns are boolean masks, on their face.

`unknown = is_unknown(target)` then `logits[unknown]`: the helper returns `labels < 0`, so its answer is a mask
and reading through it is a boolean-mask index (SYN302). `valid, first = first_nonzero(x)` takes position 0 of
`((c == 1) & nz).max(dim)`: a mask too. What a mask is here is syntax (a comparison, `~`, `&` and `|` of masks,
`.bool()`, `isnan`, a local bound to one), true of numpy arrays as of tensors: the rule asking knows the indexed
value is a tensor.
"""

from __future__ import annotations

import ast

from syncscan.lint.tensors import BOOL_FUNCS, MASK_VIEWS
from syncscan.lint.tree import FunctionNode

# `m.any(-1)` of a mask is a mask (as views of it are: tensors.MASK_VIEWS); `.float()` of one is not
_KEEPS_MASK = MASK_VIEWS | {"any", "all"}
_VALUES_AND_INDICES = frozenset({"max", "min"})  # `.max(dim)` of a mask: (a mask, indices)


_DTYPE_WORDS = frozenset({"float", "float32", "float16", "bfloat16", "half", "double", "float64", "long", "int",
                          "int64", "int32", "int16", "int8", "uint8", "dtype"})


def _to_dtype(call: ast.Call) -> bool:
    """`.to(torch.float)`, `.to(x.dtype)`, `.to(dtype=...)`: no longer a mask."""
    if any(k.arg == "dtype" for k in call.keywords):
        return True
    return any(isinstance(a, ast.Attribute) and a.attr in _DTYPE_WORDS for a in call.args)


def mask_expr(e: ast.AST, masks: set[str]) -> bool:
    """A mask on its face: a comparison, `~` / `&` / `|` of masks, `.bool()`, `isnan`, through views and copies; a
    name of `masks` (the locals bound to one)."""
    if isinstance(e, ast.Compare):
        return not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert):
        return mask_expr(e.operand, masks)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return mask_expr(e.left, masks) and mask_expr(e.right, masks)
    if isinstance(e, ast.Name):
        return e.id in masks
    if isinstance(e, ast.Call):
        f = e.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in BOOL_FUNCS:
            return True
        if name in _KEEPS_MASK and isinstance(f, ast.Attribute) and not (name == "to" and _to_dtype(e)):
            return mask_expr(f.value, masks)
    if isinstance(e, ast.Subscript):
        return mask_expr(e.value, masks)
    return False


def _shape(e: ast.AST, masks: set[str]) -> bool | tuple[bool, ...]:
    """True for a mask, a tuple of answers for a tuple (or `.max(dim)` of a mask), False otherwise."""
    if isinstance(e, ast.Tuple):
        return tuple(mask_expr(x, masks) for x in e.elts)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _VALUES_AND_INDICES \
            and (e.args or e.keywords) and mask_expr(e.func.value, masks):
        return True, False
    return mask_expr(e, masks)


def _own_statements(fn: FunctionNode):
    """The statements of `fn`'s body, in order, not those of functions or classes defined in it."""
    todo = list(reversed(fn.body)) if isinstance(fn.body, list) else []
    while todo:
        s = todo.pop()
        yield s
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("handlers", "orelse", "finalbody", "body", "cases"):  # (popped in source order: body first)
            block = getattr(s, field, None)
            if isinstance(block, list):
                todo.extend(reversed(block))


def returned_masks(src, fn: FunctionNode) -> bool | tuple[bool, ...]:
    """True when every `return` of `fn` gives a mask; a tuple of such answers, position by position, when every one
    gives a tuple of the same length; False otherwise (or when it returns nothing). Statements only, the function's
    own (`src`, the file's tree facts, is not needed: kept for the providers' signature)."""
    masks: set[str] = set()
    got: list = []
    for n in _own_statements(fn):
        if n.__class__ is ast.Assign:
            for t in n.targets:
                if isinstance(t, ast.Name):
                    (masks.add if mask_expr(n.value, masks) else masks.discard)(t.id)
        elif n.__class__ is ast.Return:
            if n.value is None:
                return False
            got.append(_shape(n.value, masks))
    if not got:
        return False
    if all(g is True for g in got):
        return True
    if all(isinstance(g, tuple) for g in got) and len({len(g) for g in got}) == 1:
        return tuple(all(col) for col in zip(*got))
    return False
