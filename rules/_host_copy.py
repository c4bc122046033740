"""Helpers of SYN204: host tensors that a linter sees only through how they are made, and copies
that cost nothing."""

from __future__ import annotations

import ast
import re

from syncscan.lint.tensors import TENSOR
from syncscan.lint.tree import param_defaults

_EMPTY_DATA = ("torch.tensor", "torch.as_tensor")
_SIZED = ("torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.rand", "torch.randn", "torch.empty_strided")
# a generic helper whose job is to move what it is given to the device (`send_to_device(batch, dev)`)
_MOVER = re.compile(r"(^|_)(to|send|move|copy|put)_?(to_)?(device|gpu|cuda|accelerator)s?$|^(batch|tensors?)_to_",
                    re.I)
_MODELISH = ("model", "net", "module", "layer", "block", "encoder", "decoder", "backbone", "head", "optimizer",
             "optim", "scheduler", "loader", "dataset", "config", "tokenizer", "processor", "pipeline")


def zero_size(ctx, e: ast.AST, depth: int = 0) -> bool:
    """Visibly empty: `torch.empty(0)`, `torch.zeros(0, d)`, `torch.tensor([])`, views of those, or a name last
    assigned one. Copying it moves no bytes and does not wait (measured: `torch.empty(0).to(dev)` never synced)."""
    from ._util import last_assign

    if depth > 4:
        return False
    if isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, e)
        return a is not None and zero_size(ctx, a.value, depth + 1)
    if not isinstance(e, ast.Call):
        return False
    q = ctx.call_name(e)
    if q in _EMPTY_DATA:
        return bool(e.args) and isinstance(e.args[0], (ast.List, ast.Tuple)) and not e.args[0].elts
    if q in _SIZED:
        sizes = e.args[:1] if q in ("torch.full", "torch.empty_strided") else e.args
        if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
            sizes = sizes[0].elts
        return any(isinstance(s, ast.Constant) and s.value == 0 and type(s.value) is int for s in sizes)
    f = e.func
    if q is None and isinstance(f, ast.Attribute) and f.attr in ("float", "long", "half", "int", "bool", "view",
                                                                  "reshape", "unsqueeze", "to", "type_as"):
        return zero_size(ctx, f.value, depth + 1)
    return False


def caches_itself(ctx, call: ast.Call) -> bool:
    """`self.w = self.w.to(x.device)`, `self.ws = [w.to(d) for w in self.ws]`: the attribute keeps the
    moved tensors, so only the first call copies."""
    parent = ctx.parent(call)
    recv = call.func.value if isinstance(call.func, ast.Attribute) else None
    if isinstance(parent, ast.ListComp) and parent.elt is call and len(parent.generators) == 1 \
            and isinstance(recv, ast.Name) and isinstance(parent.generators[0].target, ast.Name) \
            and parent.generators[0].target.id == recv.id:
        recv, parent = parent.generators[0].iter, ctx.parent(parent)  # judged by the list it walks
    return isinstance(parent, ast.Assign) and len(parent.targets) == 1 and recv is not None \
        and isinstance(parent.targets[0], ast.Attribute) and isinstance(recv, ast.Attribute) \
        and ctx.text(parent.targets[0]) == ctx.text(recv)


def cache_undone(ctx, call: ast.Call) -> tuple[str, ast.Assign] | None:
    """Why a caching copy (`caches_itself`) still copies on every call, with the statement that says so:
    ("rebound", stmt) when this function bound the attribute from something else first (`self.h = kg.head_idx`
    then `self.h = self.h.cuda()` in `__init__`: each instance copies), ("moved back", stmt) when it later moves
    the attribute back to the host (`self.r = self.r.cpu()` at the end of `evaluate`). Else None."""
    fn, stmt = ctx.function, ctx.parent(call)
    if fn is None or not isinstance(stmt, ast.Assign):
        return None
    target = ctx.text(stmt.targets[0])
    for n in ast.walk(fn):
        if not isinstance(n, ast.Assign) or n is stmt or len(n.targets) != 1 \
                or not isinstance(n.targets[0], ast.Attribute) or ctx.text(n.targets[0]) != target:
            continue
        v = n.value
        moved_from_itself = isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) \
            and ctx.text(v.func.value) == target
        if n.lineno < stmt.lineno and not moved_from_itself:
            return "rebound", n
        if n.lineno > stmt.lineno and moved_from_itself and (
                v.func.attr == "cpu" or v.func.attr == "to" and v.args and isinstance(v.args[0], ast.Constant)
                and v.args[0].value == "cpu"):
            return "moved back", n
    return None


