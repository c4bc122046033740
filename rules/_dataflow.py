"""What the fixes ask of the def-use facts (syncscan.lint.flow): the one value a name holds where it
is read, its only reader, and why a name cannot be trusted (rebound on some path, a mask on one
path and indices on another). Not a rule: the registry skips files starting with _."""

from __future__ import annotations

import ast

from syncscan.lint.flow import Binding, FunctionFlow, function_flow


def flow_of(ctx) -> FunctionFlow:
    return function_flow(ctx.function or ctx.tree)


def sole_binding(ctx, load: ast.AST) -> Binding | None:
    """The single binding the read `load` (a Name) sees on every path, else None."""
    if not isinstance(load, ast.Name):
        return None
    return flow_of(ctx).only_binding(load)


def assigned_value(ctx, load: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """(value, statement) of the plain `name = value` that `load` reads on every path."""
    b = sole_binding(ctx, load)
    if b is None or b.how != "assign" or b.value is None or b.stmt is None:
        return None
    return b.value, b.stmt


def only_reader(ctx, load: ast.AST) -> bool:
    """`load` is the one read of the value it sees: nothing else reads that binding (in this
    function, nested scopes included), so the statement binding it may be folded into the read."""
    b = sole_binding(ctx, load)
    if b is None:
        return False
    fl = flow_of(ctx)
    return fl.all_uses_known(b.name) and [u for u in fl.uses(b)] == [load]


def known_uses(ctx, store: ast.AST) -> list[ast.Name] | None:
    """The reads of the value the Name `store` binds, when all of them are known (none in a nested
    scope, no global); None otherwise."""
    fl = flow_of(ctx)
    b = fl.binding_of(store)
    if b is None or not fl.all_uses_known(b.name):
        return None
    return fl.uses(b)


def _names(expr: ast.AST) -> list[ast.Name]:
    return [n for n in ast.walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def rebinding_hint(ctx, expr: ast.AST, describe=None) -> str | None:
    """Why the names `expr` reads may hold different things on different paths to it: a name bound
    in several places that all reach here (`valid = m` and, inside an `if`, `valid =
    torch.nonzero(valid).squeeze(1)`), or changed from elsewhere (global, nonlocal). None when each
    name has one binding on every path. `describe(value)` may name what a binding's value is
    ("indices")."""
    fl = flow_of(ctx)
    for n in _names(expr):
        if n.id in fl.escaping:
            return f"`{n.id}` is global or nonlocal here: another function may change it"
        r = fl.reaching(n)
        if r is None or len(r) < 2:
            continue
        parts = []
        for b in r:
            if b.how == "param":
                parts.append("the parameter")
                continue
            what = ""
            if b.value is not None:
                text = " ".join(ctx.text(b.value).split())
                text = text if len(text) <= 40 else text[:37] + "..."
                kind = describe(b.value) if describe else None
                what = f" (`{text}`{', ' + kind if kind else ''})"
            parts.append(f"line {b.line}{what}")
        return f"`{n.id}` is bound on different paths to here: {', '.join(parts)}"
    return None
