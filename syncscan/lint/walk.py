"""The source-order walk of a module: it binds names to kinds as assignments, loops, `with` and
parameters bind them, and opens a scope per function and class. `Walk` does only that; the lint
walk (engine.LintContext) adds the rules, the hot path and the call graph, and `KindWalk` walks one
function without rules for the kind facts (what it returns, what its calls pass).

Every walk of a file shares the file's providers (`FileFacts`): tree, imports, module index, kind
facts, class attributes. A walk holds only its own position: the environment, the stacks of
classes, functions and statements.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from syncscan.lint import hotpath
from syncscan.lint.often import GENERIC_METHODS
from syncscan.lint.facts import FileFacts
from syncscan.lint.imports import qualify
from syncscan.lint.instances import attribute_feeds, handed_to, positional_params
from syncscan.lint.masks import returned_masks
from syncscan.lint.interproc import TOP, Returned, _decorated, join_returned, names_device
from syncscan.lint.param_names import tensor_param_names
from syncscan.lint.tensors import (
    ARG_DEVICE,
    CPU,
    CPU_DEVICE,
    CPUS,
    HOST,
    LOADER,
    MODULE,
    NDARRAY,
    OPTIMIZER,
    OTHER,
    RECORD,
    TENSOR,
    TENSORISH,
    TENSORS,
    Env,
    Inference,
    annotation_kind,
    is_cpu_device,
    is_tensor_annotation,
    kwarg,
    merge_kinds,
    sets_default_device,
    tensor_tested,
)
from syncscan.lint.tree import FUNCS, LEAVES, FunctionNode, child_table, param_defaults, statements, walk

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# what `isinstance(x, ...)` tests to say x is a Python number or string
_HOST_TYPES = frozenset({"int", "float", "bool", "complex", "str", "numbers.Number", "numbers.Real",
                         "numbers.Integral", "numbers.Complex", "numbers.Rational"})
# ... a known object that is not a tensor (a container of them is not one either)
_CONTAINERS = frozenset({"list", "tuple", "dict", "set", "frozenset"})
_OTHER_TYPES = _CONTAINERS | {"bytes", "torch.dtype", "torch.device", "torch.Size", "torch.Generator"}
# (`torch._C._get_tracing_state()`: a tracer while torch.jit.trace runs, else None)
_NOT_EAGER = re.compile(r"(?:^|_)is_(?:scripting|tracing|in_onnx_export|onnx_export|compiling|torchdynamo_compiling|"
                        r"dynamo_compiling|fx_tracing|exporting|jit_tracing)$|^_get_tracing_state$")


_EXPORTING = re.compile(r"(?:^|_)is_(?:tracing|in_onnx_export|onnx_export|fx_tracing|exporting|jit_tracing)$"
                        r"|^_get_tracing_state$")


def exporting(test: ast.AST) -> bool:
    """The test holds only while tracing or exporting a model (`torch.jit.is_tracing()`, ONNX export),
    alone or in an `and`: its body runs once, at export, never in an eager step."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(exporting(v) for v in test.values)
    if isinstance(test, ast.Call):
        f = test.func
        return bool(_EXPORTING.search(f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name)
                                      else ""))
    return False


def _not_eager(test: ast.AST) -> bool | None:
    """True when `test` holds only under TorchScript, tracing, ONNX export or torch.compile
    (`torch.jit.is_scripting()`, `torchvision._is_tracing()`), False when it holds only in eager mode
    (`not torch.jit.is_scripting()`), None otherwise: eager code runs the other branch."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _not_eager(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_not_eager(v) for v in test.values]
        if isinstance(test.op, ast.Or) and all(p is True for p in parts):
            return True
        if isinstance(test.op, ast.And) and any(p is True for p in parts):
            return True
        return None
    if isinstance(test, ast.Call):
        f = test.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return True if _NOT_EAGER.search(name) else None
    return None


def ast_classes(names) -> dict[str, type]:
    """ast node classes by name, for the names given (others can never match a node)."""
    out = {}
    for n in names:
        c = vars(ast).get(n)
        if isinstance(c, type) and issubclass(c, ast.AST):
            out[n] = c
    return out


_SPECIAL_BY_CLASS: dict[type, dict] = {}


def inert_leaves(special: dict, by_type: dict, lean: bool) -> frozenset[type]:
    """The leaf classes a walk need not visit at all: no visit of its own, no rule's, and no child
    (a Name has its context, a leaf singleton, when the walk is not lean)."""
    return frozenset(c for c in LEAVES if c not in special and c not in by_type and (lean or c is not ast.Name))


def special_visits(cls) -> dict[type, object]:
    """node class -> the walk's own `v_<Node>` method (nodes that bind names or open scopes)."""
    table = _SPECIAL_BY_CLASS.get(cls)
    if table is None:
        names = [n[2:] for n in dir(cls) if n.startswith("v_")]
        classes = ast_classes(names)
        table = _SPECIAL_BY_CLASS[cls] = {classes[n]: getattr(cls, "v_" + n) for n in names if n in classes}
    return table


