"""Helpers of the indexing rules (SYN206 / SYN207 / SYN302 / SYN303): where an index or a receiver
lives when the tensor inference alone cannot say."""

from __future__ import annotations

import ast

_INT_LIST_TYPES = frozenset({"list", "List", "Sequence", "MutableSequence"})


def torch_only_module(ctx) -> bool:
    """The module imports torch and no other array library (facts.OTHER_ARRAY_LIBRARIES): an array of
    unknown kind indexed like one (`a[:, [0, 2]]`, `a[a > t]`) is a tensor."""
    return ctx.file.torch_only


def array_indexed(node: ast.Subscript) -> bool:
    """Indexed as only arrays are: several indices with a slice, `...` or `None` among them (`x[:, [0, 2]]`,
    `x[..., 0]`). Lists and dicts take one key."""
    sl = node.slice
    return isinstance(sl, ast.Tuple) and any(
        isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and (e.value is None or e.value is Ellipsis))
        for e in sl.elts)


def annotated_int_list(ctx, e: ast.AST) -> bool:
    """A parameter annotated `list[int]` / `List[int]` / `Sequence[int]` (or a bare `list`) that the function
    never rebinds: a Python list of indices."""
    from ._util import flow

    func = ctx.function
    if not isinstance(e, ast.Name) or func is None or isinstance(func, ast.Lambda):
        return False
    a = func.args
    p = next((p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg == e.id), None)
    ann = p.annotation if p is not None else None
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # `list[int] | None`
        ann = ann.left
    if isinstance(ann, ast.Subscript) and (getattr(ann.value, "id", None) or getattr(ann.value, "attr", None)) \
            == "Optional":
        ann = ann.slice
    if isinstance(ann, ast.Name) and ann.id in ("list", "List"):  # `channels: list | None`
        base = ann.id
    elif not (isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Name) and ann.slice.id == "int"):
        return False
    else:
        base = ann.value.id if isinstance(ann.value, ast.Name) else getattr(ann.value, "attr", "")
    return base in _INT_LIST_TYPES and all(isinstance(s, ast.arg) for s in flow(ctx).stores.get(e.id, ()))


def bool_elsewhere(ctx, e: ast.AST) -> bool:
    """A parameter that the function also assigns a visibly boolean tensor (`mask_time_indices =
    torch.tensor(m, dtype=torch.bool)` in another branch): it holds a mask in both."""
    from ._util import flow

    func = ctx.function
    if not isinstance(e, ast.Name) or func is None or isinstance(func, ast.Lambda):
        return False
    a = func.args
    if not any(p.arg == e.id for p in a.posonlyargs + a.args + a.kwonlyargs):
        return False
    for s in flow(ctx).stores.get(e.id, ()):
        parent = ctx.parent(s)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is s \
                and ctx.infer.is_bool(parent.value, by_name=False):
            return True
    return False


_MASK_KEYS = frozenset({"mask", "masks", "valid", "keep", "selected", "visible", "is_valid"})


def visibly_mask(ctx, m: ast.AST, depth: int = 0) -> bool:
    """A boolean mask by how it is made, not by its name: a comparison of something that is not a Python
    number (`s > t`), `~` / `&` / `|` of such, a name last assigned one, or a mask kept in a dict under a
    key that says so (`params["valid"]`)."""
    from syncscan.lint.tensors import HOST, OTHER

    from ._util import last_assign

    if depth > 4:
        return False
    if isinstance(m, ast.Subscript) and isinstance(m.slice, ast.Constant) and isinstance(m.slice.value, str):
        return m.slice.value.lower() in _MASK_KEYS or m.slice.value.lower().endswith("_mask")
    if isinstance(m, ast.Name) and not ctx.infer.env.is_bool(m.id):
        a = last_assign(ctx, m.id, m)
        return a is not None and visibly_mask(ctx, a.value, depth + 1)
    return ctx.infer.is_bool(m, by_name=False) and ctx.kind(m) not in (HOST, OTHER)


_KEEPS_DTYPE = frozenset({"expand", "expand_as", "view", "reshape", "unsqueeze", "squeeze", "clone", "detach",
                          "contiguous", "cuda", "flatten", "repeat", "permute", "transpose", "t"})


