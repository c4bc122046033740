import ast

from syncscan.lint.rule import Bad, Fix, Footprint, Good, Rule

from ._util import (atom, dominates, flow, is_host_value, isinstance_guard, lazy_message, method, not_a_device_tensor,
                    pos, short)

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SUMMAND_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)



def _host_guarded(ctx, recv) -> bool:
    """Under `if isinstance(v, np.ndarray):` (or another non-torch type): not a tensor."""
    t = isinstance_guard(ctx, recv)
    return t is not None and not t.startswith("torch")

class Item(Rule):
    code = "SYN101"
    name = "item"
    summary = "`.item()` on a tensor that may live on the GPU."
    why = ("`.item()` copies one value to the host, so the CPU waits until every kernel queued before it "
           "has run; the GPU then idles until the CPU launches new work. Once per step (loss logging) "
           "this is the most common sync in training loops.")
    rewrite = ("Keep the value on the device: accumulate detached tensors (`total += loss.detach()`) and "
               "read them once every N steps or at the end; use 3-argument `torch.where` instead of a "
               "Python branch on the value.")
    fix_safety = "unsafe"
    fix_assumption = ("`total = 0.0` before a loop and `total += x.item()` in it: the sum is kept on the device as "
                      "`total += x.detach().double()` and every read of `total` in the function becomes "
                      "`float(total)`, so the sync moves to the reads (the values are bit-identical: float64 adds, as "
                      "Python's). Assumes `x` has one element (as `.item()` requires) and is real. With `total = 0` "
                      "and an integer count (`(pred == y).sum().item()`), the count stays an int64 tensor read "
                      "with `int(total)`. No fix when a read or write of `total` is outside the function (global, "
                      "nonlocal, closure).")
    triggers = (".item(",)
    ops = ("aten::item", "aten::_local_scalar_dense")
    rewrite_hint = "keep the value on the GPU (torch.where, torch.maximum); read it every N steps in one batched copy"
    footprint = Footprint(ops=1)  # accumulate .detach()ed values on the device: one add_
    bad = (
        Bad("""
import torch
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        print(loss.item())
""", line=8),
        Bad("""
def forward(self, x):
    return x.max().item()
""", line=3),
        Bad("""
import torch
def train(model, loader, opt, criterion):
    total = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"mean loss {total / len(loader):.4f}")
    return total
""", line=9, fixed="""
import torch
def train(model, loader, opt, criterion):
    total = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        total += loss.detach().double()
    print(f"mean loss {float(total) / len(loader):.4f}")
    return float(total)
""", unsafe=True),
        Bad("""
import torch
def evaluate(model, loader):
    correct = 0
    for step, (x, y) in enumerate(loader):
        pred = model(x).argmax(1)
        correct += (pred == y).sum().item()
        if step % 100 == 0:
            print(step, correct)
    return correct
""", line=7, fixed="""
import torch
def evaluate(model, loader):
    correct = 0
    for step, (x, y) in enumerate(loader):
        pred = model(x).argmax(1)
        correct += (pred == y).sum()
        if step % 100 == 0:
            print(step, int(correct))
    return int(correct)
""", unsafe=True),
        Bad("""
import torch
def train(model, loader, opt):
    total = 0.0
    correct = 0
    for x, y in loader:
        out = model(x)
        loss = out.mean()
        loss.backward()
        opt.step()
        total += loss.item()
        correct += (out.argmax(1) == y).sum().item()
    return total, correct
""", line=11, count=2, fixed="""
import torch
def train(model, loader, opt):
    total = 0.0
    correct = 0
    for x, y in loader:
        out = model(x)
        loss = out.mean()
        loss.backward()
        opt.step()
        total += loss.detach().double()
        correct += (out.argmax(1) == y).sum()
    return float(total), int(correct)
""", unsafe=True),
        Bad("""
import torch
def train(model, loader, opt):
    total = 0.0
    for x, y in loader:
        loss = model(x).mean()
        loss.backward()
        opt.step()
        total += loss.item()
        print(f"running loss {total:.3f}")  # read every step: a fix would only move the wait
""", line=9),
        Bad("""
import torch
class Trainer:
    def run(self, loader):
        for x, y in loader:
            loss = self.model(x).mean()
            loss.backward()
            self.opt.step()
            self.total += loss.item()  # an attribute: read elsewhere, no fix
""", line=9),
        Bad("""
def training_step(self, batch, i):
    loss, acc = self.shared_step(batch)
    self.log("acc", acc.float().mean().item())
    return loss
""", line=4),
    )
    good = (
        Good("""
import numpy as np
a = np.zeros(3)
v = a.sum().item()
"""),
        Good("""
import torch
t = torch.tensor([1.0, 2.0])
v = t.sum().item()  # a CPU tensor: no GPU to wait for
"""),
        Good("""
d = {"a": 1}
for k, v in d.items():
    pass
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    n = x.size(0)
    return n.item() if hasattr(n, "item") else n  # a host value (x.size(0) is an int)
"""),
    )

    def visit_Call(self, node, ctx):
        recv = method(node, "item")
        if recv is None or node.args or node.keywords or not_a_device_tensor(ctx, recv) \
                or lazy_message(ctx, node) or _host_guarded(ctx, recv):
            return
        fix, hint = _group_fix(ctx, node, recv)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `.item()` copies a value to the host, which waits "
                    "for all queued GPU work",
                    fix.message if fix else hint or
                    "keep it on the device (e.g. accumulate `.detach()`ed tensors) and read it once every N steps",
                    fix=fix)


