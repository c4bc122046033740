"""Which functions `torch.compile` traces, and what it makes of the syncs found in them.

Per file (`file_facts`, at lint time, cached with the file's result):
- roots: functions decorated with `@torch.compile` / `@torch.compile(...)`; what `torch.compile(X)`
  is given: a function (module-level or local), `self.method`, `obj.method`, or a module object
  (`model = Net(...)`, `Net(...).to(dev)`: its class's `forward`); `model.compile()`;
- edges to the modules a function calls: a name holding `Cls(...)` in the function or around it
  (`loss_fn = MaskedLoss()` ... `loss_fn(pred, y)`), and, for the methods of a class, the classes
  it holds (`self.net = Net()`, `nn.ModuleList([Block() ...])`): compiling a module compiles the
  `forward` of the modules it calls;
- functions under `@torch.compiler.disable` (dynamo does not trace them);
- per finding: which variant of its rule's compile effect its text selects (rules/_compile.py),
  and the function input it writes into in place, if any.

Across files (`settle`, after the hot path): the compiled functions are the roots and everything
they reach through calls (resolved by name across files, as the hot path is) and module edges
(by class name); each finding in one gets `compile` (null elsewhere): the effect, why, the
compile-specific options, what keeps CUDA graphs off, and the torch.compile that reaches it.
"""

from __future__ import annotations

import ast
import re

from syncscan.lint.imports import qualify
from syncscan.lint.tree import release_closures
from syncscan.schema import LintCompile

COMPILE = ("torch.compile", "torch._dynamo.optimize")
DISABLE = ("torch.compiler.disable", "torch._dynamo.disable")
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPOUND = tuple(getattr(ast, n) for n in ("If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar",
                                            "Match") if hasattr(ast, n))
# methods that return the module they are called on: `Net().to(dev).train()` is a Net
_SAME_MODULE = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "half", "bfloat16", "double",
                          "requires_grad_", "to_empty", "share_memory"})
_CLASS_NAME = re.compile(r"^_?[A-Z]")


def _class_of(e: ast.AST, classes_here: set[str], imports: dict) -> str | None:
    """The class of a module object: `Net(...)`, `models.Net(...)`, `Net(...).to(dev)`."""
    while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _SAME_MODULE:
        e = e.func.value
    if not isinstance(e, ast.Call):
        return None
    f = e.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    if not name or not (_CLASS_NAME.match(name) or name in classes_here):
        return None
    q = qualify(f, imports) or ""
    if q.startswith(("torch.", "torchvision.", "numpy.")) and not q.startswith("torchvision.models"):
        return None  # nn.Linear and friends: their forward is not the user's code
    return name


_CONTAINERS = frozenset({"ModuleList", "Sequential", "ModuleDict"})


def _held_classes(value: ast.AST, classes_here: set[str], imports: dict) -> list[str]:
    """Classes of the modules an assigned value holds: `Head()`, and the classes built inside
    `nn.ModuleList([Block() for _ in range(n)])` or `nn.Sequential(A(), B())`."""
    c = _class_of(value, classes_here, imports)
    if c is not None:
        return [c]
    f = value.func if isinstance(value, ast.Call) else None
    if (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None) not in _CONTAINERS:
        return []
    out = []
    for n in ast.walk(value):
        if isinstance(n, ast.Call) and n is not value:
            c = _class_of(n, classes_here, imports)
            if c is not None and c not in out:
                out.append(c)
    return out


class _Scope:
    def __init__(self, key: str, node, cls: str | None, parent: _Scope | None):
        self.key, self.node, self.cls, self.parent = key, node, cls, parent
        self.instances: dict[str, list[str]] = {}  # name -> classes it holds (`model = Net()`)
        self.local_defs: dict[str, str] = {}  # local def name -> its key