class Walk:
    """A rule-less walk over one file, binding kinds in source order."""

    level = TOP  # how many levels of callers parameters are learnt from (0: annotations and the body only)
    # parameters take a probable kind from the same name elsewhere in the module: only in the lint walk,
    # where a probable kind stays marked as such (what rule-less walks learn is taken as known)
    name_kinds = False
    # imported functions whose calls the walk records like the module's own (`crossfile.caller_kinds`)
    record_names: frozenset[str] = frozenset()
    record_attrs: frozenset[tuple[str, str]] = frozenset()  # and `module.function` calls of them
    # (the asking module's facts, local name -> its function's name there) for the walks of `caller_kinds`:
    # a caller's calls back into the module whose parameters it explains are answered from that module's facts
    back: tuple[FileFacts, dict[str, str]] | None = None

    def __init__(self, file: FileFacts, level: int = TOP):
        self.file = file
        self.imports = file.imports
        self.level = level
        self.infer = Inference(file.imports)
        self.infer.module_classes = file.module_classes
        self.infer.namedtuples = file.namedtuples
        self.infer.records = file.records
        self.infer.field_kind = file.kinds.field_kind
        if file.crossfile is not None:
            self.infer.tree_names = file.tree_names
            self.infer.name_resolver = self.resolve_name
        self.infer.imported_names = file.imported_names
        self.infer.resolver = self.resolve_call
        self.infer.tree_module = file.is_tree_module
        self.infer.tree_instance = file.tree_instance
        self.infer.built_with_device = file.built_with_device
        self.infer.inherited = self.inherited
        self.infer.mask_resolver = self.mask_call
        self.infer.instance_attr = self.instance_attr
        self.infer.held_attr = self.held_attr
        self.infer.none_attr = self.none_attr
        self.infer.fn_attr = self.fn_attr
        self.infer.instance_method = self._instance_method
        self.infer.duck_method = self.duck_method
        self._init_attrs: dict | None = None  # the attributes a module's `__init__` walks with, its own copy
        self._fed: set[tuple[str, str]] = set()  # (instance, attribute) whose feeding calls are being read
        self._typed: tuple = (None, {})  # (function, its parameters annotated with a class of the module)
        self._stores: tuple = (None, {})  # (function, the first line binding each name)
        self.infer.usage = file.kinds.usage
        self.infer.probable_usage = file.kinds.probable_usage
        self.infer.torch_only = file.torch_only
        self.infer.module_default_device = file.get(_module_default_device)
        self.infer.namespaces = file.namespaces
        self.class_stack: list[ast.ClassDef] = []
        self.func_stack: list[ast.AST] = []
        # id(local function) -> [(kind, tuple kinds)] of its returns as the walk of the function around saw them
        # (with the names it reads from there: `wh` of `def metric(k): return (wh / k).mean()`)
        self._inline_returns: dict[int, list[tuple[str | None, tuple | None]]] = {}
        self._local_defs: set[int] = set()  # id of every local function the walk registered (`env.funcs`)
        self.stmt_stack: list[ast.stmt] = []
        self.target: ast.AST | None = None  # the function a KindWalk is about
        self.param_seeds: dict | None = None  # parameter -> kind for `target`, from the call being resolved
        self._probable_params: set[str] = set()  # the current function's parameters of a probable kind
        self._by_type: dict[type, list] = {}
        self._lean = True
        self._special = special_visits(type(self))
        self._inert = inert_leaves(self._special, self._by_type, self._lean)
        self._children = child_table(self._lean)

    # -- the walk ------------------------------------------------------------------------------
    def visit_block(self, stmts):
        for s in stmts:
            self.stmt_stack.append(s)
            self.visit(s)
            self.stmt_stack.pop()

    def dispatch(self, node):
        """Hand `node` to the rules (the lint walk has them; this walk has none)."""

    def visit(self, node):
        t = node.__class__
        m = self._special.get(t)
        if m is not None:
            m(self, node)
            return
        if t in self._by_type:
            self.dispatch(node)
        inert = self._inert
        for c in self._children[t](node):
            if c.__class__ not in inert:
                self.visit(c)

    def visit_children(self, node):
        inert = self._inert
        for c in self._children[node.__class__](node):
            if c.__class__ not in inert:
                self.visit(c)

    # -- calls of this module's own functions (see interproc) --------------------------------
    def callee(self, call: ast.Call) -> tuple[FunctionNode, ast.ClassDef | None] | None:
        """(function, its class) that `call` runs when it is a function of this module: a local
        function, a module-level one, or `self.method(...)` of the class around (or a base of it)."""
        f = call.func
        index = self.file.index
        if isinstance(f, ast.Name):
            env: Env | None = self.infer.env
            while env is not None:  # a local def, unless a variable of that name hides it
                if f.id in env.funcs:
                    local = env.funcs[f.id]
                    return local, index.class_of(local)  # type: ignore[return-value]  # (a def)
                if f.id in env.names:
                    return self._instance_called(f) if f.id in index.constructed_names() else None
                env = env.parent
            fn = index.funcs.get(f.id)
            if fn is None and f.id not in self.imports and f.id in index.constructed_names():
                return self._instance_called(f)
            return (fn, None) if fn is not None and f.id not in self.imports else None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls") \
                and self.class_stack:
            cls = self.class_stack[-1]
            return index.method(cls, f.attr) or (self.file.kinds.attr_callee(cls, f.attr) if f.value.id == "self"
                                                 else None)
        if isinstance(f, ast.Attribute) and (isinstance(f.value, ast.Name) or _self_attr(f.value)):
            return self._instance_method(f.value, f.attr)
        return None

    def _instance_method(self, recv: ast.Name | ast.Attribute, meth: str) -> tuple[FunctionNode, ast.ClassDef] | None:
        """`t.evaluate(loader)` where `t` holds an instance of a class of the module (`t = Trainer(...)` wherever the
        file binds `t`, or a parameter annotated with the class; `self.evaluator` of `self.evaluator =
        Evaluator(...)`): that class's method (or its bases')."""
        index = self.file.index
        if meth.startswith("__"):
            return None
        if isinstance(recv, ast.Attribute):
            if "self." + recv.attr not in index.constructed_names():
                return None
            cls = index.instance_class(recv, self.func_stack[-1] if self.func_stack else None)
            return index.method(cls, meth) if cls is not None and not self.file.is_module_class(cls) else None
        fn = self.func_stack[-1] if self.func_stack else None
        if recv.id in index.constructed_names() and recv.id not in self.imports \
                and self.infer.env.get(recv.id) is None:
            cls = index.instance_class(recv, fn)
            if cls is not None:
                return index.method(cls, meth)
        if not index.classes or not isinstance(fn, FUNCS):
            return None
        # `best: Evaluator`, a parameter annotated with a class of the module (one function's, kept while the walk is
        # in it: this runs for every method call on a name)
        if self._typed[0] is not fn:
            self._typed = (fn, _class_params(self.file, fn))
        cls = self._typed[1].get(recv.id)
        return index.method(cls, meth) if cls is not None else None

    def _instance_called(self, f: ast.Name) -> tuple[FunctionNode, ast.ClassDef] | None:
        """`early_stopping(val_loss, model)`: an instance of a class of the module (not an nn.Module, whose
        `__call__` is torch's) runs the class's `__call__`."""
        index = self.file.index
        if f.id in index.classes:
            return None
        cls = index.instance_class(f, self.func_stack[-1] if self.func_stack else None)
        return index.method(cls, "__call__") if cls is not None and not self.file.is_module_class(cls) else None

    def inherited(self, call: ast.Call) -> bool:
        """`self.m(...)` in a class that neither defines `m` (nor do its bases of the module) nor assigns `self.m`,
        and has a base imported from another module of the tree (`class FAB(Attack)` after `from ..attack import
        Attack`): the method is that base's, which the walk does not read (bases of the file's folder only)."""
        if not self.class_stack or not isinstance(call.func, ast.Attribute):
            return False
        index, meth = self.file.index, call.func.attr
        cls = self.class_stack[-1]
        if index.method(cls, meth) is not None or next(index.attr_values(cls, meth), None) is not None:
            return False
        return any(isinstance(b, ast.Name) and b.id not in index.classes and self.file.is_tree_module(b.id)
                   for c in index.base_chain(cls) for b in c.bases)

    def close(self) -> None:
        """Break the cycle through the inference's callbacks (bound to this walk): freed when dropped."""
        self.infer.resolver = self.infer.name_resolver = self.infer.inherited = self.infer.mask_resolver = None
        self.infer.instance_attr = self.infer.held_attr = self.infer.none_attr = self.infer.fn_attr = None
        self.infer.instance_method = self.infer.duck_method = None

    def fn_attr(self, attr: str) -> list[ast.AST]:
        """The torch functions every `self.<attr> = ...` of the class around binds to it (`self.clip_func =
        torch.nn.utils.clip_grad_norm_`), as references; [] where one is anything else."""
        if not self.class_stack:
            return []
        sets = self.file.index.self_assigns(self.class_stack[-1]).get(attr) or ()
        out = [v for v, _ in sets if isinstance(v, (ast.Name, ast.Attribute))
               and (qualify(v, self.imports) or "").startswith("torch.")]
        return out if sets and len(out) == len(sets) else []

    def none_attr(self, attr: str) -> bool:
        """Every `self.<attr> = ...` of the class around is None, or a parameter of its method that defaults to None
        (`self.device = device` in `__init__(self, ..., device=None)`): unset unless a caller says otherwise."""
        return bool(self.class_stack) and self.file.index.attr_constant(self.class_stack[-1], attr) == (True, None)

    def held_attr(self, base: ast.Attribute, attr: str) -> str | None:
        """What `self.<held>.<attr>` holds where every `self.<held> = ...` of the file is `C(...)` of one class `C`
        of this module (ModuleIndex.instance_class): a tensor `C` keeps under `attr` (`self.emp_norm._std` of
        `self.emp_norm = EmpiricalNormalization(shape)`, which registers `_std` as a buffer). Tensors only: what
        else an instance holds may have changed since it was built."""
        index = self.file.index
        if not self.class_stack or not _self_attr(base) or "self." + base.attr not in index.constructed_names():
            return None
        cls = index.instance_class(base, self.func_stack[-1] if self.func_stack else None)
        k = self.file.class_attrs(cls).get(attr) if cls is not None else None
        return k if k == TENSOR else None

    def instance_attr(self, base: ast.Name, attr: str) -> str | None:
        """What `base.attr` holds, `base` an instance of a class of this module (ModuleIndex.instance_class) or of
        another module of the tree (`top1 = AverageMeter()` after `from utils import AverageMeter`): a tensor where
        a call on this instance hands a tensor to a parameter whose value reaches the attribute (instances.py); a
        host value where every such call hands host values (other instances' calls do not count); else what the
        class's own methods make it."""
        index = self.file.index
        if self.file.modules is not None and (tree_cls := self.file.tree_instance(base.id)) is not None:
            return self._tree_instance_attr(base, tree_cls, attr)
        if base.id not in index.constructed_names():
            return None
        cls = index.instance_class(base, self.func_stack[-1] if self.func_stack else None)
        if cls is None or self.file.is_module_class(cls):
            return None
        feeds = self.file.per(cls, _attribute_feeds).get(attr) or ()
        got: list[tuple[str | None, bool]] = []
        for meth in {m for m, _, _ in feeds}:
            for call, _, _ in index.calls().get(("i", meth), ()):
                if not (isinstance(call.func.value, ast.Name) and call.func.value.id == base.id):  # type: ignore[attr-defined]
                    continue
                m = index.instance_calls(meth).get(id(call))
                if m is not None:
                    got += self._handed_kinds(feeds, meth, positional_params(m[0]), call)
        own = self.file.class_attrs(cls).get(attr)
        return _fed_kind(got, own) or (TENSOR if own == TENSOR else None)

    def _tree_instance_attr(self, base: ast.Name, cls_name: str, attr: str) -> str | None:
        """`instance_attr` of an instance of a class of another module of the tree: what the class's methods assign
        there (`CrossFile.instance_attr`), or what this file's calls on the instance hand the parameters that reach
        the attribute (`meter.update(loss)`, then `meter.avg`)."""
        own, triples, params = self.file.tree_class_attr(cls_name, attr)
        key = (base.id, attr)
        source = self.file.source
        if not triples or key in self._fed \
                or not any(f"{base.id}.{m}(" in source for m, _, _ in triples):  # (no call hands it anything)
            return own  # (or asked again while its calls' arguments are read: `m.update(m.val + x)`)
        got: list[tuple[str | None, bool]] = []
        calls = self.file.get(_name_method_calls)
        self._fed.add(key)
        try:
            for meth in {m for m, _, _ in triples}:
                if meth in params:
                    for call in calls.get((base.id, meth), ()):
                        got += self._handed_kinds(triples, meth, params[meth], call)
        finally:
            self._fed.discard(key)
        if not got:
            return own
        return _fed_kind(got, own) or (TENSOR if own == TENSOR else None)

    def _handed_kinds(self, feeds, meth: str, params: tuple[str, ...], call: ast.Call) -> list[tuple[str | None, bool]]:
        """(kind, as is) of what `call` (`obj.meth(...)`) hands each parameter of the method (its positional
        parameters `params`, `self` left out) that feeds the attribute."""
        return [(self.infer.kind(arg), as_is) for fm, param, as_is in feeds
                if fm == meth and (arg := handed_to(params, call, param)) is not None]

    def mask_call(self, call: ast.Call, imported: bool = True) -> bool | tuple[bool, ...]:
        """Which of what `call` gives are boolean masks (masks.returned_masks), for a function or method of this
        module or (`imported`) a function imported by name from another module of the tree, read there; False
        when it runs neither. (The inference asks of every tensor it binds without `imported`: a module read for
        each would cost a parse; the indexing rules ask with it of the few values that index.)"""
        target = self.callee(call)
        if target is not None:
            return self.file.per(target[0], _masks_of)
        f, mods = call.func, self.file.modules
        if not imported or not isinstance(f, ast.Name) or mods is None or f.id not in self.file.imported_names:
            return False
        memo = self.file.state(_imported_masks, dict)  # name -> its answer
        got = memo.get(f.id)
        if got is None:  # (one function read there, as a call's kind reads it: crossfile's module budget)
            found = mods.function_def(self.file, f.id)
            got = memo[f.id] = found[0].per(found[1], _masks_of) if found is not None else False
        return got

    def resolve_call(self, call: ast.Call) -> Returned | None:
        r = self._resolve_call(call)
        if r is not None and (r.kind == ARG_DEVICE or ARG_DEVICE in (r.elts or ())):
            # the device of a tensor handed in, else the CPU: the CPU where the call hands no tensor that may be
            # on a device
            dev = CPU_DEVICE if self._no_device_tensor_in(call) else None
            r = Returned(dev if r.kind == ARG_DEVICE else r.kind,
                         tuple(dev if k == ARG_DEVICE else k for k in r.elts) if r.elts is not None else None)
        return r

    def _no_device_tensor_in(self, call: ast.Call) -> bool:
        """Every value the call hands over (in list and tuple displays too) is known and none is a tensor
        that may be on a device."""
        todo = [*call.args, *(k.value for k in call.keywords)]
        inf = self.infer
        was, inf.probable = inf.probable, False
        try:
            while todo:
                v = todo.pop()
                if isinstance(v, (ast.List, ast.Tuple)):
                    todo += v.elts
                elif isinstance(v, ast.Starred) or inf.kind(v) not in (HOST, CPU, CPUS, NDARRAY, OTHER) \
                        and not (isinstance(v, ast.Constant) and v.value is None):
                    return False
            return not inf.probable  # (known for certain, not by a probable clue)
        finally:
            inf.probable = was

    def _resolve_call(self, call: ast.Call) -> Returned | None:
        target = self.callee(call)
        if target is None and isinstance(call.func, ast.Name):
            aliased = self._aliased_functions(call.func.id)
            if aliased:  # `init_func = initialize_topn` on one branch, `= initialize` on another
                return join_returned([self._returned_by(call, fn, None) for fn in aliased])
        if target is None and self.back is not None and isinstance(call.func, ast.Name) \
                and call.func.id in self.back[1]:
            home, names = self.back  # `-evaluate_quadratic(J, g, s)` of `from .common import evaluate_quadratic`
            fn = home.index.funcs.get(names[call.func.id])
            return home.kinds.returned(fn, None, 0) if fn is not None else None
        f = call.func
        if target is None and isinstance(f, ast.Attribute) and _is_super(f.value) and self.class_stack:
            return self._super_returned(call, self.class_stack[-1], f.attr)
        if target is None and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
                and self.class_stack and self.file.modules is not None and self.func_stack:
            # (handed a tensor: what a base's helper computes from it; the module is parsed only for those calls)
            got = self.file.modules.base_method(self, call, self.class_stack[-1], f.attr) \
                if any(self.infer.kind(a) == TENSOR for a in call.args if not isinstance(a, ast.Starred)) else None
            return Returned(got[0], got[1]) if got is not None else None
        if target is None:
            crossfile = self.file.crossfile
            # (a script's instance, `corpus = Corpus()`, is read at module level too: its training loop is there)
            if crossfile is None and self.infer.tree_instance_call(call):
                crossfile = self.file.modules
            elif self.func_stack and self.infer.tree_module_call(call):
                if isinstance(call.func, ast.Name) and self.infer.host_inputs(call, call.func.id):
                    return None  # handed host tensors: a guess of host tensors (`_host_call`) beats a read
                crossfile = crossfile or self.file.modules  # `misc.is_nan(t)`: what that module's function returns
            if crossfile is not None:  # a function or class another module of the tree defines
                got = crossfile.call(self, call)
                if got is not None:
                    return Returned(got[0], got[1])
            return None
        return self._returned_by(call, *target)

    def duck_method(self, call: ast.Call, recv: ast.Name, meth: str) -> Returned | None:
        """`model.latest_losses()`, `model` a model of no class the walk knows (a parameter of `train` it calls): the
        nn.Module classes that could be it, those of this module and those it imports from other modules of the tree
        (by name, or by a star import), that define a method of that name; what they return where every one that
        returns something agrees on a tensor or a container of tensors (a base's stub that returns nothing left
        out). A probable answer. Not for names many classes define for other ends (`step`, `update`, `forward`), nor
        where a class has a library's base (whose methods of that name the tree cannot see)."""
        if meth.startswith("_") or meth in GENERIC_METHODS or meth == "forward" or recv.id in self.imports \
                or not self.func_stack or not any(a.arg == recv.id for a in _all_args(self.func_stack[-1].args)):
            return None  # (a parameter only: an object the function builds is of a class the walk knows)
        local, imported = self.file.get(_duck_classes)
        modules = self.file.modules
        candidates = [n for n, path in imported if modules is not None and meth in modules.method_names(path)
                      and (s := modules.summary(path)) is not None and s.classes.get(n) == "module class"]
        if not local.get(meth) and not candidates or recv.id in self.file.index.constructed_names():
            return None
        index = self.file.index
        if any(_library_based(self.file, cls) for cls in local.get(meth, ())):
            return None  # (`wavefun` of a subclass of pywt's ContinuousWavelet: the library's classes have it too)
        got: list[Returned | None] = [self._returned_by(call, *index.method(cls, meth))  # type: ignore[misc]
                                      for cls in local.get(meth, ())]
        for name in candidates:
            home = modules.class_home(self.file, name)  # type: ignore[union-attr]
            if home is None or _library_based(*home):
                return None
            r = modules.imported_method(self, call, name, meth)  # type: ignore[union-attr]
            got.append(Returned(r[0], r[1]) if r is not None else None)
        kinds = {r.kind for r in got if r is not None and r.kind is not None}
        if len(kinds) != 1 or not kinds <= {TENSOR, TENSORS}:
            return None
        self.infer.probable = True
        return Returned(kinds.pop(), None)

    def _super_returned(self, call: ast.Call, cls: ast.ClassDef, meth: str) -> Returned | None:
        """What `super().meth(...)` gives in `cls`: the method of its first base that has it, of this module or of
        a class imported by name from another module of the tree (`if not super().in_manifold(S, eps):`)."""
        index = self.file.index
        if meth.startswith("__"):
            return None  # (`super().__init__(...)`, in nearly every class: what it gives is not read)
        for b in cls.bases:
            if not isinstance(b, ast.Name):
                return None
            if b.id in index.classes:
                m = index.method(index.classes[b.id], meth)
                if m is not None:
                    return self._returned_by(call, m[0], m[1])
            elif self.file.modules is not None and b.id in self.file.imported_names and any(
                    self.infer.kind(a) == TENSOR for a in call.args if not isinstance(a, ast.Starred)):
                # (handed a tensor, as `base_method` reads a base's helper: the module is parsed only for those)
                got = self.file.modules.imported_method(self, call, b.id, meth)
                if got is not None:
                    return Returned(got[0], got[1])
        return None

    def _returned_by(self, call: ast.Call, fn: FunctionNode, cls: ast.ClassDef | None) -> Returned | None:
        gen = self.file.per(fn, _generator_source) if _is_generator_text(self.file, fn) else None
        if gen is not None:  # a generator of a loader's batches (`def cycle(dl): while True: yield from dl`)
            if gen == "":
                return Returned(LOADER, None)
            params = [p.arg for p in _call_params(call, fn, cls)[0]]
            arg = next((k.value for k in call.keywords if k.arg == gen), None)
            if arg is None and gen in params and params.index(gen) < len(call.args):
                arg = call.args[params.index(gen)]
            if arg is not None and not any(isinstance(a, ast.Starred) for a in call.args) \
                    and self.infer.iter_kind(arg)[1]:
                return Returned(LOADER, None)
            return None
        inline = self._host_inline(fn) if self._inline_returns else None
        if inline is not None:
            return inline
        seeds = self.call_seeds(call, fn, cls)
        if seeds:  # host data passed in (a matcher's CPU indices): what the function gives for it
            r = self.file.kinds.returned_seeded(fn, cls, seeds)
            if r is not None:
                return r
        r = self.file.kinds.returned(fn, cls, self.level)
        if (r is None or r.kind is None and (r.elts is None or None in r.elts)) and not seeds:
            # `start = self.denormalize(H, l)` with `l` a tensor: what the helper gives for the tensors handed
            # to it, where its own parameters (a caller too far up) say nothing (of some parts of a tuple too:
            # `return found, inputs.clone()`)
            handed = self._tensor_seeds(call, fn, cls, strict=r is not None)
            if handed:
                r = self.file.kinds.returned_seeded(fn, cls, handed) or r
        return r

    def _tensor_seeds(self, call: ast.Call, fn: FunctionNode, cls, strict: bool = False) -> dict[str, str]:
        """parameter -> tensor for the arguments of `call` that are surely tensors (not by a probable clue). `strict`
        (part of what the function returns is known already): not a name that is a tensor only by its function's name
        either (`local_ctx` of an autograd function's `forward(ctx, x, local_ctx)`)."""
        params, names = _call_params(call, fn, cls)
        inf = self.infer
        was = inf.probable  # (the flag belongs to the kind being computed around this call)
        out = {}
        pairs = list(zip([p.arg for p in params], call.args))
        pairs += [(kw.arg, kw.value) for kw in call.keywords if kw.arg in names]
        fn_here = self.func_stack[-1] if self.func_stack else None
        # (a parameter here that defaults to a constant, `beam_size=None`, is an option more often than a tensor)
        optional = param_defaults(fn_here.args) if isinstance(fn_here, FUNCS) else {}
        for name, arg in pairs:
            if isinstance(arg, ast.Starred):
                break
            if isinstance(arg, ast.Name) and isinstance(optional.get(arg.id), ast.Constant):
                continue
            inf.probable = False
            if inf.kind(arg) == TENSOR and not inf.probable \
                    and not (strict and isinstance(arg, ast.Name) and inf.env.is_guess(arg.id)):
                out[name] = TENSOR
        inf.probable = was
        return out

    def _aliased_functions(self, name: str) -> list:
        """The module's functions a variable holds when every value the file assigns to it is one of them by
        name (`fn = helper` ... `fn(x)`, or `functools.partial(helper, k=v)`) and the function around does not take it
        as a parameter."""
        index = self.file.index
        values = index.assigned(name)
        if not values or not self.func_stack or name in self.imports:
            return []
        a = self.func_stack[-1].args
        if any(p.arg == name for p in a.posonlyargs + a.args + a.kwonlyargs):
            return []
        fns = []
        for v in values:
            if isinstance(v, ast.Call) and len(v.args) == 1 and all(k.arg is not None for k in v.keywords) \
                    and qualify(v.func, self.imports) == "functools.partial":
                v = v.args[0]  # `run = partial(_attack, model=model)`: keywords only, so the call's arguments line up
            fn = index.funcs.get(v.id) if isinstance(v, ast.Name) and v.id not in self.imports else None
            if fn is None:
                return []
            fns.append(fn)
        return fns

    def resolve_name(self, name: str) -> str | None:
        """What a name imported from another module of the tree holds there (a module-level constant)."""
        crossfile = self.file.crossfile
        return crossfile.constant(self.file, name) if crossfile is not None else None

    def call_seeds(self, call: ast.Call, fn: FunctionNode, cls) -> dict[str, str]:
        """parameter -> kind for the arguments of `call` known to be host tensors (CPU tensors or lists
        of them), which a function's own parameters can only guess, for the devices it passes in
        place of a `device="cpu"` default (then not the CPU), and for such a default it leaves out (the CPU)."""
        a = fn.args
        params, names = _call_params(call, fn, cls)
        out = {}
        for p, arg in zip(params, call.args):
            if isinstance(arg, ast.Starred):
                break
            k = self.infer.kind(arg)
            if k in (CPU, CPUS):
                out[p.arg] = k
            elif k == HOST and self._host_sequence(arg):
                out[p.arg] = HOST  # `to_tensor(classes)` of a list of ints: what the helper makes of host data
            elif k in (OTHER, HOST) and self.infer.cpu_device(arg) is True:  # `"cpu"`, a name holding it
                out[p.arg] = CPU_DEVICE
        for kw in call.keywords:
            if kw.arg in names:
                k = self.infer.kind(kw.value)
                if k in (CPU, CPUS):
                    out[kw.arg] = k
                elif k in (OTHER, HOST) and self.infer.cpu_device(kw.value) is True:
                    out[kw.arg] = CPU_DEVICE
        if any(k in (CPU, CPUS) for k in out.values()):
            # (a call already seeded with host data:) `None` where a tensor may go is no tensor on this call
            for p, arg in zip(params, call.args):
                if isinstance(arg, ast.Constant) and arg.value is None:
                    out[p.arg] = HOST
        defaults = param_defaults(a)
        passed = dict(zip([p.arg for p in params], call.args))
        passed.update({kw.arg: kw.value for kw in call.keywords if kw.arg in names})
        spread = any(isinstance(x, ast.Starred) for x in call.args) or any(k.arg is None for k in call.keywords)
        for name, d in defaults.items():
            if name in passed and self.infer.cpu_device(d) is True and self.infer.cpu_device(passed[name]) is not True:
                out[name] = OTHER  # `make_grid(n, device=x.device)`: not the CPU default
            elif name not in passed and name in names and not spread and self.infer.cpu_device(d) is True:
                out[name] = CPU_DEVICE  # `make_coords_grid(b, h, w)`: the CPU default, on this call
        return out

    def _seeded_host(self, name: str | None, at: ast.AST) -> bool:
        """`name` is a parameter of the function being resolved for a call that hands it host data, not bound before
        `at`."""
        fn = self.func_stack[-1] if self.func_stack else None
        if not (name and self.param_seeds and self.param_seeds.get(name) == HOST and fn is self.target
                and len(self.func_stack) == 1):
            return False
        if self._stores[0] is not fn:
            first: dict[str, int] = {}
            for n in walk(fn):
                if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                    first[n.id] = min(first.get(n.id, n.lineno), n.lineno)
            self._stores = (fn, first)
        return self._stores[1].get(name, at.lineno + 1) > at.lineno

    def _host_sequence(self, arg: ast.AST) -> bool:
        """A list or tuple of Python values: a display, or a parameter annotated `list[int]` / `Sequence[float]` (as
        the walk bound it: a host value)."""
        if isinstance(arg, (ast.List, ast.Tuple)):
            return True
        fn = self.func_stack[-1] if self.func_stack else None
        if not isinstance(arg, ast.Name) or not isinstance(fn, FUNCS):
            return False
        ann = next((p.annotation for p in _all_args(fn.args) if p.arg == arg.id), None)
        text = ast.unparse(ann) if ann is not None else ""
        return any(w in text for w in ("List", "list", "Sequence", "Tuple", "tuple")) and "Tensor" not in text

    # -- class attributes ----------------------------------------------------------------------
    def read_class_attrs(self, node: ast.ClassDef) -> dict[str, str | None]:
        """What `self.<attr>` holds in `node`, from every `self.<attr> = value` in the class read with
        no local names bound (see FileFacts.class_attrs, which memoises it)."""
        attrs: dict[str, str | None] = {}
        # (what is read so far is seen by the later assignments: `self.acp = torch.cumprod(self.alphas)` of a host
        # `self.alphas` holds a host tensor too)
        self.class_stack, self.infer.env = [node], Env(None, attrs)
        is_module = self.file.is_module_class(node)
        inf = self.infer
        source = self.file.source
        # the order of the walk decides which assignment wins: both walks are ast.walk's order;
        # without a `register_buffer` call the statements alone (Assign is one) are enough
        buffers = self.file.get(_registers_by_name) or not source.isascii()
        registered: set[str] = set()
        for n in (walk(node) if buffers else statements(node)):
            nc = n.__class__  # (exact classes, as ast.parse builds them: the walk may meet every node of the class)
            if nc is ast.Assign and len(n.targets) == 1:
                t = n.targets[0]
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    k = inf.kind(n.value)
                    if k is None and is_module and isinstance(n.value, ast.Call):
                        fn = n.value.func
                        name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
                        if name[:1].isupper():
                            k = MODULE
                    if k == CPU and attrs.get(t.attr) == TENSOR:
                        continue  # a host copy in one method (`def cpu(self)`), a tensor elsewhere: not surely host
                    if k in (TENSOR, CPU, MODULE, LOADER, OPTIMIZER, NDARRAY) or (k == HOST and t.attr not in attrs) \
                            or k is not None and k.startswith(RECORD):
                        attrs[t.attr] = k
            elif nc is ast.Call and n.func.__class__ is ast.Attribute and n.func.attr[:9] == "register_" \
                    and _registers(n.func.attr) \
                    and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
                registered.add(n.args[0].value)
        # a buffer moves with the module (`model.to(device)`), whatever host tensor is assigned to it
        attrs.update(dict.fromkeys(registered, TENSOR))
        # `self.t1 = t1` of a parameter: what the method's annotations, callers (for `__init__`, the
        # class's constructions) or its own use of the parameter say
        for attr, assigned in self.file.index.self_assigns(node).items():
            if attrs.get(attr) == CPU:
                # a host placeholder (`self.labels = torch.tensor(())` in `__init__`) that a method replaces with a
                # tensor handed in: not surely host, as above
                if any(isinstance(v, ast.Name) and self._method_param_kind(m, v.id) == TENSOR for v, m in assigned):
                    attrs[attr] = TENSOR
                continue
            if attr in attrs or not all(isinstance(v, ast.Name) for v, _ in assigned):
                continue
            kinds = {self._method_param_kind(m, v.id) for v, m in assigned if isinstance(v, ast.Name)}
            if len(kinds) == 1 and (k := kinds.pop()) in (TENSOR, CPU, HOST):
                attrs[attr] = k
        # (the walks that read what the class's containers are filled with see the attributes known so far, not the
        # empty answer that guards the class's own reading from a cycle)
        self.file.class_attrs_so_far(node, attrs)
        for attr, k in self._filled_attrs(node).items():
            if attrs.get(attr) is None:
                attrs[attr] = k
        self._running_totals(node, attrs)
        # properties (`@property def jac_mag(self): return norm(self.jac)`, also `functools.cached_property`):
        # what their method returns, read at level 0 (the property's own body)
        for s in node.body:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name not in attrs \
                    and (_decorated(s, "property") or _decorated(s, "cached_property")) \
                    and not isinstance(s, ast.AsyncFunctionDef):
                r = self.file.kinds.returned(s, node, 0)
                if r is not None and r.kind in (TENSOR, CPU):
                    attrs[s.name] = r.kind
        # class attributes (`eps = 1e-6`, `tableau = _TABLEAU` in the class body), unless what instances set
        # is known
        for s in node.body:
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                name = s.targets[0].id
                if name not in attrs:
                    k = inf.kind(s.value)
                    if k in (TENSOR, CPU, TENSORS, CPUS, HOST, MODULE):
                        attrs[name] = k
        return attrs

    def _running_totals(self, cls: ast.ClassDef, attrs: dict[str, str | None]) -> None:
        """`self.sum += val * n` where callers hand `val` tensors (an AverageMeter's `update(acc1[0], n)`): the total
        is a tensor, whatever number `reset` started it at; and so are the attributes assigned from it
        (`self.avg = self.sum / self.count`), read again with the totals known."""
        found: set[str] = set()
        lines = self.file.get(_self_augassign_lines)
        if not lines or not any(cls.lineno <= line <= cls.end_lineno for line in lines):  # type: ignore[operator]
            return
        for m in cls.body:
            if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            params = {p.arg for p in m.args.posonlyargs + m.args.args + m.args.kwonlyargs}
            for n in statements(m):
                if n.__class__ is not ast.AugAssign or not _self_attr(n.target) or attrs.get(n.target.attr) == TENSOR:
                    continue
                used = {x.id for x in walk(n.value) if isinstance(x, ast.Name) and x.id in params}
                kinds = {u: self._method_param_kind(m, u) for u in used}
                if TENSOR not in kinds.values():
                    continue
                was = self.infer.env
                self.infer.env = Env(None, dict(attrs))
                self.infer.env.names.update(kinds)
                try:  # (what is added: `val * n` is a tensor, `key_states.shape[-2]` a number)
                    k = self.infer.kind(n.value)
                finally:
                    self.infer.env = was
                if k == TENSOR:
                    attrs[n.target.attr] = TENSOR
                    found.add(n.target.attr)
        if not found:
            return
        # (the walks keep these tensors where a method starts them at a number: `self.sum = 0` in `reset`)
        self.file.state(_running_totals, dict)[id(cls)] = frozenset(found)
        was = self.infer.env
        self.infer.env = Env(None, dict(attrs))
        try:
            for n in statements(cls):
                if n.__class__ is ast.Assign and len(n.targets) == 1 and _self_attr(n.targets[0]) \
                        and attrs.get(n.targets[0].attr) in (HOST, None) and self.infer.kind(n.value) == TENSOR:
                    attrs[n.targets[0].attr] = TENSOR
                    found.add(n.targets[0].attr)
            self.file.state(_running_totals, dict)[id(cls)] = frozenset(found)
        finally:
            self.infer.env = was

    def _filled_attrs(self, cls: ast.ClassDef) -> dict[str, str]:
        """`self.stats = {}` (or None) in one method, `self.stats["mean"] = mean` of host tensors in others:
        a dict of host tensors (of tensors, where every entry is a tensor), its entries keeping their kinds; the
        same for a list filled by `self.errors.append(value)`. Only where the class assigns the attribute nothing
        but empty dicts or lists (or None), changes it only by `self.<attr>[key] = value` or one-value appends,
        and every such value's kind, read from a walk of its method, agrees."""
        assigned = self.file.index.self_assigns(cls)
        # (an entry written is `self.<attr>[` in the text: most classes have none; one scan of the file's text)
        entries = self.file.per(self.file.tree, _entry_attrs)
        empty = [a for a, vs in assigned.items() if a in entries and all(_empty_container(v) for v, _ in vs)
                 and any(v is not None and not isinstance(v, ast.Constant) for v, _ in vs)]
        if not empty:
            return {}
        fills: dict[str, list] = {a: [] for a in empty}  # attr -> [the method that fills it]
        appends: set[int] = set()  # the `self.<attr>.append` of calls that append one value
        for m in cls.body:
            if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for n in walk(m):
                if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and _self_attr(n.value) \
                        and n.value.attr in fills:  # type: ignore[attr-defined]
                    fills[n.value.attr].append(m)  # type: ignore[attr-defined]
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append" \
                        and len(n.args) == 1 and not n.keywords and _self_attr(n.func.value) \
                        and n.func.value.attr in fills:  # type: ignore[attr-defined]
                    appends.add(id(n.func))
                    if m.name == "__init__":  # a list built with the object (of layers, as a rule): not walked
                        fills.pop(n.func.value.attr)  # type: ignore[attr-defined]
                    else:
                        fills[n.func.value.attr].append(m)  # type: ignore[attr-defined]  # `self.history.append(loss)`
                elif isinstance(n, ast.Attribute) and _self_attr(n.value) and n.value.attr in fills \
                        and n.attr in _MUTATORS and id(n) not in appends:  # type: ignore[attr-defined]
                    fills.pop(n.value.attr)  # type: ignore[attr-defined]  # `self.stats.update(other)`: unknown
        out = {}
        walks: dict[int, KindWalk] = {}
        for attr, methods in fills.items():
            kinds = set()
            for m in dict.fromkeys(methods):
                w = walks.get(id(m))
                if w is None:
                    w = walks[id(m)] = self.file.new_walk(0).run_function(m, cls)  # type: ignore[attr-defined]
                kinds.update(w.fills.get(attr, [None]))
            if kinds == {CPU}:
                out[attr] = CPUS
            elif kinds == {TENSOR}:
                out[attr] = TENSORS
        return out

    def _method_param_kind(self, method: Any, name: str) -> str | None:
        a = method.args
        params = a.posonlyargs + a.args + a.kwonlyargs
        p = next((p for p in params if p.arg == name), None)
        if p is None or p is params[0]:
            return None
        k = self._param_kind(p, None, False) if p.annotation is not None else None
        if k is None:
            k = self._param_facts(method, [p]).get(name)
        return k

    # -- statements that bind names or open scopes ----------------------------------------------
    def v_Assign(self, node):
        self.dispatch(node)
        self.visit(node.value)
        for t in node.targets:
            self.visit(t)
        inf = self.infer
        inf.probable = False
        k = inf.kind(node.value)
        probable = inf.probable  # (a kind computed from probable ones is probable too)
        for t in node.targets:
            inf.bind(t, k, node.value, probable)

    def v_AnnAssign(self, node):
        self.dispatch(node)
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)
        if is_tensor_annotation(node.annotation, self.imports):
            self.infer.bind(node.target, TENSOR)
            return
        k = self.infer.kind(node.value) if node.value is not None else None
        if k is None and annotation_kind(node.annotation, self.imports)[0] == TENSORS:
            self.infer.bind(node.target, TENSORS)  # `self.hook_g: list[Tensor]`, `outs: list[Tensor] = []`
        elif node.value is not None:
            self.infer.bind(node.target, k, node.value)

    def v_AugAssign(self, node):
        self.dispatch(node)
        self.visit(node.value)
        self.visit(node.target)
        if isinstance(node.target, ast.Name):
            k = self.infer.kind(ast.BinOp(left=node.target, op=node.op, right=node.value))
            self.infer.bind(node.target, k)

    def v_Expr(self, node):
        self.dispatch(node)
        self.visit(node.value)
        v = node.value  # `parts.append(loss)`: a list that started empty, filled with tensors
        if self._init_attrs is not None and self._init_attrs is self.infer.env.self_attrs \
                and v.__class__ is ast.Call and v.func.__class__ is ast.Attribute and v.func.attr == "register_buffer" \
                and len(v.args) >= 2 and isinstance(v.args[0], ast.Constant) and isinstance(v.args[0].value, str) \
                and self.infer.kind(v.args[1]) == CPU:
            self._init_attrs[v.args[0].value] = CPU  # `self.register_buffer("w", torch.zeros(n))` in `__init__`
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and isinstance(v.func.value, ast.Name) \
                and v.func.attr in ("append", "extend", "insert") and v.args:
            item = v.args[-1]
            k = self.infer.kind(item)
            self.infer.fill(v.func.value.id, self.infer.element_kind(k) if v.func.attr == "extend" else k)

    def v_NamedExpr(self, node):
        self.dispatch(node)
        self.visit(node.value)
        inf = self.infer
        inf.probable = False
        k = inf.kind(node.value)
        # with its value, as an assignment's: what makes it a mask (`(m := x > t).any()`), its device
        inf.bind(node.target, k, node.value, inf.probable)

    def v_Return(self, node):
        self.dispatch(node)
        if node.value is not None:
            self.visit(node.value)
            fn = self.func_stack[-1] if self.func_stack else None
            if fn is not None and id(fn) in self._local_defs:  # (a function nested in another, a method's too)
                v = node.value
                elts = tuple(self.infer.kind(e) for e in v.elts) \
                    if isinstance(v, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in v.elts) else None
                self._inline_returns.setdefault(id(fn), []).append((self.infer.kind(v), elts))

    def _host_inline(self, fn) -> Returned | None:
        """What a local function returns when every `return` of it, as walked inside the function around, gives
        host tensors (or a tuple of host values with one at least): the names it reads from there say so."""
        rets = self._inline_returns.get(id(fn))
        if not rets:
            return None
        host = (CPU, CPUS)
        if all(k in host for k, _ in rets):
            return Returned(CPUS if all(k == CPUS for k, _ in rets) else CPU, None)
        if all(e is not None and all(x in (*host, HOST) for x in e) and any(x in host for x in e) for _, e in rets) \
                and len({len(e) for _, e in rets if e is not None}) == 1:
            first = rets[0][1]
            assert first is not None
            return Returned(None, tuple(CPU if any(e[i] in host for _, e in rets if e is not None) else HOST
                                        for i in range(len(first))))
        return None

    def v_IfExp(self, node):
        """`ε[m] if isinstance(ε, Tensor) else x.new_full((1,), ε)`: each side sees what the test says of the name,
        as an `if` statement's branches do."""
        self.dispatch(node)
        self.visit(node.test)
        name, in_body, in_else = self._narrowed(node.test)
        if name is None:
            self.visit(node.body)
            self.visit(node.orelse)
            return
        env = self.infer.env
        before, start = env.get(name), env.snapshot()
        for side, kind in ((node.body, in_body), (node.orelse, None if isinstance(node.test, ast.BoolOp) else in_else)):
            if kind is not None and _narrows(kind, before):
                self.infer.bind(ast.Name(name), kind)
            self.visit(side)
            env.restore(start)

    def v_If(self, node):
        self.dispatch(node)
        self.visit(node.test)
        name, in_body, in_else = self._narrowed(node.test)
        if in_else == OTHER:  # not a tensor: a list of them, where the annotation allows one
            in_else = self._sequence_alternative(name) or OTHER
        elif in_body == OTHER and in_else == TENSOR:
            in_body = self._sequence_alternative(name) or OTHER
        env = self.infer.env
        before = env.get(name) if name else None
        if in_body == TENSOR and before == HOST and self._seeded_host(name, node) and not isinstance(node.test, ast.BoolOp):
            # `to_tensor(classes)` read for the list handed in: `if isinstance(x, torch.Tensor):` is not taken
            self.visit_block(node.orelse)
            return
        start = env.snapshot()
        # inside `if isinstance(x, torch.Tensor):` x is one; inside `if not torch.is_tensor(x):` or
        # `if isinstance(x, (int, float)):` it is not
        narrow = name is not None and _narrows(in_body, before)
        # a name a type test says is a tensor is one by more than a guess (rules read it as a tensor
        # even where it is a bare parameter: `if torch.is_tensor(x) or ...: float(x)`)
        vouched = narrow and in_body == TENSOR and name not in env.sure
        if narrow:
            self.infer.bind(ast.Name(name), in_body)
            if vouched:
                env.sure.add(name)  # type: ignore[arg-type]
        self.if_body(node)
        if vouched:
            env.sure.discard(name)  # type: ignore[arg-type]
        dead = _not_eager(node.test)  # the branch that eager PyTorch never takes leaves nothing behind
        body_exits = isinstance(node.body[-1], _EXITS) or dead is True
        # past the `if`, x is what it was, unless the body rebinds it and goes on (no return / raise)
        if narrow and (body_exits or env.get(name) == in_body and not any(
                isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                for s in node.body for n in walk(s))):
            self.infer.bind(ast.Name(name), before)
        # the `else`, and past an `if` whose body leaves: what the test rules out
        narrow_else = name is not None and in_else is not None and not isinstance(node.test, ast.BoolOp) \
            and _narrows(in_else, before)
        if not node.orelse and body_exits:
            env.restore(start)
            if narrow_else:  # `if not isinstance(x, Tensor): raise ...`: past it, a tensor (and the reverse)
                self.infer.bind(ast.Name(name), in_else)
                if in_else == TENSOR:
                    env.sure.add(name)  # type: ignore[arg-type]
            return
        after_body = env.snapshot()
        env.restore(start)
        pure = narrow_else and node.orelse
        if pure:  # in the `else` of `if isinstance(x, torch.Tensor):` x is something else
            self.infer.bind(ast.Name(name), in_else)
        self.visit_block(node.orelse)
        if pure and env.names.get(name) == in_else and not any(  # (past the `if`, what it was, unless rebound)
                isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                for s in node.orelse for n in walk(s)):
            env.names[name] = before
        # past the `if`: what either path leaves (a path that returns or raises leaves nothing)
        if node.orelse and isinstance(node.orelse[-1], _EXITS) or dead is False:
            if not body_exits:
                env.restore(after_body)
        elif not body_exits:
            env.merge(after_body)
            if name is not None and in_body == TENSOR and not node.orelse and _wraps(node.body, name):
                # `if torch.is_tensor(x): x = (x,)`: a sequence of tensors past the `if`, on either path
                self.infer.bind(ast.Name(name), TENSORS)

    def v_Try(self, node):
        """`try: p = 100 * d.norm() / n` / `except KeyError: p = 0.0`: past the statement, what either
        path leaves (a handler does not replace what the body bound; one that raises or returns leaves
        nothing). A handler starts from what the body may or may not have bound yet."""
        self.dispatch(node)
        env = self.infer.env
        start = env.snapshot()
        self.visit_block(node.body)
        body_exits = bool(node.body) and isinstance(node.body[-1], _EXITS)
        if not body_exits and node.orelse:
            self.visit_block(node.orelse)
            body_exits = isinstance(node.orelse[-1], _EXITS)
        after = env.snapshot()
        outs = [] if body_exits else [after]
        for h in node.handlers:
            env.restore(after)
            env.merge(start)
            self.dispatch(h)
            if h.type is not None:
                self.visit(h.type)
            self.visit_block(h.body)
            if not isinstance(h.body[-1], _EXITS):
                outs.append(env.snapshot())
        env.restore(outs[0] if outs else after)
        for o in outs[1:]:
            env.merge(o)
        self.visit_block(node.finalbody)

    v_TryStar = v_Try

    def if_body(self, node: ast.If) -> None:
        self.visit_block(node.body)

    def _narrowed(self, test: ast.AST) -> tuple[str | None, str | None, str | None]:
        """(x, what x is where the test holds, what x is where it does not) for a type test of x:
        `isinstance(x, torch.Tensor)` -> (x, tensor, other); `not torch.is_tensor(x)` -> (x, other,
        tensor); `isinstance(x, (int, float))` -> (x, host, None); else (None, None, None)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            if isinstance(test.operand, ast.BoolOp) and isinstance(test.operand.op, ast.Or):
                # `not (torch.is_tensor(x) or isinstance(x, Op))`: no tensor where it holds; else either
                name = next((n for n in (tensor_tested(v, self.imports) for v in test.operand.values) if n), None)
                return (name, OTHER, None) if name else (None, None, None)
            name = tensor_tested(test.operand, self.imports) if not isinstance(test.operand, ast.BoolOp) else None
            return (name, OTHER, TENSOR) if name else (None, None, None)
        name = tensor_tested(test, self.imports)
        if name is not None:
            return name, TENSOR, OTHER
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            test = test.values[0]
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            # `torch.is_tensor(x) or isinstance(x, np.ndarray)`: where it holds, what either test says (a
            # tensor on one path is a tensor: merge_kinds)
            tests = [self._narrowed(v) for v in test.values]
            names = {t[0] for t in tests}
            if len(names) == 1 and None not in names and all(t[1] is not None for t in tests):
                k = tests[0][1]
                for t in tests[1:]:
                    k = merge_kinds(k, t[1])
                return (tests[0][0], k, None) if k is not None else (None, None, None)
            return None, None, None
        if isinstance(test, ast.Call) and len(test.args) == 1 and isinstance(test.args[0], ast.Name) \
                and qualify(test.func, self.imports) == "numpy.isscalar":
            return test.args[0].id, HOST, None  # a Python or numpy scalar: never a tensor, not even a 0-dim one
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and len(test.args) == 2 and isinstance(test.args[0], ast.Name):
            ty = test.args[1]
            names = [qualify(t, self.imports) or getattr(t, "id", None) for t in (ty.elts if isinstance(ty, ast.Tuple)
                                                                                  else [ty])]
            if names and all(n in _HOST_TYPES for n in names):
                return test.args[0].id, HOST, None
            if names and all(n in _HOST_TYPES or n in _OTHER_TYPES for n in names):
                # `isinstance(x, torch.dtype)`: something else; `isinstance(x, (list, tuple))`: what it holds is unknown
                return test.args[0].id, OTHER if not set(names) & _CONTAINERS else None, None
            if names and all(n in ("numpy.ndarray", "np.ndarray") for n in names):
                return test.args[0].id, NDARRAY, None
        return None, None, None

    def _sequence_alternative(self, name: str | None) -> str | None:
        """`tensors` when the enclosing function's parameter `name` is annotated as a tensor or a
        sequence of them (`imgs: Union[Tensor, List[Tensor]]`)."""
        fn = self.func_stack[-1] if self.func_stack else None
        if name is None or fn is None or isinstance(fn, ast.Lambda):
            return None
        a = fn.args
        p = next((p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg == name), None)
        ann = p.annotation if p is not None else None
        alternatives = []
        while ann is not None:
            if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
                alternatives.append(ann.right)
                ann = ann.left
                continue
            if isinstance(ann, ast.Subscript) and getattr(ann.value, "id", getattr(ann.value, "attr", "")) \
                    in ("Union", "Optional"):
                alternatives.extend(ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice])
            else:
                alternatives.append(ann)
            break
        return TENSORS if any(annotation_kind(x, self.imports)[0] == TENSORS for x in alternatives) else None

    def v_BoolOp(self, node):
        """`isinstance(x, int) and x < 2`: the operands after a type test see what it says of x."""
        self.dispatch(node)
        if not isinstance(node.op, ast.And):
            self.visit_children(node)
            return
        env = self.infer.env
        narrowed = []
        for v in node.values:
            self.visit(v)
            name, in_body, _ = self._narrowed(v)
            if name is not None and v is not node.values[-1] and _narrows(in_body, env.get(name)):
                narrowed.append((name, env.get(name)))
                self.infer.bind(ast.Name(name), in_body)
        for name, before in reversed(narrowed):
            self.infer.bind(ast.Name(name), before)

    def v_For(self, node):
        data = self.file.per(node, _data_source)
        if data is not None and not (isinstance(data, ast.Name) and _assigned_in(
                self.func_stack[-1] if self.func_stack else self.file.tree, data.id)):
            # the loop runs a training step: its iterable, if of no known kind, is a loader (a name the code assigns
            # is what its value says: `pbar = enumerate(loader)` yields pairs)
            self.infer.step_iters.add(id(data))
        self.dispatch(node)
        self.visit(node.iter)
        is_loader = self.infer.bind_loop_target(node.target, node.iter)
        self._loop(node, is_loader)

    v_AsyncFor = v_For

    def v_While(self, node):
        before = self.reported()
        self.dispatch(node)
        self.visit(node.test)
        seen = self.reported() != before
        self._loop(node, False)
        if not seen and before is not None and self._rebound_in(node):
            # `r = -1` then `while r <= 0: ... r = cost - new_cost`: from the second test on, the test reads
            # what the body left, joined here with what came before (the rules see the test again; the
            # walk's bindings are those after the loop, which the test's own expressions do not change)
            self.dispatch(node)
            self.visit(node.test)

    def reported(self) -> int | None:
        """How many findings the walk has made (None for a walk that runs no rules)."""
        return None

    def _rebound_in(self, node: ast.While) -> bool:
        names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
        return bool(names) and any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in names
                                   for s in node.body for n in walk(s))

    def _loop(self, node, is_loader):
        start = self.infer.env.snapshot()
        self.loop_body(node, is_loader)
        self.infer.env.merge(start)  # the body may run no time
        self.visit_block(node.orelse)

    def loop_body(self, node, is_loader: bool) -> None:
        self.visit_block(node.body)

    def v_With(self, node):
        self.dispatch(node)
        saved = self.infer.default_device
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                # `with tqdm(loader) as t:` a progress bar enters as itself, yielding the loader's batches
                k = self.infer.kind(item.context_expr)
                self.infer.bind(item.optional_vars, k if k == LOADER else None)
            e = item.context_expr  # `with torch.device("cuda"):` factories given no device make there
            if isinstance(e, ast.Call) and len(e.args) == 1 and qualify(e.func, self.imports) == "torch.device":
                self.infer.default_device = e.args[0]
        self.visit_block(node.body)
        self.infer.default_device = saved

    v_AsyncWith = v_With

    def _comp(self, node):
        self.dispatch(node)
        for g in node.generators:
            self.visit(g.iter)
            self.infer.bind_loop_target(g.target, g.iter)
            for cond in g.ifs:
                self.visit(cond)
        for name in ("elt", "key", "value"):
            sub = getattr(node, name, None)
            if sub is not None:
                self.visit(sub)

    v_ListComp = v_SetComp = v_GeneratorExp = v_DictComp = _comp

    def v_ClassDef(self, node):
        self.dispatch(node)
        for d in node.decorator_list:
            self.visit(d)
        for b in node.bases:
            self.visit(b)
        self.class_stack.append(node)
        saved, saved_bools, saved_totals = self.infer.env, self.infer.self_bools, self.infer.self_totals
        self.infer.env = Env(saved, self.file.class_attrs(node))
        self.infer.self_bools = self.file.class_bool_attrs(node)
        self.infer.self_totals = self.file.state(_running_totals, dict).get(id(node), frozenset())
        self.visit_block(node.body)
        self.infer.env, self.infer.self_bools, self.infer.self_totals = saved, saved_bools, saved_totals
        self.class_stack.pop()

    def v_FunctionDef(self, node):
        self.dispatch(node)
        for d in node.decorator_list:
            self.visit(d)
        args = node.args
        for d in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
            self.visit(d)
        cls = self.class_stack[-1] if self.class_stack and any(s is node for s in self.class_stack[-1].body) \
            else None
        class_name = cls.name if cls is not None else None
        self.enter_function(node, class_name)
        if cls is None and self.func_stack:  # a local function: its calls get what it returns
            self.infer.env.funcs[node.name] = node
            self._local_defs.add(id(node))
        self.file.kinds.note_usage(node)
        saved_env, saved_torch = self.infer.env, self.infer.torch_only
        # (a module's `__init__` sees its buffers where they are made, on the host until the module moves: a copy of
        # the attributes it may rebind for itself alone)
        init = cls is not None and node.name == "__init__" and self.file.get(_registers_buffers) \
            and self.file.is_module_class(cls)
        self.infer.env = Env(saved_env, dict(saved_env.self_attrs) if init else None)
        saved_init, self._init_attrs = self._init_attrs, (self.infer.env.self_attrs if init else None)
        self.infer.torch_only = self.file.torch_only_in(node)
        self._bind_params(node, class_name)
        self.func_stack.append(node)
        self.function_body(node)
        self.func_stack.pop()
        self.leave_function(node)
        if init:  # what `__init__` bound is the class's, as for other methods; its host buffers are its own
            shared = saved_env.self_attrs
            for attr, k in self.infer.env.self_attrs.items():
                if attr not in shared or shared[attr] != k and not (k == CPU and shared[attr] == TENSOR):
                    shared[attr] = k
        self._init_attrs = saved_init
        self.infer.env, self.infer.torch_only = saved_env, saved_torch

    v_AsyncFunctionDef = v_FunctionDef

    def enter_function(self, node, class_name: str | None) -> None:
        """A `def` starts (before its parameters are bound)."""

    def function_body(self, node) -> None:
        self.visit_block(node.body)

    def leave_function(self, node) -> None:
        """A `def` ends (its body walked)."""

    def _bind_params(self, node, class_name):
        a = node.args
        positional = a.posonlyargs + a.args
        n_defaults = len(a.defaults)
        defaults = [None] * (len(positional) - n_defaults) + list(a.defaults)
        # a loss class's `__init__` / `__repr__` take settings, not tensors
        tensor_params = node.name == "forward" or (hotpath._LOSSY.search(node.name) is not None or (
            class_name and not node.name.startswith("__") and hotpath._LOSSY.search(class_name)))
        self._probable_params: set[str] = set()
        facts = self._param_facts(node, positional + a.kwonlyargs)
        if self.param_seeds and node is self.target:
            facts.update(self.param_seeds)
        if self.name_kinds:  # what the module takes a name for elsewhere (param_names.py): probable
            open_params = [p for p in positional + a.kwonlyargs
                           if p.annotation is None and p.arg not in facts and p.arg not in ("self", "cls")]
            names = self.file.get(tensor_param_names) if open_params else ()
            for p in open_params:
                if p.arg in names:
                    facts[p.arg] = TENSOR
                    self._probable_params.add(p.arg)
        widened = self._widened_params(node, positional + a.kwonlyargs, facts)
        for name in widened:
            facts[name] = TENSOR
            self._probable_params.add(name)
        for i, (p, d) in enumerate(list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))):
            if i == 0 and class_name and p.arg in ("self", "cls"):
                continue
            k = facts.get(p.arg)
            if k is not None and p.arg in self._probable_params and p.arg not in widened \
                    and self._param_kind(p, d, tensor_params) is not None:
                k = None  # (what the function's name or the default says beats a probable use)
            if k == CPU_DEVICE:  # the call being resolved (or every call) hands it the CPU device
                self.infer.bind(ast.Name(p.arg), CPU_DEVICE, probable=p.arg in self._probable_params)
                continue
            if d is not None and self.infer.cpu_device(d) is True:  # `device="cpu"`: a device; which one?
                self.infer.bind(ast.Name(p.arg), OTHER, d if self._default_applies(node, p.arg) else None)
                continue
            guess = self._param_kind(p, d, tensor_params) if k is None else None
            self.infer.bind(ast.Name(p.arg), k if k is not None else guess,
                            probable=k is not None and p.arg in self._probable_params)
            if k is not None:
                self.infer.env.sure.add(p.arg)
            elif guess == TENSOR and tensor_params and self._param_kind(p, d, False) != TENSOR:
                self.infer.env.guess.add(p.arg)  # `forward(self, x, n)`: a tensor only by the function's name
        for p in (a.vararg, a.kwarg):
            if p is not None:
                self.infer.bind(ast.Name(p.arg), None)
        if a.kwarg is not None:
            dev = self._passed_device(node)
            if dev is not None:  # `def _convert(t, **kwargs)` called `_convert(x, device=device)` everywhere
                self.infer.env.kw_devices[a.kwarg.arg] = dev

    def _widened_params(self, node, params, facts) -> set[str]:
        """Parameters annotated as a Python number (`timestep: int`) that probably hold a tensor all the same: a
        private function's (its callers are the module's) whose every call in the module passes a tensor, and a
        method's whose same-named methods in two or more other modules of the folder take it, at the same
        position, annotated as a tensor (`timestep: int | torch.Tensor`): those classes are used in place of one
        another (`CrossFile.interface_tensors`), so their callers hand this one tensors too. Annotations in
        array code often say `int` for a 0-dim tensor; nothing checks them at run time. (A private function's
        callers are walked for the lint walk's own level only: the walks of callers of callers skip them.)"""
        todo = [p for p in params if p.arg not in facts and _number_annotation(p.annotation)]
        if not todo or self.level <= 0:
            return set()
        index = self.file.index
        owner = index.class_of(node)
        out: set[str] = set()
        if self.level == TOP and _private(node) \
                and (read := self.file.per(node, _indexed_or_compared)).intersection(p.arg for p in todo):
            callers = self.file.kinds.caller_kinds(node, owner, self.level)
            out.update(p.arg for p in todo if p.arg in read and callers.get(p.arg) == TENSOR)
        if len(out) < len(todo) and self.file.modules is not None and owner is not None \
                and index.is_method(node, owner) and not _decorated(node, "staticmethod"):
            positional = (node.args.posonlyargs + node.args.args)[1:]
            wanted = {f"{i}/{p.arg}": p.arg for i, p in enumerate(positional) if p in todo and p.arg not in out}
            if wanted:
                got = self.file.modules.interface_tensors(self.file, node.name, list(wanted))
                out.update(wanted[w] for w in got)
        return out

    def _module_calls(self, node) -> list:
        """Every call of `node` in this module (a class's constructions for its `__init__`), or [] when it is
        handed around as a value (its callers are then not all here)."""
        index = self.file.index
        cls = index.class_of(node)
        key = ("s", node.name) if index.is_method(node, cls) else ("n", node.name)
        if node.name == "__init__" and cls is not None:
            key = ("n", cls.name)
        return [] if index.escaped(key) else index.calls().get(key, [])

    def _passed_device(self, node) -> ast.AST | None:
        """A device (not the CPU) that calls of `node` in this module pass into its `**kwargs`: those calls
        make or copy there. None when the function is handed around, or a call hides its keywords
        (`**other`) or passes `non_blocking`."""
        calls = self._module_calls(node)
        if not calls:
            return None
        devs = []
        for c, _, _ in calls:
            if any(k.arg is None or k.arg == "non_blocking" for k in c.keywords):
                return None
            d = kwarg(c, "device")
            if d is not None:
                devs.append(d)
        return next((d for d in devs if is_cpu_device(d) is not True), None)

    def _default_applies(self, node, name: str) -> bool:
        """Whether a parameter holds its default where the walk is: in a walk made for a call that does
        not pass it (no seed for it), or when every call of the function in this module leaves it out (a private
        function's walk made for no one call: its default too; a public one's callers are mostly elsewhere)."""
        if node is self.target:
            if self.param_seeds:
                return name not in self.param_seeds
            # (a walk for no one call: a public function's callers are mostly elsewhere, and choose its device)
            return _private(node) or self._calls_leave_out(node, name)
        return self._calls_leave_out(node, name)

    def _calls_leave_out(self, node, name: str) -> bool:
        """Every call of `node` in this module (at least one) leaves the parameter `name` out."""
        calls = self._module_calls(node)
        if not calls:
            return False
        positional = [p.arg for p in node.args.posonlyargs + node.args.args]
        if self.file.index.is_method(node, self.file.index.class_of(node)) or node.name == "__init__":
            positional = positional[1:]
        at = positional.index(name) if name in positional else None
        return all(not any(k.arg == name or k.arg is None for k in c.keywords)
                   and (at is None or len(c.args) <= at) and not any(isinstance(x, ast.Starred) for x in c.args)
                   for c, _, _ in calls)

    def _param_facts(self, node, params) -> dict[str, str]:
        """Kinds of unannotated parameters known beyond a guess: from a `# type:` comment, from what
        every call in this module passes, or from the body using them as tensors (`x.unsqueeze(0)`)."""
        out: dict[str, str] = {}
        # (an annotation that says nothing known, `indices: tuple[np.array]`, leaves the callers to say)
        todo = [p for p in params if p.arg not in ("self", "cls") and (
            p.annotation is None or self._param_kind(p, None, False) is None or names_device(p.annotation))]
        if not todo:
            return out
        kinds = self.file.kinds
        tc = self.file.index.type_comment(node)
        callers = None
        owner = None
        for p in todo:
            k = annotation_kind(tc[0].get(p.arg), self.imports)[0] if tc else None
            if k is None and self.level > 0:
                if callers is None:
                    owner = self.file.index.class_of(node)
                    callers = kinds.caller_kinds(node, owner, self.level)
                k = callers.get(p.arg)
                if k is not None and (id(node), p.arg) in kinds.mixed:  # a tensor from some instances' calls
                    kinds.note_usage(node)
                    if id(p) not in kinds.usage:  # (and not surely one by the body's own use)
                        self._probable_params.add(p.arg)
                if k is None and p.arg not in callers:  # called through a dict of methods: what siblings get
                    k = kinds.sibling_host_param(node, owner, p.arg)
            if k is None and id(p) in kinds.usage:
                k = TENSOR
            if k is None and id(p) in kinds.probable_usage:
                k = TENSOR
                self._probable_params.add(p.arg)
            if k is None and p.annotation is None and p.arg in self.file.index.doc_tensors(node) \
                    and not _number_default(node, p.arg):
                k = TENSOR  # `t0: scalar float64 Tensor giving ...`: what its docstring declares
            if k == CPU_DEVICE and not _private(node):
                k = None  # a public function's device is for its callers elsewhere to choose (`set_timesteps`)
            if k is not None and (k == CPU_DEVICE or p.annotation is None or self._param_kind(p, None, False) is None):
                out[p.arg] = k  # (`device: torch.device` that every call hands the CPU device: the CPU device)
        missing = [p for p in todo if p.arg not in out and p.annotation is None]
        if missing and self.level > 0 and self.file.modules is not None and self.file.index.funcs.get(node.name) is node:
            got = self.file.modules.caller_kinds(self.file, node)  # calls from the folder's other modules
            for p in missing:
                if got.get(p.arg) is not None and (got[p.arg] != CPU_DEVICE or _private(node)):
                    out[p.arg] = got[p.arg]
                    self._probable_params.add(p.arg)
        return out

    def _param_kind(self, p: ast.arg, default, tensor_params) -> str | None:
        if p.annotation is not None:  # (asked again and again of the same parameters: once each)
            return self.file.per(p, _annotated_kind)
        if isinstance(default, ast.Constant) and default.value is not None:
            return HOST
        if tensor_params and default is None or tensor_params and isinstance(default, ast.Constant):
            return TENSOR
        lname = p.arg.lower()
        if "loader" in lname:
            return LOADER
        if lname in ("model", "net", "module", "encoder", "decoder"):
            return MODULE
        if lname in ("optimizer", "optim", "opt"):
            return OPTIMIZER
        return None

    def v_Lambda(self, node):
        self.dispatch(node)
        saved = self.infer.env
        self.infer.env = Env(saved)
        mapped = self._mapped_item(node)
        for i, p in enumerate(node.args.args):
            self.infer.bind(ast.Name(p.arg), mapped if i == 0 else None)
        self.visit(node.body)
        self.infer.env = saved

    def _mapped_item(self, lam: ast.Lambda) -> str | None:
        """The kind of each item `map(lambda t: ..., items)` hands the lambda (`map(lambda t: t.to(dev), (q, r))`)."""
        if not self.stmt_stack or "map" in self.imports:
            return None
        for n in ast.walk(self.stmt_stack[-1]):
            if n.__class__ is ast.Call and len(n.args) == 2 and n.args[0] is lam and isinstance(n.func, ast.Name) \
                    and n.func.id == "map":
                item = self.infer.iter_kind(n.args[1])[0]
                return item if isinstance(item, str) else None
        return None


def _fed_kind(got: list[tuple[str | None, bool]], own: str | None) -> str | None:
    """What an attribute holds from the values calls hand the parameters that reach it: a tensor where one does (as
    it is, or into an attribute the class's own reading says can hold one: `self.sum += val * n` can,
    `self.length += x.shape[0]` cannot), a host value where every one is; None where they do not say."""
    if any(k == TENSOR and (as_is or own == TENSOR) for k, as_is in got):
        return TENSOR
    if got and all(k == HOST for k, _ in got):
        return HOST
    return None


def _name_method_calls(file: FileFacts) -> dict[tuple[str, str], list[ast.Call]]:
    """(name, method) -> the calls `name.method(...)` of the module (for instances of the tree's classes)."""
    out: dict[tuple[str, str], list[ast.Call]] = {}
    for n in ast.walk(file.tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            out.setdefault((n.func.value.id, n.func.attr), []).append(n)
    return out


def _data_source(file: FileFacts, node: ast.For | ast.AsyncFor) -> ast.AST | None:
    """The iterable of a loop that runs a training step (`.backward()`, `optimizer.step()` in its body), a name or an
    attribute (also inside `enumerate(...)` / `tqdm(...)`): `for batch in dataset.train:`. None otherwise. (Memoised
    per loop: every walk of the function asks.)"""
    it = node.iter
    while isinstance(it, ast.Call) and len(it.args) == 1 and isinstance(it.func, (ast.Name, ast.Attribute)) \
            and (it.func.id if isinstance(it.func, ast.Name) else it.func.attr) in ("enumerate", "tqdm", "iter"):
        it = it.args[0]
    if not isinstance(it, (ast.Name, ast.Attribute)) or not file.get(_may_step) \
            or not hotpath.body_calls_step(node.body):
        return None
    return it


def _may_step(file: FileFacts) -> bool:
    """The module's text has what a training step's call needs (`.backward(`, `.step(`): else no loop of it runs one."""
    source = file.source
    return "backward" in source or ".step(" in source


def _assigned_in(scope: ast.AST, name: str) -> bool:
    """`scope` binds `name` itself (`name = ...`, `with tqdm(...) as name`, a loop's target): not a parameter."""
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(scope))


def _all_args(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _duck_classes(file: FileFacts) -> tuple[dict[str, list[ast.ClassDef]], list[tuple[str, str]]]:
    """(method name -> the nn.Module classes of the module that define it; (class name, its module's file) for each
    class name the module imports from another module of the tree) for `Walk.duck_method`."""
    local: dict[str, list[ast.ClassDef]] = {}
    for cls in file.index.classes.values():
        if not file.is_module_class(cls):
            continue
        for s in cls.body:
            if isinstance(s, FUNCS):
                local.setdefault(s.name, []).append(cls)
    imported = []
    if file.modules is not None:
        for n in sorted(file.imported_names):
            if n[:1].isupper() and n not in file.index.classes \
                    and (where := file.modules.imported(file, n)) is not None:
                imported.append((n, where[0]))
    return local, imported


def _library_based(file: FileFacts, cls: ast.ClassDef, depth: int = 0) -> bool:
    """`cls` (of `file`) has a base that is neither torch's, `abc`'s or `typing`'s nor a class of the tree: a library's
    class, whose own methods of the same names the tree cannot see."""
    for b in cls.bases:
        q = qualify(b, file.imports)
        if q is not None and q.split(".", 1)[0] in ("torch", "abc", "typing", "builtins"):
            continue
        if isinstance(b, ast.Name):
            if b.id == "object":
                continue
            if b.id in file.index.classes:
                if depth < 5 and _library_based(file, file.index.classes[b.id], depth + 1):
                    return True
                continue
            if b.id in file.imported_names and file.is_tree_module(b.id):
                continue
        return True
    return False


def _registers_buffers(file: FileFacts) -> bool:
    """The module's text registers buffers somewhere (asked once per file, not once per `__init__`)."""
    return "register_buffer" in file.source


def _registers_by_name(file: FileFacts) -> bool:
    """The module's text registers buffers or parameters by name somewhere (`_registers`)."""
    return "register_buffer" in file.source or "register_parameter" in file.source


def _registers(method: str) -> bool:
    """`self.register_buffer("w", t)`, `self.register_parameter("w", p)`, and a class's own wrapper of them
    (`self.register_buffer_or_parameter("x_max", t)`): the named attribute is a tensor that moves with the module."""
    return method in ("register_buffer", "register_parameter") or method.startswith("register_") and (
        "buffer" in method or "parameter" in method)


def _call_params(call: ast.Call, fn: FunctionNode, cls) -> tuple[list, set[str]]:
    """The parameters a call's positional arguments fill, in order (the receiver left out for `obj.m(...)`), and the
    names its keywords may fill."""
    a = fn.args
    params = a.posonlyargs + a.args
    if cls is not None and params and params[0].arg in ("self", "cls") and isinstance(call.func, ast.Attribute):
        params = params[1:]
    return params, {p.arg for p in params + a.kwonlyargs}


def _wraps(body: list, name: str) -> bool:
    """The block is `name = (name,)` / `name = [name]` alone."""
    if len(body) != 1 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1:
        return False
    t, v = body[0].targets[0], body[0].value
    return isinstance(t, ast.Name) and t.id == name and isinstance(v, (ast.Tuple, ast.List)) and len(v.elts) == 1 \
        and isinstance(v.elts[0], ast.Name) and v.elts[0].id == name


_ENTRY = re.compile(r"self\.(\w+)(?:\[|\.append\()")


def _entry_attrs(file: FileFacts, _tree) -> frozenset[str]:
    """The attributes whose entries the file's text indexes or appends to (`self.<attr>[`, `self.<attr>.append(`)."""
    return frozenset(_ENTRY.findall(file.source))


def _number_annotation(ann: ast.AST | None) -> bool:
    """`int` / `float`: a Python number, which a 0-dim tensor often stands in for at run time."""
    return isinstance(ann, ast.Name) and ann.id in ("int", "float")


def _indexed_or_compared(file: FileFacts, fn) -> frozenset[str]:
    """The names `fn`'s own body indexes with (`x[t]`) or compares (`t > 0`): where a 0-dim tensor is read on the
    host (the callers of a private function are walked only for those of its number parameters)."""
    out = set()
    for n in file.src.own_nodes(fn):
        if isinstance(n, ast.Subscript):
            sl = n.slice
            out.update(e.id for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]) if isinstance(e, ast.Name))
        elif isinstance(n, ast.Compare):
            out.update(e.id for e in (n.left, *n.comparators) if isinstance(e, ast.Name))
    return frozenset(out)


