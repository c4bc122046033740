"""What SYN405 and SYN409 know of `torch.distributions` (not a rule: the registry skips files
starting with _): which names are distribution classes, which objects a function visibly built,
which classes of the module are distributions, and whether the module turned validation off."""

from __future__ import annotations

import ast

from syncscan.lint.imports import qualify
from syncscan.lint.tree import FUNCS, param_defaults

from ._util import flow, last_assign

NOT_DISTRIBUTIONS = {"Distribution", "ExponentialFamily", "Independent"}  # Independent checks nothing itself
# distributions whose arguments nothing checks (TransformedDistribution's arg_constraints is empty)
NO_CONSTRAINTS = NOT_DISTRIBUTIONS | {"TransformedDistribution"}
NOT_MODULES = ("transforms", "constraints", "constraint_registry", "kl", "utils")
# distributions whose `.sample()` calls `torch.normal(loc, scale)` (LogNormal and HalfNormal sample
# their base Normal; torch/distributions/normal.py, log_normal.py, half_normal.py)
NORMAL_FAMILY = {"Normal", "LogNormal", "HalfNormal"}


def disabled_in_module(ctx) -> bool:
    """`Distribution.set_default_validate_args(False)` anywhere in the module turns validation off."""
    return ctx.file.get(_validation_off)


def _validation_off(file) -> bool:
    return "set_default_validate_args" in file.source and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "set_default_validate_args"
        and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value is False
        for n in ast.walk(file.tree))


def torch_distribution(q: str | None) -> str | None:
    """The class name when `q` names a class of `torch.distributions` (`Distribution` included)."""
    if not q or not q.startswith("torch.distributions."):
        return None
    parts = q.split(".")
    last = parts[-1]
    if not last[:1].isupper() or last.endswith("Transform"):
        return None
    return last if len(parts) == 3 or (len(parts) == 4 and parts[2] not in NOT_MODULES) else None


def distribution_class(q: str | None) -> bool:
    """A concrete distribution of `torch.distributions`: its constructor validates its arguments."""
    name = torch_distribution(q)
    return name is not None and name not in NOT_DISTRIBUTIONS


def built(ctx, recv: ast.AST, at: ast.AST) -> ast.Call | None:
    """The call that visibly made `recv` where `at` reads it: `recv` itself, or the value of the
    plain `recv = C(...)` statement it was last assigned in this function."""
    if isinstance(recv, ast.Call):
        return recv
    if isinstance(recv, ast.Name):
        a = last_assign(ctx, recv.id, at)
        if a is not None and isinstance(a.value, ast.Call):
            return _made_by(ctx, a.value) or a.value
    return None


def _made_by(ctx, call: ast.Call) -> ast.Call | None:
    """The construction a function of this module returns, when its one `return` returns a call
    (`def proposal(x): return Normal(loc=..., scale=...)` ... `q = proposal(x)`)."""
    got = ctx.callee(call) if isinstance(call.func, ast.Name) else None
    return _one_returned_call(got[0]) if got is not None else None


def _one_returned_call(fn: ast.AST) -> ast.Call | None:
    """The call `fn`'s one `return` returns, in a function with no nested function of its own."""
    rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if len(rets) == 1 and isinstance(rets[0].value, ast.Call) \
            and not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and n is not fn
                        for n in ast.walk(fn)):
        return rets[0].value
    return None


def normal_family(ctx, call: ast.Call, depth: int = 0) -> ast.Call | None:
    """The Normal / LogNormal / HalfNormal construction whose `.sample()` a sample of `call` draws:
    `call` itself, or the base of `Independent(base, n)`."""
    name = torch_distribution(ctx.call_name(call))
    if name in NORMAL_FAMILY:
        return call
    if name == "Independent" and call.args and depth < 3:
        base = built(ctx, call.args[0], call)
        return normal_family(ctx, base, depth + 1) if base is not None else None
    return None


def validation_on(ctx, value: ast.AST | None) -> bool | None:
    """What a `validate_args=` argument leaves validation at: None and True and a missing argument
    mean on (the default); False off; a parameter of the function forwarded unchanged is what its
    default says (None: on); `self._validate_args` in a class is what its constructor defaults to; anything
    else is not known (None)."""
    if value is None:
        return True
    if isinstance(value, ast.Constant):
        return value.value in (True, None) if value.value in (True, False, None) else None
    fn = ctx.function
    if isinstance(value, ast.Attribute) and value.attr == "_validate_args" and isinstance(value.value, ast.Name) \
            and value.value.id == "self":
        # the instance's own flag, as it was built: the default of the class's `validate_args` (torch's: None, on)
        cls = enclosing_class(ctx)
        return _built_validating(ctx.file, cls) if cls is not None else None
    if isinstance(value, ast.Name) and isinstance(fn, FUNCS):
        a = fn.args
        if not any(p.arg == value.id for p in a.posonlyargs + a.args + a.kwonlyargs):
            return None
        if not all(isinstance(s, ast.arg) for s in flow(ctx).stores.get(value.id, ())):
            return None  # rebound in the function
        d = param_defaults(a).get(value.id)
        if isinstance(d, ast.Constant) and d.value in (True, False, None):
            return d.value in (True, None)
    return None


