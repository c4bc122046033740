"""Where a value copied to the host goes (SYN201 / SYN102's advice): a host consumer that needs it every
step (an environment's `step`, a scipy solver, a Cython extension, numpy code) makes "keep it on the
device" impossible advice; the copy per step is then inherent and the rewrite is to make it one copy,
started early. Not a rule: the registry skips files starting with _."""

from __future__ import annotations

import ast

from syncscan.lint.tensors import CPU, TENSOR, TENSORS

from ._dataflow import flow_of
from ._util import _TENSOR_METHODS

# builtins that only hand the values on (the consumer is what takes their result)
_PASS_ON = frozenset({"enumerate", "zip", "reversed", "list", "tuple", "iter", "sorted"})
# builtins and methods that display, log, convert or collect the values: the advice to keep them on the
# device and read them every N steps fits there
_NOT_CONSUMERS = frozenset({"print", "str", "repr", "format", "float", "int", "bool", "len", "round", "sum", "max",
                            "min", "abs", "isinstance", "dict", "set", "type", "id", "hash", "map", "filter"})
_COLLECT_OR_LOG = ("append", "extend", "update", "insert", "add", "put", "write", "save", "log", "info", "debug",
                   "warning", "warn", "error", "set_", "add_", "log_", "format", "join", "item", "tolist", "copy_")
_MORE_TENSOR_METHODS = frozenset({"split", "chunk", "tensor_split", "split_with_sizes", "narrow", "unbind", "scatter",
                                  "index_put", "repeat_interleave", "unflatten", "roll", "flip", "new_tensor"})
_CHAIN_ATTRS = frozenset({"data", "T", "mT", "real", "imag"})


def chain_top(ctx, node: ast.AST) -> ast.AST:
    """The end of the method chain the value goes through: `x.cpu().numpy().astype(np.float32)[0]`."""
    cur = node
    while True:
        p = ctx.parent(cur)
        if isinstance(p, ast.Attribute) and p.value is cur:
            gp = ctx.parent(p)
            if isinstance(gp, ast.Call) and gp.func is p:
                cur = gp
                continue
            if p.attr in _CHAIN_ATTRS:
                cur = p
                continue
            return cur
        if isinstance(p, ast.Subscript) and p.value is cur and isinstance(p.ctx, ast.Load):
            cur = p
            continue
        return cur


def _callee_name(ctx, call: ast.Call) -> str:
    return ctx.call_name(call) or ctx.qualname(call.func) or ctx.text(call.func)


def _consumer_kind(ctx, call: ast.Call) -> str | None:
    """"numpy" (numpy code), "host" (other host code: a solver, an environment, an extension), "pass"
    (a builtin that hands the values on), or None (torch, a tensor method, display / logging / collecting)."""
    f = call.func
    q = ctx.call_name(call) or ctx.qualname(f) or ""
    if q.startswith("torch.") or q.startswith("torchvision.") or q in ("torch",):
        return None
    if isinstance(f, ast.Name) and f.id not in ctx.imports:
        if f.id in _PASS_ON:
            return "pass"
        if f.id in _NOT_CONSUMERS or ctx.callee(call) is not None or f.id[:1].isupper():
            return None  # a builtin, a function of this module (it may move the values back), a class
    if isinstance(f, ast.Attribute):
        if ctx.kind(f.value) in (TENSOR, TENSORS, CPU) or f.attr.startswith(_COLLECT_OR_LOG) \
                or f.attr[:1].isupper() or f.attr in _TENSOR_METHODS or f.attr in _MORE_TENSOR_METHODS \
                or isinstance(f.value, ast.Subscript):
            return None  # (`batch["x"].split(lengths)`: a method of what may be a tensor)
        if isinstance(f.value, ast.Name) and f.value.id in ("self", "cls"):
            return None  # a method of this class: it may move the values back
    if q.split(".")[0] in ("numpy", "np"):
        return "numpy"
    if q.split(".")[0] in ("logging", "warnings", "wandb", "tqdm", "json", "pickle", "os", "math"):
        return None
    return "host"


def _uses_in(ctx, expr: ast.AST, names: set[str]):
    """Calls inside `expr` taking one of `names` (or an element of it) as an argument."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Call):
            for a in list(n.args) + [k.value for k in n.keywords]:
                r = a
                while isinstance(r, (ast.Subscript, ast.Attribute, ast.Starred)):
                    r = r.value
                if isinstance(r, ast.Name) and r.id in names:
                    yield n
                    break


def _consumers_of(ctx, expr: ast.AST, depth: int):
    """(kind, callee name) of each host consumer the value of `expr` reaches: as an argument (also in a
    list or tuple), through a name it is assigned to, or through a comprehension walking it."""
    top = chain_top(ctx, expr)
    p = ctx.parent(top)
    if isinstance(p, ast.keyword):
        p = ctx.parent(p)
    elif isinstance(p, (ast.List, ast.Tuple)) and isinstance(p.ctx, ast.Load):
        p = ctx.parent(p)
    if isinstance(p, ast.Call) and p.func is not top:
        kind = _consumer_kind(ctx, p)
        if kind == "pass":
            yield from _consumers_of(ctx, p, depth)
        elif kind is not None:
            yield kind, _callee_name(ctx, p)
        return
    if isinstance(p, ast.comprehension) and p.iter is top:
        comp = ctx.parent(p)
        names = {n.id for n in ast.walk(p.target) if isinstance(n, ast.Name)}
        for part in [getattr(comp, "elt", None), getattr(comp, "key", None), getattr(comp, "value", None)]:
            if part is not None:
                for c in _uses_in(ctx, part, names):
                    kind = _consumer_kind(ctx, c)
                    if kind not in (None, "pass"):
                        yield kind, _callee_name(ctx, c)
        return
    if depth > 0 and isinstance(p, ast.Assign) and p.value is top and len(p.targets) == 1 \
            and isinstance(p.targets[0], ast.Name):
        fl = flow_of(ctx)
        b = fl.binding_of(p.targets[0])
        if b is None or not fl.all_uses_known(b.name):
            return
        for use in fl.uses(b):
            yield from _consumers_of(ctx, use, depth - 1)


def host_consumer(ctx, expr: ast.AST) -> tuple[str, str] | None:
    """(kind, name) of the host code that takes the values `expr` copies to the host: kind "host" (a
    solver, an environment, an extension: it needs them on the host) before "numpy" (numpy code, which
    could often be torch code on the device); None when none is seen (logging, collecting, unknown)."""
    found = list(_consumers_of(ctx, expr, 2))
    for kind in ("host", "numpy"):
        for k, name in found:
            if k == kind:
                return k, " ".join(name.split())[:40]
    return None


def inherent_copy_advice(kind: str, name: str) -> str:
    """The rewrite of a copy whose values a host consumer needs every step."""
    once = ("make it one copy per step (stack the values, one `.cpu()`) and start it early: "
            "`.to('cpu', non_blocking=True)` into pinned memory right after the values are computed, "
            "overlapped with other GPU work, read after an event (`ev.record()` ... `ev.synchronize()`)")
    if kind == "numpy":
        return (f"`{name}` runs on the host: if this only computes a statistic to log, do it with torch ops on the "
                "device and read the result every N steps; if the host needs the values every step, one copy per "
                f"step is inherent: {once}")
    return (f"`{name}` runs on the host and needs these values every step, so keeping them on the device is not "
            f"possible unless it gets a GPU version: one copy per step is inherent; {once}")