def made_bool(ctx, e: ast.AST, depth: int = 0) -> bool:
    """Visibly boolean from where it was made: `torch.tensor(m, dtype=torch.bool)`, `torch.full(s, False)`,
    `.bool()`, a comparison, through views and copies (`m[:, None].expand(...)`), names, and functions of
    this module that return such a mask (`mask = _compute_mask_indices(...)`)."""
    from ._util import kwarg, last_assign, last_unpack

    if depth > 8:
        return False
    if isinstance(e, ast.Compare) or (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert)):
        return True
    if isinstance(e, ast.Subscript):
        return made_bool(ctx, e.value, depth + 1)
    if isinstance(e, ast.Attribute) and e.attr in ("T", "mT"):
        return made_bool(ctx, e.value, depth + 1)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return made_bool(ctx, e.left, depth + 1) and made_bool(ctx, e.right, depth + 1)
    if isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, e)
        if a is None:  # `j, k = (mask & other).T`: the rows of a mask are masks
            a = last_unpack(ctx, e.id, e)
            if a is not None and isinstance(a.value, ast.Call) and ctx.infer.mask_resolver is not None:
                # `valid, first = first_nonzero(x)` of a helper of the tree: the positions that are masks
                parts = ctx.infer.mask_resolver(a.value, True)
                if isinstance(parts, tuple):
                    names = [t.id if isinstance(t, ast.Name) else None for t in a.targets[0].elts]  # type: ignore[attr-defined]
                    return len(parts) == len(names) and e.id in names and parts[names.index(e.id)]
        return a is not None and made_bool(ctx, a.value, depth + 1)
    if not isinstance(e, ast.Call):
        return False
    dt = kwarg(e, "dtype")
    if dt is not None:
        return ctx.qualname(dt) == "torch.bool"
    q = ctx.call_name(e)
    if q == "torch.full" and len(e.args) > 1:
        return isinstance(e.args[1], ast.Constant) and isinstance(e.args[1].value, bool)
    if q in ("torch.ones_like", "torch.zeros_like", "torch.empty_like") and e.args:
        return made_bool(ctx, e.args[0], depth + 1)  # (no dtype= here: the argument's)
    if q in ("torch.stack", "torch.cat", "torch.concat") and e.args and isinstance(e.args[0], (ast.Tuple, ast.List)):
        elts = e.args[0].elts
        return bool(elts) and all(made_bool(ctx, x, depth + 1) for x in elts)
    f = e.func
    if isinstance(f, ast.Attribute) and q is None:
        if f.attr == "bool" or (f.attr in ("to", "type") and e.args and ctx.qualname(e.args[0]) == "torch.bool"):
            return True
        if f.attr in _KEEPS_DTYPE or f.attr == "to":
            return made_bool(ctx, f.value, depth + 1)
    if isinstance(f, ast.Name) and q is None:
        fn = ctx.file.index.funcs.get(f.id)
        if fn is None and ctx.infer.mask_resolver is not None:  # `unknown = is_unknown(y)` of another module
            return ctx.infer.mask_resolver(e, True) is True
        return fn is not None and _returns_mask(ctx, fn)
    return False


def _returns_mask(ctx, fn: ast.AST) -> bool:
    """Every `return` of the module function `fn` gives a visibly boolean tensor: a comparison, or a
    name that `fn` assigns only such masks (`mask = torch.full(shape, False)`, `mask[i] = True`)."""
    memo = ctx.file.state(_returns_mask, dict)
    if id(fn) in memo:
        return memo[id(fn)]
    memo[id(fn)] = False
    own = ctx.file.src.own_nodes(fn)  # (a lambda holds no `return` and no assignment)
    rets = [n for n in own if isinstance(n, ast.Return)]
    ok = bool(rets)
    for r in rets:
        v = r.value
        if isinstance(v, ast.Name):
            values = [n.value for n in own if isinstance(n, ast.Assign) and len(n.targets) == 1
                      and isinstance(n.targets[0], ast.Name) and n.targets[0].id == v.id]
            ok = ok and bool(values) and all(_bool_expr(ctx, x) for x in values)
        else:
            ok = ok and v is not None and _bool_expr(ctx, v)
    memo[id(fn)] = ok
    return ok


