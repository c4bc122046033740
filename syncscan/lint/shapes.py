"""How many dimensions a tensor expression has, where the code makes that certain (issue 12).

Indexing with a 0-dim integer or boolean tensor makes torch read the index on the host (`x[t.argmax()]`
calls `.item()` inside torch), while an index of one or more dimensions stays on the device (a gather,
or a masked_fill for a boolean mask and a number). So the indexing rules ask for the rank of an index.

`rank(ctx, e)` answers with an int only where the rank follows from how the value is made, whatever the
inputs' shapes: a full reduction (`x.sum()`, `torch.argmax(x)`), a reduction along the only dim of a
1-D value (`torch.argmax(x.view(-1), dim=0)`), an integer picked out of a 1-D value (`groups[0]` with
`groups = counts.cumsum(0) - 1` from `torch.unique`), `torch.tensor(<number>)`, through elementwise
ops, comparisons, names (every binding that reaches the read agrees) and the module's functions (every
`return` agrees). Anything else is None: unknown, and the rules stay silent.
"""

from __future__ import annotations

import ast

from syncscan.lint.flow import FunctionFlow, function_flow
from syncscan.lint.tensors import SAME_ELEMENTS, dispatched, kwarg, torch_name

# reductions over every element when given no dim: a 0-dim result
_FULL_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "norm", "any",
                              "all", "std", "var", "median", "nansum", "nanmean", "nanmedian", "count_nonzero",
                              "logsumexp"})
# reductions that take a dim and drop it (unless keepdim=True); those marked return (values, indices)
_DIM_REDUCTIONS = frozenset({"sum", "mean", "amax", "amin", "argmax", "argmin", "prod", "any", "all", "std", "var",
                             "nansum", "nanmean", "logsumexp", "count_nonzero", "norm"})
_PAIR_REDUCTIONS = frozenset({"max", "min", "median", "nanmedian", "mode", "kthvalue"})
# methods / torch functions whose result has their (first) input's rank
_SAME_RANK = frozenset({
    "float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char", "to", "cuda", "cpu",
    "type", "type_as", "detach", "clone", "contiguous", "abs", "neg", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sqrt", "rsqrt", "square", "sigmoid", "relu", "tanh", "sin", "cos", "floor", "ceil", "round", "trunc",
    "frac", "sign", "reciprocal", "clamp", "clamp_min", "clamp_max", "clip", "cumsum", "cumprod", "cummax",
    "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "nan_to_num", "softmax", "log_softmax", "argsort",
    "flip", "roll", "pow", "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "maximum", "minimum", "where", "requires_grad_", "squeeze_", "zero_", "fill_", "add_", "sub_", "mul_", "div_",
    "clamp_", "abs_", "neg_", "masked_fill", "masked_fill_", "sort", "topk",
})
_TENSOR_TUPLE_SAME = frozenset({"sort", "topk", "cummax", "cummin"})  # (values, indices), the input's rank
_ONE_D_FACTORIES = frozenset({"torch.arange", "torch.randperm", "torch.linspace", "torch.logspace"})
_SIZED_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn"})
_LIKE_FACTORIES = frozenset({"torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like",
                             "torch.rand_like", "torch.randn_like", "torch.randint_like"})
_FLATTENERS = frozenset({"flatten", "ravel"})
_MAX_DEPTH = 12


def rank(ctx, e: ast.AST, fl: FunctionFlow | None = None) -> int | None:
    """The number of dimensions of the tensor `e` (a node of the function `ctx` walks, or of the
    function whose flow `fl` is), when the code makes it certain; else None."""
    if fl is None:
        fl = function_flow(ctx.function or ctx.tree)
    return _Ranks(ctx).of(e, fl, 0)


