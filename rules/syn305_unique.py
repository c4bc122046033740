import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, TENSOR

from ._dataflow import flow_of, known_uses
from ._util import (atom, block_of, fresh_name, kind_at, last_assign, method, reads_of, replaced_within, short,
                    statement_lines, statement_of)

FUNCS = {"torch.unique": "unique", "torch.unique_consecutive": "unique_consecutive"}


class Unique(Rule):
    code = "SYN305"
    name = "unique"
    summary = "`torch.unique`, `Tensor.unique`, `torch.unique_consecutive` (any flags)."
    why = ("The number of distinct values sets the output size, so it is copied to the host before the "
           "output can be allocated: the host waits for the GPU. With `dim=` thrust also synchronises "
           "inside (the sync debug mode misses that one).")
    rewrite = ("When only the count is needed: `s = x.flatten().sort().values; n = (s[1:] != s[:-1]).sum() "
               "+ (s.numel() > 0)`, a 0-dim tensor, and decide on the device with `torch.where(n < 2, a, b)` "
               "instead of a Python `if`. Otherwise keep the full size: `torch.bincount`-free one-hot sums "
               "with a known number of classes.")
    fix_safety = "unsafe"
    fix_assumption = ("the values an `if` on the count assigned are tensors of the variable's shape and dtype, with no "
                      "side effects: they are now computed every time and chosen with `torch.where` (the count itself "
                      "is exact: each NaN counts once, as in unique).")
    triggers = ("unique", *TORCH_CODE)
    ops = ("aten::unique", "aten::_unique", "aten::_unique2", "aten::unique_dim", "aten::unique_consecutive")
    rewrite_hint = "count distinct values without unique: s = x.flatten().sort().values; (s[1:] != s[:-1]).sum() + 1"
    # sort-and-count sorts as unique does (its GPU work and host time stay, less the wait), then ne,
    # sum, add for the count and lt, mul, where to decide on the device
    footprint = Footprint(ops=6, backward_nodes=2, keeps_gpu_work=True, keeps_host_time=True)
    bad = (
        Bad("""
import torch
import torch.nn.functional as F
def compute_loss(pred, target):
    unique_labels = torch.unique(target)
    loss = F.cross_entropy(pred, target)
    if unique_labels.numel() < 2:
        loss = 0. * loss
    return loss
""", line=5, fixed="""
import torch
import torch.nn.functional as F
def compute_loss(pred, target):
    target_sorted = target.flatten().sort().values
    num_unique_labels = (target_sorted[1:] != target_sorted[:-1]).sum() + (target_sorted.numel() > 0)
    loss = F.cross_entropy(pred, target)
    loss = torch.where(num_unique_labels < 2, 0. * loss, loss)
    return loss
""", unsafe=True),
        Bad("""
import torch
def forward(self, x, labels):
    out = torch.relu(x)
    if len(labels.unique_consecutive()) == 1:
        out = out * 0
    return out
""", line=5, fixed="""
import torch
def forward(self, x, labels):
    out = torch.relu(x)
    labels_flat = labels.flatten()
    num_unique = (labels_flat[1:] != labels_flat[:-1]).sum() + (labels_flat.numel() > 0)
    out = torch.where(num_unique == 1, out * 0, out)
    return out
""", unsafe=True),
        Bad("""
import torch
def compute_loss(pred, lbl):
    labels = torch.unique(lbl)
    few = labels.numel() < 2
    loss = pred.sum()
    if few:
        loss = loss * 0
    return loss
""", line=4, fixed="""
import torch
def compute_loss(pred, lbl):
    lbl_sorted = lbl.flatten().sort().values
    num_labels = (lbl_sorted[1:] != lbl_sorted[:-1]).sum() + (lbl_sorted.numel() > 0)
    few = num_labels < 2
    loss = pred.sum()
    loss = torch.where(few, loss * 0, loss)
    return loss
""", unsafe=True),
        Bad("""
import torch
def forward(self, ids):
    uniq, inverse = torch.unique(ids, return_inverse=True)
    return self.emb(uniq)[inverse]
""", line=4),
        Bad("""
import torch
def forward(self, y):
    n = y.unique(sorted=False).shape[0]  # n is returned as a Python int: no fix
    return n
""", line=4),
    )
    good = (
        Good("""
import numpy as np
u = np.unique(arr)
"""),
        Good("""
import pandas as pd
def f(df):
    return df["label"].unique()
"""),
        Good("""
import torch
t = torch.tensor([1, 2, 2])
u = torch.unique(t)  # a CPU tensor
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q in FUNCS:
            if not node.args or ctx.kind(node.args[0]) == CPU:
                return
            src, fn = node.args[0], FUNCS[q]
        else:
            recv = method(node, "unique", "unique_consecutive")
            if recv is None or q is not None or ctx.kind(recv) != TENSOR:
                return
            src, fn = recv, node.func.attr
        fix, new = _count_fix(ctx, node, src, fn) or (None, None)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: the number of distinct values sets the output size, "
                    "which the host must read from the GPU",
                    new if fix else "if only the count is used: `s = x.flatten().sort().values; "
                    "n = (s[1:] != s[:-1]).sum() + (s.numel() > 0)` (a tensor: decide with `torch.where`)", fix=fix)


# -- the count-only fix ----------------------------------------------------------------------------

def _plain_call(node, src, fn) -> bool:
    """unique's flags that leave the number of distinct values alone: only `sorted`."""
    is_method = isinstance(node.func, ast.Attribute) and node.func.value is src
    extra = node.args if is_method else node.args[1:]
    if fn == "unique_consecutive":
        return not extra and not node.keywords
    return len(extra) <= 1 and all(k.arg == "sorted" for k in node.keywords)


def _count_of(ctx, e) -> ast.AST | None:
    """The expression reading the number of elements of `e`: `e.numel()`, `len(e)`, `e.shape[0]`,
    `e.size(0)`, `e.size()[0]`, `e.nelement()`; else None."""
    p = ctx.parent(e)
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "len" and p.args == [e]:
        return p
    if isinstance(p, ast.Attribute) and p.value is e:
        c = ctx.parent(p)
        if p.attr in ("numel", "nelement") and isinstance(c, ast.Call) and c.func is p and not c.args:
            return c
        if p.attr == "shape" and isinstance(c, ast.Subscript) and _is_zero(c.slice):
            return c
        if p.attr == "size" and isinstance(c, ast.Call) and c.func is p:
            if len(c.args) == 1 and _is_zero(c.args[0]):
                return c
            g = ctx.parent(c)
            if not c.args and isinstance(g, ast.Subscript) and g.value is c and _is_zero(g.slice):
                return g
    return None


def _is_zero(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


_AUG = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _if_rewrite(ctx, if_node, count_node, count_text) -> tuple[list[str], ast.stmt] | None:
    """`if <count> < 2: v = a` [`else: v = b`] as `v = torch.where(<n> < 2, a, v|b)` lines;
    `if <count> < 2: return a` [`else:`] `return b` as `return torch.where(<n> < 2, a, b)`.
    Also gives the last statement the lines replace."""
    test = if_node.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and count_node in (test.left, test.comparators[0])):
        return None
    if isinstance(test.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
        return None
    return _where_lines(ctx, if_node, replaced_within(ctx, test, count_node, count_text))


def _where_lines(ctx, if_node, cond) -> tuple[list[str], ast.stmt] | None:
    """The `if` on the 0-dim condition `cond` as `torch.where` lines (see _if_rewrite)."""
    ret = _returns(ctx, if_node)
    if ret is not None:
        a, b, end = ret
        return [f"return torch.where({cond}, {ctx.text(a)}, {ctx.text(b)})"], end
    body = _assigns(ctx, if_node.body, if_node)
    if body is None:
        return None
    other = {}
    if if_node.orelse:
        orelse = _assigns(ctx, if_node.orelse, if_node)
        if orelse is None or [n for n, _ in orelse] != [n for n, _ in body]:
            return None
        other = dict(orelse)
    return [f"{name} = torch.where({cond}, {v}, {other[name] if name in other else name})"
            for name, v in body], if_node


def _pure(e) -> bool:
    return not any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr, ast.Lambda)) for n in ast.walk(e))


