"""Small helpers the rule files share (not a rule: the registry skips files starting with _)."""

from __future__ import annotations

import ast
import functools
import operator

from syncscan.lint.imports import dotted
from syncscan.lint.tensors import (CPU, HOST, LOADER, MATH_CONSTANTS, MODULE, NDARRAY, OPTIMIZER, OTHER, TENSOR,
                                   is_tensor_annotation, tensor_tested)
from syncscan.lint.tree import param_defaults

NOT_TENSOR = (CPU, HOST, NDARRAY, OTHER, MODULE, LOADER, OPTIMIZER)


def method(node: ast.AST, *names: str) -> ast.AST | None:
    """The receiver of `recv.<name>(...)` when `node` is such a call, else None."""
    # (exact classes: the rules ask this of every call the walk meets)
    if node.__class__ is ast.Call and node.func.__class__ is ast.Attribute and node.func.attr in names:
        return node.func.value
    return None


def named_for_scheduler(e: ast.AST) -> bool:
    """Named for an LR scheduler (`self.lr_scheduler`, `sched`): its state holds numbers; its `step` takes a metric
    only as `ReduceLROnPlateau`."""
    return "sched" in (dotted(e) or "").rpartition(".")[2].lower()


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
    """Known to be something that cannot sync when read: a host value or a CPU tensor. (Unknown and
    probably a tensor answer alike here: the answer is not a probable one.)"""
    before = ctx.infer.probable
    k = ctx.kind(node)
    ctx.infer.probable = before
    return k in NOT_TENSOR


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


_POSITION = operator.attrgetter("lineno", "col_offset")  # (a node's place in the source, read in C)


class Flow:
    """Names stored and loaded, and tensors changed in place, in one function (nested functions
    and lambdas included, which only makes the answers more cautious), in source order."""

    def __init__(self, scope: ast.AST):
        from syncscan.lint.imports import dotted
        from syncscan.lint.tree import walk

        self.stores: dict[str, list[ast.AST]] = {}  # Name(Store) / arg nodes
        self.loads: dict[str, list[ast.Name]] = {}
        self.changes: list[tuple[tuple[int, int], str]] = []  # (position, dotted receiver)
        # (the exact node classes, as ast.parse builds them: every node of the function is tested)
        Name, Load, Subscript, Attribute = ast.Name, ast.Load, ast.Subscript, ast.Attribute
        for n in walk(scope):
            t = n.__class__
            if t is Name:
                (self.loads if n.ctx.__class__ is Load else self.stores).setdefault(n.id, []).append(n)
            elif t is ast.Constant:
                continue
            elif t is ast.arg:
                self.stores.setdefault(n.arg, []).append(n)
            elif (t is Subscript or t is Attribute) and n.ctx.__class__ is not Load:
                d = dotted(_root(n) if t is Subscript else n.value)
                if d:
                    self.changes.append((pos(n), d))
            elif t is ast.Call and n.func.__class__ is Attribute and n.func.attr.endswith("_") \
                    and not n.func.attr.startswith("_"):
                d = dotted(_root(n.func.value))
                if d:
                    self.changes.append((pos(n), d))
        for d in (self.stores, self.loads):
            for v in d.values():
                v.sort(key=_POSITION)


def flow(ctx) -> Flow:
    """The flow facts of the function the walk is in (or of the module), memoised per function."""
    return ctx.file.per(ctx.function or ctx.tree, _flow_of)


def _flow_of(file, scope: ast.AST) -> Flow:
    return Flow(scope)


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


def _last_store(ctx, name: str, node: ast.AST) -> ast.AST | None:
    """The last binding of `name` whose statement has run where `node` reads it."""
    p = pos(node)
    last = None
    for s in flow(ctx).stores.get(name, ()):
        if pos(s) >= p:
            break
        st = statement_of(ctx, s)
        if st is not None and end_pos(st) <= p:
            last = s
    return last


def assigned_values(ctx, name: str) -> list[ast.AST]:
    """The value of every binding of `name` in the function, when each is a plain `name = value`; else []
    (a parameter, a loop target, an unpacking: the values are not all known)."""
    out = []
    for s in flow(ctx).stores.get(name, ()):
        a = ctx.parent(s)
        if not (isinstance(a, ast.Assign) and any(t is s for t in a.targets)):
            return []
        out.append(a.value)
    return out


_SEQUENCE_BUILDERS = ("list", "tuple", "range", "sorted", "str")


def python_sequence(ctx, e, names=()) -> bool:
    """A list, tuple, range or str by how it is made: a display, a list comprehension, `list(...)` / `range(...)`
    ..., or a name every binding of which in the function is one."""
    if isinstance(e, (ast.List, ast.Tuple, ast.ListComp, ast.JoinedStr)) or isinstance(e, ast.Constant) \
            and isinstance(e.value, str):
        return True
    if isinstance(e, ast.IfExp):
        return python_sequence(ctx, e.body, names) and python_sequence(ctx, e.orelse, names)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in _SEQUENCE_BUILDERS:
        return is_builtin(ctx, e.func, e.func.id) is not None
    if isinstance(e, ast.Name) and e.id not in names and ctx.function is not None:
        if _tested_sequence(ctx, e):
            return True
        values = assigned_values(ctx, e.id)
        return bool(values) and all(python_sequence(ctx, v, (*names, e.id)) for v in values)
    return False


def _tested_sequence(ctx, e: ast.Name) -> bool:
    """`e` is read in the body of an `if isinstance(e, list):` (or `tuple`, `str`; also one test of an
    `and`) around it in the function: a Python sequence there."""
    child, p = e, ctx.parent(e)
    while p is not None and p is not ctx.function:
        if isinstance(p, ast.If) and any(child is s for s in p.body):
            tests = p.test.values if isinstance(p.test, ast.BoolOp) and isinstance(p.test.op, ast.And) else [p.test]
            for t in tests:
                if isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "isinstance" \
                        and len(t.args) == 2 and isinstance(t.args[0], ast.Name) and t.args[0].id == e.id:
                    kinds = t.args[1].elts if isinstance(t.args[1], ast.Tuple) else [t.args[1]]
                    if kinds and all(isinstance(k, ast.Name) and k.id in ("list", "tuple", "str") for k in kinds):
                        return True
        child, p = p, ctx.parent(p)
    return False


