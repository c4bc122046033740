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


# -- flow within one function: where names are bound, read and changed (the SYN3xx-5xx fixes) ----
# A fix that moves or deletes code must know that nothing in between changes what it reads, and
# that a name it removes is read nowhere else. These answer that by source position, per function.

def pos(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)


def end_pos(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno, node.end_col_offset)


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


class Flow:
    """Names stored and loaded, and tensors changed in place, in one function (nested functions
    and lambdas included, which only makes the answers more cautious), in source order."""

    def __init__(self, scope: ast.AST):
        from syncscan.lint.imports import dotted

        self.stores: dict[str, list[ast.AST]] = {}  # Name(Store) / arg nodes
        self.loads: dict[str, list[ast.Name]] = {}
        self.changes: list[tuple[tuple[int, int], str]] = []  # (position, dotted receiver)
        for n in ast.walk(scope):
            if isinstance(n, ast.Name):
                (self.loads if isinstance(n.ctx, ast.Load) else self.stores).setdefault(n.id, []).append(n)
            elif isinstance(n, ast.arg):
                self.stores.setdefault(n.arg, []).append(n)
            elif isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Load):
                d = dotted(_root(n) if isinstance(n, ast.Subscript) else n.value)
                if d:
                    self.changes.append((pos(n), d))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") \
                    and not n.func.attr.startswith("_"):
                d = dotted(_root(n.func.value))
                if d:
                    self.changes.append((pos(n), d))
        for d in (self.stores, self.loads):
            for v in d.values():
                v.sort(key=lambda x: (x.lineno, x.col_offset))


def flow(ctx) -> Flow:
    scope = ctx.function or ctx.tree
    cache = ctx.__dict__.setdefault("_syncscan_flow", {})
    f = cache.get(id(scope))
    if f is None:
        f = cache[id(scope)] = Flow(scope)
    return f


def statement_of(ctx, node: ast.AST) -> ast.stmt | None:
    while node is not None and not isinstance(node, ast.stmt):
        node = ctx.parent(node)
    return node


def block_of(ctx, stmt: ast.stmt) -> tuple[list, int] | None:
    """The statement list holding `stmt`, and its index there."""
    parent = ctx.parent(stmt)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list):
            for i, s in enumerate(block):
                if s is stmt:
                    return block, i
    return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def dominates(ctx, stmt: ast.stmt, node: ast.AST) -> bool:
    """`stmt` has run, in the same call of the same function, whenever `node` runs: `node` sits in
    a later statement of stmt's own block (or inside one), not in a nested function."""
    where = block_of(ctx, stmt)
    if where is None:
        return False
    block, i = where
    later = {id(s) for s in block[i + 1:]}
    n = node
    while n is not None:
        if id(n) in later:
            return True
        if isinstance(n, _SCOPES):
            return False
        n = ctx.parent(n)
    return False


def last_assign(ctx, name: str, node: ast.AST) -> ast.Assign | None:
    """The plain `name = value` statement whose value `name` holds where `node` reads it, when
    that is certain (the last binding before it, always run before it); else None."""
    stores = flow(ctx).stores.get(name, ())
    p = pos(node)
    last = None
    for s in stores:
        if pos(s) >= p:
            break
        st = statement_of(ctx, s)
        if st is not None and end_pos(st) <= p:
            last = s
    if last is None:
        return None
    a = ctx.parent(last)
    if isinstance(a, ast.Assign) and len(a.targets) == 1 and a.targets[0] is last and dominates(ctx, a, node):
        return a
    return None


def _loop_around(ctx, node: ast.AST) -> ast.AST | None:
    n = ctx.parent(node)
    while n is not None and not isinstance(n, _SCOPES):
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            return n
        n = ctx.parent(n)
    return None


def reads_of(ctx, name: str, stmt: ast.stmt) -> list[ast.Name]:
    """The loads of `name` that may read the value `stmt` binds: after it up to the next binding
    of the name, and, when a loop encloses `stmt`, every load in that loop."""
    fl = flow(ctx)
    a = end_pos(stmt)
    nxt = next((pos(s) for s in fl.stores.get(name, ()) if pos(s) >= a), None)
    out = [n for n in fl.loads.get(name, ()) if pos(n) >= a and (nxt is None or pos(n) < nxt)]
    loop = _loop_around(ctx, stmt)
    if loop is not None:
        lo, hi = pos(loop), end_pos(loop)
        out += [n for n in fl.loads.get(name, ()) if lo <= pos(n) < pos(stmt)]
    return out