def _returns(ctx, if_node):
    """(a, b, last statement) for `if c: return a` followed by `return b` (or `else: return b`)."""
    body = if_node.body
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    if if_node.orelse:
        other, end = if_node.orelse, if_node
    else:
        where = block_of(ctx, if_node)
        if where is None or where[1] + 1 >= len(where[0]):
            return None
        other = [where[0][where[1] + 1]]
        end = other[0]
    if len(other) != 1 or not isinstance(other[0], ast.Return) or other[0].value is None:
        return None
    a, b = body[0].value, other[0].value
    if not (_pure(a) and _pure(b)) or TENSOR not in (kind_at(ctx, a, if_node), kind_at(ctx, b, if_node)):
        return None
    return a, b, end


def _assigns(ctx, stmts, if_node) -> list | None:
    """(name, new value source) for an `if` body of plain assignments to tensors."""
    out = []
    for s in stmts:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            target, value = s.targets[0], ctx.text(s.value)
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and type(s.op) in _AUG:
            # `loss *= 0` as `loss * 0`: out of place (the variable, not the tensor, changes)
            v = ctx.text(s.value)
            if isinstance(s.value, (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.NamedExpr)):
                v = f"({v})"
            target, value = s.target, f"{s.target.id} {_AUG[type(s.op)]} {v}"
        else:
            return None
        if not _pure(s.value):
            return None
        name = target.id
        # the variable must already hold a tensor: torch.where keeps it one
        prior = last_assign(ctx, name, if_node)
        if prior is not None:
            if ctx.kind(prior.value) != TENSOR:
                return None
        elif ctx.kind(ast.Name(name, ast.Load())) != TENSOR or name not in _params(ctx):
            return None
        out.append((name, value))
    return out or None