def last_assign(ctx, name: str, node: ast.AST) -> ast.Assign | None:
    """The plain `name = value` statement whose value `name` holds where `node` reads it, when
    that is certain (the last binding before it, always run before it); else None."""
    last = _last_store(ctx, name, node)
    if last is None:
        return None
    a = ctx.parent(last)
    if isinstance(a, ast.Assign) and len(a.targets) == 1 and a.targets[0] is last and dominates(ctx, a, node):
        return a
    return None


def last_unpack(ctx, name: str, node: ast.AST) -> ast.Assign | None:
    """The `a, name, b = value` statement (`value` not a tuple display: one value unpacked) whose part
    `name` holds where `node` reads it, when that is certain (as `last_assign`)."""
    last = _last_store(ctx, name, node)
    if last is None:
        return None
    t = ctx.parent(last)
    a = ctx.parent(t) if isinstance(t, (ast.Tuple, ast.List)) else None
    if isinstance(a, ast.Assign) and len(a.targets) == 1 and a.targets[0] is t \
            and not isinstance(a.value, (ast.Tuple, ast.List)) and dominates(ctx, a, node):
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
        lo = pos(loop)
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


def src_lines(ctx) -> list[str]:
    """The source's lines as `ast` counts them (only \\n, \\r\\n and \\r end a line; `str.splitlines`
    also splits at form feeds and U+2028), without their line ends."""
    return ctx.file.src.ast_lines


def source_between(ctx, start: tuple[int, int], end: tuple[int, int]) -> str:
    """The source text between two (line, UTF-8 byte column) positions of `ast`."""
    return ctx.file.src.between(start, end)


def replaced_within(ctx, outer: ast.AST, inner: ast.AST, text: str) -> str:
    """`outer`'s source with `inner`'s span replaced by `text`."""
    return source_between(ctx, pos(outer), pos(inner)) + text + source_between(ctx, end_pos(inner), end_pos(outer))


def indent_of(ctx, stmt: ast.stmt) -> str:
    line = src_lines(ctx)[stmt.lineno - 1]
    return line[: len(line) - len(line.lstrip())]


def alone_on_lines(ctx, stmt: ast.stmt) -> bool:
    """Nothing but the statement (and a comment) on its lines: it can be deleted line by line."""
    first = src_lines(ctx)[stmt.lineno - 1]
    last = src_lines(ctx)[stmt.end_lineno - 1]
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


def _source_words(file) -> set[str]:
    import re

    return set(re.findall(r"\w+", file.source))


def fresh_name(ctx, base: str) -> str:
    """`base`, or `base_2`, ... : a name the module does not use yet."""
    # the source's words, once per file (a regex search of the whole source per name is quadratic
    # in the size of a big module); `\bname\b` matches exactly where `name` is one of them
    words = ctx.file.get(_source_words)
    name, k = base, 1
    while name in words:
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
    "nms", "batched_nms", "remove_small_boxes", "argsort", "argmax", "argmin", "nonzero", "argwhere", "arange", "randperm",
    "multinomial", "searchsorted", "bucketize", "long", "int", "topk", "sort", "randint",
    "cumsum", "unique", "indices", "max", "min",
})


# methods that keep what a tensor holds (indices stay indices)
_SAME_VALUES = frozenset({"squeeze", "unsqueeze", "view", "reshape", "flatten", "contiguous", "to", "cuda", "clone",
                          "detach", "t", "transpose", "permute", "view_as", "reshape_as", "expand", "ravel"})


def is_index_valued(ctx, value: ast.AST, depth: int = 0) -> bool:
    """Visibly a tensor of indices (`nms(...)`, `x.argsort()`, `torch.where(m)[0]`, `keep[:k]`)."""
    if depth > 4:
        return False
    if isinstance(value, ast.Subscript):
        return is_index_valued(ctx, value.value, depth + 1)
    if isinstance(value, ast.Attribute):
        return value.attr == "indices"
    if isinstance(value, ast.Name):
        a = last_assign(ctx, value.id, value)
        return a is not None and is_index_valued(ctx, a.value, depth + 1)
    if isinstance(value, ast.Call):
        f = value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == "where" and len(value.args) == 1:
            return True
        if name in _SAME_VALUES and isinstance(f, ast.Attribute) and ctx.call_name(value) is None:
            return is_index_valued(ctx, f.value, depth + 1)
        return name in _INDEX_MAKERS
    return False


def is_mask(ctx, node: ast.AST) -> bool:
    """A boolean mask tensor, as the inference sees it, unless the name that says "mask" was
    visibly assigned indices (`keep = nms(boxes, scores, t)`, `pos_idx = positive[perm]` with
    `positive = torch.where(m)[0]`)."""
    if not ctx.infer.is_bool(node):
        return False
    if isinstance(node, ast.Name):
        a = last_assign(ctx, node.id, node)
        if a is not None and is_index_valued(ctx, a.value):
            return False
    return True


def add_keyword(ctx, call: ast.Call, name: str, value: str):
    """An edit appending `name=value` after the call's last argument (comments inside the call stay)."""
    from syncscan.lint.rule import Edit

    last = max(list(call.args) + list(call.keywords), key=end_pos, default=None)
    if last is None:
        line, col = ctx.position(call, end=True)
        return Edit(line, col - 1, line, col - 1, f"{name}={value}")
    # a keyword's span starts at its name; its value ends where the keyword does
    line, col = ctx.position(last, end=True)
    first = last  # an ast.keyword starts at its name
    start_line = src_lines(ctx)[first.lineno - 1]
    if call.end_lineno > last.end_lineno and not start_line.encode()[:first.col_offset].strip():
        # one argument per line: the new one on a line of its own, at the same indentation
        return Edit(line, col, line, col, f",\n{indent_of(ctx, first)}{name}={value}")
    return Edit(line, col, line, col, f", {name}={value}")