def made_from_host_values(ctx, e: ast.AST) -> str | None:
    """`make_grid(b, h // 8, w // 8)`: a function of this or another module called only with Python values
    and no device, whose result is then moved to the device: it made a tensor on the host. Its name, else
    None. (A class or something named like a model is left out: `.to()` of a module is another matter.)"""
    from syncscan.lint.tensors import HOST

    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Name)) or not e.args:
        return None
    name = e.func.id
    if name[:1].isupper() or any(w in name.lower() for w in _MODELISH) or name in ("range", "len", "list", "tuple"):
        return None
    if ctx.kind(e) not in (None,) or any(k.arg is None or "device" in k.arg for k in e.keywords):
        return None
    if any(isinstance(a, ast.Starred) or isinstance(a, ast.Constant) and isinstance(a.value, str)
           for a in list(e.args) + [k.value for k in e.keywords]):
        return None  # (`get_activation("gelu").to(dev)`: a name picks a module, not a tensor)
    if all(ctx.kind(a) == HOST for a in list(e.args) + [k.value for k in e.keywords]):
        return name
    return None


def mover_param(ctx, recv: ast.AST, call: ast.Call) -> bool:
    """`.to(device)` of a parameter inside a helper named for moving data to the device (`send_to_device`,
    `to_gpu`, `move_batch_to_device` ...): what it moves is host data (a batch), whatever the caller."""
    func = ctx.function
    root = recv
    while isinstance(root, ast.Subscript):  # `batch[key].to(device)`: an entry of the batch handed in
        root = root.value
    if not isinstance(root, ast.Name) or func is None or isinstance(func, ast.Lambda):
        return False
    if not _MOVER.search(func.name):
        a = func.args
        first = next((p.arg for p in a.posonlyargs + a.args if p.arg not in ("self", "cls")), None)
        # (the name says nothing: a function that walks a nested batch and moves its leaves says it instead)
        # (`isinstance(data, torch.Tensor)` at the leaf says a tensor, not where it is)
        return root is recv and root.id == first and ctx.kind(recv) in (None, TENSOR) \
            and _recurses_over(func, first) and blocking_copy(ctx, call, a)
    if _lambda_param(ctx, recv, root.id):
        root = None  # `apply_to_tensors(batch, lambda t: t.to(device))` in the helper: each tensor of what it moves
    a = func.args
    params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls")]
    if root is None:
        return bool(params) and ctx.kind(recv) is None and blocking_copy(ctx, call, a)
    if not params or root.id != params[0]:
        return False
    if root is not recv and ctx.kind(root) == TENSOR:
        return False  # a row of a tensor handed in: where it lives is the caller's
    if not (isinstance(recv, ast.Name) and ctx.infer.env.is_probable(recv.id)) and ctx.kind(recv) is not None:
        return False  # (a kind that is only probable says less than the helper's name)
    return blocking_copy(ctx, call, a)


def named_mover(ctx) -> bool:
    """The function around is named for moving data to the device (`send_to_device`); a helper found by its walk
    of a nested batch alone (`cast_data`) may as well be handed device tensors: low confidence."""
    func = ctx.function
    return func is not None and not isinstance(func, ast.Lambda) and bool(_MOVER.search(func.name))


def _recurses_over(func: ast.AST, name: str) -> bool:
    """`func` calls itself on the parts of its parameter `name` (`{k: self.cast(data[k]) for k in data}`,
    `type(data)(self.cast(s) for s in data)`): it walks a nested batch (dicts, lists, tuples) down to its leaves."""
    for n in ast.walk(func):
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            if not any(isinstance(m, ast.Name) and m.id == name for g in n.generators for m in ast.walk(g.iter)):
                continue
            parts = [n.key, n.value] if isinstance(n, ast.DictComp) else [n.elt]
        elif isinstance(n, ast.For) and isinstance(n.iter, ast.Name) and n.iter.id == name:
            parts = n.body
        else:
            continue
        for m in (m for p in parts for m in ast.walk(p)):
            if isinstance(m, ast.Call):
                f = m.func
                if (isinstance(f, ast.Name) and f.id == func.name) or (
                        isinstance(f, ast.Attribute) and f.attr == func.name and isinstance(f.value, ast.Name)
                        and f.value.id in ("self", "cls")):
                    return True
    return False