def _private(fn) -> bool:
    """A module's own helper (`_draw`), not a function its users call (`set_timesteps`, `__init__`)."""
    return fn.name.startswith("_") and not fn.name.endswith("__")


def _annotated_kind(file: FileFacts, p: ast.arg) -> str | None:
    """What an annotated parameter holds, from its annotation and the file's imports and record types."""
    ann_node, imports = p.annotation, file.imports
    if is_tensor_annotation(ann_node, imports):
        return TENSOR
    k = annotation_kind(ann_node, imports)[0]
    if k is not None:
        return k
    ann = ast.dump(ann_node)
    if any(f"'{t}'" in ann for t in ("int", "float", "bool", "str")) and "Tensor" not in ann \
            and "'Any'" not in ann and "'object'" not in ann:  # (`dict[str, Any]` may hold tensors)
        return HOST
    if isinstance(ann_node, ast.Name) and ann_node.id in file.records and ann_node.id not in imports:
        return RECORD + ann_node.id  # `state: State`: what its type's fields hold
    q = qualify(ann_node, imports) or ""
    if q.endswith(".Module") or q.startswith("torch.nn."):
        return MODULE
    if q.endswith("DataLoader"):
        return LOADER
    return None


class KindWalk(Walk):
    """A walk of one function with no rules, for the kind facts: the kinds its `return`s give, and what
    each call of another function of the module passes."""

    def __init__(self, file: FileFacts, level: int = 0):
        super().__init__(file, level)
        self.returns: list[tuple[ast.AST, str | None, tuple | None]] = []  # (value, kind, kinds of a tuple's parts)
        self.calls: dict[int, tuple] = {}  # id(call) -> (callee, positional kinds, keyword kinds, open-ended)
        self.built: dict[int, tuple] = {}  # id(call) -> (positional kinds, keyword kinds, open-ended) of a record
        # id(call) -> (positions, keywords) of the arguments that are a DataLoader's batches (or parts of them)
        self.batch_args: dict[int, tuple[tuple[int, ...], frozenset[str]]] = {}
        self._loader_loops: list[tuple[ast.AST, frozenset[str]]] = []  # (loop, its target's names) around here
        self.fills: dict[str, list] = {}  # attribute -> the kinds of the values `self.<attr>[key] = value` put in it
        self._ifs: dict[int, ast.If] | None = None

    def run_function(self, fn: ast.AST, cls: ast.ClassDef | None, seeds: dict | None = None) -> KindWalk:
        self.target, self.param_seeds = fn, seeds
        if cls is not None:
            self.class_stack.append(cls)
            self.infer.env = Env(None, self.file.class_attrs(cls))
            self.infer.self_bools = self.file.class_bool_attrs(cls)
            self.infer.self_totals = self.file.state(_running_totals, dict).get(id(cls), frozenset())
        self.visit(fn)
        return self

    def v_Assign(self, node):
        super().v_Assign(node)
        for t in node.targets:  # `self.stats["mean"] = mean`: what a dict attribute's entries hold (_filled_attrs)
            if isinstance(t, ast.Subscript) and _self_attr(t.value):
                self.fills.setdefault(t.value.attr, []).append(self.infer.kind(node.value))  # type: ignore[attr-defined]

    def loop_body(self, node, is_loader: bool) -> None:
        if not (is_loader and isinstance(node, (ast.For, ast.AsyncFor)) and self.func_stack
                and self.func_stack[-1] is self.target):
            super().loop_body(node, is_loader)
            return
        # the target's names still hold the batch where the body does not bind them again
        rebound = {n.id for s in node.body for n in walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        names = frozenset(n.id for n in walk(node.target) if isinstance(n, ast.Name)) - rebound
        if names and rebound:
            names |= _batch_aliases(node.body, names)
        self._loader_loops.append((node, names))
        try:
            super().loop_body(node, is_loader)
        finally:
            self._loader_loops.pop()

    def _batch_part(self, e: ast.AST) -> bool:
        """`x` bound by `for x, y in loader:` around here, or a part of it (`batch["image"]`, `x[i]`)."""
        while isinstance(e, ast.Subscript):
            e = e.value
        return isinstance(e, ast.Name) and any(e.id in names for _, names in self._loader_loops)

    def v_Return(self, node):
        super().v_Return(node)
        if node.value is None or not self.func_stack or self.func_stack[-1] is not self.target:
            return
        v = node.value
        if isinstance(v, ast.Constant) and v.value is None or self._none_guarded(v, node):
            return
        if isinstance(v, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in v.elts):
            elts = tuple(self._returned_kind(e) for e in v.elts)
        else:
            r = self.resolve_call(v) if isinstance(v, ast.Call) else None
            elts = r.elts if r is not None else None
        self.returns.append((v, self._returned_kind(v), elts))

    def _returned_kind(self, e: ast.AST) -> str | None:
        """What a returned value is, the CPU device told apart (`return torch.empty(0).device, dtype`):
        a caller's name bound to it holds the CPU device."""
        k = self.infer.kind(e)
        if not (k in (OTHER, HOST) and isinstance(e, (ast.Name, ast.Attribute, ast.Call, ast.Constant))
                or k is None and isinstance(e, ast.Attribute) and e.attr == "device"):
            return k  # (a device is no tensor; `tensors[0].device` of unknown `tensors` is a device too)
        if self.infer.cpu_device(e) is True:
            return CPU_DEVICE
        if isinstance(e, ast.Attribute) and e.attr == "device" and self._from_params(e.value, 0):
            return ARG_DEVICE
        return k

    def _from_params(self, e: ast.AST, depth: int) -> bool:
        """A value the walked function was handed, or a part of one: a parameter, `p[i]`, a name every
        binding of which in the function is such a part or a comprehension over one (`tensors = [t for t in
        tensor_list if isinstance(t, Tensor)]`)."""
        fn = self.target
        while isinstance(e, ast.Subscript):
            e = e.value
        if not isinstance(e, ast.Name) or fn is None or depth > 3:
            return False
        a = fn.args
        if any(p.arg == e.id for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg] if p is not None):
            return True
        values = []
        for n in self.file.src.own_nodes(fn):
            if isinstance(n, (ast.For, ast.comprehension)) and any(
                    isinstance(t, ast.Name) and t.id == e.id for t in walk(n.target)):
                values.append(n.iter)
            elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == e.id for t in n.targets):
                values.append(n.value)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and getattr(n.target, "id", None) == e.id:
                return False
        if not values:
            return False
        for v in values:
            if isinstance(v, (ast.ListComp, ast.GeneratorExp)):
                if not (isinstance(v.elt, ast.Name) and len(v.generators) == 1
                        and isinstance(v.generators[0].target, ast.Name) and v.generators[0].target.id == v.elt.id
                        and self._from_params(v.generators[0].iter, depth + 1)):
                    return False
            elif not self._from_params(v, depth + 1):
                return False
        return True

    def _none_guarded(self, v: ast.AST, ret: ast.Return) -> bool:
        """`return x` right inside `if x is None:`: a None."""
        if not isinstance(v, ast.Name):
            return False
        if self._ifs is None and self.target is not None:  # id(statement) -> the `if` whose body holds it
            self._ifs = {id(s): n for n in statements(self.target) if isinstance(n, ast.If) for s in n.body}
        t = getattr((self._ifs or {}).get(id(ret)), "test", None)
        return isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == v.id \
            and len(t.ops) == 1 and isinstance(t.ops[0], ast.Is) \
            and isinstance(t.comparators[0], ast.Constant) and t.comparators[0].value is None

    def _passed_kind(self, e: ast.AST) -> str | None:
        """The kind an argument passes on: unknown when it is read off a guess (`outputs["meta"]` of a
        loss's parameter `outputs`, which is a dict as often as a tensor)."""
        root = e
        while True:
            if isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            elif isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) \
                    and self.file.call_name(root) is None:
                root = root.func.value
            else:
                break
        if isinstance(root, ast.Name) and (self.infer.env.is_guess(root.id) or (self.record_names or self.record_attrs) and
                                           isinstance(e, ast.Name) and self.infer.env.is_probable(e.id)):
            return None  # (and, read for another module's function, what the caller only supposes)
        k = self.infer.kind(e)
        if k in (OTHER, HOST) and self.infer.cpu_device(e, calls=False) is True and not self._open_default(e):
            return CPU_DEVICE  # (what callers agree a device parameter holds: `_agree`)
        return k

    def _open_default(self, e: ast.AST) -> bool:
        """`e` is a parameter of the function walked that holds the CPU device only by its default, which
        callers from elsewhere may replace (`def grid_fov(..., device="cpu"): grid(..., device=device)`)."""
        if not isinstance(e, ast.Name) or not self.func_stack:
            return False
        fn = self.func_stack[-1]
        d = param_defaults(fn.args).get(e.id)
        return d is not None and not (self.param_seeds and e.id in self.param_seeds) \
            and not self._calls_leave_out(fn, e.id)

    def v_Call(self, node):
        target = self.callee(node)
        f = node.func
        if f.__class__ is ast.Attribute and f.attr == "append" and len(node.args) == 1 and not node.keywords \
                and _self_attr(f.value):  # `self.history.append(loss)`: what a list attribute's items hold
            self.fills.setdefault(f.value.attr, []).append(self.infer.kind(node.args[0]))  # type: ignore[attr-defined]
        if target is None and isinstance(f, ast.Name) and f.id in self.file.index.classes and f.id not in self.imports:
            target = self.file.index.method(self.file.index.classes[f.id], "__init__")  # a construction
        elif target is None and isinstance(f, ast.Name) and f.id == "cls" and self.class_stack and self.func_stack \
                and _decorated(self.func_stack[-1], "classmethod"):
            target = self.file.index.method(self.class_stack[-1], "__init__")  # `cls(...)`: one too
        if target is None and isinstance(f, ast.Attribute) and self.file.index.classes:
            target = self.file.index.instance_calls(f.attr).get(id(node))  # `top1.update(acc1[0])`
        built = target is None and isinstance(f, ast.Name) and f.id in self.infer.records and f.id not in self.imports
        named = target is None and (isinstance(f, ast.Name) and f.id in self.record_names or  # (crossfile.caller_kinds)
                                    isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                    and (f.value.id, f.attr) in self.record_attrs)
        if target is not None or built or named:
            args = []
            open_ended = any(k.arg is None for k in node.keywords)
            for a in node.args:
                if isinstance(a, ast.Starred):
                    open_ended = True
                    break
                args.append(self._passed_kind(a))
            kws = {k.arg: self._passed_kind(k.value) for k in node.keywords if k.arg is not None}
            if target is not None:
                self.calls[id(node)] = (target[0], args, kws, open_ended)
                if self._loader_loops:  # `self._train_batch(X, y)` in `for X, y in loader:`
                    pos = tuple(i for i, a in enumerate(node.args[:len(args)]) if self._batch_part(a))
                    kw = frozenset(k.arg for k in node.keywords if k.arg is not None and self._batch_part(k.value))
                    if pos or kw:
                        self.batch_args[id(node)] = (pos, kw)
            elif named:
                self.calls[id(node)] = (None, args, kws, open_ended)
            else:
                self.built[id(node)] = (args, kws, open_ended)
        self.visit_children(node)