def kind_at(ctx, node: ast.AST, at: ast.AST) -> str | None:
    """The kind of `node` where `at` runs, for a name bound later than the walk has reached
    (a fix built at an earlier statement looks ahead): through its visible assignment."""
    k = ctx.kind(node)
    if k is None and isinstance(node, ast.Name):
        p = pos(at)
        kinds = set()
        for s in flow(ctx).stores.get(node.id, ()):
            st = statement_of(ctx, s)
            if pos(s) >= p or st is None or end_pos(st) > p:
                continue
            a = ctx.parent(s)
            if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and a.targets[0] is s):
                return None
            kinds.add(ctx.kind(a.value))
        kinds.discard(None)  # `loss = loss + 1` before the walk knows `loss`: unknown, not different
        if len(kinds) == 1:
            return kinds.pop()
    return k


# -- host <-> device helpers (SYN1xx / SYN2xx) ----------------------------------------------------

def is_builtin(ctx, func: ast.AST, *names: str) -> str | None:
    """The builtin's name when `func` is a bare `max` / `min` / ... that no import rebinds."""
    if isinstance(func, ast.Name) and func.id in names and func.id not in ctx.imports \
            and func.id not in flow(ctx).stores:
        return func.id
    return None


_DEVICE_NAMES = ("dev", "gpu", "rank", "local_rank", "cuda")


def device_kind(ctx, node: ast.AST | None) -> str | None:
    """Where a device expression points: "cpu", "device" (may be an accelerator: a literal
    "cuda", a `device` variable, `x.device`), or None (not a device, or cannot tell)."""
    from syncscan.lint.tensors import CPU, TENSOR

    if node is None:
        return None
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            head = node.value.split(":")[0]
            return "cpu" if head == "cpu" else "device" if head in ("cuda", "xpu", "mps", "hpu", "npu") else None
        if isinstance(node.value, int) and not isinstance(node.value, bool):
            return "device"
        return None
    if isinstance(node, ast.JoinedStr):
        first = node.values[0] if node.values else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return "cpu" if first.value.startswith("cpu") else "device" if first.value.startswith("cuda") else None
        return None
    if isinstance(node, ast.Call):
        q = ctx.call_name(node) or ""
        if q == "torch.device":
            if node.args:
                return device_kind(ctx, node.args[0])
            return device_kind(ctx, kwarg(node, "type"))
        if q in ("torch.cuda.current_device", "torch.accelerator.current_accelerator"):
            return "device"
        if q is None and ctx.infer.returns_cpu_device(node):  # a helper of the tree that gives the CPU device
            return "cpu"
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if not (q or "").startswith(("torch.", "numpy.", "np.")) and name.lower().endswith("device"):
            return "device"  # `get_device(observations)`, `infer_device(model)`: a helper named for what it gives
        return None
    if isinstance(node, ast.IfExp):
        a, b = device_kind(ctx, node.body), device_kind(ctx, node.orelse)
        return "device" if "device" in (a, b) else a if a == b else None
    if isinstance(node, ast.Attribute) and node.attr == "device":
        k = ctx.kind(node.value)
        return "cpu" if k == CPU else "device"
    if isinstance(node, ast.Name) and ctx.infer.cpu_device(node) is True:
        return "cpu"  # `device="cpu"` by default, or assigned the CPU
    q = ctx.qualname(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if q is not None:
        # a constant a module of the tree or a script's helper module names for the device (`from utils import
        # device`, `config.DEVICE`) is one; torch.float16, math.pi and the like are not
        last = q.rsplit(".", 1)[-1].lower()
        if not q.startswith(("torch.", "numpy.", "np.", "math.")) and ("device" in last or last in _DEVICE_NAMES):
            return "device"
        return None
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    low = name.lower()
    if "device" in low and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == "self" and ctx.class_stack and inherited_cpu_device(ctx, ctx.class_stack[-1], name):
        ctx.infer.probable = True  # (unless the caller passes another device)
        return "cpu"
    if "device" in low or low in _DEVICE_NAMES:
        return "device"
    if isinstance(node, ast.Name):  # `d = x.device` ... `y.to(d)`
        a = last_assign(ctx, node.id, node)
        if a is not None and isinstance(a.value, ast.Attribute) and a.value.attr == "device":
            return device_kind(ctx, a.value)
    k = ctx.kind(node)
    if k == TENSOR:  # .to(other_tensor): other's device and dtype
        return "device"
    if k == CPU:
        return "cpu"
    return None


_LEGACY_TYPES = frozenset({"Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
                           "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"})


def tensor_type_device(ctx, node: ast.AST | None, depth: int = 0) -> str | None:
    """Where a legacy tensor type puts its tensors: "device" for `torch.cuda.FloatTensor` (or its name
    as a string), "cpu" for `torch.FloatTensor`; `A if cuda else B` is "device" when either is (the
    code means to run on the GPU); a name or `self.<attr>` whose every assignment in the file is such a
    type is what they are (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor` at module
    level, read in a function). None: not a tensor type, or cannot tell."""
    if node is None or depth > 4:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        q = node.value
    elif isinstance(node, ast.IfExp):
        a, b = tensor_type_device(ctx, node.body, depth + 1), tensor_type_device(ctx, node.orelse, depth + 1)
        return "device" if "device" in (a, b) else a if a == b else None
    elif isinstance(node, (ast.Name, ast.Attribute)):
        q = ctx.qualname(node)
        if q is None:
            key = _binding_key(node)
            values = ctx.file.index.assigned(key) if key else []
            kinds = {tensor_type_device(ctx, v, depth + 1) for v in values if v is not node}
            return kinds.pop() if len(kinds) == 1 else None
    else:
        return None
    if not q or not q.startswith("torch.") or q.rsplit(".", 1)[-1] not in _LEGACY_TYPES:
        return None
    head = q.rsplit(".", 1)[0]
    return "device" if head == "torch.cuda" else "cpu" if head == "torch" else None


def made_on_device(ctx, e: ast.AST, depth: int = 0) -> bool:
    """Visibly made on an accelerator in this function: a factory given `device=<a device>`, `.cuda()`,
    `.to(<a device>)` (or a name last assigned one)."""
    if depth > 4:
        return False
    if isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, e)
        return a is not None and made_on_device(ctx, a.value, depth + 1)
    if not isinstance(e, ast.Call):
        return False
    q = ctx.call_name(e)
    if q is not None:
        return q.startswith("torch.") and device_kind(ctx, kwarg(e, "device")) == "device"
    f = e.func
    if isinstance(f, ast.Attribute):
        if f.attr == "cuda":
            return True
        if f.attr == "to":
            return device_kind(ctx, to_target(ctx, e)) == "device"
    return False