def _bool_expr(ctx, v: ast.AST) -> bool:
    """Boolean on its face, without looking at names (they belong to another function)."""
    if isinstance(v, ast.Compare) or isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Invert):
        return True
    if isinstance(v, ast.BinOp) and isinstance(v.op, (ast.BitAnd, ast.BitOr)):
        return _bool_expr(ctx, v.left) or _bool_expr(ctx, v.right)
    return isinstance(v, ast.Call) and not isinstance(v.func, ast.Name) and made_bool(ctx, v, 4)


def device_mask(ctx, m) -> bool:
    """A boolean tensor that may live on the GPU, by how it is made (not by its name)."""
    from syncscan.lint.tensors import TENSOR

    return not isinstance(m, (ast.Slice, ast.Constant)) and ctx.kind(m) == TENSOR \
        and (made_bool(ctx, m) or ctx.infer.is_bool(m, by_name=False))


def zero_dim_index(ctx, sl: ast.AST) -> ast.AST | None:
    """An index of `x[...]` that is a 0-dim tensor that may live on the GPU (`x[t.argmax()]`,
    `x[groups[0]]`): torch reads it on the host (`.item()`) to pick the element, whether it holds an
    integer or a boolean. Only where the rank is certain (syncscan.lint.shapes)."""
    from syncscan.lint.shapes import rank
    from syncscan.lint.tensors import TENSOR

    for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]):
        if isinstance(e, (ast.Slice, ast.Constant, ast.Starred)):
            continue
        if ctx.kind(e) == TENSOR and rank(ctx, e) == 0:
            return e
    return None


_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
_ORDER = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def truth_tested_index(ctx, sl: ast.AST) -> ast.AST | None:
    """An index of `x[...]` that is, or is a Python number's offset of (`k - 1`), a device tensor of unknown rank
    bound once in the function (a parameter, one assignment), which the function compares in a truth test (`if pre
    != label:`, `hat_L if hat_L < label else hat_L + 1`, `while k > 0:`): a comparison whose truth value is taken
    holds one element, so the name is probably 0-dim (a 1-element 1-D index is rare), and indexing with it reads it
    on the host. Probable only: the caller reports it with low confidence."""
    from syncscan.lint.shapes import rank
    from syncscan.lint.tensors import TENSOR

    for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]):
        n = e
        if isinstance(n, ast.BinOp) and isinstance(n.op, _ARITH):
            n = n.left if isinstance(n.right, ast.Constant) else n.right if isinstance(n.left, ast.Constant) else n
        if isinstance(n, ast.Name) and ctx.function is not None and n.id in _truth_tested(ctx) \
                and ctx.kind(e) == TENSOR and rank(ctx, e) is None:
            return e
        # `if lo[j] < 0: ... else: x[lo[j]]`: the element the test read holds one value too
        if isinstance(n, ast.Subscript) and ctx.function is not None and ast.dump(n) in _truth_tested(ctx) \
                and ctx.kind(e) == TENSOR and rank(ctx, e) is None:
            return e
    return None


def scalar_read_index(ctx, sl: ast.AST) -> ast.AST | None:
    """An index of `x[...]` that is a device tensor of unknown rank which the same function also reads
    as one number (`mean[:, index[i]]` beside `int(index[i])`, `float(k)`, `k.item()`): a value read
    as a number holds one element, so it is probably 0-dim, and indexing with it reads it on the host.
    Probable only: the caller reports it with low confidence."""
    from syncscan.lint.shapes import rank
    from syncscan.lint.tensors import TENSOR

    if ctx.function is None:
        return None
    reads = None
    for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]):
        if isinstance(e, (ast.Name, ast.Subscript)) and ctx.kind(e) == TENSOR and rank(ctx, e) is None:
            if reads is None:  # (the function's scalar reads, read once per function and only when asked)
                reads = ctx.file.per(ctx.function, _scalar_reads)
            if ast.dump(e) in reads:
                return e
    return None


def _scalar_reads(file, fn: ast.AST) -> frozenset[str]:
    """The expressions (names and element reads) `fn` converts to one Python number: `int(e)`,
    `float(e)`, `e.item()` (memoised per function)."""
    from syncscan.lint.tree import walk

    out = set()
    for n in walk(fn):
        if not isinstance(n, ast.Call):
            continue
        e = None
        if isinstance(n.func, ast.Name) and n.func.id in ("int", "float") and len(n.args) == 1 and not n.keywords:
            e = n.args[0]
        elif isinstance(n.func, ast.Attribute) and n.func.attr == "item" and not n.args:
            e = n.func.value
        if isinstance(e, (ast.Name, ast.Subscript)):
            out.add(ast.dump(e))
    return frozenset(out)


