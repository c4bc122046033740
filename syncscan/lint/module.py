"""What a module defines and where, read from its syntax alone (no kinds): its functions and
classes, which class and function own each `def`, a class's methods through its bases, the
`self.<attr> = value` assignments of each class, TorchScript `# type:` comments, every call of a
function or method of the module by name, and the values each name is assigned. Built lazily,
once per file.
"""

from __future__ import annotations

import ast
import re

from syncscan.lint.docstrings import returns_tensor, tensor_params
from syncscan.lint.tree import (FUNCS, LEAN_CHILDREN, FunctionNode, SourceTree, param_defaults, release_closures,
                                statements)

_TYPE_COMMENT = re.compile(r"#\s*type:\s*(\(.*\)\s*->\s*.+?)\s*$")

# the name of a module-level class or function, or of a method
CallKey = tuple[str, str]  # ("n", name) for `name(...)`, ("s", name) for `self.name(...)` / `cls.name(...)`,
# ("i", name) for `obj.name(...)` on anything else (an instance of a class of the module, maybe)
CallSite = tuple[ast.Call, "ast.AST | None", "ast.ClassDef | None"]  # the call, its function, its class


class ModuleIndex:
    def __init__(self, src: SourceTree, imports: dict[str, str]):
        self.src = src
        self.imports = imports
        self.funcs: dict[str, FunctionNode] = {}  # module-level functions
        self.classes: dict[str, ast.ClassDef] = {}  # module-level classes
        self.owner: dict[int, tuple] = {}  # id(function) -> (its class or None, the function around it or None)
        self.functions: list[FunctionNode] = []  # every `def` of the module, methods and nested ones too
        for node in src.tree.body:
            if isinstance(node, FUNCS):
                self.funcs[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
        self._index_defs(src.tree.body, None, None)
        self._calls: dict[CallKey, list[CallSite]] | None = None
        self._escaped: set[CallKey] = set()
        self._self_assigns: dict[int, dict[str, list[tuple[ast.AST, ast.AST]]]] = {}
        self._comments: dict[int, tuple | None] = {}
        self._doc_tensors: dict[int, frozenset[str]] = {}
        self._records: dict[str, dict[str, ast.expr | None]] | None = None
        self._assigned: dict[str, list[ast.AST]] | None = None
        self._from_imports: dict[str, tuple[int, str, str]] | None = None
        self._instance_calls: dict[str, dict[int, tuple[FunctionNode, ast.ClassDef]]] = {}
        self._constructed: set[str] = set()  # names / `self.<attr>` some assignment gives a class's instance(s)
        self._built_names: frozenset[str] | None = None  # constructed_names()

    def _index_defs(self, body, cls, outer) -> None:
        for s in body:
            t = s.__class__
            if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                self.owner[id(s)] = (cls, outer)
                self.functions.append(s)
                self._index_defs(s.body, cls, s)
            elif t is ast.ClassDef:
                self._index_defs(s.body, s, None)
            else:  # (most statements hold no block: their class says so once)
                for f in _blocks_of(t):
                    sub = getattr(s, f, None)
                    if sub:
                        self._index_defs([y for h in sub for y in h.body] if f == "handlers" else sub, cls,
                                         outer)

    def class_of(self, fn: ast.AST) -> ast.ClassDef | None:
        return self.owner.get(id(fn), (None, None))[0]

    def is_method(self, fn: ast.AST, cls: ast.ClassDef | None) -> bool:
        """`fn` is defined right in `cls`'s body (not nested in one of its methods)."""
        return cls is not None and self.owner.get(id(fn), (None, None))[1] is None and any(s is fn for s in cls.body)

    # -- classes -------------------------------------------------------------------------------
    def bases(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """The base classes of `cls` defined in this module."""
        out = []
        for b in cls.bases:
            base = self.classes.get(b.id) if isinstance(b, ast.Name) else None
            if base is not None and base is not cls:
                out.append(base)
        return out

    def base_chain(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """`cls` and its bases defined in this module, breadth first, each once (at most six classes)."""
        chain: list[ast.ClassDef] = []
        todo = [cls]
        while todo and len(chain) < 6:
            c = todo.pop(0)
            if any(c is x for x in chain):
                continue
            chain.append(c)
            todo += [self.classes[b.id] for b in c.bases if isinstance(b, ast.Name) and b.id in self.classes]
        return chain

    def method(self, cls: ast.ClassDef, name: str, depth: int = 0) -> tuple[FunctionNode, ast.ClassDef] | None:
        """The method `name` of `cls`, or of a base class defined in this module."""
        for s in cls.body:
            if isinstance(s, FUNCS) and s.name == name:
                return s, cls
        if depth < 5:
            for base in self.bases(cls):
                found = self.method(base, name, depth + 1)
                if found is not None:
                    return found
        return None

    def self_assigns(self, cls: ast.ClassDef) -> dict[str, list[tuple[ast.AST, ast.AST]]]:
        """attr -> [(value, the method assigning it)] for each `self.<attr> = value` in `cls`'s own
        methods (one walk per class)."""
        table = self._self_assigns.get(id(cls))
        if table is None:
            table = self._self_assigns[id(cls)] = {}
            for s in cls.body:
                if isinstance(s, FUNCS):
                    for n in statements(s):  # (ast.walk's order)
                        if isinstance(n, ast.Assign) and len(n.targets) == 1:
                            t = n.targets[0]
                            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                                table.setdefault(t.attr, []).append((n.value, s))
        return table

    def attr_constant(self, cls: ast.ClassDef, attr: str) -> tuple[bool, object]:
        """(True, c) when every `self.<attr> = ...` of `cls` stores the constant `c`, written out or as the default of
        a parameter of its method (`self.device = device` in `__init__(self, device=None)`); (False, None) else."""
        sets = self.self_assigns(cls).get(attr)
        got: set = set()
        for v, fn in sets or ():
            if isinstance(v, ast.Name) and isinstance(fn, FUNCS):
                v = param_defaults(fn.args).get(v.id)
            if not isinstance(v, ast.Constant) or v.value not in (None, True, False):
                return False, None
            got.add(v.value)
        return (True, got.pop()) if len(got) == 1 else (False, None)

    def attr_values(self, cls: ast.ClassDef, attr: str, depth: int = 0):
        """(value, the method assigning it) for each `self.<attr> = value` in `cls` and its bases here."""
        yield from self.self_assigns(cls).get(attr, ())
        if depth < 5:
            for base in self.bases(cls):
                yield from self.attr_values(base, attr, depth + 1)

    def class_built(self, v: ast.AST) -> str | None:
        """`C` when `v` is `C(...)` for a class `C` of this module."""
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in self.classes \
                and v.func.id not in self.imports:
            return v.func.id
        return None

    # -- `# type:` comments --------------------------------------------------------------------
    def return_annotation(self, fn: FunctionNode) -> ast.expr | None:
        """What `fn` says it returns: its `-> T`, else its `# type: (...) -> T` comment's."""
        if fn.returns is not None:
            return fn.returns
        tc = self.type_comment(fn)
        return tc[1] if tc else None

    def type_comment(self, fn: FunctionNode) -> tuple[dict[str, ast.expr], ast.expr] | None:
        """({parameter: type}, return type) of a TorchScript-style `# type: (Tensor, int) -> Tensor`."""
        if id(fn) in self._comments:
            return self._comments[id(fn)]
        out = None
        lines = self.src.lines
        last = fn.body[0].lineno - 1 if fn.body else fn.lineno
        for ln in range(fn.lineno, min(last, fn.lineno + 30) + 1):
            text = lines[ln - 1] if 0 < ln <= len(lines) else ""
            m = _TYPE_COMMENT.search(text) if "type:" in text else None
            if m is None:
                continue
            try:
                sig = ast.parse(m.group(1), mode="func_type")
            except (SyntaxError, ValueError):
                break
            params = fn.args.posonlyargs + fn.args.args
            if len(sig.argtypes) == len(params) - 1 and params and params[0].arg in ("self", "cls"):
                params = params[1:]
            if len(sig.argtypes) == len(params):
                out = ({p.arg: t for p, t in zip(params, sig.argtypes)}, sig.returns)
            break
        self._comments[id(fn)] = out
        return out

    def doc_tensors(self, fn: FunctionNode) -> frozenset[str]:
        """The parameters of `fn` its docstring declares tensors (docstrings.py); for an `__init__`
        without one, its class's docstring."""
        out = self._doc_tensors.get(id(fn))
        if out is None:
            doc = ast.get_docstring(fn, clean=False)
            cls = self.class_of(fn)
            if doc is None and fn.name == "__init__" and cls is not None:
                doc = ast.get_docstring(cls, clean=False)
            a = fn.args
            out = self._doc_tensors[id(fn)] = tensor_params(doc, {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs})
        return out

    @staticmethod
    def documented_tensor(fn: FunctionNode) -> bool:
        """`fn`'s docstring declares that it returns one tensor (`Returns` / `-------` / `torch.Tensor(shape=(n,))`):
        read only where its body does not say (a docstring says nothing of the device, a walk may)."""
        return not isinstance(fn, ast.Lambda) and returns_tensor(ast.get_docstring(fn, clean=False))

    # -- calls of the module's own functions ---------------------------------------------------
    def calls(self) -> dict[CallKey, list[CallSite]]:
        """("n", name) / ("s", method) -> [(call, enclosing function or None, its class)]. Names read
        without being called (a function handed around: its callers are not all here) go to `escaped`."""
        if self._calls is not None:
            return self._calls
        index: dict[CallKey, list[CallSite]] = {}
        called: set[int] = set()
        escaped = self._escaped
        # (`obj.name(...)` matters only where a class of the module defines `name`: the rest is not kept)
        methods = {s.name for cls in self.classes.values() for s in cls.body if isinstance(s, FUNCS)}

        # (dispatch on the exact node class, as `ast.parse` builds them: this visits every node of the module;
        # a Name or a Constant has no child to visit)
        Name, Attribute, Call, Load = ast.Name, ast.Attribute, ast.Call, ast.Load
        FunctionDef, AsyncFunctionDef, ClassDef, Assign = ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign
        Constant = ast.Constant
        classes = self.classes
        funcs = self.funcs
        # `fn = pairwise_distance` (a module function bound to a local name, on one path or several) then `fn(x, c)`:
        # (alias, function, enclosing function), settled after the visit
        aliases: list[tuple[str, str, ast.AST]] = []

        def visit(node, efn, ecls):
            for c in LEAN_CHILDREN[node.__class__](node):
                t = c.__class__
                if t is Name:
                    if c.ctx.__class__ is Load and id(c) not in called:
                        escaped.add(("n", c.id))
                    continue
                if t is Constant:
                    continue
                if t is Call:
                    f = c.func
                    ft = f.__class__
                    if ft is Name:
                        index.setdefault(("n", f.id), []).append((c, efn, ecls))
                        called.add(id(f))
                        if f.id == "cls" and ecls is not None and efn is not None and any(
                                d.__class__ is Name and d.id == "classmethod" for d in efn.decorator_list):
                            # `cls(c=torch.tensor(c), ...)` in a classmethod builds the class (its `__init__`'s callers)
                            index.setdefault(("n", ecls.name), []).append((c, efn, ecls))
                    elif ft is Attribute:
                        if f.value.__class__ is Name and f.value.id in ("self", "cls"):
                            index.setdefault(("s", f.attr), []).append((c, efn, ecls))
                        elif f.attr in methods:
                            index.setdefault(("i", f.attr), []).append((c, efn, ecls))
                        called.add(id(f))
                elif t is Attribute:
                    if c.ctx.__class__ is Load and id(c) not in called:
                        if c.value.__class__ is Name and c.value.id in ("self", "cls"):
                            escaped.add(("s", c.attr))
                        elif c.attr in methods:
                            escaped.add(("i", c.attr))
                elif t is FunctionDef or t is AsyncFunctionDef:  # (a lambda's calls are walked with the function around it)
                    visit(c, c, ecls)
                    continue
                elif t is ClassDef:
                    visit(c, None, c)
                    continue
                elif t is Assign:
                    v = c.value
                    if v.__class__ is Name and v.id in funcs and efn is not None and len(c.targets) == 1 \
                            and c.targets[0].__class__ is Name:
                        aliases.append((c.targets[0].id, v.id, efn))
                        called.add(id(v))  # (read as a value only if the alias is: settled below)
                    elif classes and _may_build(v, classes):
                        if self._built_class(v, False) or self._built_class(v, True):
                            self._constructed.update(k for tg in c.targets if (k := binding_key(tg)) is not None)
                visit(c, efn, ecls)

        visit(self.src.tree, None, None)
        release_closures(visit)
        if aliases:
            self._settle_aliases(aliases, index, escaped)
        self._calls = index
        return index

    def _settle_aliases(self, aliases: list, index: dict, escaped: set) -> None:
        """A local name that holds module functions only (every binding of it in its function is `name = f`) and is
        only ever called: its calls are calls of each such function (whichever it holds then). Otherwise the
        functions are handed around (`escaped`)."""
        by_fn: dict[tuple[int, str], list[str]] = {}
        for alias, fname, efn in aliases:
            by_fn.setdefault((id(efn), alias), []).append(fname)
        fns = {id(efn): efn for _, _, efn in aliases}
        for (fid, alias), fnames in by_fn.items():
            efn = fns[fid]
            stores = [n for n in ast.walk(efn) if isinstance(n, ast.Name) and n.id == alias
                      and not isinstance(n.ctx, ast.Load)]
            a = efn.args
            ok = ("n", alias) not in escaped and alias not in self.funcs and len(stores) == len(fnames) \
                and all(p.arg != alias for p in a.posonlyargs + a.args + a.kwonlyargs)
            if not ok:
                escaped.update(("n", f) for f in fnames)
                continue
            sites = [c for c in index.get(("n", alias), ()) if c[1] is efn]
            for f in set(fnames):
                index.setdefault(("n", f), []).extend(sites)

    def instance_calls(self, name: str) -> dict[int, tuple[FunctionNode, ast.ClassDef]]:
        """id(call) -> (method, its class) for each `obj.<name>(...)` of the module whose receiver is an
        instance of a class of the module (`instance_class`). Memoised per method name."""
        out = self._instance_calls.get(name)
        if out is None:
            out = self._instance_calls[name] = {}
            if self.classes:
                for call, efn, _ in self.calls().get(("i", name), ()):
                    recv = call.func.value  # type: ignore[attr-defined]  # (an Attribute)
                    cls = self.instance_class(recv, efn)
                    found = self.method(cls, name) if cls is not None else self._shared_method(recv, efn, name)
                    if found is not None:
                        out[id(call)] = found
        return out

    def _shared_method(self, recv: ast.AST, fn: ast.AST | None, name: str) -> tuple | None:
        """The method `name` when `recv` is built from several classes of the module on different paths
        (`hess = L_BFGS(x) if limited else BFGS(x)`) that all take it from one definition (a base's)."""
        key = binding_key(recv)
        if key is None or key in ("self", "cls") or isinstance(recv, ast.Subscript) or key not in self._constructed:
            return None
        if isinstance(fn, FUNCS) and any(p.arg == key for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs):
            return None
        names = {self._built_class(v, False) for v in self.assigned(key)}
        if len(names) < 2 or None in names:
            return None
        found = {id(m[0]): m for c in names if (m := self.method(self.classes[c], name)) is not None}  # type: ignore[index]
        return next(iter(found.values())) if len(found) == 1 and all(
            self.method(self.classes[c], name) is not None for c in names) else None  # type: ignore[index]

    def constructed_names(self) -> frozenset[str]:
        """The names the file assigns `C(...)` of a class of the module to, somewhere: a cheap first test before
        `instance_class` (from the assignment table, without building the call index). Memoised."""
        if self._built_names is None:
            self.assigned("")  # (the table, which notes them as it is built)
        return self._built_names  # type: ignore[return-value]

    def instance_class(self, recv: ast.AST, fn: ast.AST | None) -> ast.ClassDef | None:
        """The class of this module `recv` (read in `fn`) is an instance of, when every value the file
        assigns to its name is built from that one class: `top1` of `top1 = AverageMeter(...)` (in any
        function), `meters[k]` of `meters = {k: Meter() ...}`, `[Meter() for _ in ...]` or
        `defaultdict(Meter)`, `self.meter` of `self.meter = Meter()`. Not a parameter of `fn`."""
        item = isinstance(recv, ast.Subscript)
        base = recv.value if item else recv  # type: ignore[attr-defined]
        key = binding_key(base)
        if key is None or key in ("self", "cls"):
            return None
        if isinstance(fn, FUNCS) and isinstance(base, ast.Name) and any(
                p.arg == key for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs):
            return None
        self.calls()
        if key not in self._constructed:
            return None
        names = {self._built_class(v, item) for v in self.assigned(key)}
        name = names.pop() if len(names) == 1 else None
        return self.classes[name] if name is not None else None

    def _built_class(self, v: ast.AST, item: bool) -> str | None:
        """`C` of `C(...)`, or, for `item`, of a list / tuple / dict of them (a display, a comprehension or
        `defaultdict(C)`)."""
        if not item:
            return self.class_built(v)
        if isinstance(v, (ast.List, ast.Tuple, ast.Set)) or isinstance(v, ast.Dict) and None not in v.keys:
            got = {self.class_built(e) for e in (v.values if isinstance(v, ast.Dict) else v.elts)}
            return got.pop() if len(got) == 1 else None
        if isinstance(v, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.class_built(v.elt)
        if isinstance(v, ast.DictComp):
            return self.class_built(v.value)
        if isinstance(v, ast.Call) and _last_name(v.func) == "defaultdict" and len(v.args) == 1 \
                and isinstance(v.args[0], ast.Name) and v.args[0].id in self.classes and v.args[0].id not in self.imports:
            return v.args[0].id
        return None

    def escaped(self, key: CallKey) -> bool:
        """The function or method is read as a value somewhere (handed around), not only called."""
        self.calls()
        return key in self._escaped

    # -- what names are assigned ---------------------------------------------------------------
    def assigned(self, key: str) -> list[ast.AST]:
        """The values assigned anywhere in the file to `key`: a name (`loader`) or `self.<attr>`
        (`self.loader`), in `ast.walk` order."""
        if self._assigned is None:
            table: dict[str, list[ast.AST]] = {}
            built: set[str] = set()
            classes = self.classes
            for n in statements(self.src.tree):
                if isinstance(n, ast.Assign):
                    v = n.value
                    made = v.__class__ is ast.Call and v.func.__class__ is ast.Name and v.func.id in classes
                    for t in n.targets:
                        k = binding_key(t)
                        if k is not None:
                            table.setdefault(k, []).append(v)
                            if made:
                                built.add(k)
            self._assigned = table
            self._built_names = frozenset(built)
        return self._assigned.get(key, [])

    def from_imports(self) -> dict[str, tuple[int, str, str]]:
        """local name -> (level, module, name there) for `from [.]module import name [as local]` and
        `import a.b as local` (-> (0, "a", "b")), `import a` (-> (0, "", "a")): where a name comes from,
        for the modules of the same tree (crossfile.py); `qualify` answers for libraries."""
        if self._from_imports is None:
            out: dict[str, tuple[int, str, str]] = {}
            for node in statements(self.src.tree):
                if isinstance(node, ast.ImportFrom):
                    for a in node.names:
                        if a.name != "*":
                            out[a.asname or a.name] = (node.level, node.module or "", a.name)
                elif isinstance(node, ast.Import):
                    for a in node.names:
                        head, _, last = a.name.rpartition(".")
                        if a.asname:
                            out[a.asname] = (0, head, last)
                        elif not head:
                            out.setdefault(a.name, (0, "", a.name))
            self._from_imports = out
        return self._from_imports

    def star_imports(self) -> tuple[tuple[int, str], ...]:
        """(level, module) of each `from [.]module import *` at the module's top level, in order."""
        return tuple((s.level, s.module or "") for s in self.src.tree.body
                     if isinstance(s, ast.ImportFrom) and any(a.name == "*" for a in s.names))

    def namedtuples(self) -> frozenset[str]:
        """Module-level named tuple types: `X = namedtuple("X", ...)`, `class X(NamedTuple): ...`."""
        out = set()
        for s in self.src.tree.body:
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and isinstance(s.value, ast.Call):
                f = s.value.func
                if _last_name(f) in ("namedtuple", "NamedTuple"):
                    out.add(s.targets[0].id)
            elif isinstance(s, ast.ClassDef) and any(_last_name(b) == "NamedTuple" for b in s.bases):
                out.add(s.name)
        return frozenset(out)

    def records(self) -> dict[str, dict[str, ast.expr | None]]:
        """Module-level record types -> their fields in order, each with its annotation (None when the
        definition gives none): `R = namedtuple("R", "a, b")`, `R = NamedTuple("R", [("a", T)])`,
        `class R(NamedTuple): a: T`, `@dataclass class R: a: T`. Memoised."""
        if self._records is not None:
            return self._records
        out: dict[str, dict[str, ast.expr | None]] = {}
        for s in self.src.tree.body:
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                    and isinstance(s.value, ast.Call) and len(s.value.args) >= 2:
                f = s.value.func
                fname = _last_name(f)
                spec = s.value.args[1]
                fields: dict[str, ast.expr | None] | None = None
                if fname == "namedtuple" and isinstance(spec, ast.Constant) and isinstance(spec.value, str):
                    fields = dict.fromkeys(spec.value.replace(",", " ").split())
                elif fname == "namedtuple" and isinstance(spec, (ast.List, ast.Tuple)) and all(
                        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in spec.elts):
                    fields = dict.fromkeys(e.value for e in spec.elts)  # type: ignore[attr-defined]
                elif fname == "NamedTuple" and isinstance(spec, (ast.List, ast.Tuple)) and all(
                        isinstance(e, ast.Tuple) and len(e.elts) == 2 and isinstance(e.elts[0], ast.Constant)
                        for e in spec.elts):
                    fields = {e.elts[0].value: e.elts[1] for e in spec.elts}  # type: ignore[attr-defined]
                if fields:
                    out[s.targets[0].id] = fields
            elif isinstance(s, ast.ClassDef) and (
                    any(_last_name(b) == "NamedTuple" for b in s.bases)
                    or any(_last_name(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in s.decorator_list)):
                fields = {t.target.id: t.annotation for t in s.body
                          if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)}
                if fields:
                    out[s.name] = fields
        self._records = out
        return out

    def imported_heads(self) -> frozenset[str]:
        """The top-level packages the module imports (`numpy`, `torch`, ...)."""
        return frozenset(q.split(".")[0] for q in self.imports.values())


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers")
_blocks: dict[type, tuple[str, ...]] = {}


def _blocks_of(t: type) -> tuple[str, ...]:
    """The statement-list fields (an `except`'s handlers among them) of a statement class."""
    out = _blocks.get(t)
    if out is None:
        out = _blocks[t] = tuple(f for f in _BLOCK_FIELDS if f in t._fields)  # type: ignore[attr-defined]
    return out


_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _may_build(v: ast.AST, classes: dict) -> bool:
    """A quick filter before `_built_class`: a display or comprehension, or a call of a class of the module
    or of `defaultdict` (most assignments are neither)."""
    if isinstance(v, ast.Call):
        f = v.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        return name in classes or name == "defaultdict"
    return isinstance(v, _DISPLAYS)


def binding_key(node: ast.AST) -> str | None:
    """`loader` / `self.loader`: what a value is assigned to and later read through."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return "self." + node.attr
    return None


def _last_name(node: ast.AST) -> str:
    """`namedtuple` of `namedtuple` / `collections.namedtuple`; "" for anything else."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