def inherited_cpu_device(ctx, cls: ast.ClassDef, attr: str) -> bool:
    """`self._device` in a class whose `__init__` hands its `device` parameter, which defaults to the CPU, to
    `super().__init__(device=device)`, and which neither it nor its bases in this module assign: a base of another
    module keeps it (a metric that accumulates on `torch.device("cpu")` unless told otherwise)."""
    index = ctx.file.index
    if not ctx.file.per(cls, _hands_cpu_default_to_base):
        return False
    return not any(attr in index.self_assigns(c) for c in [cls, *index.bases(cls)])


def _hands_cpu_default_to_base(file, cls: ast.ClassDef) -> bool:
    from syncscan.lint.tensors import is_cpu_device

    found = file.index.method(cls, "__init__")
    if found is None:
        return False
    init = found[0]
    cpu = {n for n, d in param_defaults(init.args).items() if "device" in n.lower() and is_cpu_device(d) is True}
    if not cpu:
        return False
    for n in ast.walk(init):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__" \
                and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name) \
                and n.func.value.func.id == "super" and any(
                    k.arg and "device" in k.arg and isinstance(k.value, ast.Name) and k.value.id in cpu
                    for k in n.keywords):
            return True
    return False


def to_target(ctx, call: ast.Call) -> ast.AST | None:
    """The device argument of `x.to(...)` (`x.to(dev)`, `x.to(device=dev)`, `x.to(dev, dtype)`), or None
    when the call names no device (`x.to(torch.float16)`, `x.to(dtype=...)`)."""
    d = ctx.infer.call_device(call)  # (`device=`, or a `**tkwargs` that visibly carries one)
    if d is not None:
        return d
    if call.args:
        a = call.args[0]
        if device_kind(ctx, a) is not None:
            return a
    return None


def hidden_keywords(ctx, call: ast.Call) -> bool:
    """`**kw` keywords whose content the code does not show (only a dict of keywords that visibly carries a
    device, `tkwargs = {"device": d, "dtype": t}`, shows all its keys)."""
    return any(k.arg is None and not (isinstance(k.value, ast.Name) and ctx.infer.env.kw_device(k.value.id) is not None)
               for k in call.keywords)


_MODEL_WORDS = ("model", "net", "module", "encoder", "decoder", "backbone", "head", "layer", "block", "self")