# -- fix: accumulate on the device, convert where the total is read ----------------------------

def _is_count(ctx, recv: ast.AST) -> bool:
    """An integer count: `(a == b).sum()`, `mask.sum()`, `torch.sum(a == b)`, `torch.count_nonzero(m)`."""
    if not isinstance(recv, ast.Call):
        return False
    q = ctx.call_name(recv)
    if q == "torch.count_nonzero" or (q is None and method(recv, "count_nonzero") is not None):
        return True
    if q == "torch.sum" and len(recv.args) == 1 and not recv.keywords:
        return ctx.infer.is_bool(recv.args[0], by_name=False)
    base = method(recv, "sum")
    if base is not None and q is None and not recv.args and not recv.keywords:
        return ctx.infer.is_bool(base, by_name=False)
    return False


def _summand_ok(ctx, value: ast.AST, item: ast.Call) -> bool:
    """`x.item()`, or `x.item() <op> host_number` / `host_number <op> x.item()` (op: + - * /)."""
    if value is item:
        return True
    if isinstance(value, ast.BinOp) and isinstance(value.op, _SUMMAND_OPS):
        if value.left is item:
            return is_host_value(ctx, value.right)
        if value.right is item:
            return is_host_value(ctx, value.left)
    return False


def _literal_number(node: ast.AST):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return type(node.value)
    return None


def _accumulator(ctx, item: ast.Call) -> ast.AugAssign | None:
    aug = ctx.parent(item)
    if isinstance(aug, ast.BinOp):
        aug = ctx.parent(aug)
    if isinstance(aug, ast.AugAssign) and isinstance(aug.op, ast.Add) and isinstance(aug.target, ast.Name) \
            and _summand_ok(ctx, aug.value, item):
        return aug
    return None


def _group_fix(ctx, item: ast.Call, recv: ast.AST) -> tuple[Fix | None, str]:
    """The accumulation fix, only when it pays: every `+= x.item()` of the same loop is fixed with it
    (one left would keep the host waiting every step), and no read of the total runs every step
    (the sync would only move there). Fixes of one loop form a group: `--fix` applies all or none."""
    aug = _accumulator(ctx, item)
    func = ctx.function
    loop = _loop_of(ctx, aug, func) if aug is not None and func is not None else None
    if loop is None:
        return None, ""
    fix, hint = _accumulation_fix(ctx, item, recv, aug, loop)
    if fix is None:
        return None, hint
    others = []
    for n in _own_walk(loop):
        if isinstance(n, ast.Call) and n is not item and method(n, "item") is not None and not n.args \
                and not n.keywords and _accumulator(ctx, n) is not None and _loop_of(ctx, n, func) is loop:
            others.append(n)
    for n in others:
        f, _ = _accumulation_fix(ctx, n, n.func.value, _accumulator(ctx, n), loop)
        if f is None:
            return None, (f"fix it together with line {n.lineno} (`{short(ctx, _accumulator(ctx, n), 40)}`), which "
                          "has no automatic fix: the loop waits for the host as long as one of them reads a value")
    if not others:
        return fix, ""
    from dataclasses import replace

    return replace(fix, group=f"SYN101@{loop.lineno}:{loop.col_offset}"), ""