def _lambda_param(ctx, node: ast.AST, name: str) -> bool:
    """`node` sits in a one-parameter lambda whose parameter is `name` (within the statement)."""
    n = ctx.parent(node)
    while n is not None and not isinstance(n, ast.stmt):
        if isinstance(n, ast.Lambda):
            return [p.arg for p in n.args.args] == [name]
        n = ctx.parent(n)
    return False


def blocking_copy(ctx, call: ast.Call, a: ast.arguments) -> bool:
    """The copy blocks: no `non_blocking`, `non_blocking=False`, or a parameter of the helper defaulting to False."""
    nb = next((k.value for k in call.keywords if k.arg == "non_blocking"), None)
    if isinstance(nb, ast.Name):  # `non_blocking=non_blocking`: blocking unless the caller says otherwise
        d = param_defaults(a).get(nb.id)
        return isinstance(d, ast.Constant) and d.value is False
    if isinstance(nb, ast.Attribute) and isinstance(nb.value, ast.Name) and nb.value.id == "self":
        return _false_by_default(ctx, nb.attr)
    return nb is None or isinstance(nb, ast.Constant) and nb.value is False


def _false_by_default(ctx, attr: str) -> bool:
    """Every `self.<attr> = ...` of the class is False, or a parameter of its method defaulting to False
    (`self._non_blocking = non_blocking` in `__init__(self, non_blocking=False)`)."""
    cls = ctx.file.index.class_of(ctx.function) if ctx.function is not None else None
    return cls is not None and ctx.file.index.attr_constant(cls, attr) == (True, False)


def drawn_from_host_object(ctx, e: ast.AST) -> str | None:
    """`engine = SobolEngine(d, seed=seed)` ... `engine.draw(n, dtype=dtype).to(device)`: a method of an object
    this function built from Python values only (no tensor, no device), called with Python values only: what it
    gives lives on the host. `Class.method`, else None. (Not a module, nor anything named like a model: those may
    have moved to the device since.)"""
    from syncscan.lint.tensors import HOST, MODULE

    from ._util import last_assign

    if ctx.kind(e) is not None:
        return None
    while isinstance(e, ast.Subscript):  # `ids[:, i:j].to(device)`: a part of what it gave
        e = e.value
    if isinstance(e, ast.Name):  # `samples = engine.draw(n)` ... `samples.to(device)`
        a = last_assign(ctx, e.id, e)
        e = a.value if a is not None else e
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)):
        return None
    recv, meth = e.func.value, e.func.attr
    ctor = recv
    if isinstance(recv, ast.Name):
        a = last_assign(ctx, recv.id, recv)
        ctor = a.value if a is not None else None
    elif isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self":
        return _drawn_from_host_attr(ctx, e, recv.attr, meth)
    if not isinstance(ctor, ast.Call) or not _drawing_method(meth):
        return None
    cls = _plain_class(ctor)
    if not cls or ctx.kind(ctor) == MODULE \
            or isinstance(recv, ast.Name) and any(w in recv.id.lower() for w in _MODELISH):
        return None
    for call in (ctor, e):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
                k.arg is None or "device" in k.arg for k in call.keywords):
            return None
        if not all(ctx.kind(a) == HOST or _dtype(ctx, a) for a in [*call.args, *(k.value for k in call.keywords)]):
            return None
    return f"{cls}.{meth}"


def _drawing_method(meth: str) -> bool:
    """A public method not named like a model's (`draw`, `sample`; not `_impl`, not `encoder`)."""
    return not meth.startswith("_") and not any(w in meth.lower() for w in _MODELISH)


def _plain_class(ctor: ast.Call) -> str:
    """The class a construction names (`SobolEngine(...)`, `torch.distributions.Normal(...)`) when it is capitalised,
    not named like a model, and handed no device and no `**kwargs`; else ""."""
    f = ctor.func
    cls = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    if not cls[:1].isupper() or any(w in cls.lower() for w in _MODELISH) \
            or any(k.arg is None or "device" in k.arg for k in ctor.keywords):
        return ""
    return cls