def looks_like_model(node: ast.AST) -> bool:
    """`model`, `self.net`, `self`: receivers whose `.cpu()` / `.cuda()` / `.to()` move parameters."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    low = name.lower()
    return low == "self" or any(w in low for w in _MODEL_WORDS)


def element_kind_of(ctx, comp: ast.AST) -> str | None:
    """The kind of each element a list comprehension / generator expression yields. (The walk binds a
    comprehension's targets after its own visit: bind them in a scratch scope here.)"""
    from syncscan.lint.tensors import Env

    if not isinstance(comp, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return None
    inf = ctx.infer
    saved = inf.env
    inf.env = Env(saved)
    try:
        for g in comp.generators:
            inf.bind_loop_target(g.target, g.iter)
        return inf.kind(comp.elt)
    finally:
        inf.env = saved


def guessed_param(ctx, node: ast.AST) -> bool:
    """A bare parameter name that no annotation types and the function never rebinds: its kind is the
    engine's guess (parameters of `forward` and loss functions are taken as tensors). Rules that read a
    value as a flag or a size (`if use_cache:`, `x.view(n, -1)`) stay silent on it: there it is an
    int or a bool far more often than a tensor."""
    func = ctx.function
    if not isinstance(node, ast.Name) or func is None or isinstance(func, ast.Lambda):
        return False
    if ctx.infer.env.is_guess(node.id):
        return True  # `h, height, width = self.embed(x)`: a module's outputs, tensors only by a guess
    a = func.args
    p = next((p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg == node.id), None)
    if p is None or node.id in ("self", "cls") or ctx.infer.env.is_sure(node.id):
        return False  # the receiver of a method / a kind the engine read off types or callers
    if p.annotation is not None and not _mixed_annotation(p.annotation):
        # `output_attentions: torch.Tensor | None = False`: the default says what the annotation does not
        d = param_defaults(a).get(node.id)
        if not (isinstance(d, ast.Constant) and d.value is not None and not isinstance(d.value, bytes)):
            return False
    return all(isinstance(s, ast.arg) for s in flow(ctx).stores.get(node.id, ()))


def _mixed_tensor_param(ctx, node: ast.AST) -> bool:
    """A parameter annotated as a tensor or a Python value (`num_obs: Union[int, Tensor]`), with no
    default but None and never rebound: a tensor on some calls, so what reads it as a tensor is only
    probably a sync."""
    func = ctx.function
    if not isinstance(node, ast.Name) or func is None or isinstance(func, ast.Lambda) or ctx.infer.env.is_sure(node.id):
        return False
    a = func.args
    p = next((p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg == node.id), None)
    if p is None or p.annotation is None or not _mixed_annotation(p.annotation) \
            or not is_tensor_annotation(p.annotation, ctx.imports):
        return False
    d = param_defaults(a).get(node.id)
    if d is not None and not (isinstance(d, ast.Constant) and d.value is None):
        return False  # `eps: float | Tensor = 1e-6`: the default says a number
    return ctx.kind(node) == TENSOR and all(isinstance(s, ast.arg) for s in flow(ctx).stores.get(node.id, ()))


def _mixed_annotation(ann: ast.AST) -> bool:
    """`float | Tensor`, `Union[int, Tensor]`: a tensor only on some calls. (`list[Tensor]` is not: always a
    container of tensors.)"""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        parsed = _string_annotation(ann.value)
        if parsed is None:
            names = set(ann.value.replace("|", " ").replace("[", " ").replace("]", " ").replace(",", " ").split())
            return bool(names & _HOSTISH)
        ann = parsed
    members = _union_members(ann)
    containers = [m for m in members if _tensor_container(m)]
    if containers and len(containers) < len([m for m in members if not _none_annotation(m)]):
        return True  # `Union[Tensor, Tuple[Tensor, Tensor]]`: a tensor on some calls, a tuple on others
    names = {n.id if isinstance(n, ast.Name) else n.attr for m in members if not _tensor_container(m)
             for n in ast.walk(m) if isinstance(n, (ast.Name, ast.Attribute))}
    return bool(names & _HOSTISH)


def _none_annotation(ann: ast.AST) -> bool:
    return isinstance(ann, ast.Constant) and ann.value is None or isinstance(ann, ast.Name) and ann.id == "None"


@functools.lru_cache(maxsize=256)
def _string_annotation(text: str) -> ast.expr | None:
    """A string annotation (`"Optional[Tensor]"`) parsed once per text (guessed_param asks on every read)."""
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return None


_HOSTISH = frozenset({"int", "float", "bool", "str", "list", "tuple", "List", "Tuple", "Sequence", "Number"})
_CONTAINERS = frozenset({"list", "List", "tuple", "Tuple", "Sequence", "Iterable"})


def _union_members(ann: ast.AST) -> list[ast.AST]:
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _union_members(ann.left) + _union_members(ann.right)
    if isinstance(ann, ast.Subscript):
        base = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
        if base in ("Union", "Optional"):
            return [y for x in (ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice])
                    for y in _union_members(x)]
    return [ann]


def _tensor_container(ann: ast.AST) -> bool:
    """`list[Tensor]`, `Tuple[Tensor, ...]`, `Sequence[torch.Tensor]`: only tensors in it."""
    if not isinstance(ann, ast.Subscript):
        return False
    base = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
    items = [e for e in (ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice])
             if not (isinstance(e, ast.Constant) and e.value is Ellipsis)]
    return base in _CONTAINERS and bool(items) and all(
        (e.attr if isinstance(e, ast.Attribute) else getattr(e, "id", "")) == "Tensor" for e in items)


# -- DataLoaders and where their batches go (SYN204 / SYN205) ------------------------------------

def is_dataloader_call(ctx, node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    q = ctx.call_name(node) or ""
    return q.endswith(".DataLoader")


def dataloader_pinned(call: ast.Call) -> bool | None:
    """True with `pin_memory=True`, False when it is left out (or a literal False), None when it
    cannot be told (`pin_memory=args.pin`, `**kwargs`)."""
    if any(k.arg is None for k in call.keywords):
        return None
    v = kwarg(call, "pin_memory")
    if v is None and len(call.args) > 7:
        v = call.args[7]
    if v is None:
        return False
    if isinstance(v, ast.Constant) and isinstance(v.value, bool):
        return v.value
    if isinstance(v, ast.Call) and not v.args and ast.unparse(v.func).endswith(_GPU_PRESENT):
        return True  # pinned wherever there is a GPU to copy to (SYN205's fix writes this)
    return None


_GPU_PRESENT = ("cuda.is_available", "accelerator.is_available")


def _binding_key(node: ast.AST) -> str | None:
    """`loader` / `self.loader`: what a DataLoader is assigned to and later iterated through."""
    from syncscan.lint.module import binding_key

    return binding_key(node)


_WRAPPERS = ("enumerate", "tqdm", "iter", "islice", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm",
             "itertools.islice")


def unwrap_loader(ctx, expr: ast.AST) -> ast.AST:
    """`enumerate(tqdm(loader))` -> `loader`."""
    while isinstance(expr, ast.Call) and expr.args:
        name = ctx.call_name(expr) or (expr.func.id if isinstance(expr.func, ast.Name) else "")
        if name not in _WRAPPERS:
            break
        expr = expr.args[0]
    return expr


def loader_pinned(ctx, expr: ast.AST | None, depth: int = 0) -> bool | None:
    """Whether the DataLoader a loop or `next()` reads from pins its batches: True / False when every
    visible assignment of it in the file is a `DataLoader(...)` that says so (also through wrappers:
    `batches = forever(loader)`, `cycle(loader)`), else None."""
    if expr is None or depth > 4:
        return None
    expr = unwrap_loader(ctx, expr)
    if is_dataloader_call(ctx, expr):
        return dataloader_pinned(expr)
    key = _binding_key(expr)
    values = ctx.file.index.assigned(key) if key else []
    if not values:
        return None
    states = set()
    for v in values:
        v = unwrap_loader(ctx, v)
        if is_dataloader_call(ctx, v):
            states.add(dataloader_pinned(v))
        elif isinstance(v, ast.Call) and v.args and _binding_key(v.args[0]) not in (None, key):
            states.add(loader_pinned(ctx, v.args[0], depth + 1))
        else:
            return None
    return states.pop() if len(states) == 1 else None


def moves_to_device(ctx) -> bool:
    """The file copies something to an accelerator: `.cuda()`, `.to(device)`, `.to("cuda")`."""
    return ctx.file.state(moves_to_device, lambda: [_moves_to_device(ctx)])[0]


def _moves_to_device(ctx) -> bool:
    for n in ast.walk(ctx.tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr == "cuda" or (n.func.attr == "to" and device_kind(ctx, to_target(ctx, n)) == "device"):
                return True
    return False


def is_number_literal(ctx, e: ast.AST) -> bool:
    """A Python number the code spells out: `0.0`, `-1`, `True`, `math.pi`, `float("inf")`, `1 / 3`."""
    if isinstance(e, ast.Constant):
        return type(e.value) in (int, float, bool)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        return is_number_literal(ctx, e.operand)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv,
                                                      ast.Mod)):
        return is_number_literal(ctx, e.left) and is_number_literal(ctx, e.right)
    if isinstance(e, ast.Attribute):
        return ctx.qualname(e) in MATH_CONSTANTS
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "float" and len(e.args) == 1 \
            and isinstance(e.args[0], ast.Constant) and isinstance(e.args[0].value, str) and not e.keywords \
            and "float" not in ctx.imports:
        return e.args[0].value.strip().lower() in ("inf", "-inf", "+inf", "nan", "infinity", "-infinity")
    return False