# -- distribution classes of the module ----------------------------------------------------------

def class_facts(ctx, cls: ast.ClassDef) -> tuple[str | None, bool | None]:
    """(the `torch.distributions` class its bases reach, through the module's own classes, or None;
    whether it or those bases define `arg_constraints` that check something: True, an empty dict
    or only `dependent` constraints: False, none defined: None). Memoised per class."""
    return ctx.file.per(cls, _class_facts)


def _class_facts(file, cls: ast.ClassDef) -> tuple[str | None, bool | None]:
    index = file.index
    torch_base: str | None = None
    constraints: bool | None = None
    seen: set[int] = set()
    todo = [cls]
    while todo and len(seen) < 12:
        c = todo.pop(0)
        if id(c) in seen:
            continue
        seen.add(id(c))
        if constraints is None:
            constraints = _own_constraints(c)
        for b in c.bases:
            q = qualify(b, index.imports)
            name = torch_distribution(q)
            if name is not None and torch_base is None:
                torch_base = name
        todo.extend(index.bases(c))
    return torch_base, constraints


def _local_validating(file, v: ast.Call) -> bool:
    """`v` builds a class of the module that is a torch distribution checking its arguments, whose own `__init__`
    (if any) takes `validate_args` with an on default (`class MaskableCategorical(Categorical): def __init__(self,
    probs=None, logits=None, validate_args=None, masks=None)`)."""
    name = file.index.class_built(v)
    if name is None:
        return False
    cls = file.index.classes[name]
    torch_base, _ = file.per(cls, _class_facts)
    if torch_base is None or torch_base in NO_CONSTRAINTS:
        return False
    return _built_validating(file, cls) is True


def _built_validating(file, cls: ast.ClassDef) -> bool | None:
    """Whether an instance of `cls` built without `validate_args` validates: True where the class (or a base in the
    module) has no `__init__` (torch's, None: on) or its `__init__`'s `validate_args` defaults to None / True; False
    for another default; None where its `__init__` takes no `validate_args` (what it hands torch's is not known)."""
    init = file.index.method(cls, "__init__")
    if init is None:
        return True
    a = init[0].args
    if not any(p.arg == "validate_args" for p in a.posonlyargs + a.args + a.kwonlyargs):
        return None
    d = param_defaults(a).get("validate_args")
    return isinstance(d, ast.Constant) and d.value in (True, None)


def _own_constraints(cls: ast.ClassDef) -> bool | None:
    for s in cls.body:
        if isinstance(s, FUNCS) and s.name == "arg_constraints":
            return True  # a property: what it returns is not read here
        v: ast.expr | None
        if isinstance(s, ast.Assign):
            targets, v = s.targets, s.value
        elif isinstance(s, ast.AnnAssign):
            targets, v = [s.target], s.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "arg_constraints" for t in targets):
            if isinstance(v, ast.Dict):
                return any(not (isinstance(x, ast.Attribute) and x.attr == "dependent")
                           and not (isinstance(x, ast.Name) and x.id == "dependent") for x in v.values)
            return True
    return None


def inherits_torch_init(ctx, cls: ast.ClassDef) -> bool:
    """Constructing `cls` runs the `__init__` of a concrete `torch.distributions` class: neither it nor
    the module's classes before that one in its first-base chain define one (`class Normal(
    torch.distributions.Normal, Mixin): ...`). Memoised per class."""
    return ctx.file.per(cls, _inherits_torch_init)


def _inherits_torch_init(file, cls: ast.ClassDef, depth: int = 0) -> bool:
    if depth > 5 or not cls.bases or any(isinstance(s, FUNCS) and s.name in ("__init__", "__new__") for s in cls.body):
        return False
    first = cls.bases[0]
    name = torch_distribution(qualify(first, file.index.imports))
    if name is not None:
        return name not in NO_CONSTRAINTS
    local = file.index.classes.get(first.id) if isinstance(first, ast.Name) else None
    return local is not None and local is not cls and _inherits_torch_init(file, local, depth + 1)


def enclosing_class(ctx) -> ast.ClassDef | None:
    """The class whose method the walk is in (the method itself, not a function nested in it)."""
    fn = ctx.function
    if fn is None:
        return None
    index = ctx.file.index
    cls = index.class_of(fn)
    return cls if index.is_method(fn, cls) else None


