"""The lint engine: one walk over a module's `ast` (see walk.py), dispatching nodes to the rules
while the tensor inference follows assignments in source order and the hot-path state follows loops
and functions. `LintContext` is what a rule sees; `lint_source` lints one file; `settle_context`
applies the cross-file call graph.
"""

from __future__ import annotations

import ast
import functools
import builtins
from collections.abc import Mapping
import re
import sys

from syncscan.lint import compiled, flow, hotpath, loader_code, noqa, ranks, steppath
from syncscan.lint.facts import FileFacts
from syncscan.lint.imports import qualify
from syncscan.lint.module import binding_key
from syncscan.lint.often import by_class
from syncscan.lint.crossfile import CrossFile
from syncscan.lint.result import FileResult
from syncscan.lint.rule import Edit, Finding, Fix, Rule
from syncscan.lint.tensors import CPU, HOST, NDARRAY, TENSOR
from syncscan.lint.tree import LEAF_TYPES, LEAN_CHILDREN, child_table, children, walk
from syncscan.lint.walk import Walk, ast_classes, exporting, file_facts, inert_leaves

_SKIP_FILE = re.compile(r"^\s*#\s*syncscan:\s*skip-file\b", re.M)

# every call `hotpath._is_step_call` accepts has one of these in its attribute name
_STEP_WORDS = ("backward", "step")
_STEP_OPAQUE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
_STMTS = frozenset(c for c in ast.stmt.__subclasses__() if c not in _STEP_OPAQUE)
# what `_stmt_calls_step` passes over: definitions, and names and constants (no call under them)
_STEP_LEAVES = frozenset({*_STEP_OPAQUE, ast.Name, ast.Constant})


def _stmt_calls_step(stmt: ast.AST, memo: dict[int, bool]) -> bool:
    """`hotpath.body_calls_step([stmt])`, memoised per statement so that nested loops and the
    functions around them do not walk the same statements again."""
    if isinstance(stmt, _STEP_OPAQUE):
        return False
    stack = [stmt]
    while stack:
        n = stack.pop()
        for c in LEAN_CHILDREN[n.__class__](n):
            t = c.__class__  # (exact classes, as ast.parse builds them: every node of the file comes here)
            if t in _STEP_LEAVES:
                continue
            if t in _STMTS:
                r = memo.get(id(c))
                if r is None:
                    r = memo[id(c)] = _stmt_calls_step(c, memo)
                if r:
                    return True
            elif t is ast.Call and hotpath._is_step_call(c):
                return True
            else:
                stack.append(c)
    return False


_BUILTINS = frozenset(dir(builtins))  # (`len(...)`: no variable of the file)


class Scope:
    __slots__ = ("calls", "class_name", "hot", "key", "name")

    def __init__(self, key, name, class_name, hot: str):
        self.key, self.name, self.class_name, self.hot = key, name, class_name, hot
        self.calls: list[tuple[str, str, str]] = []


