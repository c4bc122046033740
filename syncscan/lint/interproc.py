"""Kinds across the functions of one module, for the tensor inference.

- what a function or method of the module returns: its annotation, its TorchScript `# type:` comment,
  or the kinds of its `return`s, learnt by walking it without rules;
- what every call of it in the module passes for each parameter (a helper called only with tensors
  takes tensors), and what a `# type: (Tensor, int) -> Tensor` comment says of them;
- which names a function's own body uses as tensors: the receiver of a method only tensors have
  (`x.unsqueeze(0)`, `m.long()`), the input of a torch operator (`torch.min(boxes[:, :2], ...)`), a
  name handed to a function of the module that uses its parameter so (`_check(t)`).

Everything is lazy and memoised per file. Walks have a level: the lint walk is at `TOP`, and what
callers pass is read from walks one level lower, whose own parameters come from callers read one level
lower again, down to level 0, where parameters come from annotations and the body alone. No question
then depends on its own answer, except through recursion, where a walk that would recurse into itself
(or nest too deep) answers "unknown", which only makes the rules quieter.
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING, Any, NamedTuple

from syncscan.lint.imports import qualify
from syncscan.lint.tensors import (
    BUILTIN_HOST,
    ARG_DEVICE,
    CPU,
    CPU_DEVICE,
    CPUS,
    FACTORIES,
    HOST,
    NDARRAY,
    OP_NAMESPACES,
    OTHER,
    RECORD,
    TENSOR,
    TENSORISH,
    TENSORS,
    TORCH_HOST_FUNCS,
    annotation_kind,
    is_cpu_device,
    merge_kinds,
    type_tested,
)
from syncscan.lint.tree import FUNCS, param_defaults, walk

if TYPE_CHECKING:
    from syncscan.lint.facts import FileFacts

MAX_DEPTH = 6  # nested walks (a walk asking about a function that asks about another ...)
TOP = 2  # levels of callers the lint walk learns parameters from (callers of callers of ...)
_NOT_TENSOR = (HOST, NDARRAY, OTHER, "module", "loader", "optimizer")
_DEVICES = (CPU_DEVICE, ARG_DEVICE)  # what an annotation (`-> torch.device`) leaves unknown and a walk tells


def _computed_with(fn) -> set:
    """The names `fn` computes with (an operand of arithmetic, `%` left out) and never tests for truth."""
    tested, computed = set(), set()
    for n in ast.walk(fn):
        tests = []
        if isinstance(n, (ast.If, ast.While, ast.IfExp)):
            tests = [n.test]
        elif isinstance(n, ast.BoolOp):
            tests = n.values
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            tests = [n.operand]
        elif isinstance(n, ast.BinOp) and not isinstance(n.op, ast.Mod):
            computed.update(x.id for x in (n.left, n.right) if isinstance(x, ast.Name))
        tested.update(t.id for t in tests if isinstance(t, ast.Name))
    return computed - tested


class Returned(NamedTuple):
    kind: str | None  # what a call gives
    elts: tuple | None  # the kinds of the positions of a returned tuple (`a, b = helper(x)`)
    # a tensor that some `return` gives as a host tensor (`return torch.tensor([p] * n)` on one path, `return p.clone()`
    # of a tensor handed in on another): a copy of it to the device is blocking on those paths
    partly_host: bool = False


# methods no Python number, list, numpy array or nn.Module has: their receiver is a tensor
TENSOR_ONLY_METHODS = frozenset({
    "unsqueeze", "unsqueeze_", "squeeze_", "masked_fill", "masked_fill_", "masked_scatter", "masked_select",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "dim", "ndimension", "numel", "nelement",
    "size", "long", "int", "bool", "byte", "short", "permute", "contiguous", "expand", "expand_as", "view_as",
    "reshape_as", "type_as", "index_select", "index_add", "index_add_", "index_fill", "index_fill_", "index_copy",
    "index_put", "index_put_", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce",
    "softmax", "log_softmax", "sigmoid", "relu", "isnan", "isinf", "isfinite", "logical_not", "logical_and",
    "logical_or", "logical_xor", "topk", "numpy", "element_size", "is_floating_point", "as_subclass", "unbind",
    "narrow", "flip", "clamp", "clamp_", "clamp_min", "clamp_max", "detach", "detach_", "amax", "amin",
    "count_nonzero", "t", "bmm", "mm", "argwhere", "bincount", "cumsum_", "float_power", "exp",
    "sqrt", "rsqrt", "abs", "neg", "sign", "isclose", "ne", "eq", "gt", "lt", "ge", "le", "norm",
    # in-place arithmetic and the fused ops (`d.add_(y, alpha=a)`, `M.addr_(u, v)`), `reciprocal`
    "reciprocal", "reciprocal_", "add_", "sub_", "mul_", "div_", "neg_", "exp_", "sqrt_", "addcmul", "addcmul_",
    "addcdiv", "addcdiv_", "addmm", "addmm_", "addmv", "addmv_", "addr", "addr_", "baddbmm", "baddbmm_", "lerp_",
    # (session 9) what a loss is asked: `f = self._closure(); f.backward()` (nn.Module has no `backward`)
    "backward",
})
# attributes of tensors that no Python number, list, nn.Module or (before numpy 2) array has
TENSOR_ONLY_ATTRS = frozenset({"device", "is_cuda", "grad_fn"})
# the data fields of a tensor (not its methods)
TENSOR_FIELDS = frozenset({"device", "dtype", "shape", "ndim", "T", "mT", "H", "mH", "grad", "data", "requires_grad",
                           "is_cuda", "grad_fn", "real", "imag", "layout", "is_leaf", "is_sparse", "names",
                           "itemsize", "nbytes"})
# methods of tensors and numpy arrays (not of lists, dicts, strings, numbers or modules): in a module
# whose only array library is torch, their receiver is probably a tensor
ARRAY_METHODS = frozenset({"max", "min", "sum", "mean", "argmax", "argmin", "amax", "amin", "std", "var", "prod",
                           "any", "all", "cumsum", "cumprod", "argsort", "clip", "nonzero", "flatten", "ravel",
                           "squeeze", "transpose", "round", "tolist", "item", "dot"})
# operators that accept a Python number first (`torch.div(5, 2)`), or no tensor at all
_SCALAR_FIRST = frozenset({
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "rsub", "pow",
    "float_power", "remainder", "fmod", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "xlogy", "tensor", "as_tensor", "asarray", "from_numpy", "scalar_tensor", "save", "load",
    "compile", "manual_seed", "device", "dtype", "no_grad", "enable_grad", "inference_mode", "set_grad_enabled",
    "autocast", "result_type", "can_cast", "promote_types", "use_deterministic_algorithms", "broadcast_shapes",
    "einsum", "empty_like", "randint_like", "normal", "poisson", "sym_int", "sym_float", "sym_max", "sym_min",
})
# operators taking a sequence of tensors: the elements of a literal list / tuple are tensors
_SEQUENCE_OPS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
                           "row_stack", "block_diag", "cartesian_prod", "broadcast_tensors", "meshgrid",
                           "atleast_1d", "atleast_2d", "atleast_3d", "chain_matmul", "multi_dot"})
_TENSOR_FIRST_NAMESPACES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special",
                                      "torch.nn.init"}) & OP_NAMESPACES


def _root_name(e: ast.AST) -> ast.Name | None:
    """`x` of `x`, `x[...]`, `x[...][...]` (not of `x["key"]`: an entry of a dict)."""
    while isinstance(e, ast.Subscript) and not (isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, str)):
        e = e.value
    return e if isinstance(e, ast.Name) else None


def _decorated(fn: ast.AST, name: str) -> bool:
    return any((d.id if isinstance(d, ast.Name) else getattr(d, "attr", "")) == name for d in fn.decorator_list)


class KindFacts:
    """Per-file memo of the facts above, over the file's providers (`file`), which also make the
    rule-less walks."""

    def __init__(self, file: FileFacts):
        self.file = file
        self.imports = file.imports
        self.index = file.index
        self.usage: set[int] = set()  # store / parameter nodes whose value the body uses as a tensor
        # ... used as an array (`x.max()`, `x.sum(0)`), in a module whose only array library is torch:
        # probably a tensor
        self.probable_usage: set[int] = set()
        # parameters the body itself uses as a tensor (`t.ndimension()`, `torch.sum(t)`, not `t[k].size()`:
        # `t` may be a dict of tensors): what callers hand them is a tensor too (_passed_to_tensor_params)
        self.param_usage: set[int] = set()
        self._direct: set[int] = set()  # the name nodes of such uses
        self._usage_done: set[int] = set()
        self._returned: dict[tuple[int, int], Returned | None] = {}
        self._seeded: dict[tuple, Returned | None] = {}
        self._walks: dict[tuple[int, int], object] = {}  # (id(function), level) -> its walk
        self._callers: dict[tuple[int, int], dict[str, str]] = {}
        self._batches: dict[int, frozenset[str]] = {}  # id(function) -> parameters every call hands a batch
        self._attr_callee: dict[tuple[int, str], tuple | None] = {}
        self._fields: dict[tuple[str, str], str | None] = {}
        self._busy: set[tuple] = set()
        # a module whose text never says `yield` has no generator (keywords are ASCII; non-ASCII text is searched)
        self._may_yield = "yield" in file.source or not file.source.isascii()
        self.depth = 0
        # (id(method), parameter) whose tensor kind some calls through instances pass and others not
        self.mixed: set[tuple[int, str]] = set()

    def close(self) -> None:
        """Drop the memoised walks and answers (see FileFacts.close)."""
        for memo in (self._returned, self._seeded, self._walks, self._callers, self._attr_callee, self._fields,
                     self._batches):
            memo.clear()
        self.usage.clear()
        self.mixed.clear()
        self.probable_usage.clear()
        self.param_usage.clear()
        self._direct.clear()
        self.file = None  # type: ignore[assignment]  # (the cycle through the file)

    # -- what a function returns ---------------------------------------------------------------
    def returned(self, fn: ast.AST, cls: ast.ClassDef | None, level: int = TOP) -> Returned | None:
        key = (id(fn), level)
        if key in self._returned:
            return self._returned[key]
        ann = self.index.return_annotation(fn)
        generator = self._generator(fn)
        if ann is not None:
            # (`-> dict[str, Tensor]` only where no return says otherwise: the abstract method a subclass fills)
            k, elts = annotation_kind(ann, self.imports, mappings=not any(
                isinstance(n, ast.Return) and n.value is not None for n in self.file.src.own_nodes(fn)))
            if k is not None or elts is not None:
                partly = False
                if not generator and (k == TENSOR or TENSOR in (elts or ()) or names_device(ann)):
                    k, elts, partly = self._on_host(fn, cls, level, k, elts)
                elif k == HOST and not generator and _scalar_annotation(ann) and self._may_return_tensors(fn):
                    # `def _rms(self, t) -> float: return t.norm(2) / ...`: a scalar annotation over a body
                    # that returns a tensor is a wish; the body says what the caller gets
                    # (every return a tensor: `return True` on a path says the annotation is meant there)
                    w = self.walk(fn, cls, level)
                    if w is not None and w.returns and all(rk == TENSOR for _, rk, _ in w.returns):
                        k = TENSOR
                r = self._returned[key] = Returned(k, elts, partly and k == TENSOR)
                return r
        if generator:
            self._returned[key] = None
            return None
        w = self.walk(fn, cls, level)
        if w is None:
            return None  # busy or too deep: not memoised, a later question may get an answer
        r = _combine_returns(w.returns)
        if (r is None or r.kind is None and r.elts is None) and self.index.documented_tensor(fn):
            r = Returned(TENSOR, None)  # what the body does not show, its docstring's Returns section declares
        self._returned[key] = r
        return r

    def _may_return_tensors(self, fn: ast.AST) -> bool:
        """Every `return` of `fn` could give a tensor on its face: none returns nothing, a constant, a type or
        identity test, `not`, an f-string or a builtin's answer (`len`, `isinstance`, `int`, ...). Most functions
        annotated `-> bool` / `-> int` fail this, and are not walked."""
        rets = [n for n in self.file.src.own_nodes(fn) if isinstance(n, ast.Return)]
        return bool(rets) and all(_tensor_faced(r.value) for r in rets)

    def _on_host(self, fn, cls, level, k, elts):
        """`-> Tensor` says nothing of the device: where the returns give host tensors (`torch.randperm(4)`),
        say so."""
        w = self.walk(fn, cls, level)
        got = _combine_returns(w.returns) if w is not None else None
        return (*_refine(k, elts, got), got is not None and got.partly_host)

    def returned_seeded(self, fn: ast.AST, cls: ast.ClassDef | None, seeds: dict) -> Returned | None:
        """What `fn` returns when these parameters hold host tensors (`idx = self._permutation_idx(indices)`
        with the matcher's CPU indices), from a shallow walk with them bound so; memoised per seeding."""
        key = (id(fn), tuple(sorted(seeds.items())))
        memo = self._seeded
        if key in memo:
            return memo[key]
        ann = annotation_kind(fn.returns, self.imports) if fn.returns is not None else None
        if ann is not None and not (ann[0] == TENSOR or TENSOR in (ann[1] or ()) or names_device(fn.returns)) \
                or self._generator(fn):
            return None  # an annotation says it all (but `-> Tensor` not where); a generator gives no tuple
        if key in self._busy or self.depth >= MAX_DEPTH:
            return None
        self._busy.add(key)
        self.depth += 1
        try:
            w = self.file.new_walk(0).run_function(fn, cls, seeds)
        finally:
            self.depth -= 1
            self._busy.discard(key)
        r = _combine_returns(w.returns)
        if ann is not None:  # `-> Tensor`: on the host where the returns say so
            k, elts = _refine(ann[0], ann[1], r)
            r = Returned(k, elts, r is not None and r.partly_host and k == TENSOR)
        memo[key] = r
        return r

    def _stored(self, fn: ast.AST) -> frozenset[str]:
        """The names `fn` itself binds."""
        return frozenset(n.id for n in self.file.src.own_nodes(fn) if isinstance(n, ast.Name)
                         and not isinstance(n.ctx, ast.Load))

    def _generator(self, fn: ast.AST) -> bool:
        return self._may_yield and any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in self.file.src.own_nodes(fn))

    def walk(self, fn: ast.AST, cls: ast.ClassDef | None, level: int = TOP):
        """A rule-less walk of `fn` (its returns, and the kinds its calls pass), memoised."""
        key = (id(fn), level)
        w = self._walks.get(key)
        if w is not None:
            return w
        if key in self._busy or self.depth >= MAX_DEPTH:
            return None
        self._busy.add(key)
        self.depth += 1
        try:
            w = self.file.new_walk(level).run_function(fn, cls)
        finally:
            self.depth -= 1
            self._busy.discard(key)
        self._walks[key] = w
        return w

    # -- what callers pass ---------------------------------------------------------------------
    def caller_kinds(self, fn: ast.AST, cls: ast.ClassDef | None, level: int = TOP) -> dict[str, str]:
        """parameter -> tensor / host tensor / host value, when every call of `fn` in this module passes
        one (at least one call, none made from module level, the function never handed around as a
        value), read from walks of the callers one level below `level`."""
        key = (id(fn), level)
        if level <= 0:
            return {}
        if key in self._callers:
            return self._callers[key]
        calls, through, params = self._calls_of(fn, cls)
        out: dict[str, str] = {}
        final = True
        if calls or through:
            out, final = self._agree(fn, calls + through, params, level - 1, bool(through))
        if final:  # every caller could be walked: a final answer
            self._callers[key] = out
        return out

    def _calls_of(self, fn: ast.AST, cls: ast.ClassDef | None) -> tuple[list, list, list]:
        """(the module's calls of `fn` by name or through `self`, those through instances of its class, its
        positional parameters as the calls fill them); no calls when the function is also handed around."""
        is_method = self.index.is_method(fn, cls)
        ckey = ("s", fn.name) if is_method else ("n", fn.name)
        if is_method and fn.name == "__init__":
            ckey = ("n", cls.name)  # a class's constructions call its `__init__`
        params = fn.args.posonlyargs + fn.args.args
        if is_method and not _decorated(fn, "staticmethod") and params:
            params = params[1:]
        if self.index.escaped(ckey):
            return [], [], params
        calls = self.index.calls().get(ckey, [])
        through = []  # `top1.update(acc1[0])` on an instance of the class (or of a subclass that inherits it)
        if is_method and fn.name != "__init__" and not self.index.escaped(("i", fn.name)):
            inst = self.index.instance_calls(fn.name)
            through = [c for c in self.index.calls().get(("i", fn.name), ()) if inst.get(id(c[0]), (None,))[0] is fn]
        if is_method and fn.name == "__call__" and cls is not None:
            through += self._instances_called(cls)
        return calls, through, params

    def _instances_called(self, cls: ast.ClassDef) -> list:
        """`early_stopping(val_loss, model)`: calls of names that hold instances of `cls` (an `EarlyStopping`),
        which run its `__call__`."""
        index = self.index
        out = []
        built = index.constructed_names()
        own = index.method(cls, "__call__")
        for (how, name), sites in index.calls().items():
            if how == "s" and "self." + name in built:
                # `self.tree(t0, t1)` with `self.tree = BatchedBrownianTree(...)`: the attribute's instance
                out += [c for c in sites if c[2] is not None and index.method(c[2], name) is None
                        and self.attr_callee(c[2], name) == own]
                continue
            if how != "n" or name not in built or name in index.classes or name in index.funcs:
                continue
            for c in sites:
                if index.instance_class(c[0].func, c[1]) is cls:
                    out.append(c)
        return out

    def batch_params(self, fn: ast.AST, cls: ast.ClassDef | None) -> frozenset[str]:
        """The parameters of `fn` that every call of it in this module hands a DataLoader's batch (or a part of
        one: `self._train_batch(X, y)` in `for X, y in train_loader:`), read from walks of the callers."""
        if id(fn) in self._batches:
            return self._batches[id(fn)]
        calls, through, params = self._calls_of(fn, cls)
        names = [p.arg for p in params]
        kwonly = {p.arg for p in fn.args.kwonlyargs}
        if not calls and not through and cls is not None and self.file.modules is not None:
            out = self._base_batch_params(fn, cls, names)
            self._batches[id(fn)] = out
            return out
        out: frozenset[str] | None = None
        for call, efn, ecls in calls + through:
            if efn is None:  # called from module level
                out = frozenset()
                break
            w = self.walk(efn, ecls, TOP - 1)
            if w is None:
                return frozenset()  # busy or too deep: not memoised
            if w.calls.get(id(call), (None,))[0] is not fn:
                out = frozenset()
                break
            pos, kws = w.batch_args.get(id(call), ((), frozenset()))
            got = frozenset(names[i] for i in pos if i < len(names)) | (kws & (set(names) | kwonly))
            out = got if out is None else out & got
            if not out:
                break
        self._batches[id(fn)] = out = out or frozenset()
        return out

    def _base_batch_params(self, fn: ast.AST, cls: ast.ClassDef, names: list[str]) -> frozenset[str]:
        """A method this module never calls that overrides one of a base class of another module of the folder
        (`def training_forward(self, batch_data)` of a detector whose base's `fit` runs `for batch_data in
        train_loader: self.training_forward(batch_data)`): the parameters in the places where the base's calls
        hand a batch."""
        got = self.file.modules.base_method_def(self.file, cls, fn.name)  # type: ignore[union-attr]
        if got is None:
            return frozenset()
        target, base_fn = got
        base_names = [p.arg for p in base_fn.args.posonlyargs + base_fn.args.args][1:]
        batch = target.kinds.batch_params(base_fn, target.index.class_of(base_fn))
        return frozenset(names[i] for i, n in enumerate(base_names) if n in batch and i < len(names))

    def _agree(self, fn, calls, params, level: int, instances: bool = False) -> tuple[dict[str, str], bool]:
        """What the calls agree each parameter holds. With `instances` (calls through instances of the
        class, which each keep what they are given), a tensor that some calls pass and others do not
        (`top1.update(acc1[0])`, `batch_time.update(time.time() - end)`): a tensor, probably (`mixed`)."""
        seen: dict[str, set] = {p.arg: set() for p in params + fn.args.kwonlyargs}
        a = fn.args
        defaults = param_defaults(a)
        for call, efn, ecls in calls:
            if efn is None:
                return {}, True
            w = self.walk(efn, ecls, level)
            if w is None:
                return {}, False
            rec = w.calls.get(id(call))
            if rec is None or rec[0] is not fn:
                return {}, True
            _, pos_kinds, kw_kinds, open_ended = rec
            own = _passed_through(call, params, self._stored(fn)) if efn is fn else frozenset()
            for i, p in enumerate(params):
                if p.arg in own:
                    continue  # `self._tree(x, depth - 1)` in `_tree`: says nothing the other calls do not
                if i < len(pos_kinds):
                    seen[p.arg].add(pos_kinds[i])
                elif p.arg in kw_kinds:
                    seen[p.arg].add(kw_kinds[p.arg])
                elif open_ended:
                    seen[p.arg].add(None)
                elif p.arg in defaults and not (isinstance(defaults[p.arg], ast.Constant)
                                                and defaults[p.arg].value is None):
                    seen[p.arg].add(CPU_DEVICE if is_cpu_device(defaults[p.arg]) is True else
                                    HOST if isinstance(defaults[p.arg], ast.Constant) else None)
            for p in fn.args.kwonlyargs:
                if p.arg in kw_kinds:
                    seen[p.arg].add(kw_kinds[p.arg])
                elif open_ended:
                    seen[p.arg].add(None)
        for name, ks in seen.items():  # instances of one record type: what either holds, field by field
            if len(ks) > 1 and all(str(k).startswith(RECORD) for k in ks):
                seen[name] = {functools.reduce(merge_kinds, ks)}
        for ks in seen.values():
            settle_device(ks)
        for ks in seen.values():  # host index tensors from some callers, unknown from the others: the
            if len(ks) == 2 and None in ks and ks & {CPU, CPUS}:  # calls with them copy them to the device
                ks.discard(None)
        computed = None
        for name, ks in seen.items():
            if instances and len(ks) > 1 and TENSOR in ks and ks <= {TENSOR, HOST, CPU, None}:
                seen[name] = {TENSOR}
                self.mixed.add((id(fn), name))
            elif ks == {TENSOR, None} and name in (computed := _computed_with(fn) if computed is None else computed):
                # a tensor from some calls, a value they do not show from the others, in a function that computes
                # with it (`sigma_to ** 2`): a tensor, probably (k-diffusion's `get_ancestral_step(sigmas[i], ...)`
                # beside `get_ancestral_step(sigma_fn(t), ...)`); a helper that only hands it on (`default(val, d)`)
                # or tests it (`if not freeze:`) is written for any value, and says nothing
                seen[name] = {TENSOR}
                self.mixed.add((id(fn), name))
        return {name: ks.pop() for name, ks in seen.items()
                if len(ks) == 1 and (next(iter(ks)) in (TENSOR, CPU, CPUS, HOST, CPU_DEVICE)
                                     or str(next(iter(ks))).startswith(RECORD))}, True

    # -- what a record's field holds -------------------------------------------------------------
    def field_kind(self, record: str, field: str) -> str | None:
        """What `field` of a record type of this module holds: its annotation, else what the module's
        constructions of the record put there (`State(y, f, t0=t.to(device))`, each read from a walk of
        the function that builds it), joined as branches are (a tensor from one stays a tensor)."""
        key = (record, field)
        if key in self._fields:
            return self._fields[key]
        fields = self.file.records.get(record, {})
        if field not in fields:
            return None
        if fields[field] is not None:
            k = self._fields[key] = annotation_kind(fields[field], self.imports)[0]
            return k
        busy = ("field", record, field)
        if busy in self._busy or self.depth >= MAX_DEPTH:
            return None
        at = list(fields).index(field)
        kinds: list[str | None] = []
        self._busy.add(busy)
        try:
            for call, efn, ecls in self.index.calls().get(("n", record), []):
                w = self.walk(efn, ecls, TOP) if efn is not None else None
                if efn is not None and w is None:
                    return None  # busy or too deep: not memoised
                got = w.built.get(id(call)) if w is not None else None
                if got is None:
                    kinds.append(None)
                    continue
                pos, kws, open_ended = got
                kinds.append(pos[at] if at < len(pos) else kws.get(field))
        finally:
            self._busy.discard(busy)
        k = functools.reduce(merge_kinds, kinds) if kinds else None
        self._fields[key] = k
        return k

    # -- `self.attr(...)`: a module of this file stored on the instance -------------------------
    def attr_callee(self, cls: ast.ClassDef, attr: str) -> tuple[Any, ast.ClassDef] | None:
        """The `forward` / `__call__` that `self.<attr>(...)` runs, when every instance of a class of this
        module stored there is of one class: `self.matcher = HungarianMatcher(...)`, or
        `self.matcher = matcher` with the class built as `Loss(matcher=HungarianMatcher(...))` (directly,
        or through a name assigned so in the function that builds it). Unknown values are left out."""
        key = (id(cls), attr)
        memo = self._attr_callee
        if key in memo:
            return memo[key]
        memo[key] = None  # a cycle answers unknown
        found = set()
        for value, init in self.index.attr_values(cls, attr):
            for v in self._constructor_args(cls, init, value):
                c = self.index.class_built(v)
                if c is not None:
                    found.add(c)
        out = None
        if len(found) == 1:
            c = self.index.classes[found.pop()]
            out = self.index.method(c, "forward") or self.index.method(c, "__call__")
        memo[key] = out
        return out

    def _constructor_args(self, cls: ast.ClassDef, init: ast.AST, value: ast.AST):
        """`value` itself, or, when it is a parameter of `__init__`, what each `Cls(...)` call of this
        module passes for it (a name: what it was last assigned in that function)."""
        if not (isinstance(value, ast.Name) and init.name == "__init__"):
            yield value
            return
        params = [p.arg for p in init.args.posonlyargs + init.args.args][1:]
        if value.id not in params + [p.arg for p in init.args.kwonlyargs]:
            return
        for call, efn, _ in self.index.calls().get(("n", cls.name), []):
            arg = next((k.value for k in call.keywords if k.arg == value.id), None)
            if arg is None and value.id in params and params.index(value.id) < len(call.args):
                arg = call.args[params.index(value.id)]
            if isinstance(arg, ast.Name) and efn is not None:
                stores = [n for n in self.file.src.own_nodes(efn) if isinstance(n, ast.Assign) and len(n.targets) == 1
                          and isinstance(n.targets[0], ast.Name) and n.targets[0].id == arg.id
                          and (n.lineno, n.col_offset) < (call.lineno, call.col_offset)]
                arg = max(stores, key=lambda n: (n.lineno, n.col_offset)).value if stores else None
            if arg is not None:
                yield arg
        # the default, a construction (`schedule: Schedule = LinearSchedule()`): what a call that leaves it out gets
        default = param_defaults(init.args).get(value.id)
        if isinstance(default, ast.Call):
            yield default

    def sibling_host_param(self, fn: ast.AST, cls: ast.ClassDef | None, name: str) -> str | None:
        """Host data a class passes around under one parameter name: for a method with no callers to
        learn from (called through a dict of methods, `loss_map[name](outputs, targets, indices)`), the
        kind another method of the class with a parameter `name` gets from its callers, when that is CPU
        tensors (a matcher's CPU index pairs; the tensor kinds of loss methods' parameters are guesses)."""
        if cls is None or not self.index.escaped(("s", fn.name)):
            return None
        kinds = set()
        for s in cls.body:
            if isinstance(s, FUNCS) and s is not fn and any(p.arg == name for p in s.args.args + s.args.kwonlyargs):
                if any(k[0] == id(s) for k in self._busy):  # (busy keys are (id, level))
                    continue
                k = self.caller_kinds(s, cls).get(name)
                if k is not None:
                    kinds.add(k)
        kinds &= {CPU, CPUS}
        return kinds.pop() if len(kinds) == 1 else None

    # -- how the body uses its names -----------------------------------------------------------
    def note_usage(self, fn: ast.AST) -> None:
        """Add to `usage` the bindings (assignments, loop targets, parameters) of `fn` whose value the
        body then uses as only a tensor can be used."""
        if id(fn) in self._usage_done:
            return
        self._usage_done.add(id(fn))
        stores: dict[str, list] = {}
        uses: list[ast.Name] = []
        array_uses: list[ast.Name] = []
        asserted: list[ast.Name] = []  # `assert isinstance(x, torch.Tensor)`: a type test that holds after it
        sliced: dict[int, ast.Name] = {}  # `y = x[m]`: id(store of y) -> x
        bound_at: dict[int, tuple[int, int]] = {}  # a target is bound once its value is computed
        a = fn.args
        for p in a.posonlyargs + a.args + a.kwonlyargs:
            stores.setdefault(p.arg, []).append(p)
        typed: dict[str, set[int]] = {}  # name -> ids of the nodes under a test of its type
        attrs: list[ast.Attribute] = []  # `x.attr` of a name
        called: set[int] = set()
        # (the exact node classes, as ast.parse builds them, tested in turn: this runs for every node of every
        # function walked; a Name or a Constant, most nodes, is done with at the first tests)
        Name, Call, Attribute, Load = ast.Name, ast.Call, ast.Attribute, ast.Load
        for n in self.file.src.own_nodes(fn):
            t = n.__class__
            if t is Name:
                if n.ctx.__class__ is not Load:
                    stores.setdefault(n.id, []).append(n)
            elif t is ast.Constant:
                continue
            elif t is Call:
                called.add(id(n.func))
                uses += self._tensor_uses(n)
                uses += self._passed_to_tensor_params(n, fn)
                if isinstance(n.func, ast.Attribute) and n.func.attr in ARRAY_METHODS and self.file.torch_only_in(fn) \
                        and (r := _root_name(n.func.value)) is not None:
                    array_uses.append(r)
            elif t is Attribute:
                if n.value.__class__ is Name and n.value.id != "self":
                    attrs.append(n)
            elif (t is ast.If or t is ast.IfExp) and (x := type_tested(n.test)) is not None:
                ids = typed.setdefault(x, set())
                for part in ([*n.body, *n.orelse] if t is ast.If else [n.body, n.orelse]):
                    ids.update(id(c) for c in walk(part))
            elif t is ast.Assert:
                asserted += self._asserted_tensors(n.test)
            elif t is ast.BoolOp and (x := type_tested(n)) is not None:
                typed.setdefault(x, set()).update(id(c) for c in walk(n))  # `isinstance(v, Tensor) and v.dim()`
            elif t in _BINDING_STMTS and (value := getattr(n, "iter", None) or n.value) is not None:
                for tg in (n.targets if t is ast.Assign else [n.target]):
                    for x in walk(tg):
                        bound_at[id(x)] = (value.end_lineno, value.end_col_offset)
                if t is ast.Assign and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                        and (r := _source_name(n.value)) is not None:
                    sliced[id(n.targets[0])] = r

        uses += self._device_readers(fn, attrs, called)

        def reaching(u: ast.Name):
            before = [(p, s) for s in stores.get(u.id, ())
                      if (p := bound_at.get(id(s), (s.lineno, s.col_offset))) <= (u.lineno, u.col_offset)
                      and s is not u]
            return max(before, key=lambda x: x[0])[1] if before else None

        for found, into in ((uses, self.usage), (array_uses, self.probable_usage)):
            found = [u for u in found if id(u) not in typed.get(u.id, ())] + (asserted if into is self.usage else [])
            if into is self.usage:
                self._direct.update(id(u) for u in asserted)
                self.param_usage.update(id(s) for u in found if id(u) in self._direct
                                        and isinstance(s := reaching(u), ast.arg))
            todo = [s for u in found if (s := reaching(u)) is not None]
            while todo:  # `y = x[keep]` holds a tensor: so did x
                s = todo.pop()
                if id(s) in into:
                    continue
                into.add(id(s))
                if id(s) in sliced and (src := reaching(sliced[id(s)])) is not None:
                    todo.append(src)

    def _device_readers(self, fn: ast.AST, attrs: list[ast.Attribute], called: set[int]) -> list[ast.Name]:
        """`t.device` with another of a tensor's fields (`t.dtype`, `t.shape`), where torch is the function's
        only array library and every field it reads of `t` is a tensor's: an object with a `device` field
        (`ctx`, a config, a trainer) shows others (`ctx.inv_quad`), is written to (`ctx.saved = ...`), or
        is read only for its device (`x.to(trainer.device)`, which a tensor's device also allows)."""
        if not any(a.attr in TENSOR_ONLY_ATTRS for a in attrs) or not self.file.torch_only_in(fn):
            return []
        other = {a.value.id for a in attrs if id(a) not in called
                 and (not isinstance(a.ctx, ast.Load) or a.attr not in TENSOR_FIELDS)}
        fields: dict[str, set[str]] = {}
        for a in attrs:
            if id(a) not in called:
                fields.setdefault(a.value.id, set()).add(a.attr)
        out = [a.value for a in attrs if a.attr in TENSOR_ONLY_ATTRS and isinstance(a.ctx, ast.Load)
               and id(a) not in called and a.value.id not in other and a.value.id not in self.imports and (a.attr != "device" or len(fields[a.value.id]) > 1)]
        self._direct.update(id(u) for u in out)
        return out

    def _asserted_tensors(self, test: ast.AST) -> list[ast.Name]:
        """`assert isinstance(x, torch.Tensor)`, `assert torch.is_tensor(x) and ...`: x is a tensor."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return [u for v in test.values for u in self._asserted_tensors(v)]
        if not (isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name)):
            return []
        q = qualify(test.func, self.imports)
        if q == "torch.is_tensor" and len(test.args) == 1:
            return [test.args[0]]
        if isinstance(test.func, ast.Name) and test.func.id == "isinstance" and len(test.args) == 2:
            types = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
            if types and all(qualify(t, self.imports) in ("torch.Tensor", "torch.nn.Parameter") for t in types):
                return [test.args[0]]
        return []

    def _passed_to_tensor_params(self, call: ast.Call, fn: ast.AST) -> list[ast.Name]:
        """The names handed to a function or method of this module whose body uses that parameter as only
        a tensor can be used (`_check(t)` where `_check` calls `t.ndimension()`): the same object, so a
        tensor here too. Plain names only: `f(t[i])` says nothing of `t`."""
        f = call.func
        callee = None
        if isinstance(f, ast.Name) and f.id not in self.imports:
            callee = self.index.funcs.get(f.id)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
                and (cls := self.index.class_of(fn)) is not None:
            found = self.index.method(cls, f.attr)
            callee = found[0] if found else None
        if callee is None or callee is fn or _decorated(callee, "staticmethod") and isinstance(f, ast.Attribute):
            return []
        self.note_usage(callee)
        params = callee.args.posonlyargs + callee.args.args
        if isinstance(f, ast.Attribute) and params:
            params = params[1:]
        by_name = {p.arg: p for p in params + callee.args.kwonlyargs}
        out = [a for a, p in zip(call.args, params) if isinstance(a, ast.Name) and id(p) in self.param_usage]
        out += [k.value for k in call.keywords if isinstance(k.value, ast.Name) and k.arg in by_name
                and id(by_name[k.arg]) in self.param_usage]
        self._direct.update(id(a) for a in out)
        if any(isinstance(a, ast.Starred) for a in call.args[:len(params)]):
            return []
        return out

    def _tensor_uses(self, call: ast.Call) -> list[ast.Name]:
        f = call.func
        out = []
        if isinstance(f, ast.Attribute):
            if f.attr in TENSOR_ONLY_METHODS or any(k.arg in ("dim", "keepdim") for k in call.keywords):
                r = _root_name(f.value)
                if r is not None:
                    out.append(r)
                    if r is f.value:
                        self._direct.add(id(r))
            q = qualify(f, self.imports)
        else:
            q = qualify(f, self.imports)
        if q and call.args and "." in q:
            head, last = q.rsplit(".", 1)
            if not (head in _TENSOR_FIRST_NAMESPACES or head.startswith("torchvision.ops")) \
                    or not last[:1].islower() or q in FACTORIES \
                    or last in ("tensor", "as_tensor", "asarray", "from_numpy", "save"):
                return out
            # `torch.max(a[:, None, 2:], b[:, 2:])`: only arrays take several indices, and torch takes no numpy
            out += [r for a in call.args if isinstance(a, ast.Subscript) and isinstance(a.slice, ast.Tuple)
                    and (r := _root_name(a)) is not None]
            if not last.startswith(("is_", "_", "get_", "set_")) and q not in TORCH_HOST_FUNCS \
                    and last not in _SCALAR_FIRST:
                first = call.args[0]
                if last in _SEQUENCE_OPS:
                    if isinstance(first, (ast.List, ast.Tuple)):
                        out += [r for e in first.elts if (r := _root_name(e)) is not None]
                elif not isinstance(first, ast.Starred):
                    r = _root_name(first)
                    if r is not None:
                        out.append(r)
                        if r is first:
                            self._direct.add(id(r))
        return out


# methods whose result is of its receiver's type, for a tensor as for an array (numpy's `repeat` gives an array,
# which no torch function takes): what a torch function is handed from one of them was made from a tensor
_SAME_TYPE_METHODS = frozenset({"repeat", "reshape", "view", "expand", "permute", "transpose", "flatten", "squeeze",
                                "unsqueeze", "contiguous", "clone", "detach", "float", "double", "half", "long"})


def _source_name(v: ast.AST) -> ast.Name | None:
    """The name a value of the same type is made from: `x` of `x[m]`, of `x.repeat(n, 1)` (`nodes =
    node.repeat(n, 1)` a tensor: so was `node`)."""
    if isinstance(v, ast.Subscript):
        return _root_name(v)
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in _SAME_TYPE_METHODS:
        return _root_name(v.func.value)
    return None


def _passed_through(call: ast.Call, params: list, stored: frozenset[str]) -> frozenset[str]:
    """The parameters a recursive call hands on unchanged, in their own place (`x` in `self._tree(x, d - 1)`
    inside `_tree(self, x, d)`, or `x=x`), never rebound in the function."""
    names = [p.arg for p in params]
    pos = {names[i] for i, a in enumerate(call.args[:len(names)]) if isinstance(a, ast.Name) and a.id == names[i]}
    kws = {k.arg for k in call.keywords if isinstance(k.value, ast.Name) and k.value.id == k.arg}
    return frozenset((pos | kws) - stored)


_BINDING_STMTS = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For})


def settle_device(kinds: set) -> None:
    """What callers pass a parameter: the CPU device from some, other Python values from others, is a value."""
    if CPU_DEVICE in kinds and len(kinds) > 1:
        kinds.discard(CPU_DEVICE)
        kinds.add(HOST)


def names_device(ann: ast.AST | None) -> bool:
    """The annotation names a device type (`-> torch.device`, `Tuple[torch.device, torch.dtype]`)."""
    return ann is not None and any(isinstance(n, ast.Attribute) and n.attr == "device" or
                                   isinstance(n, ast.Name) and n.id == "device" for n in walk(ann))


def _refine(k, elts, got: Returned | None):
    """An annotation's (kind, tuple kinds), with host tensors (and the CPU device) where the walked returns
    give them."""
    if got is None:
        return k, elts
    if k == TENSOR and got.kind == CPU or k is None and got.kind in _DEVICES:
        k = got.kind
    if elts and got.elts and len(elts) == len(got.elts):
        elts = tuple(CPU if e == TENSOR and g == CPU else g if e is None and g in _DEVICES else e
                     for e, g in zip(elts, got.elts))
    return k, elts


def join_returned(got: list) -> Returned | None:
    """What a call gives that runs one of several functions (`fn = f if c else g; fn(x)`): what each gives,
    joined as their returns are; unknown when one is."""
    if not got or any(r is None for r in got):
        return None
    return _combine_returns([(None, r.kind, r.elts) for r in got])


def _combine_returns(rets: list) -> Returned | None:
    """What a call gives from the kinds of its `return`s: a tensor when some return gives one and none
    gives a known non-tensor (`return None` and unknowns aside)."""
    kinds = [k for _, k, _ in rets]
    if not kinds:
        return None
    if TENSOR in kinds and HOST in kinds and all(k != HOST or _number_literal(v) for v, k, _ in rets):
        # a predicate that answers True / False on some paths and a tensor on the others (`return self.t >= t1`), a
        # score that is 0 on an early exit (`if self.frozen: return 0`) and a tensor otherwise: a condition on its
        # answer reads the tensor on the host on those paths
        kinds = [TENSOR if k == HOST else k for k in kinds]
    elts = None
    tuples = [e for _, _, e in rets]
    if all(e is not None for e in tuples) and len({len(e) for e in tuples}) == 1:
        elts = tuple(_merge(col) for col in zip(*tuples))
    k = _merge(kinds)
    return Returned(k, elts, k == TENSOR and CPU in kinds)


def _number_literal(v: ast.AST | None) -> bool:
    """`True`, `0`, `0.0`, `-1`: a Python number written out."""
    if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub):
        v = v.operand
    return isinstance(v, ast.Constant) and type(v.value) in (bool, int, float)


def _merge(kinds) -> str | None:
    known = [k for k in kinds if k is not None]
    if not known:
        return None
    if CPU_DEVICE in known or ARG_DEVICE in known:
        # the CPU device on every path, or on some and a device handed in on the others
        if not all(k in (CPU_DEVICE, ARG_DEVICE) for k in kinds):
            return None
        return ARG_DEVICE if ARG_DEVICE in kinds else CPU_DEVICE
    if any(k in _NOT_TENSOR for k in known):  # (host values when every known one is: `x.shape[0]` or unknown)
        return known[0] if len(set(known)) == 1 and (known[0] == HOST or len(known) == len(kinds)) else None
    if all(k == TENSORS for k in known):
        return TENSORS
    if all(k.startswith(RECORD) for k in known):  # one record type built on every path: field by field
        return functools.reduce(merge_kinds, known)
    if TENSOR in known and all(k in TENSORISH for k in known):
        return TENSOR
    if all(k == CPU for k in known) and len(known) == len(kinds):
        return CPU
    if all(k == CPUS for k in known) and len(known) == len(kinds):  # a matcher's list of CPU index pairs
        return CPUS
    return None


def _tensor_faced(v: ast.AST | None) -> bool:
    """A returned expression that may be a tensor, read from its syntax alone."""
    if v is None or isinstance(v, (ast.Constant, ast.JoinedStr, ast.Lambda)):
        return False
    if isinstance(v, ast.Compare):
        return not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in v.ops)
    if isinstance(v, ast.UnaryOp):
        return not isinstance(v.op, ast.Not) and _tensor_faced(v.operand)
    if isinstance(v, ast.BoolOp):
        return all(_tensor_faced(x) for x in v.values)
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name):
        return v.func.id not in BUILTIN_HOST
    return True


def _scalar_annotation(ann: ast.AST) -> bool:
    """`-> float`, `-> int`, `-> bool`: a Python number, which code returning a tensor's reduction often says."""
    return isinstance(ann, ast.Name) and ann.id in ("float", "int", "bool")
