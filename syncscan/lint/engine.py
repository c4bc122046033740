"""The lint engine: one walk over a module's `ast`, dispatching nodes to the rules while the
tensor inference follows assignments in source order and the hot-path state follows loops and
functions. `lint_source` lints one file; `settle_context` applies the cross-file call graph.
"""

from __future__ import annotations

import ast
import re
import sys

from syncscan.lint import hotpath, noqa, steppath
from syncscan.lint.imports import import_map, qualify, statements
from syncscan.lint.interproc import TOP, ModuleFacts, Returned
from syncscan.lint.lines import split_lines
from syncscan.lint.result import FileResult
from syncscan.lint.rule import Edit, Finding, Fix, Rule
from syncscan.lint.tensors import (CPU, CPUS, HOST, LOADER, MODULE, NDARRAY, OPTIMIZER, TENSOR, TENSORISH, TENSORS, Env,
                                   Inference, annotation_kind, is_tensor_annotation)

_SKIP_FILE = re.compile(r"^\s*#\s*syncscan:\s*skip-file\b", re.M)

# -- fast tree plumbing -------------------------------------------------------------------------
# `ast.iter_child_nodes` / `ast.walk` / `ast.get_source_segment` dominated the profile; these do
# the same with per-type field tables. Leaf singletons (Load, Add, Eq, ...) have no children and
# no rule looks at them, so the "lean" tables skip the fields that hold only them.
_LEAF_TYPES = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
_LEAF_TYPE_NAMES = frozenset({"expr_context", "boolop", "operator", "unaryop", "cmpop"})
_SCALAR_TYPES = frozenset({"identifier", "string", "constant", "int"})
_MAY_HOLD_NONE = frozenset({"keys", "kw_defaults"})  # `{**d}` keys, keyword-only args without default
_ASDL = re.compile(r"^(\w+)\((.*)\)$")
_child_fns: dict[tuple[type, bool], object] = {}


def _generic_children(node: ast.AST, lean: bool) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, minus the leaf singletons when `lean`."""
    out = []
    for c in ast.iter_child_nodes(node):
        if not (lean and isinstance(c, _LEAF_TYPES)):
            out.append(c)
    return out


def _make_child_fn(t: type, lean: bool):
    """A function listing a node's children in `ast.iter_child_nodes` order, written for the
    node type from its ASDL signature (the class docstring, e.g. `BinOp(expr left, operator op,
    expr right)`): identifier/string/constant/int fields are skipped without a look, optional
    fields tested for None, lists copied whole. Unknown layouts use the generic walk."""
    m = _ASDL.match((t.__doc__ or "").strip().split("\n")[0])
    fields = []
    for part in m.group(2).split(",") if m and m.group(2).strip() else []:
        typ, _, name = part.strip().partition(" ")
        fields.append((typ, name.strip()))
    if m is None or m.group(1) != t.__name__ or tuple(n for _, n in fields) != tuple(t._fields):
        return lambda node: _generic_children(node, lean)
    lines = ["def children(node):", "    out = []"]
    for typ, name in fields:
        base = typ.rstrip("?*")
        if base in _SCALAR_TYPES or (lean and base in _LEAF_TYPE_NAMES):
            continue
        if typ.endswith("*"):
            if name in _MAY_HOLD_NONE:
                lines.append(f"    out += [c for c in node.{name} if c is not None]")
            else:
                lines.append(f"    out += node.{name}")
        elif typ.endswith("?"):
            lines.append(f"    if node.{name} is not None: out.append(node.{name})")
        else:
            lines.append(f"    out.append(node.{name})")
    lines.append("    return out")
    ns: dict = {}
    exec("\n".join(lines), ns)  # noqa: S102 - generated from ast's own field lists
    return ns["children"]


def _children(node: ast.AST, lean: bool = True) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, minus the leaf singletons (Load, Add, Eq, ...) when `lean`."""
    fn = _child_fns.get((node.__class__, lean))
    if fn is None:
        fn = _child_fns[(node.__class__, lean)] = _make_child_fn(node.__class__, lean)
    try:
        return fn(node)
    except AttributeError:  # a node built by hand without every field
        return _generic_children(node, lean)