class LintContext(Walk):
    """What a rule sees: the file's providers (`file`), where the walk is, the kinds there, and `report`."""

    name_kinds = True

    def __init__(self, path: str, source: str, tree: ast.Module, rules: list[Rule], hot_patterns=(),
                 file: FileFacts | None = None):
        super().__init__(file or file_facts(path, source, tree))
        # the rules ask this of nearly every call they are handed: the file's memo itself, not a method that
        # forwards to it (one Python call less each time)
        self.call_name = self.file.call_name  # type: ignore[method-assign]
        crossfile = self.file.modules
        if crossfile is not None:  # (the rules' walk only: what the folder keeps under an attribute name)
            self.infer.tensor_attr = functools.partial(crossfile.tensor_attr, self.file)
        self.path = path
        self.rules = rules
        self.hot_patterns = tuple(hot_patterns)
        self.result = FileResult(path)
        self.scopes: list[Scope] = [Scope("<module>", "<module>", None, "")]
        self.result.functions["<module>"] = {"name": "<module>", "method": False, "hot": "",
                                             "calls": self.scopes[0].calls}
        self.local = ""  # where the walk is within its function: see hotpath (loops, periodic tests)
        self.loops = 0
        self._iteration = False  # the innermost loop around the walk trains for several epochs each pass
        self._test_file = hotpath.is_test(path)
        handlers: dict[str, list] = {}
        for r in rules:
            if r.applies is not None and not r.applies(self.file):
                continue  # (nothing in this file the rule reads: none of its handlers run, not even to return)
            for node_type, h in r.handlers.items():  # type: ignore[attr-defined]  # (set by Rule.__init_subclass__)
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
        self._inert = inert_leaves(self._special, self._by_type, self._lean)
        self._children = child_table(self._lean)

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

    # -- for rules: where the walk is --------------------------------------------------------------
    @property
    def hot(self) -> bool:
        """Runs every step as far as this file tells (before the call graph of all files settles it)."""
        return hotpath.frequency(self.scopes[-1].hot or hotpath.ONCE, self.local) == hotpath.STEP

    @property
    def function(self) -> ast.AST | None:
        return self.func_stack[-1] if self.func_stack else None

    @property
    def statement(self) -> ast.stmt | None:
        return self.stmt_stack[-1] if self.stmt_stack else None

    def edit(self, node: ast.AST, content: str, end_node: ast.AST | None = None) -> Edit:
        line, col = self.position(node)
        end_line, end_col = self.position(end_node or node, end=True)
        return Edit(line, col, end_line, end_col, content)

    def report(self, rule: Rule, node, message, suggestion="", fix: Fix | None = None, end_node=None,
               confidence: str | None = None):
        """A finding of `rule` at `node`. Its confidence is "low" when the kinds the rule read since it
        was handed the node were only probable (Inference.probable), or the file is a test; a rule may
        say so itself."""
        line, col = self.position(node)
        end_line, end_col = self.position(end_node or node, end=True)
        if confidence is None:
            confidence = "low" if self.infer.probable or self._test_file else "high"
        self.result.findings.append(Finding(
            self.path, line, col, end_line, end_col, rule.code, rule.name, message, suggestion, fix,
            function=self.scopes[-1].key, local="step" if rule.per_step else self.local, confidence=confidence))

    # -- the walk ------------------------------------------------------------------------------
    def run(self) -> FileResult:
        self.visit_block(self.tree.body)
        self.result.findings.sort(key=lambda f: (f.line, f.column, f.code))
        return self.result

    def reported(self) -> int | None:
        return len(self.result.findings)

    def dispatch(self, node):
        hs = self._by_type.get(node.__class__)
        if hs:
            infer = self.infer
            for rule, h in hs:
                infer.probable = False
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

    def _direct_step(self, stmts) -> bool:
        """These statements run a training step themselves, outside any loop among them."""
        if not self._may_step:
            return False
        todo = list(stmts)
        while todo:
            s = todo.pop()
            if isinstance(s, (ast.For, ast.AsyncFor, ast.While) + _STEP_OPAQUE):
                continue
            blocks = [b for f in _BLOCKS if isinstance(b := getattr(s, f, None), list) and b]
            if not blocks:
                if self._calls_step([s]):
                    return True
                continue
            for b in blocks:
                for x in b:
                    todo.extend(x.body if isinstance(x, (ast.ExceptHandler, ast.match_case)) else [x])
            for c in children(s):  # the header: `if opt.step():`, `with ...:`
                if not isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case)) and any(
                        isinstance(n, ast.Call) and hotpath._is_step_call(n) for n in walk(c)):
                    return True
        return False

    def runs_step(self, loop: ast.AST) -> bool:
        """The loop's own body (outside loops nested in it) runs a training step: each of its passes is a step."""
        return self._direct_step(getattr(loop, "body", []))

    def _loop_kind(self, node, is_loader: bool) -> str:
        """"step" (it runs a training step itself), "data" (it iterates a DataLoader), "epoch" (a loop
        around such loops), or ""."""
        if self._direct_step(node.body):
            return "step"
        scope = self.scopes[-1]
        if is_loader or self._draws_batch(node.body):
            # the data loop of a training epoch is its step loop, whatever it calls to step
            if scope.hot == hotpath.EPOCH and scope.name in hotpath.TRAIN_EPOCH_NAMES and not self.local:
                return "step"
            if not is_loader and self._steps_inside(node.body):  # `while True: batch = next(it)` around phases
                return "step"
            return "data"
        for s in self._loops_in(node.body):  # a loop nested in this one that steps or iterates data
            if self._direct_step(s.body) or isinstance(s, (ast.For, ast.AsyncFor)) and self.infer.iter_kind(s.iter)[1]:
                return "epoch"
        # in a loop whose passes each run epochs of steps (collect a rollout, then `for epoch in
        # range(k): for mb in ...: step`), a loop beside those epochs runs many times per pass: as often
        # as steps (an RL rollout's `for step in range(num_steps): envs.step(...)`)
        return "step" if self._iteration else ""

    def _runs_epochs(self, stmts) -> bool:
        """A loop nested in these statements is an epoch loop: it does not step itself, a loop in it does,
        and it is no data loop (`for batch in loader: for micro in chunks: step` is the steps of one epoch)."""
        return any(not self._direct_step(s.body) and self._steps_inside(s.body) and not self._draws_batch(s.body)
                   and not (isinstance(s, (ast.For, ast.AsyncFor)) and self.infer.iter_kind(s.iter)[1])
                   for s in self._loops_in(stmts))

    def _draws_batch(self, stmts) -> bool:
        """These statements (not loops or functions in them) take a batch with `next(...)` of a data
        loader or an iterator over one: the loop around them runs once per batch."""
        for s in stmts:
            if isinstance(s, (ast.For, ast.AsyncFor, ast.While) + _STEP_OPAQUE):
                continue
            for n in walk(s):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "next" and n.args:
                    a = n.args[0]
                    name = (a.id if isinstance(a, ast.Name) else a.attr if isinstance(a, ast.Attribute) else "").lower()
                    if self.infer.iter_kind(a)[1] or "loader" in name or "iter" in name:
                        return True
                if isinstance(n, (ast.For, ast.AsyncFor, ast.While) + _STEP_OPAQUE):
                    break
        return False

    def _steps_inside(self, stmts) -> bool:
        """A loop nested in these statements runs a training step."""
        return any(self._direct_step(s.body) for s in self._loops_in(stmts))

    @staticmethod
    def _loops_in(stmts):
        """The loops nested in these statements, at any depth (not in functions or classes defined there)."""
        todo = list(stmts)
        while todo:
            s = todo.pop()
            if isinstance(s, _STEP_OPAQUE):
                continue
            if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
                yield s
            for f in _BLOCKS:
                b = getattr(s, f, None)
                if isinstance(b, list):
                    todo.extend(x for y in b for x in (y.body if isinstance(y, (ast.ExceptHandler, ast.match_case)) else [y]))

    def loop_body(self, node, is_loader: bool) -> None:
        saved, saved_it = self.local, self._iteration
        kind = self._loop_kind(node, is_loader)
        self.local = hotpath.enter_loop(saved, kind)
        self._iteration = kind == "epoch" and self._runs_epochs(node.body)
        self.loops += 1
        self.visit_block(node.body)
        self.loops -= 1
        self.local, self._iteration = saved, saved_it

    def if_body(self, node) -> None:
        saved = self.local
        if exporting(node.test):
            self.local = "export"
        elif hotpath.is_periodic(node.test) and not self._direct_step(node.body):
            self.local = hotpath.enter_periodic(saved)
        self.visit_block(node.body)
        self.local = saved

    def v_Call(self, node):
        self.dispatch(node)
        f = node.func
        call = None
        if isinstance(f, ast.Name):
            call = (f.id, "")
            index = self.file.index
            if f.id not in _BUILTINS and f.id not in index.funcs and f.id not in index.classes \
                    and f.id not in self.imports:  # (a variable: the file's assignments are indexed only then)
                for v in index.assigned(f.id):  # `fn = helper` ... `fn(x)`: reaches `helper` too
                    if isinstance(v, ast.Name) and v.id != f.id:
                        self.scopes[-1].calls.append((v.id, "", self.local))
            cls = index.classes.get(f.id)
            if cls is not None and f.id not in self.imports and any(
                    isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.name == "__call__" for d in cls.body):
                # an instance of a callable class of the module is made to be called where it is made
                # (`return _WrappedModel(model, ...)` handed to code that calls it): its `__call__` runs as often
                self.scopes[-1].calls.append((f"{f.id}.__call__", "cls", self.local))
        elif isinstance(f, ast.Attribute):
            via = "self" if isinstance(f.value, ast.Name) and f.value.id in ("self", "cls") else "attr"
            if via == "self" or self.infer.kind(f.value) not in (TENSOR, CPU, NDARRAY, HOST):
                call = (f.attr, via)
                # too generic by name: followed by the instance's class, from a step loop (where the
                # frequency is sure; a data loop's may be an evaluation's, once per epoch)
                if via == "attr" and self.local == "step" and by_class(f.attr):
                    cls = self._instance_class(f.value)
                    call = (f"{cls}.{f.attr}", "cls") if cls is not None else call
        if call is not None:
            self.scopes[-1].calls.append((*call, self.local))
        self.visit_children(node)

    def _instance_class(self, recv: ast.AST) -> str | None:
        """`C` when every value the file assigns to `recv` (a name, `self.<attr>`) is `C(...)` or
        `mod.C(...)`, a capitalised class of any module (`metric_logger = utils.MetricLogger()`), and
        `recv` is not a parameter of the function the walk is in."""
        key = binding_key(recv)
        if key is None or key in ("self", "cls"):
            return None
        fn = self.function
        if isinstance(recv, ast.Name) and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                p.arg == key for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs):
            return None
        memo = self.file.state(LintContext._instance_class, dict)
        if key not in memo:
            names = set()
            for v in self.file.index.assigned(key):
                f = v.func if isinstance(v, ast.Call) else None
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                names.add(name if name[:1].isupper() else None)
            memo[key] = names.pop() if len(names) == 1 else None
        return memo[key]

    def enter_function(self, node, class_name: str | None) -> None:
        outer = self.scopes[-1]
        qual = f"{class_name}.{node.name}" if class_name else node.name
        if outer.key != "<module>" and class_name is None:
            qual = f"{outer.name}.<locals>.{node.name}"
        key = f"{self.path}::{qual}"
        root = hotpath.function_root(node.name, class_name, self.hot_patterns, self._direct_step(node.body),
                                     self._test_file or (class_name is None and node.name.startswith("test")))
        scope = Scope(key, node.name, class_name, root)
        self.result.functions[key] = {"name": node.name, "method": class_name is not None, "hot": root,
                                      "calls": scope.calls}
        if class_name is None and outer.key != "<module>":  # a closure runs where its function runs
            outer.calls.append((key, "def", self.local))
        for d in node.decorator_list:  # the wrapper a decorator of this tree returns runs with it
            d = d.func if isinstance(d, ast.Call) else d
            name = d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else None
            if name is not None and name not in self.imports:
                scope.calls.append((name, "wraps", ""))
        self.scopes.append(scope)

    def function_body(self, node) -> None:
        saved, saved_it = self.local, self._iteration
        self.local, self._iteration = "", False
        self.visit_block(node.body)
        self.local, self._iteration = saved, saved_it

    def leave_function(self, node) -> None:
        self.scopes.pop()

    def close(self) -> None:
        """Let go of the file once it is linted: a rule's recursive closure that took the context is a
        cycle, which would keep the file's tree until the cyclic collector runs."""
        self.file.close()
        self.infer.resolver = self.infer.name_resolver = self.infer.mask_resolver = None
        self.file = self.infer = self.result = None  # type: ignore[assignment]
        del self.call_name  # (the file's bound method)


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