def file_facts(path: str, tree: ast.Module, imports: dict, lines: list[str], findings) -> dict:
    """What this file says about compilation (see the module doc), as a JSON-able dict; empty
    entries are left out. Statements only: expressions are looked into where a statement names
    `compile` (in a file that does) and in the values assigned to names and to `self.<attr>`."""
    mentions = "compile" in "".join(lines)
    classes_here = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}  # (capitalised names count anyway)
    module = _Scope(f"{path}::<module>", tree, None, None)
    scopes: list[_Scope] = [module]
    roots: list[dict] = []
    held: dict[str, list[str]] = {}  # class -> classes its instances hold
    disabled: list[str] = []
    methods: dict[str, set[str]] = {}  # class -> its method names
    stmt_scope: dict[int, tuple[ast.stmt, _Scope]] = {}  # every statement, with the function it is in
    compile_calls: list[tuple[ast.Call, _Scope, str]] = []  # (call, scope, "fn" | "method")

    def visit(body, scope: _Scope, cls: ast.ClassDef | None):
        for s in body:
            stmt_scope[id(s)] = (s, scope)
            if isinstance(s, _FUNCS):
                cname = cls.name if cls is not None else None
                if cname is not None:
                    qual = f"{cname}.{s.name}"
                    methods.setdefault(cname, set()).add(s.name)
                elif scope.node is not tree:  # as the engine keys it: the enclosing function's own name
                    qual = f"{scope.node.name}.<locals>.{s.name}"
                else:
                    qual = s.name
                key = f"{path}::{qual}"
                if cname is None:
                    scope.local_defs[s.name] = key
                for d in s.decorator_list if mentions else ():
                    q = qualify(d.func if isinstance(d, ast.Call) else d, imports)
                    if q in COMPILE:
                        roots.append({"key": key, "line": d.lineno, "how": f"@{_text(lines, d)}"})
                    elif q in DISABLE:
                        disabled.append(key)
                inner = _Scope(key, s, cname, scope)
                scopes.append(inner)
                visit(s.body, inner, None)
            elif isinstance(s, ast.ClassDef):
                visit(s.body, scope, s)
            else:
                _statement(s, scope)
                if isinstance(s, _COMPOUND):
                    for f in ("body", "orelse", "finalbody"):
                        sub = getattr(s, f, None)
                        if isinstance(sub, list):
                            visit(sub, scope, cls)
                    for h in getattr(s, "handlers", ()):
                        visit(h.body, scope, cls)
                    for c in getattr(s, "cases", ()):
                        visit(c.body, scope, cls)

    def _statement(s, scope: _Scope):
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            _aliases(s.targets[0], s.value, scope)
        if isinstance(s, (ast.Assign, ast.AnnAssign)) and isinstance(s.value, ast.Call):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    c = _class_of(s.value, classes_here, imports)
                    if c is not None:
                        scope.instances.setdefault(t.id, []).append(c)
                elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" \
                        and scope.cls is not None:
                    for c in _held_classes(s.value, classes_here, imports):
                        if c not in held.setdefault(scope.cls, []):
                            held[scope.cls].append(c)
        if not mentions or not any("compile" in ln for ln in lines[s.lineno - 1:(s.end_lineno or s.lineno)]):
            return
        for n in _expressions(s):
            if isinstance(n, ast.Call):
                q = qualify(n.func, imports)
                if q in COMPILE and n.args:
                    compile_calls.append((n, scope, "fn"))
                elif isinstance(n.func, ast.Attribute) and n.func.attr == "compile" and q is None:
                    compile_calls.append((n, scope, "method"))

    def lookup(name: str, scope: _Scope | None):
        """(local def key, instance classes) of `name` seen from `scope` outwards."""
        while scope is not None:
            if name in scope.local_defs:
                return scope.local_defs[name], []
            if name in scope.instances:
                return None, scope.instances[name]
            scope = scope.parent
        return None, []

    def _aliases(target: ast.AST, value: ast.AST, scope: _Scope):
        """`net = model`, `net, criterion = model, loss_fn`: the new names hold the same modules."""
        pairs = [(target, value)]
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            pairs = list(zip(target.elts, value.elts))
        for t, v in pairs:
            if isinstance(t, ast.Name) and isinstance(v, ast.Name):
                _, classes = lookup(v.id, scope)
                if classes:
                    scope.instances.setdefault(t.id, []).extend(c for c in classes if c not in scope.instances[t.id])

    visit(tree.body, module, None)

    def targets_of(e: ast.AST, scope: _Scope) -> list[dict]:
        """What compiling `e` traces: [{"key": ...} | {"class": C, "method": m}]."""
        c = _class_of(e, classes_here, imports)
        if c is not None:
            return [{"class": c, "method": "forward"}]
        if isinstance(e, ast.Name):
            key, classes = lookup(e.id, scope)
            if key is not None:
                return [{"key": key}]
            return [{"class": c, "method": "forward"} for c in classes]
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
            owner = scope.cls if e.value.id == "self" else None
            if e.value.id == "self" and owner is not None:
                if e.attr in methods.get(owner, ()):
                    return [{"class": owner, "method": e.attr}]
                return [{"class": c, "method": "forward"} for c in held.get(owner, [])]
            _, classes = lookup(e.value.id, scope)
            return [{"class": c, "method": e.attr} for c in classes]
        return []

    for call, scope, how in compile_calls:
        what = call.args[0] if how == "fn" or not isinstance(call.func, ast.Attribute) else call.func.value
        for t in targets_of(what, scope):
            roots.append({**t, "line": call.lineno, "how": _text(lines, call)})
    facts = {"roots": roots, "disabled": disabled, "held": held,
             # names bound to module objects, per function (and the module), and where functions nest:
             # the modules a function calls by name are resolved from its calls, across files, at settle
             "instances": {sc.key: sc.instances for sc in scopes if sc.instances},
             "parents": {sc.key: sc.parent.key for sc in scopes[1:] if sc.parent is not None},
             "sites": _sites(findings, lines, stmt_scope)}
    release_closures(visit, _statement, lookup, _aliases)
    return {k: v for k, v in facts.items() if v}