def changed_between(ctx, exprs, start: ast.AST, end: ast.AST) -> bool:
    """Whether code after `start` and before `end` may rebind or change in place (`x[...] = `,
    `x.attr = `, `x.add_(...)`) anything the expressions read."""
    from syncscan.lint.imports import dotted

    names, chains = set(), set()
    for e in exprs:
        for n in ast.walk(e):
            if isinstance(n, ast.Name) and n.id != "self":
                names.add(n.id)
            elif isinstance(n, ast.Attribute):
                d = dotted(n)
                if d:
                    chains.add(d)
    a, b = end_pos(start), pos(end)
    fl = flow(ctx)
    for name in names:
        if any(a <= pos(s) < b for s in fl.stores.get(name, ())):
            return True
    for p, d in fl.changes:
        if a <= p < b and (d.split(".")[0] in names or any(d == c or d.startswith(c + ".") or c.startswith(d + ".")
                                                             for c in chains)):
            return True
    return False


# -- building replacement text -------------------------------------------------------------------

_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Dict, ast.Set,
          ast.ListComp, ast.DictComp, ast.SetComp)


def atom(ctx, node: ast.AST) -> str:
    """The node's source, in parentheses unless it is a primary (safe before `.method` or `[...]`)."""
    t = ctx.text(node)
    if isinstance(node, _ATOMS) and not (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
                                         and not isinstance(node.value, bool)):
        return t
    return f"({t})"


_NEED_PARENS = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Await)


def in_context(ctx, node: ast.AST, text: str) -> str:
    """`text` to put in `node`'s place: parenthesised when an operator or a trailer around the
    node would otherwise bind into it."""
    parent = ctx.parent(node)
    if isinstance(parent, _NEED_PARENS) or (isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node) \
            or (isinstance(parent, ast.Call) and parent.func is node):
        return f"({text})"
    return text


_INVERSE = {ast.Eq: "!=", ast.NotEq: "=="}


def negated(ctx, mask: ast.AST) -> str:
    """The source of the negation of a boolean mask: `a != b` for `a == b`, `m` for `~m`, else `~m`
    (`<` is not inverted into `>=`: NaN compares false both ways)."""
    if isinstance(mask, ast.Compare) and len(mask.ops) == 1 and type(mask.ops[0]) in _INVERSE:
        return f"{ctx.text(mask.left)} {_INVERSE[type(mask.ops[0])]} {ctx.text(mask.comparators[0])}"
    if isinstance(mask, ast.UnaryOp) and isinstance(mask.op, ast.Invert):
        return atom(ctx, mask.operand)
    return "~" + atom(ctx, mask)


def indent_of(ctx, stmt: ast.stmt) -> str:
    line = ctx.lines[stmt.lineno - 1]
    return line[: len(line) - len(line.lstrip())]


def alone_on_lines(ctx, stmt: ast.stmt) -> bool:
    """Nothing but the statement (and a comment) on its lines: it can be deleted line by line."""
    first = ctx.lines[stmt.lineno - 1]
    last = ctx.lines[stmt.end_lineno - 1]
    before = first.encode()[: stmt.col_offset].decode("utf-8", "replace")
    after = last.encode()[stmt.end_col_offset:].decode("utf-8", "replace").strip()
    return not before.strip() and (not after or after.startswith("#"))


def delete_statement(stmt: ast.stmt):
    """An edit removing the lines of a statement (see alone_on_lines)."""
    from syncscan.lint.rule import Edit

    return Edit(stmt.lineno, 1, stmt.end_lineno + 1, 1, "")


def statement_lines(ctx, stmt: ast.stmt, lines: list[str]) -> str:
    """Replacement text for a statement's span: one statement per line at its indentation."""
    ind = indent_of(ctx, stmt)
    return ("\n" + ind).join(lines)


def fresh_name(ctx, base: str) -> str:
    """`base`, or `base_2`, ... : a name the module does not use yet."""
    import re

    name, k = base, 1
    while re.search(rf"\b{re.escape(name)}\b", ctx.source):
        k += 1
        name = f"{base}_{k}"
    return name