class _Ranks:
    def __init__(self, ctx):
        self.ctx = ctx
        self.memo = ctx.file.state(_Ranks, dict)  # id(node) -> rank (per file: nodes do not move)

    def of(self, e: ast.AST, fl: FunctionFlow, depth: int) -> int | None:
        key = id(e)
        if key in self.memo:
            return self.memo[key]
        if depth > _MAX_DEPTH:
            return None
        self.memo[key] = None  # (a cycle through names: unknown)
        r = self._of(e, fl, depth + 1)
        self.memo[key] = r
        return r

    def tuple_of(self, e: ast.AST, fl: FunctionFlow, depth: int) -> list[int | None] | None:
        """The ranks of the tensors in the tuple a call returns (`x.max(0)`, `torch.unique(...)`,
        `t.nonzero(as_tuple=True)`); a single None entry stands for 'each the same rank'."""
        if not isinstance(e, ast.Call):
            return None
        q = self.ctx.call_name(e)
        f = e.func
        meth = f.attr if isinstance(f, ast.Attribute) and q is None else None
        src = f.value if meth else (e.args[0] if e.args else None)
        name = meth or (q[6:] if q and q.startswith("torch.") else None)
        if name is None or src is None:
            return None
        if name == "unique" or name == "unique_consecutive":
            if kwarg(e, "dim") is not None:
                return None
            out = [1]
            if _true(kwarg(e, "return_inverse")):
                r = self.of(src, fl, depth)
                out.append(r)
            if _true(kwarg(e, "return_counts")):
                out.append(1)
            return out
        if name in ("nonzero", "where") and (name == "where" and len(e.args) == 1 and not meth and not e.keywords
                                             or name == "nonzero" and _true(kwarg(e, "as_tuple"))):
            return [1, -1]  # a tuple of 1-D index tensors, one per dim
        if name in _PAIR_REDUCTIONS or name in _TENSOR_TUPLE_SAME:
            r = self.of(src, fl, depth)
            if r is None:
                return None
            if name in _TENSOR_TUPLE_SAME:
                return [r, r]
            dim = self._dim_arg(e, bool(meth))
            if dim is None or _true(kwarg(e, "keepdim")):
                return None if dim is None else [r, r]
            return [r - 1, r - 1] if r >= 1 else None
        return None

    def _dim_arg(self, e: ast.Call, is_method: bool) -> ast.AST | None:
        pos = 0 if is_method else 1
        if len(e.args) > pos:
            return e.args[pos]
        return kwarg(e, "dim")

    def _of(self, e: ast.AST, fl: FunctionFlow, depth: int) -> int | None:
        if isinstance(e, ast.Name):
            return self._name(e, fl, depth)
        if isinstance(e, ast.UnaryOp):
            return self.of(e.operand, fl, depth) if not isinstance(e.op, ast.Not) else None
        if isinstance(e, ast.BinOp):  # (`a @ b` contracts dims: not a broadcast)
            return None if isinstance(e.op, ast.MatMult) else self._broadcast([e.left, e.right], fl, depth)
        if isinstance(e, ast.Compare) and len(e.ops) == 1 and not isinstance(e.ops[0], (ast.In, ast.NotIn, ast.Is,
                                                                                        ast.IsNot)):
            return self._broadcast([e.left, e.comparators[0]], fl, depth)
        if isinstance(e, ast.Subscript):
            return self._subscript(e, fl, depth)
        if isinstance(e, ast.Attribute):
            if e.attr in ("values", "indices") and isinstance(e.value, ast.Call):
                t = self.tuple_of(e.value, fl, depth)
                return t[0] if t and t[0] is not None and t[0] >= 0 else None
            if e.attr in ("T", "mT", "data"):
                return self.of(e.value, fl, depth)
            if isinstance(e.value, ast.Name) and e.value.id == "self":
                return self._self_attr(e.attr, fl, depth)
            return None
        if isinstance(e, ast.Call):
            return self._call(e, fl, depth)
        return None

    def _number(self, e: ast.AST, fl: FunctionFlow) -> bool:
        """A Python number (it broadcasts as a 0-dim value that never raises the rank). The walk's
        kinds answer only for the function it walks."""
        from syncscan.lint.tensors import HOST

        if _python_scalar(self.ctx, e):
            return True
        here = fl.scope is (self.ctx.function or self.ctx.tree)
        return here and self.ctx.kind(e) == HOST and not isinstance(e, (ast.List, ast.Tuple, ast.ListComp))

    def _broadcast(self, operands, fl, depth) -> int | None:
        ranks = []
        for o in operands:
            if self._number(o, fl):
                continue
            r = self.of(o, fl, depth)
            if r is None:
                return None
            ranks.append(r)
        return max(ranks) if ranks else None

    def _name(self, e: ast.Name, fl: FunctionFlow, depth: int) -> int | None:
        bs = fl.reaching(e)
        if not bs or e.id in fl.escaping or e.id in fl.nested:
            return None
        got = None
        for b in bs:
            r = self._binding(b, fl, depth)
            if r is None or got is not None and r != got:
                return None
            got = r
        return got

    def _binding(self, b, fl, depth) -> int | None:
        if b.how == "assign" and b.value is not None:
            return self.of(b.value, fl, depth)
        # `def step(self, timestep: int)`: a tensor that stands where a Python number is declared is a 0-dim one
        if b.how == "param" and isinstance(b.node, ast.arg) and isinstance(b.node.annotation, ast.Name) \
                and b.node.annotation.id in ("int", "float"):
            return 0
        st = b.stmt
        # `for t in steps:`, `for i, t in enumerate(steps):`, `for a, b in zip(xs, reversed(ys)):`: an element
        # of a tensor has one dim less; an element of a list has the rank its elements agree on
        if b.how == "for" and isinstance(st, (ast.For, ast.AsyncFor)):
            return self._target(st.target, b.node, st.iter, fl, depth)
        # `a, b, c = torch.unique(x, return_inverse=True, return_counts=True)`
        if b.how == "assign" and isinstance(st, ast.Assign) and len(st.targets) == 1 \
                and isinstance(st.targets[0], ast.Tuple):
            elts = st.targets[0].elts
            i = next((k for k, t in enumerate(elts) if t is b.node), None)
            if i is None or any(isinstance(t, ast.Starred) for t in elts):
                return None
            t = self.tuple_of(st.value, fl, depth)
            if t is None:
                return None
            if t[-1] == -1:  # one 1-D tensor per dim
                return 1
            return t[i] if i < len(t) and (t[i] is None or t[i] >= 0) else None
        return None

    def _target(self, target: ast.AST, node: ast.AST, it: ast.AST, fl, depth) -> int | None:
        """The rank of `node`, bound by the loop target `target` (or a part of it) over `it`."""
        if target is node:
            return self._element(it, fl, depth)
        if not isinstance(target, ast.Tuple) or any(isinstance(t, ast.Starred) for t in target.elts):
            return None
        i = next((k for k, t in enumerate(target.elts) if t is node or node in _stores(t)), None)
        f = it.func if isinstance(it, ast.Call) else None
        if i is None or not isinstance(f, ast.Name) or f.id in self.ctx.imports or it.keywords \
                or any(isinstance(a, ast.Starred) for a in it.args):
            return None
        if f.id == "zip" and len(it.args) == len(target.elts):
            return self._target(target.elts[i], node, it.args[i], fl, depth)
        if f.id == "enumerate" and len(it.args) == 1 and len(target.elts) == 2 and i == 1:
            return self._target(target.elts[1], node, it.args[0], fl, depth)
        return None

    def _element(self, it: ast.AST, fl, depth) -> int | None:
        """The rank of each element of the iterable `it`: of a tensor, one dim less; of a list or tuple
        (a literal, or a name bound to one and grown only by `.append`), what all its elements agree on."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in SAME_ELEMENTS \
                and it.func.id not in self.ctx.imports and len(it.args) == 1 and not it.keywords:
            return self._element(it.args[0], fl, depth)  # `reversed(xs)`, `list(xs)`, `sorted(xs)`
        if isinstance(it, (ast.List, ast.Tuple)):
            return self._agree(it.elts, fl, depth)
        if isinstance(it, ast.Name):
            bs = fl.reaching(it)
            if not bs or it.id in fl.escaping or it.id in fl.nested:
                return None
            got = None
            for b in bs:
                if b.how != "assign" or b.value is None or b.node is not getattr(b.stmt, "targets", [None])[0]:
                    return None
                if isinstance(b.value, (ast.List, ast.Tuple)):
                    grown = _appended(self.ctx, fl.scope, it.id)
                    if grown is None:
                        return None
                    r = self._agree([*b.value.elts, *grown], fl, depth)
                else:
                    r = self._element(b.value, fl, depth)
                if r is None or got is not None and r != got:
                    return None
                got = r
            return got
        r = self.of(it, fl, depth)
        return r - 1 if r is not None and r >= 1 else None

    def _agree(self, elts, fl, depth) -> int | None:
        got = None
        for x in elts:
            r = None if isinstance(x, ast.Starred) else self.of(x, fl, depth)
            if r is None or got is not None and r != got:
                return None
            got = r
        return got

    def _subscript(self, e: ast.Subscript, fl, depth) -> int | None:
        if isinstance(e.value, ast.Call):
            t = self.tuple_of(e.value, fl, depth)
            if t is not None:
                if not (isinstance(e.slice, ast.Constant) and type(e.slice.value) is int):
                    return None
                if t[-1] == -1:
                    return 1
                i = e.slice.value
                return t[i] if -len(t) <= i < len(t) and (t[i] is None or t[i] >= 0) else None
        base = self.of(e.value, fl, depth)
        if base is None:
            return None
        r = base
        for x in (e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]):
            if isinstance(x, ast.Slice):
                continue
            if isinstance(x, ast.Constant) and x.value is None:
                r += 1
            elif python_int(self.ctx, x, name=lambda n, d: self._int_name(n, fl)):
                r -= 1
            else:
                return None  # a tensor index, `...`: the result's rank depends on more than this
        return r if r >= 0 else None

    def _call(self, e: ast.Call, fl, depth) -> int | None:
        ctx = self.ctx
        q = ctx.call_name(e)
        f = e.func
        if isinstance(f, ast.Attribute) and q is None:
            if isinstance(f.value, ast.Name) and f.value.id == "self":  # `self.nearest(...)`: what it returns
                found = self._own_method(f.attr, fl)
                if found is not None:
                    return self._returns(found, depth)
            return self._method(e, f.attr, f.value, fl, depth)  # a method of a tensor
        if q is None:
            if isinstance(f, ast.Name):
                fn = ctx.file.index.funcs.get(f.id)
                return self._returns(fn, depth) if fn is not None else None
            return None
        if q in ("torch.tensor", "torch.as_tensor", "torch.scalar_tensor") and e.args:
            return 0 if _python_scalar(ctx, e.args[0]) else None
        if q in _ONE_D_FACTORIES:
            return 1
        if q in _SIZED_FACTORIES or q == "torch.full":
            size = e.args[:1] if q == "torch.full" else e.args
            if len(size) == 1 and isinstance(size[0], (ast.Tuple, ast.List)):
                return len(size[0].elts) if not any(isinstance(x, ast.Starred) for x in size[0].elts) else None
            if size and all(python_int(ctx, x, name=lambda n, d: self._int_like(n, fl, d)) for x in size):
                return len(size)
            return None
        if q in _LIKE_FACTORIES and e.args:
            return self.of(e.args[0], fl, depth)
        if q.startswith("torch.") and e.args:
            return self._method(e, q[6:], e.args[0], fl, depth, function=True)
        target = dispatched(q, e)  # `anp.any(z)`, `xp.sum(x)`: torch's function of that name, numpy's keywords
        # (not einops' and einx's patterns: their `repeat` / `reduce` are no torch function's)
        if target is not None and len(target) == 3 and target[1] is e.args and e.args \
                and kwarg(e, "keepdims") is None:
            return self._method(e, torch_name(target[0]), e.args[0], fl, depth, function=True)
        return None

    def _method(self, e: ast.Call, name: str, src: ast.AST, fl, depth, function: bool = False) -> int | None:
        args = e.args[1:] if function else e.args
        if name in _FLATTENERS and not args and not e.keywords:
            return 1
        if name in ("view", "reshape") and args and not any(isinstance(a, ast.Starred) for a in args):
            if len(args) == 1:
                a = args[0]
                if isinstance(a, (ast.Tuple, ast.List)):
                    return len(a.elts) if not any(isinstance(x, ast.Starred) for x in a.elts) else None
                return 1 if python_int(self.ctx, a) else None
            return len(args) if all(python_int(self.ctx, a) for a in args) else None
        if name in ("unsqueeze", "squeeze"):
            r = self.of(src, fl, depth)
            if r is None:
                return None
            if name == "unsqueeze":
                return r + 1
            if not args and not e.keywords:
                return 0 if r == 0 else None  # squeeze(): depends on the sizes
            return r - 1 if r >= 1 and args and python_int(self.ctx, args[0]) else None
        if name == "masked_select":
            return 1
        if name in ("nonzero", "argwhere") and not _true(kwarg(e, "as_tuple")):
            return 2  # (n, ndim) indices
        if name in ("dot", "vdot"):  # of two 1-D tensors
            return 0
        if name in _FULL_REDUCTIONS or name in _DIM_REDUCTIONS:
            dim = args[0] if args else kwarg(e, "dim")
            if name in ("norm",) and args:  # norm(p, dim): the first argument is the order
                dim = args[1] if len(args) > 1 else kwarg(e, "dim")
            if dim is None:
                if name in _FULL_REDUCTIONS and not any(k.arg in ("axis", "keepdim") for k in e.keywords) \
                        and name not in ("logsumexp",):
                    return 0
                return None
            if name in _PAIR_REDUCTIONS:
                return None  # (values, indices): see tuple_of
            if _true(kwarg(e, "keepdim")) or (name in _DIM_REDUCTIONS and len(args) > 1 and _true(args[1])):
                return self.of(src, fl, depth)
            r = self.of(src, fl, depth)
            if r is None:
                return None
            if isinstance(dim, (ast.Tuple, ast.List)):
                return r - len(dim.elts) if r >= len(dim.elts) else None
            return r - 1 if r >= 1 and python_int(self.ctx, dim) else None
        if name in _SAME_RANK and name not in _TENSOR_TUPLE_SAME:
            if name == "where" and function:
                return self._broadcast(list(e.args), fl, depth) if len(e.args) == 3 else None
            if function and name not in ("clamp", "clip", "pow", "softmax", "log_softmax", "cumsum", "cumprod",
                                         "argsort", "flip", "roll", "masked_fill"):
                return self._broadcast([a for a in e.args if not isinstance(a, ast.Starred)], fl, depth)
            if not function and name in ("add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder",
                                         "fmod", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                                         "logical_xor", "bitwise_and", "bitwise_or", "maximum", "minimum", "pow",
                                         "add_", "sub_", "mul_", "div_", "type_as") and args:
                return self._broadcast([src, args[0]] if name != "type_as" else [src], fl, depth)
            return self.of(src, fl, depth)
        return None

    def _int_name(self, e: ast.Name, fl: FunctionFlow) -> bool:
        """A loop counter: every binding that reaches `e` is the target of `for e in range(...)` (also
        wrapped: `tqdm(range(n))`, `reversed(range(n))`) or the count of `for e, x in enumerate(...)`."""
        bs = fl.reaching(e)
        if not bs or e.id in fl.escaping or e.id in fl.nested:
            return False
        for b in bs:
            st = b.stmt
            if b.how != "for" or not isinstance(st, (ast.For, ast.AsyncFor)):
                return False
            it = st.iter
            if st.target is b.node:
                while isinstance(it, ast.Call) and it.args and not _is_range(self.ctx, it) \
                        and _callee_name(it) in _PASS_THROUGH:
                    it = it.args[0]  # (a wrapper that yields what it is given: tqdm, reversed, list)
                if not _is_range(self.ctx, it):
                    return False
            elif not (isinstance(st.target, ast.Tuple) and len(st.target.elts) == 2 and st.target.elts[0] is b.node
                      and isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate"
                      and "enumerate" not in self.ctx.imports):
                return False
        return True

    def _int_like(self, e: ast.Name, fl: FunctionFlow, depth: int) -> bool:
        """A name that holds a Python int wherever it reaches `e`: a loop counter, a parameter annotated `int`, or an
        assignment of a visible int (`n = len(xs)`, `k = n - 1`): `torch.zeros(n)` has one dim."""
        if self._int_name(e, fl):
            return True
        bs = fl.reaching(e)
        if not bs or e.id in fl.escaping or e.id in fl.nested or depth > 3:
            return False
        for b in bs:
            if b.how == "param" and isinstance(b.node, ast.arg) and isinstance(b.node.annotation, ast.Name) \
                    and b.node.annotation.id == "int":
                continue
            if b.how == "assign" and b.value is not None and isinstance(b.stmt, ast.Assign) \
                    and python_int(self.ctx, b.value, depth + 1, name=lambda n, d: self._int_like(n, fl, d)):
                continue
            return False
        return True

    def _own_class(self, fl: FunctionFlow) -> ast.ClassDef | None:
        index = self.ctx.file.index
        cls = index.class_of(fl.scope)
        return cls if cls is not None and index.is_method(fl.scope, cls) else None

    def _own_method(self, name: str, fl: FunctionFlow) -> ast.AST | None:
        """The method `name` of the class whose method `fl` is (or of its bases in the module)."""
        cls = self._own_class(fl)
        found = self.ctx.file.index.method(cls, name) if cls is not None else None
        return found[0] if found is not None else None

    def _self_attr(self, attr: str, fl: FunctionFlow, depth: int) -> int | None:
        """`self.<attr>` in a method: the rank every store of it in the class's methods (and its bases' in the
        module) agrees on; None when one is unknown or the attribute is stored another way."""
        cls = self._own_class(fl)
        if cls is None:
            return None
        stores = attr_stores(self.ctx, cls).get(attr)
        if not stores:
            return None
        got = None
        for value, fn, i in stores:
            if value is None:
                return None
            ffl = function_flow(fn)
            if i is None:
                r = self.of(value, ffl, depth)
            elif isinstance(value, (ast.Tuple, ast.List)):
                r = self.of(value.elts[i], ffl, depth) if i < len(value.elts) else None
            else:
                t = self._returned_tuple(value, ffl, depth)
                r = t[i] if t is not None and i < len(t) else None
            if r is None or got is not None and r != got:
                return None
            got = r
        return got

    def _returned_tuple(self, e: ast.AST, fl: FunctionFlow, depth: int) -> list[int | None] | None:
        """The ranks of what `self.m(...)` returns as a tuple literal on every path (`return a, b, c`)."""
        f = e.func if isinstance(e, ast.Call) else None
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"):
            return None
        fn = self._own_method(f.attr, fl)
        if fn is None or isinstance(fn, ast.Lambda):
            return None
        rets = [n for n in self.ctx.file.src.own_nodes(fn) if isinstance(n, ast.Return)]
        if not rets or not all(isinstance(r.value, ast.Tuple) for r in rets):
            return None
        ffl = function_flow(fn)
        n = len(rets[0].value.elts)  # type: ignore[union-attr]
        out: list[int | None] = []
        for k in range(n):
            got = None
            for r in rets:
                elts = r.value.elts  # type: ignore[union-attr]
                x = self.of(elts[k], ffl, depth) if len(elts) == n and not isinstance(elts[k], ast.Starred) else None
                if x is None or got is not None and x != got:
                    got = None
                    break
                got = x
            out.append(got)
        return out

    def _returns(self, fn: ast.AST, depth: int) -> int | None:
        """The rank every `return` of the module function `fn` gives (memoised with the nodes)."""
        if isinstance(fn, ast.Lambda):
            return None
        memo = self.ctx.file.state(_returns_owner, dict)
        if id(fn) in memo:
            return memo[id(fn)]
        memo[id(fn)] = None
        own = self.ctx.file.src.own_nodes(fn)
        rets = [n for n in own if isinstance(n, ast.Return)]
        ffl = function_flow(fn)
        got = None
        for r in rets:
            k = self.of(r.value, ffl, depth) if r.value is not None else None
            if k is None or got is not None and k != got:
                got = None
                break
            got = k
        memo[id(fn)] = got
        return got


_MUTATORS = frozenset({"extend", "insert", "__setitem__", "__iadd__"})


def _stores(t: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(t) if isinstance(n, ast.Name)]


def _appended(ctx, fn: ast.AST, name: str) -> list[ast.AST] | None:
    """What the function's code appends to the list `name` (`name.append(v)`), or None when it changes
    the list another way (`extend`, `insert`, `name[i] = v`, `name += ...`). Memoised per function."""
    memo = ctx.file.state(_appended, dict)
    key = (id(fn), name)
    if key not in memo:
        got: list[ast.AST] | None = []
        for n in ctx.file.src.own_nodes(fn):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                    and n.func.value.id == name:
                if n.func.attr == "append" and len(n.args) == 1 and not n.keywords:
                    got.append(n.args[0])  # type: ignore[union-attr]
                elif n.func.attr in _MUTATORS:
                    got = None
                    break
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == name \
                    or isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) \
                    and isinstance(n.value, ast.Name) and n.value.id == name:
                got = None
                break
        memo[key] = got
    return memo[key]


# iterables that yield the elements of the one they wrap (a progress bar, a reordering)
_PASS_THROUGH = frozenset({"tqdm", "reversed", "list", "sorted", "tuple", "iter"})


def _callee_name(e: ast.Call) -> str:
    f = e.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _is_range(ctx, e: ast.AST) -> bool:
    """`range(...)`, or tqdm's `trange(...)` (a range with a progress bar)."""
    return isinstance(e, ast.Call) and (isinstance(e.func, ast.Name) and e.func.id == "range"
                                        and "range" not in ctx.imports or _callee_name(e) == "trange")