_CROSSFILE: CrossFile | None = None


def crossfile() -> CrossFile:
    """The other modules of the tree, shared by the files this process lints (a memo of their facts)."""
    global _CROSSFILE
    if _CROSSFILE is None:
        _CROSSFILE = CrossFile()
    return _CROSSFILE


def lint_source(path: str, source: str, rules: list[Rule], hot_patterns=(), cross_file: bool = True) -> FileResult:
    """Lint one module's text. Syntax errors and the like come back in `FileResult.error`. With
    `cross_file` (the default since session 25), functions, classes and constants imported from other modules
    of the tree (found on disk beside `path`) give their kinds (crossfile.py); the files read for that are the
    result's `deps`. (It was off until its cost came down to about 3% CPU and no more memory on the corpus,
    docs/lint-speed.md "Session 25".) Without it, a call of a function of another module of the tree
    (`misc.is_nan(t)`, `is_nan(t)` imported by name) still reads that one function there, the folder's other
    modules are read for what they pass to this file's functions (`CrossFile.caller_kinds`), and the files read
    are deps."""
    if "syncscan:" in source and _SKIP_FILE.search(source):  # (the regex tries every line)
        return FileResult(path, skipped=True)
    tree = parse(path, source)
    if isinstance(tree, str):
        return FileResult(path, error=tree)
    old = sys.getrecursionlimit()
    on_disk = crossfile() if path != "-" else None
    proj = on_disk if cross_file else None
    try:
        sys.setrecursionlimit(max(old, 20000))
        # (without `cross_file`, only calls of the tree's functions and the folder's callers are read)
        ctx = LintContext(path, source, tree, rules, hot_patterns, file_facts(path, source, tree, proj, on_disk))
        result = ctx.run()
        if on_disk is not None and (ctx.file.deps or ctx.file.value_deps or ctx.file.text_deps):
            result.deps = sorted((p, *st) for p in ctx.file.deps | ctx.file.value_deps | ctx.file.text_deps
                                 if (st := on_disk.stat(p)) is not None)
        lines = ctx.lines
        result.findings = noqa.check(path, source, lines, result.findings, rules)
        steppath.annotate(tree, result.findings)
        loader_code.mark(result.findings, tree, path, ctx.imports, source)
        result.compile = compiled.file_facts(path, tree, ctx.imports, lines, result.findings)
        ranks.annotate(result.findings, tree, source)
        result.error = ctx.error
        ctx.close()
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
        if on_disk is not None:
            on_disk.release()
        flow.forget()
    return result


def function_frequencies(results: list[FileResult]) -> dict[str, str]:
    """Function key -> how often it runs (hotpath.STEP / EPOCH / ONCE), from the call graph of these files."""
    functions: dict[str, dict] = {}
    for r in results:
        functions.update(r.functions)
    return hotpath.frequencies(functions)


def context_of(f: Finding, freqs: Mapping[str, str]) -> str:
    """"hot", "epoch" or "cold" for a finding, given the frequencies of the functions."""
    return hotpath.context_of(freqs.get(f.function, hotpath.ONCE), f.local)


def settle_context(results: list[FileResult]) -> None:
    """Set each finding's context (hot / epoch / cold) with the call graph of every linted file."""
    freqs = function_frequencies(results)
    for r in results:
        for f in r.findings:
            f.context = context_of(f, freqs)
        r.findings = [f for f in r.findings if not hotpath.dropped(f)]
    compiled.settle(results)