def _batch_aliases(body: list, names: frozenset[str]) -> frozenset[str]:
    """Names a loader loop's body binds, every time, to a part of the batch (`batch, labels = batch_all[0],
    batch_all[1]` on each branch): they hold the batch's tensors as its target's names do."""
    def part(v) -> bool:
        while isinstance(v, ast.Subscript):
            v = v.value
        return isinstance(v, ast.Name) and v.id in names

    ok: dict[str, bool] = {}
    seen: set[int] = set()  # the Name targets read as pairs
    for st in body:
        for n in walk(st):
            if isinstance(n, ast.Assign) and len(n.targets) == 1:
                t, v = n.targets[0], n.value
                pairs = [(t, v)] if isinstance(t, ast.Name) else list(zip(t.elts, v.elts)) \
                    if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and len(t.elts) == len(v.elts) else []
                for a, b in pairs:
                    if isinstance(a, ast.Name):
                        seen.add(id(a))
                        ok[a.id] = ok.get(a.id, True) and part(b)
            elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in seen:
                ok[n.id] = False  # bound some other way (a loop target, `+=`, `with ... as`, a tuple of a call)
    return frozenset(k for k, v in ok.items() if v)


def _is_generator_text(file: FileFacts, fn: FunctionNode) -> bool:
    """The function is a generator (the module's text says `yield` at all: one scan per file, then per function)."""
    return file.get(_says_yield) and not isinstance(fn, ast.Lambda) and file.per(fn, _yields)