def attr_stores(ctx, cls: ast.ClassDef) -> dict[str, list[tuple[ast.AST | None, ast.AST, int | None]]]:
    """attr -> [(value, method, position in a tuple target or None)] for every store of `self.<attr>` in the
    methods of `cls` and its bases in the module; value None where the store is not an assignment of a value
    (an augmented assignment keeps the rank and is left out). Memoised per class."""
    memo = ctx.file.state(attr_stores, dict)
    got = memo.get(id(cls))
    if got is not None:
        return got
    out: dict[str, list] = {}
    index = ctx.file.index
    for c in index.base_chain(cls):
        for fn in c.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for n in ctx.file.src.own_nodes(fn):
                if not (isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
                        and n.value.id == "self"):
                    continue
                parent = ctx.file.src.parent(n)
                if isinstance(parent, ast.AugAssign):
                    continue
                if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is not None \
                        and (isinstance(parent, ast.AnnAssign) or len(parent.targets) == 1):
                    out.setdefault(n.attr, []).append((parent.value, fn, None))
                elif isinstance(parent, ast.Tuple) and not any(isinstance(x, ast.Starred) for x in parent.elts) \
                        and isinstance(ctx.file.src.parent(parent), ast.Assign) \
                        and len(ctx.file.src.parent(parent).targets) == 1:
                    i = next(k for k, x in enumerate(parent.elts) if x is n)
                    out.setdefault(n.attr, []).append((ctx.file.src.parent(parent).value, fn, i))
                else:
                    out.setdefault(n.attr, []).append((None, fn, None))
    memo[id(cls)] = out
    return out