def _params(ctx) -> set:
    f = ctx.function
    if f is None or isinstance(f, ast.Lambda):
        return set()
    a = f.args
    return {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}


def _count_use(ctx, c, count_text, edits) -> bool:
    """Rewrite one read of the count to use the 0-dim tensor; False if that cannot be done."""
    p = ctx.parent(c)
    if isinstance(p, ast.Compare):
        if_node = ctx.parent(p)
        if isinstance(if_node, ast.If) and if_node.test is p:
            done = _if_rewrite(ctx, if_node, c, count_text)
            if done is None:
                return False
            edits.append(ctx.edit(if_node, statement_lines(ctx, if_node, done[0]), end_node=done[1]))
            return True
        if isinstance(if_node, ast.Assign) and if_node.value is p \
                and not any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in p.ops):
            # few = u.numel() < 2: `few` becomes a 0-dim boolean tensor; every `if few:` a torch.where
            return _flag_use(ctx, if_node, p, c, count_text, edits)
        return False
    if isinstance(p, ast.Assign) and p.value is c and len(p.targets) == 1 and isinstance(p.targets[0], ast.Name):
        # n = u.numel(): n holds the 0-dim count from now on; its reads must take a tensor too
        n = p.targets[0].id
        reads = reads_of(ctx, n, p)
        if not reads or any(last_assign(ctx, n, r) is not p for r in reads):
            return False
        edits.append(ctx.edit(c, count_text))
        return all(_count_use(ctx, r, n, edits) for r in reads)
    if isinstance(p, ast.BinOp) and isinstance(p.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        other = p.right if p.left is c else p.left
        if kind_at(ctx, other, p) == TENSOR:
            edits.append(ctx.edit(c, count_text))
            return True
    return False


def _flag_use(ctx, assign, cmp_, c, count_text, edits) -> bool:
    """`few = <count> < 2` read only as `if few:` / `if not few:` (on every path from this one
    binding): the flag becomes a 0-dim tensor and each `if` a `torch.where`."""
    if len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
        return False
    fl = flow_of(ctx)
    b = fl.binding_of(assign.targets[0])
    uses = known_uses(ctx, assign.targets[0])
    if not uses:
        return False
    todo = []
    for u in uses:
        if fl.only_binding(u) is not b:
            return False  # `few` also rebound on some path to this read
        p = ctx.parent(u)
        neg = isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not)
        test = p if neg else u
        if_node = ctx.parent(test)
        if not (isinstance(if_node, ast.If) and if_node.test is test):
            return False
        done = _where_lines(ctx, if_node, f"~{u.id}" if neg else u.id)
        if done is None:
            return False
        todo.append(ctx.edit(if_node, statement_lines(ctx, if_node, done[0]), end_node=done[1]))
    edits.append(ctx.edit(c, count_text))
    edits.extend(todo)
    return True