def stored_distribution(ctx, recv: ast.AST) -> tuple[ast.Call, bool] | None:
    """(a construction, sure) when `recv` is `self.<attr>` and the class (with its bases in the module)
    stores there a `torch.distributions` distribution built with validation on (`self.distribution =
    Normal(mean, std)` in `proba_distribution`). Sure when every store is such a construction or None;
    other stores of values the linter cannot place (`self.dist1 = dist`, a parameter) leave it probable.
    Any store of something else (a call of another class, `validate_args=False`, `**kwargs`) rules it out."""
    stored = _self_stores(ctx, recv)
    if stored is None:
        return None
    made: ast.Call | None = None
    sure = True
    values = []
    for value in stored:
        while isinstance(value, ast.IfExp):  # `Normal(0, s) if dist is None else dist`: both sides
            values.append(value.body)
            value = value.orelse
        values.append(value)
    for value in values:
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        if isinstance(value, ast.Name):  # a parameter or a local handed in: not known here
            sure = False
            continue
        if not _validating(value, ctx.file):
            return None
        made = made or value
    return (made, sure) if made is not None else None


def stored_normal(ctx, recv: ast.AST) -> ast.Call | None:
    """The Normal-family construction stored in `self.<attr>` (`self._distribution = Normal(mean, std)` in
    `update`, sampled in `sample`), when every store of the class there is one (or None), validating or not."""
    made = None
    for value in _self_stores(ctx, recv) or ():
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        if not isinstance(value, ast.Call) or normal_family(ctx, value) is None:
            return None
        made = made or value
    return made


