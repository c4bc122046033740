"""The lint engine: one walk over a module's `ast` (see walk.py), dispatching nodes to the rules
while the tensor inference follows assignments in source order and the hot-path state follows loops
and functions. `LintContext` is what a rule sees; `lint_source` lints one file; `settle_context`
applies the cross-file call graph.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field

from syncscan.lint import hotpath, noqa, steppath
from syncscan.lint.facts import FileFacts
from syncscan.lint.imports import qualify
from syncscan.lint.rule import Edit, Finding, Fix, Rule
from syncscan.lint.tensors import CPU, HOST, NDARRAY, TENSOR, TENSORS
from syncscan.lint.tree import LEAF_TYPES, children
from syncscan.lint.walk import Walk, ast_classes, file_facts

_SKIP_FILE = re.compile(r"^\s*#\s*syncscan:\s*skip-file\b", re.M)

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
        for c in children(stack.pop()):
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


class LintContext(Walk):
    """What a rule sees: the file's providers (`file`), where the walk is, the kinds there, and `report`."""

    def __init__(self, path: str, source: str, tree: ast.Module, rules: list[Rule], hot_patterns=(),
                 file: FileFacts | None = None):
        super().__init__(file or file_facts(path, source, tree))
        self.path = path
        self.rules = rules
        self.hot_patterns = tuple(hot_patterns)
        self.result = FileResult(path)
        self.scopes: list[Scope] = [Scope("<module>", "<module>", None, False)]
        self.result.functions["<module>"] = {"name": "<module>", "method": False, "hot": False, "calls": []}
        self.hot_loops = 0  # depth of enclosing hot loops in the current function
        self.loops = 0
        handlers: dict[str, list] = {}
        for r in rules:
            for node_type, h in r.handlers.items():
                handlers.setdefault(node_type, []).append((r, h))
        self.handlers = handlers
        self._set_handlers(handlers)
        self.error: str | None = None  # the first rule crash in this file, as one line
        # which statements run a training step, memoised (see _stmt_calls_step); a file that
        # never says "step" or "backward" has none (non-ASCII: identifiers are NFKC-normalised)
        self._step_memo: dict[int, bool] = {}
        self._may_step = not source.isascii() or any(w in source for w in _STEP_WORDS)

    def _set_handlers(self, handlers: dict[str, list]) -> None:
        classes = ast_classes(handlers)
        self._by_type = {classes[n]: hs for n, hs in handlers.items() if n in classes and hs}
        # skip the leaf singletons unless some rule subscribes to one of them
        self._lean = not any(issubclass(c, LEAF_TYPES) for c in self._by_type)

    # -- for rules: the file -------------------------------------------------------------------
    @property
    def source(self) -> str:
        return self.file.source

    @property
    def tree(self) -> ast.Module:
        return self.file.tree

    @property
    def lines(self) -> list[str]:
        return self.file.src.lines

    def text(self, node: ast.AST) -> str:
        return self.file.src.text(node)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.file.src.parent(node)

    def position(self, node: ast.AST, end: bool = False) -> tuple[int, int]:
        """1-based (line, character column) of a node's start or end."""
        return self.file.src.position(node, end)

    def qualname(self, node: ast.AST) -> str | None:
        return qualify(node, self.imports)

    def call_name(self, call: ast.Call) -> str | None:
        """The qualified name of the called function (`torch.nonzero`), through the imports."""
        return self.file.call_name(call)

    # -- for rules: kinds where the walk is ------------------------------------------------------
    def kind(self, node: ast.AST) -> str | None:
        return self.infer.kind(node)

    def is_tensor(self, node: ast.AST) -> bool:
        """May be a CUDA tensor (a tensor not known to live on the host)."""
        return self.infer.kind(node) == TENSOR

    def maybe_tensor(self, node: ast.AST) -> bool:
        """Not known to be anything but a device tensor: a tensor, or unknown."""
        return self.infer.kind(node) in (TENSOR, TENSORS, None)

    # -- for rules: where the walk is --------------------------------------------------------------
    @property
    def hot(self) -> bool:
        return self.scopes[-1].hot or self.hot_loops > 0

    @property
    def function(self) -> ast.AST | None:
        return self.func_stack[-1] if self.func_stack else None

    @property
    def statement(self) -> ast.stmt | None:
        return self.stmt_stack[-1] if self.stmt_stack else None

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
        self.visit_block(self.tree.body)
        self.result.findings.sort(key=lambda f: (f.line, f.column, f.code))
        return self.result

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

    def enter_function(self, node, class_name: str | None) -> None:
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
        self.scopes.append(scope)

    def function_body(self, node) -> None:
        saved_hot_loops = self.hot_loops
        self.hot_loops = 0
        self.visit_block(node.body)
        self.hot_loops = saved_hot_loops

    def leave_function(self, node) -> None:
        self.scopes.pop()


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