def _count_fix(ctx, node, src, fn) -> tuple[Fix, str] | None:
    if not _plain_call(node, src, fn):
        return None
    stmt = statement_of(ctx, node)
    base = src.id if isinstance(src, ast.Name) else "values"
    sorted_name = fresh_name(ctx, f"{base}_sorted" if fn == "unique" else f"{base}_flat")
    make = f"{atom(ctx, src)}.flatten()" + (".sort().values" if fn == "unique" else "")
    counted = f"({sorted_name}[1:] != {sorted_name}[:-1]).sum() + ({sorted_name}.numel() > 0)"
    edits = []
    parent = ctx.parent(node)
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 \
            and isinstance(parent.targets[0], ast.Name):
        # u = torch.unique(t): every later read of u must be a count
        u = parent.targets[0].id
        count_name = fresh_name(ctx, f"num_{u}")
        for r in reads_of(ctx, u, parent):
            c = _count_of(ctx, r)
            if c is None or last_assign(ctx, u, r) is not parent or not _count_use(ctx, c, count_name, edits):
                return None
        if not edits:
            return None
        edits.insert(0, ctx.edit(parent, statement_lines(ctx, parent, [f"{sorted_name} = {make}",
                                                                       f"{count_name} = {counted}"])))
    else:
        c = _count_of(ctx, node)
        if c is None:
            return None
        holder = ctx.parent(c)
        if isinstance(holder, ast.Assign) and holder.value is c and len(holder.targets) == 1 \
                and isinstance(holder.targets[0], ast.Name):
            # n = len(torch.unique(t)): n becomes the 0-dim count
            n = holder.targets[0].id
            for r in reads_of(ctx, n, holder):
                if last_assign(ctx, n, r) is not holder or not _count_use(ctx, r, n, edits):
                    return None
            if not edits:
                return None
            edits.insert(0, ctx.edit(holder, statement_lines(ctx, holder, [f"{sorted_name} = {make}",
                                                                           f"{n} = {counted}"])))
        else:
            # used right where it is made, in an `if` test or arithmetic: count just before it
            count_name = fresh_name(ctx, "num_unique")
            pre = [f"{sorted_name} = {make}", f"{count_name} = {counted}"]
            cmp_ = ctx.parent(c)
            if_node = ctx.parent(cmp_)
            if isinstance(cmp_, ast.Compare) and isinstance(if_node, ast.If) and if_node.test is cmp_:
                done = _if_rewrite(ctx, if_node, c, count_name)
                if done is None:
                    return None
                edits.append(ctx.edit(if_node, statement_lines(ctx, if_node, pre + done[0]), end_node=done[1]))
            elif isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)) and _count_use(ctx, c, count_name, []):
                edits.append(ctx.edit(stmt, statement_lines(ctx, stmt, pre + [replaced_within(ctx, stmt, c, count_name)])))
            else:
                return None
    new = f"`{sorted_name} = {make}`, then the count `{counted}` (a 0-dim tensor)" + (
        "; the `if` on it as `torch.where`" if any("torch.where(" in e.content for e in edits) else "")
    return Fix("unsafe", tuple(edits), message="count by sorting instead of unique, and decide on the device",
               assumption=Unique.fix_assumption, imports=("torch",)), new