def is_host_value(ctx, node: ast.AST) -> bool:
    """A Python number (literal, host name, `math.inf`, arithmetic on those): never a tensor."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, complex)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return is_host_value(ctx, node.operand)
    if isinstance(node, ast.BinOp):
        return is_host_value(ctx, node.left) and is_host_value(ctx, node.right)
    q = ctx.qualname(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if q and q.startswith("math."):
        return True
    from syncscan.lint.tensors import HOST

    return ctx.kind(node) == HOST


_ELEMENTWISE = frozenset({
    "abs", "isnan", "isinf", "isfinite", "isneginf", "isposinf", "sign", "logical_not", "bool", "eq", "ne",
    "lt", "le", "gt", "ge", "floor", "ceil", "round", "trunc", "long", "int", "float", "neg", "remainder",
    "fmod", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
})


def elementwise_of(ctx, expr: ast.AST, base: ast.AST) -> bool:
    """`expr` is computed elementwise from the tensor `base` (same source text) and Python numbers
    only, so it has base's shape: `x == k`, `(x > a) | (x < b)`, `x.isnan()`, `x % 2 == 0`."""
    want = ctx.text(base)
    seen = False

    def ok(e):
        nonlocal seen
        if ctx.text(e) == want:
            seen = True
            return True
        if isinstance(e, ast.Compare):
            return not any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in e.ops) \
                and all(ok(x) for x in (e.left, *e.comparators))
        if isinstance(e, ast.BinOp):
            return not isinstance(e.op, ast.MatMult) and ok(e.left) and ok(e.right)
        if isinstance(e, ast.UnaryOp):
            return ok(e.operand)
        if isinstance(e, ast.Call) and not e.keywords:
            f = e.func
            q = ctx.call_name(e)
            if q and q.startswith("torch.") and q[6:] in _ELEMENTWISE and e.args:
                return ok(e.args[0]) and all(is_host_value(ctx, a) for a in e.args[1:])
            if isinstance(f, ast.Attribute) and f.attr in _ELEMENTWISE and not q:
                return ok(f.value) and all(is_host_value(ctx, a) for a in e.args)
            return False
        return is_host_value(ctx, e)

    return ok(expr) and seen


# tensors of indices (not masks) whatever their names say: `keep = nms(...)`, `pos = x.argsort()`
_INDEX_MAKERS = frozenset({
    "nms", "batched_nms", "box_iou", "argsort", "argmax", "argmin", "nonzero", "argwhere", "arange", "randperm",
    "multinomial", "searchsorted", "bucketize", "long", "int", "topk", "sort", "randint",
    "cumsum", "unique", "indices", "max", "min",
})


def is_index_valued(ctx, value: ast.AST) -> bool:
    if isinstance(value, ast.Subscript):
        return is_index_valued(ctx, value.value)
    if isinstance(value, ast.Attribute):
        return value.attr == "indices"
    if isinstance(value, ast.Call):
        f = value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == "where" and len(value.args) == 1:
            return True
        return name in _INDEX_MAKERS
    return False


def is_mask(ctx, node: ast.AST) -> bool:
    """A boolean mask tensor, as the inference sees it, unless the name that says "mask" was
    visibly assigned indices (`keep = nms(boxes, scores, t)`)."""
    if not ctx.infer.is_bool(node):
        return False
    if isinstance(node, ast.Name) and not ctx.infer.env.is_bool(node.id):
        a = last_assign(ctx, node.id, node)
        if a is not None and is_index_valued(ctx, a.value):
            return False
    return True


def add_keyword(ctx, call: ast.Call, name: str, value: str):
    """An edit appending `name=value` after the call's last argument (comments inside the call stay)."""
    from syncscan.lint.rule import Edit

    last = max(list(call.args) + [k.value for k in call.keywords], key=end_pos, default=None)
    if last is None:
        line, col = ctx.position(call, end=True)
        return Edit(line, col - 1, line, col - 1, f"{name}={value}")
    # a keyword's span starts at its name; its value ends where the keyword does
    line, col = ctx.position(last, end=True)
    return Edit(line, col, line, col, f", {name}={value}")
