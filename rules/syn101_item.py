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
        fix = _accumulation_fix(ctx, node, recv)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `.item()` copies a value to the host, which waits "
                    "for all queued GPU work",
                    fix.message if fix else
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


def _accumulation_fix(ctx, item: ast.Call, recv: ast.AST) -> Fix | None:
    aug = ctx.parent(item)
    if isinstance(aug, ast.BinOp):
        aug = ctx.parent(aug)
    if not (isinstance(aug, ast.AugAssign) and isinstance(aug.op, ast.Add) and isinstance(aug.target, ast.Name)
            and _summand_ok(ctx, aug.value, item)):
        return None
    func = ctx.function
    if func is None or not _in_loop(ctx, aug, func):
        return None
    name = aug.target.id
    # nothing outside this function may see `name`: no global / nonlocal, no closure
    for n in ast.walk(func):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return None
        if n is not func and isinstance(n, _SCOPES) and any(
                isinstance(m, ast.Name) and m.id == name for m in ast.walk(n)):
            return None
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
            return None  # a parameter, a loop target, `del`, `total = total * 0.9 + ...`
    first = ctx.parent(fl.stores[name][0])
    if not inits or first is not inits[0] or pos(inits[0]) > pos(aug) or not dominates(ctx, inits[0], aug):
        return None
    types = {_literal_number(a.value) for a in inits}
    if types == {int}:
        # Python keeps an int only while every summand is one: integer counts, added as they are
        count = True
        if not all(_is_count(ctx, inner.func.value) and a.value is inner for a, inner in summands):
            return None
    elif types == {float}:
        count = False
    else:
        return None
    conv = "int" if count else "float"
    new_item = atom(ctx, recv) if count else f"{atom(ctx, recv)}.detach().double()"
    edits = [ctx.edit(item, new_item)]
    for r in fl.loads.get(name, ()):
        p = ctx.parent(r)
        if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == conv and p.args == [r] \
                and not p.keywords:
            continue  # already read on the host
        if pos(item) <= pos(r) < (item.end_lineno, item.end_col_offset):
            return None
        edits.append(ctx.edit(r, f"{conv}({name})"))
    what = "count" if count else "sum"
    return Fix("unsafe", tuple(edits),
               message=f"`{name} += {new_item}`: keep the {what} on the device, read it as `{conv}({name})` where "
                       "it is used",
               assumption=Item.fix_assumption)


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