def _walk(node: ast.AST, lean: bool = True):
    """`ast.walk(node)` in the same (breadth-first) order, minus the leaf singletons when `lean`."""
    todo = [node]
    i = 0
    while i < len(todo):
        n = todo[i]
        i += 1
        yield n
        todo.extend(_children(n, lean))


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _split_lines_no_ff(source: str) -> list[str]:
    """The lines `ast.get_source_segment` counts in (only \\r, \\n, \\r\\n end a line), with their ends."""
    return _LINE.findall(source)


def _segment(lines: list[str], node: ast.AST) -> str | None:
    """`ast.get_source_segment(source, node)` over the source's pre-split lines."""
    try:
        if node.end_lineno is None or node.end_col_offset is None:
            return None
        lineno = node.lineno - 1
        end_lineno = node.end_lineno - 1
        col_offset = node.col_offset
        end_col_offset = node.end_col_offset
    except AttributeError:
        return None
    if end_lineno == lineno:
        return lines[lineno].encode()[col_offset:end_col_offset].decode()
    first = lines[lineno].encode()[col_offset:].decode()
    last = lines[end_lineno].encode()[:end_col_offset].decode()
    return "".join([first, *lines[lineno + 1:end_lineno], last])


def _ast_classes(names) -> dict[str, type]:
    """ast node classes by name, for the names rules subscribe to (others can never match)."""
    out = {}
    for n in names:
        c = vars(ast).get(n)
        if isinstance(c, type) and issubclass(c, ast.AST):
            out[n] = c
    return out


# every call `hotpath._is_step_call` accepts has one of these in its attribute name
_STEP_WORDS = ("backward", "step")
_STEP_OPAQUE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _stmt_calls_step(stmt: ast.AST, memo: dict[int, bool]) -> bool:
    """`hotpath.body_calls_step([stmt])`, memoised per statement so that nested loops and the
    functions around them do not walk the same statements again."""
    if isinstance(stmt, _STEP_OPAQUE):
        return False
    stack = [stmt]
    while stack:
        for c in _children(stack.pop()):
            if isinstance(c, _STEP_OPAQUE):
                continue
            if isinstance(c, ast.stmt):
                r = memo.get(id(c))
                if r is None:
                    r = memo[id(c)] = _stmt_calls_step(c, memo)
                if r:
                    return True
            elif isinstance(c, ast.Call) and hotpath._is_step_call(c):
                return True
            else:
                stack.append(c)
    return False


class Scope:
    __slots__ = ("key", "name", "class_name", "hot", "calls")

    def __init__(self, key, name, class_name, hot):
        self.key, self.name, self.class_name, self.hot = key, name, class_name, hot
        self.calls: list[tuple[str, str]] = []