def surely_tensor(ctx, node: ast.AST) -> bool:
    """A tensor that may live on the GPU, and not just by a guess. The inference takes every bare
    parameter of `forward` or a loss function for a tensor; flags, sizes, configs and caches passed
    there are not. So: not such a parameter (`guessed_param`), nor `config.flag` / `config["key"]` /
    `cache.get_seq_length()` read off one, nor a name computed only from those (`h, w = dims`,
    `n = x.size(1) // w`); not `a if c else b` where one side is a host value (`n = k if exact else
    torch.ceil(h)`), not a name inside `if isinstance(name, int):`, and not the result of a module
    function that returns a non-tensor on some path."""
    return ctx.is_tensor(node) and _evidence(ctx, node, 0)


def _evidence(ctx, e: ast.AST, depth: int) -> bool:
    from syncscan.lint.tensors import TENSOR, TENSORS, tensor_tested

    if depth > 6:
        return True
    # (a comparison or arithmetic is judged by its sides below: `t[-1] == config.pad_id` has a tensor side)
    if guessed_param(ctx, e) or (not isinstance(e, (ast.Compare, ast.BinOp)) and _on_guessed_param(ctx, e)):
        return False
    if isinstance(e, (ast.Compare, ast.BinOp)):  # `n == 1`: a tensor only through a tensor side
        sides = [e.left, *e.comparators] if isinstance(e, ast.Compare) else [e.left, e.right]
        if isinstance(e, ast.Compare) and any(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in sides):
            return False  # `device == "cpu"`: no tensor compares with a string
        if any(ctx.is_tensor(x) and _evidence(ctx, x, depth + 1) for x in sides):
            return True
        if isinstance(e, ast.Compare) and any(_mixed_tensor_param(ctx, x) and not _narrowed_to_host(ctx, x)
                                              for x in sides):
            ctx.infer.probable = True  # `num_obs: Union[int, Tensor]` compared: a tensor on some calls
            return True
        return False
    if isinstance(e, ast.UnaryOp):
        return _evidence(ctx, e.operand, depth + 1)
    if isinstance(e, ast.IfExp):
        if tensor_tested(e.test, ctx.imports) is not None:  # `x.detach() if torch.is_tensor(x) else x`
            return ctx.kind(e.body) == TENSOR and _evidence(ctx, e.body, depth + 1)
        sides = [x for x in (e.body, e.orelse) if not _number_constant(ctx, x)]  # (`... else torch.inf`: a sentinel)
        return bool(sides) and all(ctx.kind(x) == TENSOR and _evidence(ctx, x, depth + 1) for x in sides)
    if isinstance(e, ast.Call):
        f = e.func
        if isinstance(f, ast.Name) and ctx.infer.resolver is not None:
            r = ctx.infer.resolver(e)  # a function of this module: what its returns give (also a list of tensors)
            if r is not None:
                return r.kind in (TENSOR, TENSORS)
        if isinstance(f, ast.Attribute) and ctx.call_name(e) is None:
            if f.attr in _TENSOR_METHODS:
                return True  # `x.sum()`, `mask.any()`: a tensor's method says the receiver is one
            return not ctx.is_tensor(f.value) or _evidence(ctx, f.value, depth + 1)
        return True
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Tuple):
        return True  # `x[:, 0]`: only arrays take several indices
    if isinstance(e, (ast.Attribute, ast.Subscript)):
        return not ctx.is_tensor(e.value) or _evidence(ctx, e.value, depth + 1)
    if isinstance(e, ast.Name):
        if _narrowed_to_host(ctx, e):
            return False
        v = _bound_value(ctx, e)
        if v is None or ctx.kind(v) not in (TENSOR, TENSORS):
            return True
        return _evidence(ctx, v, depth + 1)
    return True


def _inf_nan() -> frozenset[str]:
    from syncscan.lint.tensors import _HOST_CONSTANTS

    return frozenset(q for q in _HOST_CONSTANTS if q.rsplit(".", 1)[1].lower() in ("inf", "nan", "ninf", "pinf"))


_INF_NAN = _inf_nan()  # the infinities and NaNs of torch, math and numpy (tensors.py's host constants)