def _drawn_from_host_attr(ctx, e: ast.Call, attr: str, meth: str) -> str | None:
    """`self._distrib = torch.distributions.Normal(0, self.std)` in one method, `self._distrib.sample(x.size())` in
    another: every store of the attribute in the class builds the object from constants and host attributes of the
    instance, and the call passes host values: what it gives lives on the host. `Class.method`, else None."""
    from syncscan.lint.shapes import attr_stores
    from syncscan.lint.tensors import HOST

    if not _drawing_method(meth) or any(isinstance(a, ast.Starred) for a in e.args) \
            or not all(ctx.kind(a) == HOST for a in [*e.args, *(k.value for k in e.keywords if k.arg)]):
        return None
    cls = ctx.file.index.class_of(ctx.function) if ctx.function is not None else None
    stores = attr_stores(ctx, cls).get(attr) if cls is not None else None
    if not stores:
        return None
    selfs = ctx.infer.env.self_attrs
    names = set()
    for value, _, at in stores:
        cls_name = _plain_class(value) if at is None and isinstance(value, ast.Call) else ""
        if not cls_name:
            return None
        for a in [*value.args, *(k.value for k in value.keywords)]:
            if isinstance(a, ast.UnaryOp):
                a = a.operand
            if not (isinstance(a, ast.Constant) and isinstance(a.value, (int, float)) or isinstance(a, ast.Attribute)
                    and isinstance(a.value, ast.Name) and a.value.id == "self" and selfs.get(a.attr) == HOST):
                return None
        names.add(cls_name)
    return f"{names.pop()}.{meth}" if len(names) == 1 else None


def _dtype(ctx, a: ast.AST) -> bool:
    """`dtype=torch.float64`, `dtype=dtype` (a name for one), `seed=None`: not data, not a device."""
    return isinstance(a, ast.Constant) and a.value is None or "dtype" in (ctx.qualname(a) or ctx.text(a)).lower() \
        or (ctx.qualname(a) or "").startswith("torch.float")


def class_attribute_copy(ctx, recv: ast.AST) -> tuple[str, bool] | None:
    """`self.mid = self.mid.to(device)` (or `[b.to(device) for b in self.tableau.beta]`) in `__init__`, before
    the instance has an attribute of that name: it reads the class's attribute, which the class body (this one's,
    or, where this body only declares it, `mid: torch.Tensor`, a subclass's) made when the class was defined, so
    on the host; every instance copies it again (what the instance keeps does not help the next one).
    (attribute name, whether the class body visibly assigns a host tensor), else None."""
    from syncscan.lint.tensors import CPU, TENSOR, is_tensor_annotation

    func = ctx.function
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.name != "__init__" \
            or not ctx.class_stack or ctx.statement is None:
        return None
    base = _comprehended(ctx, recv) if isinstance(recv, ast.Name) else recv
    while isinstance(base, (ast.Subscript, ast.Attribute)) and not _self_attr(base):
        base = base.value
    if base is None or not _self_attr(base):
        return None
    attr = base.attr  # type: ignore[attr-defined]
    cls = ctx.class_stack[-1]
    index = ctx.file.index
    declared = None
    for c in [cls, *index.bases(cls)]:
        for s in c.body:
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == attr:
                declared = s
            elif isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in s.targets):
                declared = s
        if declared is not None:
            break
    if declared is None:
        return None
    host = False
    if declared.value is not None:
        k = ctx.kind(declared.value)
        if k == TENSOR:
            return None  # made on a device in the class body
        host = k == CPU
    elif isinstance(declared, ast.AnnAssign):
        ann = declared.annotation
        record = isinstance(ann, ast.Name) and (ann.id in index.records() or ann.id in index.namedtuples())
        if not (is_tensor_annotation(ann, ctx.imports) or record):
            return None
    start = (ctx.statement.lineno, ctx.statement.col_offset)
    for n in ast.walk(func):  # the instance's own attribute, set before this statement
        if isinstance(n, ast.Assign):
            targets = n.targets
        else:
            targets = [n.target] if isinstance(n, (ast.AnnAssign, ast.AugAssign)) else []
        if targets and (n.lineno, n.col_offset) < start and any(
                _self_attr(t) and t.attr == attr for x in targets for t in ast.walk(x)):  # type: ignore[attr-defined]
            return None
    return attr, host


def _self_attr(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _comprehended(ctx, name: ast.Name) -> ast.AST | None:
    """What a comprehension around `name` iterates when `name` is its target: `b` of `[b.to(d) for b in xs]`."""
    n = ctx.parent(name)
    while n is not None and not isinstance(n, ast.stmt):
        if isinstance(n, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            for g in n.generators:
                if isinstance(g.target, ast.Name) and g.target.id == name.id:
                    return g.iter
        n = ctx.parent(n)
    return None
