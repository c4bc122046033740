"""The lint engine: one walk over a module's `ast`, dispatching nodes to the rules while the
tensor inference follows assignments in source order and the hot-path state follows loops and
functions. `lint_source` lints one file; `settle_context` applies the cross-file call graph.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field

from syncscan.lint import hotpath
from syncscan.lint.imports import import_map, qualify, statements
from syncscan.lint.lines import split_lines
from syncscan.lint.rule import Edit, Finding, Fix, Rule
from syncscan.lint.tensors import (CPU, HOST, LOADER, MODULE, NDARRAY, OPTIMIZER, TENSOR, TENSORS, Env,
                                   Inference, is_tensor_annotation)

_NOQA = re.compile(r"#\s*(?:noqa|NOQA)(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?")
_IGNORE = re.compile(r"#\s*syncscan:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
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


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    functions: dict[str, dict] = field(default_factory=dict)
    seeds: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None
    skipped: bool = False

    def to_cache(self) -> dict:
        """A JSON-able dict (results travel from workers and into the cache this way). The call
        graph is most of it, so each function is a list `[key, name, method, hot, n1, via1, n2,
        via2, ...]` with this file's path left out of the key."""
        prefix = self.path + "::"
        functions = []
        for k, v in self.functions.items():
            if v.keys() != _FUNCTION_KEYS:  # not the usual shape: kept as it is
                functions.append([k, {**v, "calls": [list(c) for c in v["calls"]]}])
                continue
            row = ["::" + k[len(prefix):] if k.startswith(prefix) else k, v["name"], v["method"], v["hot"]]
            for name, via in v["calls"]:
                row += (name, via)
            functions.append(row)
        return {"findings": [f.cache_json() for f in self.findings], "functions": functions,
                "seeds": self.seeds, "error": self.error, "skipped": self.skipped}

    @classmethod
    def from_cache(cls, path: str, d: dict) -> "FileResult":
        functions = {}
        for row in d["functions"]:
            key = path + row[0] if row[0].startswith("::") else row[0]
            if len(row) == 2 and isinstance(row[1], dict):
                functions[key] = {**row[1], "calls": [tuple(c) for c in row[1]["calls"]]}
                continue
            calls = iter(row[4:])
            functions[key] = {"name": row[1], "method": row[2], "hot": row[3], "calls": list(zip(calls, calls))}
        fr = cls(path, [Finding.from_cache(f) for f in d["findings"]], functions,
                 [tuple(s) for s in d["seeds"]], d.get("error"), d.get("skipped", False))
        for f in fr.findings:
            f.path = path
        return fr


_FUNCTION_KEYS = {"name": None, "method": None, "hot": None, "calls": None}.keys()


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

    # -- the walk ------------------------------------------------------------------------------
    def run(self) -> FileResult:
        self._prescan_module(self.tree)
        self.visit_block(self.tree.body)
        self.result.findings.sort(key=lambda f: (f.line, f.column, f.code))
        return self.result

    def _prescan_module(self, tree):
        inf = self.infer
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and self._is_module_class(node):
                inf.module_classes[node.name] = MODULE
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for n in statements(node):  # a Return is a statement: no need to walk expressions
                    if isinstance(n, ast.Return) and n.value is not None and isinstance(n.value, ast.Call):
                        q = qualify(n.value.func, self.imports)
                        if q and q.startswith("torch.") and q.rsplit(".", 1)[-1][:1].islower():
                            inf.function_returns[node.name] = TENSOR
                            break

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
        buffers = "register_buffer" in self.source or not self.source.isascii()
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
        tensor_params = node.name == "forward" or (
            hotpath._LOSSY.search(node.name) is not None or (class_name and hotpath._LOSSY.search(class_name)))
        for i, (p, d) in enumerate(zip(positional, defaults)):
            if i == 0 and class_name and p.arg in ("self", "cls"):
                continue
            self.infer.bind(ast.Name(p.arg), self._param_kind(p, d, tensor_params))
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            self.infer.bind(ast.Name(p.arg), self._param_kind(p, d, tensor_params))
        for p in (a.vararg, a.kwarg):
            if p is not None:
                self.infer.bind(ast.Name(p.arg), None)

    def _param_kind(self, p: ast.arg, default, tensor_params) -> str | None:
        if is_tensor_annotation(p.annotation, self.imports):
            return TENSOR
        if p.annotation is not None:
            ann = ast.dump(p.annotation)
            if any(f"'{t}'" in ann for t in ("int", "float", "bool", "str")):
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


def _special_visits(cls) -> dict[type, object]:
    """node class -> the context's own `v_<Node>` method (nodes that bind names or open scopes)."""
    table = _SPECIAL_BY_CLASS.get(cls)
    if table is None:
        names = [n[2:] for n in dir(cls) if n.startswith("v_")]
        classes = _ast_classes(names)
        table = _SPECIAL_BY_CLASS[cls] = {classes[n]: getattr(cls, "v_" + n) for n in names if n in classes}
    return table


_SPECIAL_BY_CLASS: dict[type, dict] = {}


def suppressed(lines: list[str], f: Finding) -> bool:
    """`# noqa`, `# noqa: SYN301`, `# syncscan: ignore`, `# syncscan: ignore[SYN301]` on the
    finding's first or last line."""
    for ln in {f.line, f.end_line}:
        if not 0 < ln <= len(lines):
            continue
        text = lines[ln - 1]
        if "#" not in text:
            continue
        for pat in (_NOQA, _IGNORE):
            m = pat.search(text)
            if m:
                codes = m.group("codes")
                if not codes:
                    return True
                if any(f.code.startswith(c) for c in re.split(r"[\s,]+", codes.strip()) if c):
                    return True
    return False


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
        result.findings = [f for f in result.findings if not suppressed(lines, f)]
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