def _number_constant(ctx, e: ast.AST) -> bool:
    """A float written out: `0.0`, `torch.inf`, `-math.inf`, `float("inf")`, or `a if c else b` of them (the fallback a
    conditional gives where the tensor it computes is not wanted: the tensor is the main path). Not an int: `0` / `-1`
    beside a value is a count, a length or an id far more often (`0 if cache is None else cache.get_seq_length()`)."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    if isinstance(e, ast.Constant):
        return isinstance(e.value, float)
    if isinstance(e, ast.IfExp):
        return _number_constant(ctx, e.body) and _number_constant(ctx, e.orelse)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "float" and len(e.args) == 1:
        return isinstance(e.args[0], ast.Constant) and isinstance(e.args[0].value, str)
    return isinstance(e, ast.Attribute) and ctx.qualname(e) in _INF_NAN


def _bound_value(ctx, name: ast.Name) -> ast.AST | None:
    """The expression a name's last binding before here took its value from: the assigned value (the
    matching element of a literal tuple), the unpacked value (`h, w = dims` -> `dims`), a loop's iterable."""
    p = pos(name)
    last = None
    for s in flow(ctx).stores.get(name.id, ()):
        if pos(s) >= p:
            break
        st = statement_of(ctx, s)
        if isinstance(st, (ast.For, ast.AsyncFor)) or (st is not None and end_pos(st) <= p):
            last = s
    if last is None or isinstance(last, ast.arg):
        return None
    holder = ctx.parent(last)
    while isinstance(holder, (ast.Tuple, ast.List, ast.Starred)):
        holder = ctx.parent(holder)
    if isinstance(holder, ast.Assign):
        t, v = holder.targets[0], holder.value
        if t is last:
            return v
        if isinstance(t, (ast.Tuple, ast.List)) and isinstance(v, (ast.Tuple, ast.List)) and len(t.elts) == len(v.elts):
            for te, ve in zip(t.elts, v.elts):
                if te is last:
                    return ve
        return v
    if isinstance(holder, (ast.For, ast.AsyncFor, ast.comprehension)):
        it = holder.iter
        while isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.args \
                and it.func.id in ("enumerate", "zip", "reversed", "sorted", "list", "tuple", "iter"):
            it = it.args[0]  # `for i, m in enumerate(ctx.masks)`: judged by `ctx.masks`
        return it
    return None


_HOST_TYPES = frozenset({"int", "float", "bool", "str", "list", "tuple", "dict"})


def _host_test(ctx, v: ast.AST, name: str) -> bool:
    """`isinstance(name, int)` (or a tuple of host types), `np.isscalar(name)` (a Python or numpy scalar,
    not a 0-dim tensor), or an `and` holding one."""
    if isinstance(v, ast.BoolOp) and isinstance(v.op, ast.And):
        return any(_host_test(ctx, x, name) for x in v.values)
    if not (isinstance(v, ast.Call) and v.args and isinstance(v.args[0], ast.Name) and v.args[0].id == name):
        return False
    if isinstance(v.func, ast.Name) and v.func.id == "isinstance" and len(v.args) == 2:
        return all(isinstance(x, ast.Name) and x.id in _HOST_TYPES
                   for x in (v.args[1].elts if isinstance(v.args[1], ast.Tuple) else [v.args[1]]))
    return len(v.args) == 1 and ctx.call_name(v) == "numpy.isscalar"


def _narrowed_to_host(ctx, name: ast.Name) -> bool:
    """Inside `if isinstance(name, int):` (or a tuple of host types, or `np.isscalar(name)`), or in the
    `else` of `if isinstance(name, torch.Tensor):`."""
    child, n = name, ctx.parent(name)
    while n is not None and not isinstance(n, _SCOPES):
        if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And):  # `isinstance(name, int) and name < 2`
            for v in n.values:
                if v is child:
                    break
                if _host_test(ctx, v, name.id):
                    return True
        if isinstance(n, ast.If):
            t = n.test
            if any(child is s for s in n.body) and _host_test(ctx, t, name.id):
                return True
            if isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "isinstance" \
                    and len(t.args) == 2 and isinstance(t.args[0], ast.Name) and t.args[0].id == name.id:
                ty = t.args[1]
                names = ty.elts if isinstance(ty, ast.Tuple) else [ty]
                if any(child is s for s in n.orelse) and len(names) == 1 \
                        and (ctx.qualname(names[0]) or "") in ("torch.Tensor", "Tensor"):
                    return True
            if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and any(child is s for s in n.body):
                c = t.operand  # `if not isinstance(name, torch.Tensor):`
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "isinstance" \
                        and len(c.args) == 2 and isinstance(c.args[0], ast.Name) and c.args[0].id == name.id \
                        and (ctx.qualname(c.args[1]) or "") in ("torch.Tensor", "Tensor"):
                    return True
        child, n = n, ctx.parent(n)
    return False


def narrowed_to_host(ctx, name: ast.AST) -> bool:
    return isinstance(name, ast.Name) and _narrowed_to_host(ctx, name)


def lazy_message(ctx, node: ast.AST) -> bool:
    """Inside a lambda handed to a check (`torch._check(cond, lambda: f"...")`): built only on failure."""
    n = ctx.parent(node)
    while n is not None and not isinstance(n, (ast.stmt, ast.FunctionDef)):
        if isinstance(n, ast.Lambda):
            call = ctx.parent(n)
            if isinstance(call, ast.Call):
                f = call.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if any(w in name.lower() for w in ("check", "assert", "warn", "raise", "error")):
                    return True
        n = ctx.parent(n)
    return False


_TENSOR_ATTRS = frozenset({"T", "mT", "H", "mH", "data", "grad", "real", "imag", "values", "indices"})
# tensor methods common enough that `param.<method>(...)` says `param` is a tensor
_TENSOR_METHODS = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "any", "all", "abs", "float", "long", "int", "bool", "half",
    "double", "to", "cuda", "detach", "clone", "view", "reshape", "flatten", "squeeze", "unsqueeze", "permute",
    "transpose", "contiguous", "size", "norm", "sqrt", "exp", "log", "pow", "clamp", "argmax", "argmin", "eq",
    "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "masked_fill", "gather", "index_select", "expand",
    "repeat", "softmax", "log_softmax", "sigmoid", "tanh", "relu", "matmul", "mm", "bmm", "cumsum", "prod", "std",
    "var", "topk", "sort", "argsort", "type_as", "new_zeros", "new_ones", "new_full", "numel", "dim", "sign",
    "round", "floor", "ceil", "logical_not", "logical_and", "logical_or", "count_nonzero", "item", "tolist",
})