class LintContext:
    """What a rule sees: the source, the inference, where we are, and `report`."""

    def __init__(self, path: str, source: str, tree: ast.Module, rules: list[Rule], hot_patterns=()):
        self.path = path
        self.source = source
        self.lines = split_lines(source)
        self.tree = tree
        self.imports = import_map(tree)
        self.infer = Inference(self.imports)
        self.rules = rules
        self.hot_patterns = tuple(hot_patterns)
        self.result = FileResult(path)
        self.scopes: list[Scope] = [Scope("<module>", "<module>", None, False)]
        self.result.functions["<module>"] = {"name": "<module>", "method": False, "hot": False, "calls": []}
        self.hot_loops = 0  # depth of enclosing hot loops in the current function
        self.loops = 0
        self.class_stack: list[ast.ClassDef] = []
        self.func_stack: list[ast.AST] = []
        self.stmt_stack: list[ast.stmt] = []
        self._parents: dict[int, ast.AST] | None = None
        self._leaf_parents: dict[int, ast.AST] | None = None
        self._segment_lines: list[str] | None = None
        handlers: dict[str, list] = {}
        for r in rules:
            for node_type, h in r.handlers.items():
                handlers.setdefault(node_type, []).append((r, h))
        self.handlers = handlers
        self._set_handlers(handlers)
        self._special = _special_visits(type(self))
        self.error: str | None = None  # the first rule crash in this file, as one line
        # which statements run a training step, memoised (see _stmt_calls_step); a file that
        # never says "step" or "backward" has none (non-ASCII: identifiers are NFKC-normalised)
        self._step_memo: dict[int, bool] = {}
        self._may_step = not source.isascii() or any(w in source for w in _STEP_WORDS)
        # whether any class may call `register_buffer` (once per file: a search per class is
        # quadratic in the size of a big module)
        self._may_buffer = "register_buffer" in source or not source.isascii()
        self.facts = ModuleFacts(self)
        self._hook_inference()

    def _hook_inference(self) -> None:
        self.infer.resolver = self.resolve_call
        self.infer.usage = self.facts.usage

    def _set_handlers(self, handlers: dict[str, list]) -> None:
        classes = _ast_classes(handlers)
        self._by_type = {classes[n]: hs for n, hs in handlers.items() if n in classes and hs}
        # skip the leaf singletons unless some rule subscribes to one of them
        self._lean = not any(issubclass(c, _LEAF_TYPES) for c in self._by_type)

    # -- for rules -----------------------------------------------------------------------------
    def qualname(self, node: ast.AST) -> str | None:
        return qualify(node, self.imports)

    def call_name(self, call: ast.Call) -> str | None:
        """The qualified name of the called function (`torch.nonzero`), through the imports."""
        return qualify(call.func, self.imports)

    def kind(self, node: ast.AST) -> str | None:
        return self.infer.kind(node)

    def is_tensor(self, node: ast.AST) -> bool:
        """May be a CUDA tensor (a tensor not known to live on the host)."""
        return self.infer.kind(node) == TENSOR

    def maybe_tensor(self, node: ast.AST) -> bool:
        """Not known to be anything but a device tensor: a tensor, or unknown."""
        return self.infer.kind(node) in (TENSOR, TENSORS, None)

    def text(self, node: ast.AST) -> str:
        if self._segment_lines is None:
            self._segment_lines = _split_lines_no_ff(self.source)
        return _segment(self._segment_lines, node) or ""

    @property
    def hot(self) -> bool:
        return self.scopes[-1].hot or self.hot_loops > 0

    @property
    def function(self) -> ast.AST | None:
        return self.func_stack[-1] if self.func_stack else None

    @property
    def statement(self) -> ast.stmt | None:
        return self.stmt_stack[-1] if self.stmt_stack else None

    def parent(self, node: ast.AST) -> ast.AST | None:
        if isinstance(node, _LEAF_TYPES):  # shared singletons: the last parent ast.walk meets
            if self._leaf_parents is None:
                self._leaf_parents = {}
                for p in _walk(self.tree, lean=False):
                    for c in _children(p, lean=False):
                        self._leaf_parents[id(c)] = p
            return self._leaf_parents.get(id(node))
        if self._parents is None:
            parents = self._parents = {}
            for p in _walk(self.tree):
                for c in _children(p):
                    parents[id(c)] = p
        return self._parents.get(id(node))

    def position(self, node: ast.AST, end: bool = False) -> tuple[int, int]:
        """1-based (line, character column) of a node's start or end."""
        line = node.end_lineno if end else node.lineno
        col = node.end_col_offset if end else node.col_offset
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if not text.isascii():
            col = len(text.encode("utf-8")[:col].decode("utf-8", "replace"))
        return line, col + 1

    def edit(self, node: ast.AST, content: str, end_node: ast.AST | None = None) -> Edit:
        l, c = self.position(node)
        el, ec = self.position(end_node or node, end=True)
        return Edit(l, c, el, ec, content)

    def report(self, rule: Rule, node, message, suggestion="", fix: Fix | None = None, end_node=None):
        line, col = self.position(node)
        end_line, end_col = self.position(end_node or node, end=True)
        self.result.findings.append(Finding(
            self.path, line, col, end_line, end_col, rule.code, rule.name, message, suggestion, fix,
            function=self.scopes[-1].key, local_hot=self.hot))

    # -- calls of this module's own functions (see interproc) --------------------------------
    def callee(self, call: ast.Call) -> tuple[ast.AST, ast.ClassDef | None] | None:
        """(function, its class) that `call` runs when it is a function of this module: a local
        function, a module-level one, or `self.method(...)` of the class around (or a base of it)."""
        f = call.func
        if isinstance(f, ast.Name):
            env = self.infer.env
            while env is not None:  # a local def, unless a variable of that name hides it
                if f.id in env.funcs:
                    fn = env.funcs[f.id]
                    return fn, self.facts.owner.get(id(fn), (None, None))[0]
                if f.id in env.names:
                    return None
                env = env.parent
            fn = self.facts.funcs.get(f.id)
            return (fn, None) if fn is not None and f.id not in self.imports else None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls") \
                and self.class_stack:
            cls = self.class_stack[-1]
            return self.facts.method(cls, f.attr) or (self.facts.attr_callee(cls, f.attr) if f.value.id == "self"
                                                      else None)
        return None

    level = TOP  # how many levels of callers parameters are learnt from (0: annotations and the body only)
    param_seeds: dict | None = None  # parameter -> kind for the walked function, from the call being resolved

    def resolve_call(self, call: ast.Call) -> Returned | None:
        target = self.callee(call)
        if target is None:
            return None
        seeds = self._host_seeds(call, target[0], target[1])
        if seeds:  # host data passed in (a matcher's CPU indices): what the function gives for it
            r = self.facts.returned_seeded(*target, seeds)
            if r is not None:
                return r
        return self.facts.returned(*target, self.level)

    def _host_seeds(self, call: ast.Call, fn: ast.AST, cls) -> dict[str, str]:
        """parameter -> kind for the arguments of `call` known to be host tensors (CPU tensors or lists
        of them), which a function's own parameters can only guess."""
        a = fn.args
        params = a.posonlyargs + a.args
        if cls is not None and params and params[0].arg in ("self", "cls") and isinstance(call.func, ast.Attribute):
            params = params[1:]
        out = {}
        for p, arg in zip(params, call.args):
            if isinstance(arg, ast.Starred):
                break
            k = self.infer.kind(arg)
            if k in (CPU, CPUS):
                out[p.arg] = k
        names = {p.arg for p in params + a.kwonlyargs}
        for kw in call.keywords:
            if kw.arg in names:
                k = self.infer.kind(kw.value)
                if k in (CPU, CPUS):
                    out[kw.arg] = k
        return out

    def kind_walk(self, fn: ast.AST, cls: ast.ClassDef | None, level: int = 0,
                  seeds: dict | None = None) -> "_KindWalk":
        w = _KindWalk(self, fn, level)
        w.param_seeds = seeds
        if cls is not None:
            w.class_stack.append(cls)
            w.infer.env = Env(None, self.class_attrs(cls))
        w.visit(fn)
        return w

    def class_attrs(self, cls: ast.ClassDef) -> dict:
        """What `self.<attr>` holds in `cls`, read as the walk does on entering the class."""
        memo = self.__dict__.setdefault("_class_attrs_memo", {})
        if id(cls) not in memo:
            saved = self.infer.env, self.class_stack
            self.infer.env, self.class_stack = Env(), [cls]
            try:
                memo[id(cls)] = self._class_attrs(cls, self._is_module_class(cls))
            finally:
                self.infer.env, self.class_stack = saved
        return dict(memo[id(cls)])

    # -- the walk ------------------------------------------------------------------------------
    def run(self) -> FileResult:
        self._prescan_module(self.tree)
        self.visit_block(self.tree.body)
        self.result.findings.sort(key=lambda f: (f.line, f.column, f.code))
        return self.result

    def _prescan_module(self, tree):
        # (what the module's functions return is learnt lazily, by `resolve_call`)
        inf = self.infer
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and self._is_module_class(node):
                inf.module_classes[node.name] = MODULE

    def _is_module_class(self, node: ast.ClassDef) -> bool:
        for b in node.bases:
            q = qualify(b, self.imports) or ""
            name = q or (b.id if isinstance(b, ast.Name) else getattr(b, "attr", ""))
            if name.startswith("torch.nn.") or name.endswith(("Module", "Model", "Loss", "Net", "Layer",
                                                              "LightningModule", "Block", "PreTrainedModel")):
                return True
            if isinstance(b, ast.Name) and b.id in self.infer.module_classes:
                return True
        return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "forward" for s in node.body)

    def visit_block(self, stmts):
        for s in stmts:
            self.stmt_stack.append(s)
            self.visit(s)
            self.stmt_stack.pop()

    def dispatch(self, node):
        hs = self._by_type.get(node.__class__)
        if hs:
            for rule, h in hs:
                try:
                    h(rule, node, self)
                except RecursionError:
                    raise
                except Exception as e:  # noqa: BLE001 - one rule's bug must not lose the file or the run
                    self._rule_crashed(rule, node, e)

    def visit(self, node):
        t = node.__class__
        m = self._special.get(t)
        if m is not None:
            m(self, node)
            return
        hs = self._by_type.get(t)
        if hs:
            self.dispatch(node)
        self.visit_children(node)

    def visit_children(self, node):
        for c in _children(node, self._lean):
            self.visit(c)

    def _rule_crashed(self, rule: Rule, node: ast.AST, e: Exception) -> None:
        """Record the crash as the file's one-line error and stop running that rule on this file."""
        if self.error is None:
            import traceback

            tb = traceback.extract_tb(e.__traceback__)
            where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
            msg = " ".join(f"{type(e).__name__}: {e}".split())[:300]
            self.error = (f"internal error in rule {rule.code} at line {getattr(node, 'lineno', '?')}: "
                          f"{msg}{where}; the other rules ran (please report it)")
        self.handlers = {n: [(r, h) for r, h in hs if r is not rule] for n, hs in self.handlers.items()}
        self._set_handlers(self.handlers)

    # statements that bind names or open scopes
    def v_Assign(self, node):
        self.dispatch(node)
        self.visit(node.value)
        for t in node.targets:
            self.visit(t)
        k = self.infer.kind(node.value)
        for t in node.targets:
            self.infer.bind(t, k, node.value)

    def v_AnnAssign(self, node):
        self.dispatch(node)
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)
        if is_tensor_annotation(node.annotation, self.imports):
            self.infer.bind(node.target, TENSOR)
        elif node.value is not None:
            self.infer.bind(node.target, self.infer.kind(node.value), node.value)

    def v_AugAssign(self, node):
        self.dispatch(node)
        self.visit(node.value)
        self.visit(node.target)
        if isinstance(node.target, ast.Name):
            k = self.infer.kind(ast.BinOp(left=node.target, op=node.op, right=node.value))
            self.infer.bind(node.target, k)

    def v_NamedExpr(self, node):
        self.dispatch(node)
        self.visit(node.value)
        self.infer.bind(node.target, self.infer.kind(node.value))

    def v_Return(self, node):
        self.dispatch(node)
        if node.value is not None:
            self.visit(node.value)

    def v_If(self, node):
        self.dispatch(node)
        self.visit(node.test)
        name = self._tensor_checked(node.test)
        before = self.infer.env.get(name) if name else None
        if name and before not in TENSORISH:
            self.infer.bind(ast.Name(name), TENSOR)  # inside `if isinstance(x, torch.Tensor):` x is one
        self.visit_block(node.body)
        # past the `if`, x is what it was, unless the body rebinds it and goes on (no return / raise)
        if name and before not in TENSORISH and (
                isinstance(node.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
                or self.infer.env.get(name) == TENSOR and not any(
                    isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                    for s in node.body for n in ast.walk(s))):
            self.infer.bind(ast.Name(name), before)
        self.visit_block(node.orelse)

    def _tensor_checked(self, test: ast.AST) -> str | None:
        """`x` of `isinstance(x, torch.Tensor)` / `torch.is_tensor(x)` (alone or first of an `and`)."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            test = test.values[0]
        if not (isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name)):
            return None
        f = test.func
        if isinstance(f, ast.Name) and f.id == "isinstance" and len(test.args) == 2:
            return test.args[0].id if qualify(test.args[1], self.imports) in ("torch.Tensor", "torch.nn.Parameter") \
                else None
        return test.args[0].id if qualify(f, self.imports) == "torch.is_tensor" else None

    def v_For(self, node):
        self.dispatch(node)
        self.visit(node.iter)
        is_loader = self.infer.bind_loop_target(node.target, node.iter)
        self._loop(node, is_loader)

    v_AsyncFor = v_For

    def v_While(self, node):
        self.dispatch(node)
        self.visit(node.test)
        self._loop(node, False)

    def _calls_step(self, stmts) -> bool:
        """`hotpath.body_calls_step(stmts)`, each statement looked at once per file."""
        if not self._may_step:
            return False
        memo = self._step_memo
        for s in stmts:
            r = memo.get(id(s))
            if r is None:
                r = memo[id(s)] = _stmt_calls_step(s, memo)
            if r:
                return True
        return False

    def _loop(self, node, is_loader):
        hot = is_loader or self._calls_step(node.body)
        self.loops += 1
        self.hot_loops += hot
        self.visit_block(node.body)
        self.hot_loops -= hot
        self.loops -= 1
        self.visit_block(node.orelse)

    def v_With(self, node):
        self.dispatch(node)
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.infer.bind(item.optional_vars, None)
        self.visit_block(node.body)

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

    def v_Call(self, node):
        self.dispatch(node)
        f = node.func
        call = None
        if isinstance(f, ast.Name):
            call = (f.id, "")
        elif isinstance(f, ast.Attribute):
            via = "self" if isinstance(f.value, ast.Name) and f.value.id in ("self", "cls") else "attr"
            if via == "self" or self.infer.kind(f.value) not in (TENSOR, CPU, NDARRAY, HOST):
                call = (f.attr, via)
        if call is not None:
            scope = self.scopes[-1]
            scope.calls.append(call)
            if self.hot_loops and not scope.hot:  # a call made from a hot loop: its callee is hot
                self.result.seeds.append(call)
        self.visit_children(node)

    def v_ClassDef(self, node):
        self.dispatch(node)
        for d in node.decorator_list:
            self.visit(d)
        for b in node.bases:
            self.visit(b)
        is_module = self._is_module_class(node)
        self.class_stack.append(node)
        saved = self.infer.env
        self.infer.env = Env(saved, self._class_attrs(node, is_module))
        self.visit_block(node.body)
        self.infer.env = saved
        self.class_stack.pop()

    def _class_attrs(self, node: ast.ClassDef, is_module: bool) -> dict:
        attrs: dict[str, str | None] = {}
        inf = self.infer
        # the order of the walk decides which assignment wins: both walks are ast.walk's order;
        # without a `register_buffer` call the statements alone (Assign is one) are enough
        buffers = self._may_buffer
        for n in (_walk(node) if buffers else statements(node)):
            if isinstance(n, ast.Assign) and len(n.targets) == 1:
                t = n.targets[0]
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    k = inf.kind(n.value)
                    if k is None and is_module and isinstance(n.value, ast.Call):
                        fn = n.value.func
                        name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
                        if name[:1].isupper():
                            k = MODULE
                    if k in (TENSOR, CPU, MODULE, LOADER, OPTIMIZER, NDARRAY) or (k == HOST and t.attr not in attrs):
                        attrs[t.attr] = k
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "register_buffer" \
                    and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
                attrs[n.args[0].value] = TENSOR
        return attrs

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
        outer = self.scopes[-1]
        qual = f"{class_name}.{node.name}" if class_name else node.name
        if outer.key != "<module>" and class_name is None:
            qual = f"{outer.name}.<locals>.{node.name}"
        key = f"{self.path}::{qual}"
        hot = hotpath.function_is_hot(node.name, class_name, self.hot_patterns) or \
            self._calls_step(node.body) or (outer.hot and class_name is None)
        scope = Scope(key, node.name, class_name, hot)
        self.result.functions[key] = {"name": node.name, "method": class_name is not None, "hot": hot,
                                      "calls": scope.calls}
        if self.hot_loops:  # a closure defined inside a hot loop runs there
            self.result.seeds.append((node.name, ""))
        if cls is None and self.func_stack:  # a local function: its calls get what it returns
            self.infer.env.funcs[node.name] = node
        self.facts.note_usage(node)
        saved_env, saved_hot_loops = self.infer.env, self.hot_loops
        self.infer.env = Env(saved_env)
        self._bind_params(node, class_name)
        self.scopes.append(scope)
        self.func_stack.append(node)
        self.hot_loops = 0
        self.visit_block(node.body)
        self.hot_loops = saved_hot_loops
        self.func_stack.pop()
        self.scopes.pop()
        self.infer.env = saved_env

    v_AsyncFunctionDef = v_FunctionDef

    def _bind_params(self, node, class_name):
        a = node.args
        positional = a.posonlyargs + a.args
        n_defaults = len(a.defaults)
        defaults = [None] * (len(positional) - n_defaults) + list(a.defaults)
        # a loss class's `__init__` / `__repr__` take settings, not tensors
        tensor_params = node.name == "forward" or (hotpath._LOSSY.search(node.name) is not None or (
            class_name and not node.name.startswith("__") and hotpath._LOSSY.search(class_name)))
        facts = self._param_facts(node, positional + a.kwonlyargs)
        if self.param_seeds and node is getattr(self, "target", None):
            facts.update(self.param_seeds)
        for i, (p, d) in enumerate(list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))):
            if i == 0 and class_name and p.arg in ("self", "cls"):
                continue
            k = facts.get(p.arg)
            guess = self._param_kind(p, d, tensor_params) if k is None else None
            self.infer.bind(ast.Name(p.arg), k if k is not None else guess)
            if k is not None:
                self.infer.env.sure.add(p.arg)
            elif guess == TENSOR and tensor_params and self._param_kind(p, d, False) != TENSOR:
                self.infer.env.guess.add(p.arg)  # `forward(self, x, n)`: a tensor only by the function's name
        for p in (a.vararg, a.kwarg):
            if p is not None:
                self.infer.bind(ast.Name(p.arg), None)

    def _param_facts(self, node, params) -> dict[str, str]:
        """Kinds of unannotated parameters known beyond a guess: from a `# type:` comment, from what
        every call in this module passes, or from the body using them as tensors (`x.unsqueeze(0)`)."""
        out: dict[str, str] = {}
        # (an annotation that says nothing known, `indices: tuple[np.array]`, leaves the callers to say)
        todo = [p for p in params if p.arg not in ("self", "cls") and (
            p.annotation is None or self._param_kind(p, None, False) is None)]
        if not todo:
            return out
        tc = self.facts.type_comment(node)
        callers = None
        for p in todo:
            k = annotation_kind(tc[0].get(p.arg), self.imports)[0] if tc else None
            if k is None and self.level > 0:
                if callers is None:
                    owner = self.facts.owner.get(id(node), (None, None))[0]
                    callers = self.facts.caller_kinds(node, owner, self.level)
                k = callers.get(p.arg)
                if k is None and p.arg not in callers:  # called through a dict of methods: what siblings get
                    k = self.facts.sibling_host_param(node, owner, p.arg)
            if k is None and id(p) in self.facts.usage:
                k = TENSOR
            if k is not None:
                out[p.arg] = k
        return out

    def _param_kind(self, p: ast.arg, default, tensor_params) -> str | None:
        if is_tensor_annotation(p.annotation, self.imports):
            return TENSOR
        if p.annotation is not None:
            k = annotation_kind(p.annotation, self.imports)[0]
            if k is not None:
                return k
            ann = ast.dump(p.annotation)
            if any(f"'{t}'" in ann for t in ("int", "float", "bool", "str")) and "Tensor" not in ann:
                return HOST
            q = qualify(p.annotation, self.imports) or ""
            if q.endswith(".Module") or q.startswith("torch.nn."):
                return MODULE
            if q.endswith("DataLoader"):
                return LOADER
            return None
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
        for p in node.args.args:
            self.infer.bind(ast.Name(p.arg), None)
        self.visit(node.body)
        self.infer.env = saved


class _KindWalk(LintContext):
    """A walk of one function with no rules, for `interproc`: the kinds its `return`s give, and what
    each call of another function of the module passes. Shares the file's tables with `root`."""

    def __init__(self, root: LintContext, target: ast.AST, level: int = 0):  # shares root's tables, no super()
        self.path, self.source, self.lines, self.tree = root.path, root.source, root.lines, root.tree
        self.imports, self.facts, self.rules, self.hot_patterns = root.imports, root.facts, [], ()
        self.infer = Inference(self.imports)
        self.infer.module_classes = root.infer.module_classes
        self._hook_inference()
        self.result = FileResult(root.path)
        self.scopes = [Scope("<module>", "<module>", None, False)]
        self.hot_loops = self.loops = 0
        self.class_stack, self.func_stack, self.stmt_stack = [], [], []
        self._parents = self._leaf_parents = self._segment_lines = None
        self.handlers = {}
        self._set_handlers({})
        self._special = _special_visits(type(self))
        self.error = None
        self._step_memo, self._may_step, self._may_buffer = {}, False, root._may_buffer
        self.target, self.level = target, level
        self.returns: list[tuple[ast.AST, str | None, tuple | None]] = []  # (value, kind, kinds of a tuple's parts)
        self.calls: dict[int, tuple] = {}  # id(call) -> (callee, positional kinds, keyword kinds, open-ended)
        self._ifs: dict[int, ast.If] | None = None

    def class_attrs(self, cls):
        return self.facts.ctx.class_attrs(cls)

    def v_Return(self, node):
        super().v_Return(node)
        if node.value is None or not self.func_stack or self.func_stack[-1] is not self.target:
            return
        v = node.value
        if isinstance(v, ast.Constant) and v.value is None or self._none_guarded(v, node):
            return
        if isinstance(v, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in v.elts):
            elts = tuple(self.infer.kind(e) for e in v.elts)
        else:
            r = self.resolve_call(v) if isinstance(v, ast.Call) else None
            elts = r.elts if r is not None else None
        self.returns.append((v, self.infer.kind(v), elts))

    def _none_guarded(self, v: ast.AST, ret: ast.Return) -> bool:
        """`return x` right inside `if x is None:`: a None."""
        if not isinstance(v, ast.Name):
            return False
        if self._ifs is None:  # id(statement) -> the `if` whose body holds it
            self._ifs = {id(s): n for n in statements(self.target) if isinstance(n, ast.If) for s in n.body}
        t = getattr(self._ifs.get(id(ret)), "test", None)
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
            elif isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute) and self.call_name(root) is None:
                root = root.func.value
            else:
                break
        if isinstance(root, ast.Name) and self.infer.env.is_guess(root.id):
            return None
        return self.infer.kind(e)

    def v_Call(self, node):
        target = self.callee(node)
        if target is not None:
            args = []
            open_ended = any(k.arg is None for k in node.keywords)
            for a in node.args:
                if isinstance(a, ast.Starred):
                    open_ended = True
                    break
                args.append(self._passed_kind(a))
            kws = {k.arg: self._passed_kind(k.value) for k in node.keywords if k.arg is not None}
            self.calls[id(node)] = (target[0], args, kws, open_ended)
        super().v_Call(node)