def _says_yield(file: FileFacts) -> bool:
    return "yield" in file.source


def _yields(file: FileFacts, fn: FunctionNode) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in file.src.own_nodes(fn))


def _generator_source(file: FileFacts, fn: FunctionNode) -> str | None:
    """What a generator function yields, when that is a DataLoader's batches: "" where it draws them from a loader it
    builds (`loader = iter(DataLoader(...))` ... `yield next(loader)`), a parameter's name where it yields the items
    of that parameter (`for data in dl: yield data`, `yield from dl`, `yield next(it)` of `it = iter(dl)`: batches
    where the call hands a loader); else None."""
    nodes = list(file.src.own_nodes(fn))
    params = {p.arg for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    assigns: dict[str, list] = {}
    fors: dict[str, list] = {}
    for n in nodes:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                for x in walk(t):
                    if isinstance(x, ast.Name):
                        assigns.setdefault(x.id, []).append(n.value if t is x else None)
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            for x in walk(n.target):
                if isinstance(x, ast.Name):
                    fors.setdefault(x.id, []).append(n.iter if n.target is x else None)

    def source(e, seen: frozenset = frozenset()) -> str | None:
        """"": a loader built here; a name: that parameter (never rebound); "*": the name being read (`loader =
        iter(loader)`); None: anything else."""
        if len(seen) > 3 or e is None:
            return None
        if isinstance(e, ast.Call):
            q = qualify(e.func, file.imports) or (e.func.id if isinstance(e.func, ast.Name) else "")
            if q.endswith("DataLoader"):
                return ""
            if q == "iter" and len(e.args) == 1:
                return source(e.args[0], seen)
            return None
        if isinstance(e, ast.Name):
            if e.id in seen:
                return "*"
            if e.id in params and e.id not in assigns and e.id not in fors:
                return e.id
            vals = assigns.get(e.id)
            if vals and e.id not in fors:
                got = {source(v, seen | {e.id}) for v in vals} - {"*"}
                return got.pop() if len(got) == 1 else None
        return None

    found: set[str | None] = set()
    for n in nodes:
        if isinstance(n, ast.YieldFrom):
            found.add(source(n.value))
        elif isinstance(n, ast.Yield):
            v = n.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "next" and v.args:
                found.add(source(v.args[0]))
            elif isinstance(v, ast.Name) and v.id in fors and v.id not in assigns:
                got = {source(i) for i in fors[v.id]}
                found.add(got.pop() if len(got) == 1 else None)
            else:
                return None
        if None in found or len(found) > 1:
            return None
    return found.pop() if found else None


_MUTATORS = frozenset({"update", "setdefault", "append", "extend", "insert", "__setitem__", "fromkeys", "copy"})


def _self_attr(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _empty_container(v: ast.AST) -> bool:
    """`{}`, `[]`, `dict()`, `OrderedDict()`, or None."""
    if isinstance(v, ast.Constant):
        return v.value is None
    if isinstance(v, ast.Dict):
        return not v.keys
    if isinstance(v, ast.List):
        return not v.elts
    return isinstance(v, ast.Call) and not v.args and not v.keywords and (
        getattr(v.func, "id", None) or getattr(v.func, "attr", None)) in ("dict", "OrderedDict", "list")


def _narrows(kind: str | None, before: str | None) -> bool:
    """Whether a type test's answer `kind` replaces what the name held: a tensor where it was not known
    to be one, anything else where it was not a list of tensors (`isinstance(out, (list, tuple))`)."""
    if kind == TENSOR:
        return before not in TENSORISH
    return before not in (TENSORS, CPUS)


def _number_default(fn, name: str) -> bool:
    """The parameter `name` of `fn` defaults to a constant other than None (`log_density=0.0`)."""
    a = fn.args
    positional = a.posonlyargs + a.args
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
    return any(p.arg == name and isinstance(d, ast.Constant) and d.value is not None for p, d in pairs)



def file_facts(path: str, source: str, tree: ast.Module, crossfile=None, modules=None) -> FileFacts:
    """The providers of one file, with rule-less `KindWalk`s for the kind facts (and the other modules
    of its tree, when `crossfile` knows them; `modules`: only for calls through a module, `misc.f(t)`)."""
    return FileFacts(path, source, tree, walker=KindWalk, crossfile=crossfile, modules=modules)


def _module_default_device(file: FileFacts) -> bool:
    """The module sets a CUDA default device: when imported (at its top level, or under a top-level `if`:
    `if torch.cuda.is_available(): torch.set_default_device("cuda")`), or in one of its functions (GraN-DAG's
    `learn` sets `torch.cuda.FloatTensor` before it trains): the process's factories given no device make on
    the GPU from then on, the module's own among them."""
    if "set_default_device" not in file.source and "set_default_tensor_type" not in file.source:
        return False
    return any(isinstance(n, ast.Expr) and sets_default_device(n, file.imports) for n in walk(file.tree))


def _masks_of(file: FileFacts, fn: FunctionNode) -> bool | tuple[bool, ...]:
    return returned_masks(file.src, fn)


def _imported_masks() -> None:  # (a key of its own for the per-file memo of imported functions' masks)
    pass


def _is_super(e: ast.AST) -> bool:
    """`super()` or `super(Cls, self)`."""
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "super"


def _class_params(file: FileFacts, fn: FunctionNode) -> dict[str, ast.ClassDef]:
    """The parameters of `fn` annotated with a class of the module (`best: Evaluator`, `"Evaluator"`)."""
    out = {}
    classes = file.index.classes
    if not classes:
        return out
    for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        ann = p.annotation
        name = ann.id if isinstance(ann, ast.Name) else ann.value if isinstance(ann, ast.Constant) else None
        if isinstance(name, str) and name in classes:
            out[p.arg] = classes[name]
    return out


def _attribute_feeds(file: FileFacts, cls: ast.ClassDef) -> dict:
    return attribute_feeds(file.src, cls)


def _running_totals() -> None:  # (a key of its own for the per-file table: class id -> its running totals)
    pass


# (a literal first, which the regex engine searches for fast; a match is only a hint: the class's statements decide)
_SELF_AUGASSIGN = re.compile(r"self\.\w+[ \t]*(?:\+|-|\*|/|//|@)=")


def _self_augassign_lines(file: FileFacts) -> tuple[int, ...]:
    """The lines of the file's `self.<attr> += ...` statements, from its text (a class without one has no running
    total)."""
    text = file.source
    out, line, at = [], 1, 0
    for m in _SELF_AUGASSIGN.finditer(text):
        line += text.count("\n", at, m.start())
        at = m.start()
        out.append(line)
    return tuple(out)