def _returns_owner() -> None:  # (a key of its own for the per-file memo of function returns)
    return None


def _true(e: ast.AST | None) -> bool:
    return isinstance(e, ast.Constant) and e.value is True


def _python_scalar(ctx, e: ast.AST) -> bool:
    """A Python number, as far as the code shows: a literal, arithmetic of them, `int(...)` /
    `float(...)` / `len(...)`, a name annotated or assigned one."""
    if isinstance(e, ast.Constant):
        return type(e.value) in (int, float, bool)
    if isinstance(e, ast.UnaryOp):
        return _python_scalar(ctx, e.operand)
    if isinstance(e, ast.BinOp):
        return _python_scalar(ctx, e.left) and _python_scalar(ctx, e.right)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("int", "float", "len", "bool") \
            and e.func.id not in ctx.imports:
        return True
    return False


def python_int(ctx, e: ast.AST, depth: int = 0, name=None) -> bool:
    """Visibly a Python int (an integer index, a dim): a literal, `len()` / `int()`, arithmetic of
    those; a name where `name(e, depth)` says so (none without it)."""
    if depth > 4:
        return False
    if isinstance(e, ast.Constant):
        return type(e.value) is int
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        return python_int(ctx, e.operand, depth + 1, name)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
        return python_int(ctx, e.left, depth + 1, name) and python_int(ctx, e.right, depth + 1, name)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("len", "int") \
            and e.func.id not in ctx.imports:
        return True
    if name is not None and _size_read(e):
        return True  # (a tensor's size is Python ints: asked only where a name's binding is followed)
    return isinstance(e, ast.Name) and name is not None and name(e, depth)


def _size_read(e: ast.AST) -> bool:
    """`x.shape[0]`, `x.size(1)`, `x.ndim`: a dimension of a tensor (or an array), a Python int."""
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
        return isinstance(e.slice, ast.Constant) and type(e.slice.value) is int \
            or isinstance(e.slice, ast.UnaryOp) and isinstance(e.slice.operand, ast.Constant)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "size" and len(e.args) == 1 \
            and not e.keywords and isinstance(e.args[0], (ast.Constant, ast.UnaryOp)):
        return True
    return isinstance(e, ast.Attribute) and e.attr == "ndim"