def _text(lines: list[str], node: ast.expr, limit: int = 80) -> str:
    """The node's source on one line (whitespace collapsed), shortened."""
    first, last = node.lineno, node.end_lineno or node.lineno
    chunk = [ln.encode() for ln in lines[first - 1:last]]
    if not chunk:
        return ""
    if node.end_col_offset is not None:
        chunk[-1] = chunk[-1][:node.end_col_offset]
    chunk[0] = chunk[0][node.col_offset:]
    seg = " ".join(b"".join(chunk).decode(errors="replace").split())
    seg = seg.replace("( ", "(").replace(" )", ")")
    return seg if len(seg) <= limit else seg[:limit - 3] + "..."


def _expressions(stmt: ast.stmt):
    """The expression nodes of a statement, not those of statements nested in it."""
    todo = [c for c in ast.iter_child_nodes(stmt) if not isinstance(c, (ast.stmt, ast.ExceptHandler))]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(c for c in ast.iter_child_nodes(n) if not isinstance(c, ast.stmt))


_INPLACE_METHOD = re.compile(r"^(?!_)\w+[^_]_$")  # add_, masked_fill_, copy_ (not __init__, not _private)


def _written_input(stmt: ast.stmt, fn) -> str | None:
    """The parameter of `fn` (not self) that `stmt` writes into in place: `p[...] = v`,
    `p[...] += v`, `p.add_(...)`; None otherwise."""
    if fn is None:
        return None
    a = fn.args
    params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs} - {"self", "cls"}
    target = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif isinstance(stmt, ast.AugAssign):
        target = stmt.target
    if isinstance(target, ast.Subscript):
        root = target.value
        while isinstance(root, ast.Subscript):
            root = root.value
        return root.id if isinstance(root, ast.Name) and root.id in params else None
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute):
        f = stmt.value.func
        if _INPLACE_METHOD.match(f.attr) and isinstance(f.value, ast.Name) and f.value.id in params:
            return f.value.id
    return None


def site_key(f) -> str:
    return f"{f.line}:{f.column}:{f.code}"


def _sites(findings, lines, stmt_scope) -> dict[str, list]:
    """finding -> [variant index of its rule's compile effect, the input it writes into]; only
    findings with something beyond their rule's first variant are listed."""
    from syncscan.rules._compile import variant_index

    if not findings:
        return {}
    wanted = {f.line for f in findings}
    by_line: dict[int, tuple[ast.stmt, _Scope]] = {}  # the innermost statement on each line of a finding
    for st, scope in stmt_scope.values():
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        first, last = st.lineno, st.end_lineno or st.lineno
        for ln in wanted:
            if not first <= ln <= last:
                continue
            prev = by_line.get(ln)
            if prev is None or prev[0].lineno <= st.lineno:
                by_line[ln] = (st, scope)
    out = {}
    for f in findings:
        text = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        seg = text[f.column - 1:f.end_column - 1] if f.end_line == f.line else text[f.column - 1:]
        v = variant_index(f.code, seg) or 0
        st, scope = by_line.get(f.line, (None, None))
        fn = scope.node if scope is not None and isinstance(scope.node, _FUNCS) else None
        w = _written_input(st, fn) if st is not None else None
        if v or w:
            out[site_key(f)] = [v, w]
    return out


# ------------------------------------------------------------------------------ across files

def _module_edges(functions: dict[str, dict], facts: dict[str, dict]) -> dict[str, list[str]]:
    """function key -> the classes of the module objects it calls: by name (`loss_fn(...)`, a name
    bound to `Loss()` in the function or one around it), and, for a method, those its class holds."""
    instances = {k: v for fa in facts.values() for k, v in fa.get("instances", {}).items()}
    parents = {k: v for fa in facts.values() for k, v in fa.get("parents", {}).items()}
    held = {c: v for fa in facts.values() for c, v in fa.get("held", {}).items()}
    out: dict[str, list[str]] = {}
    for key, f in functions.items():
        classes: list[str] = []
        for name, via, *_ in f["calls"]:
            if via:
                continue
            scope: str | None = key
            while scope is not None:
                if name in instances.get(scope, {}):
                    classes += [c for c in instances[scope][name] if c not in classes]
                    break
                scope = parents.get(scope) or (None if scope.endswith("::<module>")
                                               else f"{scope.split('::', 1)[0]}::<module>")
        owner = key.split("::", 1)[-1].split(".")[0] if "." in key.split("::", 1)[-1] else None
        classes += [c for c in held.get(owner or "", []) if c not in classes]
        if classes:
            out[key] = classes
    return out