def _self_stores(ctx, recv: ast.AST) -> list[ast.AST] | None:
    """The values the class around (with its bases in the module) assigns to `recv`, a `self.<attr>`; None where
    it is not one, nothing is stored, or a store is not a plain assignment of the whole attribute."""
    from syncscan.lint.shapes import attr_stores

    if not (isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self"):
        return None
    cls = enclosing_class(ctx)
    stores = attr_stores(ctx, cls).get(recv.attr) if cls is not None else None
    if not stores or any(at is not None or value is None for value, _, at in stores):
        return None
    return [value for value, _, _ in stores]


def property_distribution(ctx, recv: ast.AST) -> ast.Call | None:
    """The construction `self.<attr>` gives when the class (or a base in the module) defines `<attr>` as a
    `@property` whose every `return` hands back a validating distribution (`def base_dist(self): return
    D.Normal(self.mean, self.var)`); else None."""
    if not (isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self"):
        return None
    cls = enclosing_class(ctx)
    got = ctx.file.index.method(cls, recv.attr) if cls is not None else None
    if got is None or not any(isinstance(d, ast.Name) and d.id == "property" for d in got[0].decorator_list):
        return None
    return ctx.file.per(got[0], _returned_distribution)


def returned_distribution(ctx, call: ast.Call) -> ast.Call | None:
    """The construction a call of the module's own function or method gives when every `return` of it
    hands back a validating `torch.distributions` distribution, built on the `return` line or bound to a
    name just before (`def _distribution(self, obs): ... return Normal(mu, std)`); else None."""
    target = ctx.callee(call)
    if target is None or isinstance(target[0], ast.Lambda):
        return None
    made = ctx.file.per(target[0], _returned_distribution)
    if made is None and target[1] is not None and ctx.file.per(target[0], _abstract):
        # `self.get_distribution(dp)` of a base whose method only raises NotImplementedError: what the module's
        # subclasses that override it return, when every one returns a validating distribution
        made = _overridden_distribution(ctx.file, target[1], target[0].name)
    return made


def _abstract(file, fn) -> bool:
    """The method's body (past a docstring) is only `raise NotImplementedError`."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    e = body[0].exc
    e = e.func if isinstance(e, ast.Call) else e
    return isinstance(e, ast.Name) and e.id == "NotImplementedError"


def _overridden_distribution(file, cls: ast.ClassDef, name: str) -> ast.Call | None:
    """The distribution the module's subclasses of `cls` return from their `name`, when each that overrides it
    returns a validating one (the first such construction); else None."""
    index = file.index
    made = None
    for c in index.classes.values():
        if c is cls or not any(b is cls for b in index.base_chain(c)):
            continue
        m = next((s for s in c.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name), None)
        if m is None:
            continue
        got = file.per(m, _returned_distribution)
        if got is None:
            return None
        made = made or got
    return made


def _returned_distribution(file, fn) -> ast.Call | None:
    rets = [n.value for n in file.src.own_nodes(fn) if isinstance(n, ast.Return)]
    made = None
    for v in rets:
        if isinstance(v, ast.Name):  # `dist = Normal(mu, std)` ... `return dist`: the name's one binding
            binds = [n for n in file.src.own_nodes(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
                     and isinstance(n.targets[0], ast.Name) and n.targets[0].id == v.id]
            v = binds[0].value if len(binds) == 1 else None
        if not _validating(v, file):
            return None
        made = made or v
    return made


def _validating(v: ast.AST | None, file) -> bool:
    """`v` constructs a `torch.distributions` distribution with validation on: no `validate_args`, or True / None,
    and no `**kwargs` (a flag decided elsewhere). A subclass of the module counts when it reaches a torch class
    that checks its arguments and its `__init__` (if it has one) takes `validate_args` defaulting to on."""
    if not isinstance(v, ast.Call) or any(k.arg is None for k in v.keywords):
        return False
    if not distribution_class(qualify(v.func, file.index.imports)) and not _local_validating(file, v):
        return False
    flag = next((k.value for k in v.keywords if k.arg == "validate_args"), None)
    return flag is None or isinstance(flag, ast.Constant) and flag.value in (True, None)



def annotated_distribution(ctx, recv: ast.AST, at: ast.AST, depth: int = 0) -> bool:
    """`recv` holds what the code declares a `torch.distributions` distribution: a parameter annotated so (of this
    function or one it is nested in: `base: torch.distributions.Distribution`), the plain local it was last assigned
    from such a value or from a call of the module's function annotated to return one (`-> Distribution`), either
    side of a conditional (`self.noise if self.noise is not None else self._default(x)`), or `self.<attr>` that the
    class stores only from such parameters."""
    if depth > 3:
        return False
    if isinstance(recv, ast.IfExp):
        sides = [s for s in (recv.body, recv.orelse) if not (isinstance(s, ast.Constant) and s.value is None)]
        return any(annotated_distribution(ctx, s, at, depth + 1) for s in sides)
    if isinstance(recv, ast.Call):
        got = ctx.callee(recv)
        return got is not None and _distribution_annotation(ctx, got[0].returns)
    if isinstance(recv, ast.Attribute):
        stored = _self_stores(ctx, recv)
        return bool(stored) and all(isinstance(v, ast.Constant) and v.value is None
                                    or _param_annotation(ctx, v, _init_of(ctx)) for v in stored) \
            and any(not isinstance(v, ast.Constant) for v in stored)
    if not isinstance(recv, ast.Name):
        return False
    a = last_assign(ctx, recv.id, at)
    if a is not None:
        return annotated_distribution(ctx, a.value, a, depth + 1)
    return _param_annotation(ctx, recv, None)


def _init_of(ctx):
    cls = enclosing_class(ctx)
    got = ctx.file.index.method(cls, "__init__") if cls is not None else None
    return got[0] if got is not None else None


def _param_annotation(ctx, name: ast.AST, fn) -> bool:
    """`name` is a parameter of `fn` (None: the function the walk is in, or one it is nested in) annotated with a
    torch distribution, and the function does not assign it again."""
    if not isinstance(name, ast.Name):
        return False
    fns = [fn] if fn is not None else []
    if fn is None:
        p = ctx.function
        while p is not None:
            if isinstance(p, FUNCS):
                fns.append(p)
            p = ctx.parent(p)
    for f in fns:
        args = f.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if arg.arg == name.id:
                rebound = any(isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Store)
                              for n in ast.walk(f))
                return not rebound and _distribution_annotation(ctx, arg.annotation)
    return False


def _distribution_annotation(ctx, ann: ast.AST | None) -> bool:
    """`Distribution`, `torch.distributions.Normal`, `Optional[...]` or `... | None` of one (a string too)."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        parts = [p for p in (ann.left, ann.right) if not (isinstance(p, ast.Constant) and p.value is None)]
        return bool(parts) and all(_distribution_annotation(ctx, p) for p in parts)
    if isinstance(ann, ast.Subscript) and (ctx.qualname(ann.value) or "") in ("typing.Optional",):
        return _distribution_annotation(ctx, ann.slice)
    return ann is not None and torch_distribution(ctx.qualname(ann)) is not None


def conditional_made(ctx, recv: ast.AST, at: ast.AST) -> ast.Call | None:
    """`noise = self.noise if self.noise is not None else self._default(x)`: the construction the conditional's
    default side makes (a call, or a call of the module's function or method whose one `return` is one)."""
    if not isinstance(recv, ast.Name):
        return None
    a = last_assign(ctx, recv.id, at)
    if a is None or not isinstance(a.value, ast.IfExp):
        return None
    for side in (a.value.body, a.value.orelse):
        if not isinstance(side, ast.Call):
            continue
        got = ctx.callee(side)
        if got is None:
            if torch_distribution(ctx.call_name(side)):
                return side
            continue
        made = _one_returned_call(got[0])
        if made is not None:
            return made
    return None