def _truth_tested(ctx) -> frozenset[str]:
    """Names bound once in the function that a comparison in a truth test reads (memoised per function)."""
    return ctx.file.per(ctx.function, _tested_names)


def _tested_names(file, fn: ast.AST) -> frozenset[str]:
    from syncscan.lint.tree import walk

    from ._util import _flow_of

    tests = []
    for n in walk(fn):
        if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tests.append(n.test)
    names = set()
    elements: set[ast.Subscript] = set()  # `lo[j]` of a name bound once, read at a loop's counter
    while tests:
        t = tests.pop()
        if isinstance(t, ast.BoolOp):
            tests += t.values
        elif isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            tests.append(t.operand)
        elif isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], _ORDER):
            names |= {x.id for x in (t.left, t.comparators[0]) if isinstance(x, ast.Name)}
            elements |= {x for x in (t.left, t.comparators[0]) if isinstance(x, ast.Subscript)
                         and isinstance(x.value, ast.Name) and isinstance(x.slice, ast.Name)}
    # a name the function compares with a string anywhere (`if key == "position_ids":`) holds a string
    # (`for key in dict_to_expand:` over a dict its body indexes with tensors is no tensor)
    strings = {x.id for n in walk(fn) if isinstance(n, ast.Compare) for x in (n.left, *n.comparators)
               if isinstance(x, ast.Name) and any(isinstance(y, ast.Constant) and isinstance(y.value, (str, bytes))
                                                  for y in (n.left, *n.comparators))} if names else set()
    stores = file.per(fn, _flow_of).stores  # (the function's flow facts, as `_util.flow` memoises them)
    out = set()
    for x in names - strings:
        st = stores.get(x, ())
        if len(st) != 1:
            continue
        a = file.src.parent(st[0])
        if isinstance(a, ast.Assign) and _kept_dim(a.value):
            continue  # `label = labels[i:i + 1]`: a 1-element 1-D tensor, a gather when it indexes
        out.add(x)
    for x in elements:  # (as names: the array bound once, not made with a kept dim)
        st = stores.get(x.value.id, ())  # type: ignore[attr-defined]
        if len(st) == 1 and not (isinstance(a := file.src.parent(st[0]), ast.Assign) and _kept_dim(a.value)):
            out.add(ast.dump(x))
    return frozenset(out)


def _kept_dim(v: ast.AST) -> bool:
    """At least 1-D by how it is made: a slice or a `None` among its indices, or a reshape into dims."""
    if isinstance(v, ast.Subscript):
        return any(isinstance(e, ast.Slice) or isinstance(e, ast.Constant) and e.value is None
                   for e in (v.slice.elts if isinstance(v.slice, ast.Tuple) else [v.slice]))
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) \
        and v.func.attr in ("view", "reshape", "unsqueeze", "flatten", "view_as", "reshape_as", "expand")


def squeezed_count_index(ctx, sl: ast.AST) -> ast.AST | None:
    """An index of `x[...]` made as `m.nonzero().squeeze()` (or `torch.nonzero(m).squeeze()`, `argwhere`), directly
    or through a name every assignment of which in the function is one: 1-D when several elements are found,
    0-dim when exactly one is, and then torch reads it on the host to pick the element. (The `nonzero` itself
    syncs too.)"""
    from syncscan.lint.tensors import TENSOR

    from ._util import assigned_values

    for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]):
        if _squeezed_count(e) or isinstance(e, ast.Name) and ctx.function is not None and ctx.kind(e) == TENSOR \
                and (values := assigned_values(ctx, e.id)) and all(_squeezed_count(v) for v in values):
            return e
    return None


def _squeezed_count(v: ast.AST) -> bool:
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "squeeze"
            and not v.args and not v.keywords):
        return False
    inner = v.func.value
    if not isinstance(inner, ast.Call) or inner.keywords:
        return False
    f = inner.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name in ("nonzero", "argwhere")
