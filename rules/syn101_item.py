import ast

from syncscan.lint.rule import Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR

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
               "Python branch on the value. Where the host needs every element now (`[x.item() for x in t]`), one "
               "`.tolist()` reads them in one sync.")
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
""", line=9, suggests="update that read (a progress bar, a print) every N steps"),
        Bad("""
import torch
def train(model, data, opt, pbar, steps, accum):
    for step in range(steps):
        total = 0.0
        for _ in range(accum):  # gradient accumulation: the outer loop's passes are the steps
            loss = model(next(data)).mean() / accum
            total += loss.item()
            loss.backward()
        pbar.set_description(f"loss: {total:.4f}")  # read every step, outside the inner loop
        opt.step()
        opt.zero_grad()
""", line=8, suggests="is read every step (line 10"),
        Bad("""
import torch
import torch.distributed as dist
def gather_sizes(n: int, world: int):
    sizes = [torch.zeros(1, dtype=torch.int32, device="cuda") for _ in range(world)]
    dist.all_gather(sizes, torch.tensor([n], dtype=torch.int32, device="cuda"))
    return [x.item() for x in sizes]  # needed on the host now: read them in one go
""", line=7, suggests="`torch.cat([t.reshape(-1) for t in sizes]).tolist()`"),
        Bad("""
import torch
def gathered(batches, sizes):
    return [x.item() for y, bs in zip(batches, sizes) for x in y[:bs]]
""", line=4, suggests="`torch.cat([y[:bs].reshape(-1) for y, bs in zip(batches, sizes)]).tolist()`"),
        Bad("""
import torch
def sample(net, x, schedule: torch.Tensor):
    for sigma, sigma_next in zip(schedule[:-1], schedule[1:]):
        sigma, sigma_next = map(lambda t: t.item(), (sigma, sigma_next))
        x = net(x, sigma) * sigma_next
    return x
""", line=5, suggests="convert that once before the loop"),
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
        Bad("""
import torch
from torch import nn
class MTLTrainer:
    def __init__(self, model, n_task: int):
        self.model = model
        self.loss_weight = nn.ParameterList(nn.Parameter(torch.ones(1)) for _ in range(n_task))
        self.model.add_module("loss weight", self.loss_weight)  # moved with the model
    def log(self, logs: dict):
        for task_id, weight in enumerate(self.loss_weight):  # a ParameterList's items are parameters
            logs[f"loss_weight/task_{task_id}"] = weight.item()
""", line=11),
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
        per_element = _per_element_hint(ctx, node, recv)
        fix, hint = (None, per_element) if per_element else _group_fix(ctx, node, recv)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `.item()` copies a value to the host, which waits "
                    "for all queued GPU work",
                    fix.message if fix else hint or
                    "keep it on the device (e.g. accumulate `.detach()`ed tensors) and read it once every N steps",
                    fix=fix)


# -- one `.tolist()` instead of one `.item()` per element -----------------------------------------

_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _per_element_hint(ctx, item: ast.Call, recv: ast.AST) -> str:
    """`[x.item() for x in xs]`, `map(lambda t: t.item(), (a, b))`: one sync per element where one
    `.tolist()` reads them all at once. The advice, or "" when `.item()` is not taken per element."""
    base = recv
    while isinstance(base, (ast.Subscript, ast.Attribute)):
        base = base.value
    if not isinstance(base, ast.Name):
        return ""
    n = ctx.parent(item)
    while n is not None and not isinstance(n, ast.stmt):
        if isinstance(n, _COMPS):
            gens = n.generators
            if base.id not in set().union(*(_names_in(g.target) for g in gens)):
                return ""
            last = gens[-1]
            if len(gens) == 1:
                it = ctx.text(last.iter)
                read = (f"`{it}.tolist()`" if ctx.kind(last.iter) == TENSOR
                        else f"`torch.cat([t.reshape(-1) for t in {it}]).tolist()`")
            else:
                outer = " ".join(f"for {ctx.text(g.target)} in {ctx.text(g.iter)}"
                                 + "".join(f" if {ctx.text(c)}" for c in g.ifs) for g in gens[:-1])
                read = f"`torch.cat([{ctx.text(last.iter)}.reshape(-1) {outer}]).tolist()`"
            return _tolist_advice(ctx, read, [g.iter for g in gens])
        if isinstance(n, ast.Lambda) and base.id in {a.arg for a in n.args.args}:
            call = ctx.parent(n)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "map" \
                    and len(call.args) == 2 and call.args[0] is n:
                it = ctx.text(call.args[1])
                return _tolist_advice(ctx, f"`torch.cat([t.reshape(-1) for t in {it}]).tolist()`", [call.args[1]])
            return ""
        if isinstance(n, _SCOPES):
            return ""
        n = ctx.parent(n)
    return ""


def _tolist_advice(ctx, read: str, sources: list) -> str:
    advice = (f"the host takes every element: read them all with one `.tolist()`, {read}, one sync instead of "
              "one per element")
    names = set().union(*(_names_in(s) for s in sources))
    loop = _loop_of(ctx, ctx.statement, ctx.function) if ctx.statement is not None else None
    while loop is not None:
        if isinstance(loop, (ast.For, ast.AsyncFor)) and names & _names_in(loop.target):
            return (advice + f"; they come from what the loop at line {loop.lineno} walks "
                    f"(`{short(ctx, loop.iter, 40)}`): convert that once before the loop with one `.tolist()` and "
                    "no read is left in it")
        loop = _loop_of(ctx, loop, ctx.function)
    return advice


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
    return fix.replace(group=f"SYN101@{loop.lineno}:{loop.col_offset}"), ""


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


def _statement(ctx, node):
    while node is not None and not isinstance(node, ast.stmt):
        node = ctx.parent(node)
    return node


def _read_every_step(ctx, r, loop, func) -> bool:
    """The read `r` runs on every pass of the accumulating loop, or of a loop around it whose passes are
    training steps (`while step < n:` around `for _ in range(grad_accum):`): then each step reads the total."""
    if _loop_of(ctx, r, func) is loop:
        return _every_step(ctx, r, loop)
    outer = _loop_of(ctx, loop, func)
    while outer is not None:
        if _loop_of(ctx, r, func) is outer:
            return _every_step(ctx, r, outer) and ctx.runs_step(outer)
        outer = _loop_of(ctx, outer, func)
    return False


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
        if _read_every_step(ctx, r, loop, func):
            return None, (f"`{name}` is read every step (line {r.lineno}: `{short(ctx, _statement(ctx, r), 50)}`): "
                          "keeping the sum on the device would only move the wait there; update that read (a "
                          "progress bar, a print) every N steps (`if step % N == 0:`) or once after the loop too, "
                          f"then accumulate `{name} += {new_item}`")
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