def compiled_functions(functions: dict[str, dict], facts: dict[str, dict]) -> dict[str, dict]:
    """function key -> the root that reaches it ({"line", "how", "path"}), over all linted files.
    `functions`: the call graph (as for the hot path); `facts`: path -> file_facts.

    Calls are followed by name across files, as the hot path does, but more strictly, since a
    function wrongly said compiled gets a wrong effect: `self.m()` goes to the class's own `m`
    when it has one (else to any method `m`, one inherited from a base elsewhere), a bare `f()`
    to `f` of the same file when there is one, and `obj.m()` only when one method in all the
    linted files has that name (and it is not a generic one like `step` or `update`)."""
    from syncscan.lint.hotpath import GENERIC_METHODS

    roots = [(path, r) for path, fa in facts.items() for r in fa.get("roots", ())]
    if not roots:
        return {}
    by_qual: dict[str, list[str]] = {}
    by_func: dict[str, list[str]] = {}
    by_method: dict[str, list[str]] = {}
    for k, f in functions.items():
        by_qual.setdefault(k.split("::", 1)[-1], []).append(k)
        (by_method if f["method"] else by_func).setdefault(f["name"], []).append(k)
    edges = _module_edges(functions, facts)
    disabled = {k for fa in facts.values() for k in fa.get("disabled", ())}

    def keys(r: dict) -> list[str]:
        if "key" in r:
            return [r["key"]] if r["key"] in functions else []
        return [k for k in by_qual.get(f"{r['class']}.{r['method']}", []) if k not in disabled] or (
            by_qual.get(f"{r['class']}.__call__", []) if r["method"] == "forward" else [])

    def callees(key: str) -> list[str]:
        path, qual = key.split("::", 1) if "::" in key else ("", key)
        f = functions[key]
        cls = qual.split(".")[0] if f["method"] else None
        out: list[str] = []
        for name, via, *_ in f["calls"]:
            if via == "self":
                own = [k for k in by_qual.get(f"{cls}.{name}", []) if k.startswith(path + "::")] if cls else []
                out += own or by_method.get(name, [])
            elif via == "def":  # a function defined in this one (named by its key): traced when it is called
                out += [name] if name in functions else []
            elif via == "wraps":  # the decorator's wrapper runs around this function, not inside the graph
                continue
            elif via == "":
                funcs = by_func.get(name, [])
                out += [k for k in funcs if k.startswith(path + "::")] or funcs
            elif name not in GENERIC_METHODS and len(by_method.get(name, ())) == 1:
                out += by_method[name]
        for c in edges.get(key, ()):
            out += keys({"class": c, "method": "forward"})
        return out

    out: dict[str, dict] = {}
    for path, r in roots:
        todo = keys(r)
        seen = set(todo)
        while todo:
            k = todo.pop()
            out.setdefault(k, {"path": path, "line": r["line"], "how": r["how"]})
            if k in disabled:
                continue
            for t in callees(k):
                if t not in seen and t not in disabled:
                    seen.add(t)
                    todo.append(t)
    return out


def settle(results) -> None:
    """Set `compile` on every finding of a compiled function (None on the others)."""
    facts = {r.path: r.compile for r in results if getattr(r, "compile", None)}
    functions: dict[str, dict] = {}
    for r in results:
        functions.update(r.functions)
    compiled = compiled_functions(functions, facts)
    for r in results:
        sites = (r.compile or {}).get("sites", {})
        for f in r.findings:
            root = compiled.get(f.function)
            variant, written = sites.get(site_key(f)) or (0, None)
            f.compile = None if root is None else describe(f.code, variant, written, root)


def describe(code: str, variant: int, written: str | None, root: dict) -> LintCompile:
    """The `compile` object of a finding (JSON)."""
    from syncscan.rules._compile import BREAKING, CUDAGRAPH_SKIP, EFFECTS, INPUT_WRITE, TRACED, UNVERIFIED, Effect

    variants = EFFECTS.get(code) or (Effect(UNVERIFIED, "not checked under torch.compile"),)
    e = variants[min(variant, len(variants) - 1)]
    cudagraphs = e.cudagraphs
    kind = e.kind
    if written:
        cudagraphs = INPUT_WRITE.format(name=written) + (f"; {cudagraphs}" if cudagraphs else "")
        if kind in (TRACED, UNVERIFIED):
            kind = CUDAGRAPH_SKIP
    where = f"{root['path']}:{root['line']} {root['how']}" if root.get("line") else root["path"]
    return {"effect": kind, "graph_break": kind in BREAKING, "why": e.why, "cudagraphs": cudagraphs,
            "options": list(e.options), "compiled_by": where}