def _on_guessed_param(ctx, node: ast.AST) -> bool:
    """`config.num_labels`, `config["flag"]`, `cache.get_seq_length()`: something read off a guessed
    parameter through attributes, string keys or methods that a tensor does not have."""
    root, odd = node, False
    while True:
        if isinstance(root, ast.Attribute):
            odd = odd or root.attr not in _TENSOR_ATTRS
            root = root.value
        elif isinstance(root, ast.Subscript):
            sl = root.slice
            odd = odd or (isinstance(sl, ast.Constant) and isinstance(sl.value, str))
            root = root.value
        elif isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute):
            odd = odd or root.func.attr not in _TENSOR_METHODS
            root = root.func.value
        elif isinstance(root, (ast.Compare, ast.BinOp)):
            sides = [root.left, *root.comparators] if isinstance(root, ast.Compare) else [root.left, root.right]
            return any(_on_guessed_param(ctx, x) for x in sides)
        else:
            break
    return odd and guessed_param(ctx, root)


# -- masks whose shape differs from the tensors they come from (SYN3xx fixes) ---------------------

_REDUCTIONS = frozenset({"sum", "any", "all", "amax", "amin", "max", "min", "mean", "prod", "norm", "count_nonzero",
                         "argmax", "argmin", "logsumexp", "std", "var", "nansum", "nanmean", "median"})


def reductions_in(ctx, expr: ast.AST) -> list[ast.Call]:
    """Reductions along a dimension inside `expr` (`x.sum(-1)`, `m.any(dim=1)`, `torch.all(m, 2)`):
    they change the shape, so a mask made with one is not elementwise in anything."""
    out = []
    for n in ast.walk(expr):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        q = ctx.call_name(n)
        name = q[6:] if q and q.startswith("torch.") else (f.attr if isinstance(f, ast.Attribute) and not q else "")
        if name in _REDUCTIONS:
            dims = n.args[1:] if q else n.args
            if dims or any(k.arg in ("dim", "axis") for k in n.keywords):
                out.append(n)
    return out


def last_dim_reduced(ctx, cond: ast.AST, base: ast.AST) -> bool:
    """`cond` is elementwise in reductions of `base` over its last dimension only (`x.sum(-1) == n`,
    `x.any(dim=-1)`): it has base's shape without the last dimension."""
    want = ctx.text(base)
    reds = reductions_in(ctx, cond)
    if not reds:
        return False
    for r in reds:
        f = r.func
        if not (isinstance(f, ast.Attribute) and ctx.text(f.value) == want and ctx.call_name(r) is None):
            return False
        dims = list(r.args) + [k.value for k in r.keywords if k.arg in ("dim", "axis")]
        if len(dims) != 1 or len(r.args) + len(r.keywords) != 1 or ctx.text(dims[0]).replace(" ", "") != "-1":
            return False
    texts = {ctx.text(r) for r in reds}

    def ok(e):
        if ctx.text(e) in texts:
            return True
        if isinstance(e, ast.Compare):
            return all(ok(x) for x in (e.left, *e.comparators))
        if isinstance(e, ast.BinOp):
            return ok(e.left) and ok(e.right)
        if isinstance(e, ast.UnaryOp):
            return ok(e.operand)
        if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
            return True  # x.shape[-1]: a host number
        return is_host_value(ctx, e)

    return ok(cond)


def shape_changing_mask(ctx, mask: ast.AST) -> bool:
    """The mask (or the expression a mask name was visibly assigned) reduces along a dimension,
    so it does not have the shape of the tensors it comes from: a full-shape rewrite would
    broadcast it differently."""
    if reductions_in(ctx, mask):
        return True
    if isinstance(mask, ast.Name):
        a = last_assign(ctx, mask.id, mask)
        return a is not None and bool(reductions_in(ctx, a.value))
    return False


def isinstance_guard(ctx, node: ast.AST) -> str | None:
    """The type `node` (a name, or the root name of `name.attr` / `name[i]`) is checked to be by an
    enclosing `if isinstance(name, T):` whose body holds it: T's qualified name (`numpy.ndarray`),
    else None."""
    root = node
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    child, n = node, ctx.parent(node)
    while n is not None and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        if isinstance(n, ast.If) and any(child is s for s in n.body):
            t = n.test
            if isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "isinstance" \
                    and len(t.args) == 2 and isinstance(t.args[0], ast.Name) and t.args[0].id == root.id:
                ty = t.args[1]
                return ctx.qualname(ty) or (ty.id if isinstance(ty, ast.Name) else None)
        child, n = n, ctx.parent(n)
    return None


def ruled_out_tensor(ctx, node: ast.AST) -> bool:
    """`node` reads a name that an earlier operand of its `or` found to be a tensor, or of its `and` found not to be
    one: `isinstance(g, torch.Tensor) or g != 1.0` compares `g` only when it is a Python number."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    child, n = node, ctx.parent(node)
    while n is not None and not isinstance(n, ast.stmt):
        if isinstance(n, ast.BoolOp):
            for v in n.values:
                if v is child:
                    break
                negated = isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)
                # (the type tests the inference narrows on: `isinstance(g, Tensor)`, `torch.is_tensor(g)`, ...)
                if negated != isinstance(n.op, ast.Or) \
                        and tensor_tested(v.operand if negated else v, ctx.imports) in names:
                    return True
        child, n = n, ctx.parent(n)
    return False