def _special_visits(cls) -> dict[type, object]:
    """node class -> the context's own `v_<Node>` method (nodes that bind names or open scopes)."""
    table = _SPECIAL_BY_CLASS.get(cls)
    if table is None:
        names = [n[2:] for n in dir(cls) if n.startswith("v_")]
        classes = _ast_classes(names)
        table = _SPECIAL_BY_CLASS[cls] = {classes[n]: getattr(cls, "v_" + n) for n in names if n in classes}
    return table


_SPECIAL_BY_CLASS: dict[type, dict] = {}


def parse(path: str, source: str) -> ast.Module | str:
    """The module's tree, or the one-line reason it does not parse."""
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as e:
        return f"syntax error at line {e.lineno}: {e.msg}"
    except (RecursionError, MemoryError):
        return "too deeply nested for Python's parser"
    except ValueError as e:  # null bytes
        return f"cannot parse: {e}"


def lint_source(path: str, source: str, rules: list[Rule], hot_patterns=()) -> FileResult:
    """Lint one module's text. Syntax errors and the like come back in `FileResult.error`."""
    if _SKIP_FILE.search(source):
        return FileResult(path, skipped=True)
    tree = parse(path, source)
    if isinstance(tree, str):
        return FileResult(path, error=tree)
    old = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(old, 20000))
        ctx = LintContext(path, source, tree, rules, hot_patterns)
        result = ctx.run()
        lines = ctx.lines
        result.findings = noqa.check(path, source, lines, result.findings, rules)
        steppath.annotate(tree, result.findings)
    except RecursionError:
        return FileResult(path, error="too deeply nested to analyse")
    except Exception as e:  # noqa: BLE001 - a bug of the engine on one file: that file's one-line error
        import traceback

        tb = traceback.extract_tb(e.__traceback__)
        where = f" ({tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
        msg = " ".join(f"{type(e).__name__}: {e}".split())[:300]
        return FileResult(path, error=f"internal error: {msg}{where} (please report it)")
    finally:
        sys.setrecursionlimit(old)
    result.error = ctx.error
    return result


def settle_context(results: list[FileResult]) -> None:
    """Mark each finding hot or cold with the call graph of every linted file."""
    functions: dict[str, dict] = {}
    seeds: list[tuple[str, str]] = []
    for r in results:
        functions.update(r.functions)
        seeds.extend(r.seeds)
    hot = hotpath.resolve_hot(functions, seeds)
    for r in results:
        for f in r.findings:
            f.context = "hot" if f.local_hot or f.function in hot else "cold"