def _own_walk(node):
    """The nodes under `node`, not those of nested functions, lambdas and classes."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(c for c in ast.iter_child_nodes(n) if not isinstance(c, _SCOPES))


def _loop_of(ctx, node, func):
    """The innermost loop around `node` inside `func`."""
    n = ctx.parent(node)
    while n is not None and n is not func:
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            return n
        if isinstance(n, _SCOPES):
            return None
        n = ctx.parent(n)
    return None


def _every_step(ctx, node, loop) -> bool:
    """`node` runs on every pass of `loop`: no branch, inner loop or handler between them."""
    n = ctx.parent(node)
    while n is not None and n is not loop:
        if isinstance(n, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.IfExp, ast.BoolOp,
                          ast.ExceptHandler, ast.With, ast.AsyncWith)) or isinstance(n, _SCOPES) \
                or type(n).__name__ in ("Match", "TryStar", "match_case"):
            return isinstance(n, (ast.With, ast.AsyncWith)) and _every_step(ctx, n, loop)
        n = ctx.parent(n)
    return n is loop


def _accumulation_fix(ctx, item: ast.Call, recv: ast.AST, aug, loop) -> tuple[Fix | None, str]:
    if aug is None:
        return None, ""
    func = ctx.function
    name = aug.target.id
    # nothing outside this function may see `name`: no global / nonlocal, no closure
    for n in ast.walk(func):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return None, ""
        if n is not func and isinstance(n, _SCOPES) and any(
                isinstance(m, ast.Name) and m.id == name for m in ast.walk(n)):
            return None, ""
    fl = flow(ctx)
    inits, summands = [], []
    for s in fl.stores.get(name, ()):
        p = ctx.parent(s)
        if isinstance(p, ast.Assign) and len(p.targets) == 1 and p.targets[0] is s \
                and _literal_number(p.value) is not None:
            inits.append(p)
        elif isinstance(p, ast.AugAssign) and p.target is s and isinstance(p.op, ast.Add) \
                and (inner := _item_call(p.value)) is not None and _summand_ok(ctx, p.value, inner):
            summands.append((p, inner))
        elif isinstance(p, ast.AugAssign) and p.target is s and isinstance(p.op, ast.Add) \
                and _fixed_summand(ctx, p.value):
            continue  # an earlier round of this fix: `total += x.detach().double()` / `correct += (a == b).sum()`
        else:
            return None, ""  # a parameter, a loop target, `del`, `total = total * 0.9 + ...`
    first = ctx.parent(fl.stores[name][0])
    if not inits or first is not inits[0] or pos(inits[0]) > pos(aug) or not dominates(ctx, inits[0], aug):
        return None, ""
    types = {_literal_number(a.value) for a in inits}
    if types == {int}:
        # Python keeps an int only while every summand is one: integer counts, added as they are
        count = True
        if not all(_is_count(ctx, inner.func.value) and a.value is inner for a, inner in summands):
            return None, ""
    elif types == {float}:
        count = False
    else:
        return None, ""
    conv = "int" if count else "float"
    new_item = atom(ctx, recv) if count else f"{atom(ctx, recv)}.detach().double()"
    edits = [ctx.edit(item, new_item)]
    for r in fl.loads.get(name, ()):
        p = ctx.parent(r)
        if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == conv and p.args == [r] \
                and not p.keywords:
            continue  # already read on the host
        if pos(item) <= pos(r) < (item.end_lineno, item.end_col_offset):
            return None, ""
        if _loop_of(ctx, r, func) is loop and _every_step(ctx, r, loop):
            return None, (f"`{name}` is read every step (line {r.lineno}): keeping the sum on the device would only "
                          f"move the wait there; read it every N steps (or once after the loop), then accumulate "
                          f"`{name} += {new_item}`")
        edits.append(ctx.edit(r, f"{conv}({name})"))
    what = "count" if count else "sum"
    return Fix("unsafe", tuple(edits),
               message=f"`{name} += {new_item}`: keep the {what} on the device, read it as `{conv}({name})` where "
                       "it is used",
               assumption=Item.fix_assumption), ""


def _fixed_summand(ctx, value: ast.AST) -> bool:
    for v in (value, getattr(value, "left", None), getattr(value, "right", None)):
        inner = method(v, "double") if v is not None else None
        if inner is not None and method(inner, "detach") is not None:
            return True
    return _is_count(ctx, value)


def _item_call(value: ast.AST) -> ast.Call | None:
    for n in (value, getattr(value, "left", None), getattr(value, "right", None)):
        if n is not None and method(n, "item") is not None and not n.args and not n.keywords:
            return n
    return None


def _in_loop(ctx, node: ast.AST, func: ast.AST) -> bool:
    n = ctx.parent(node)
    while n is not None and n is not func:
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            return True
        if isinstance(n, _SCOPES):
            return False
        n = ctx.parent(n)
    return False
