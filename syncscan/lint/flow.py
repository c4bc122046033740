"""Def-use facts of one function: which bindings of a name may reach each read of it, on any path.

A fix that rewrites code around a finding must know what a name holds where it is read: `valid`
bound to a mask and rebound inside an `if` to `torch.nonzero(valid).squeeze(1)` holds a mask on
one path and indices on the other, and a rewrite that assumes the mask breaks on that path. These
are the classic reaching definitions, computed over the function's own statements (branches,
loops with `break` / `continue` / `else`, `try`, `with`, `match`, early `return` / `raise`).

`function_flow(node)` is a pure function of a function's (or module's) `ast`, memoised on the
node: it needs no lint context, so it can serve as one of the engine's providers. Nested
functions, lambdas, classes and comprehensions are scopes of their own: their reads are not
recorded here and the names they bind here are the function or class names only.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from syncscan.lint.tree import children

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True, eq=False)
class Binding:
    """One place where a name gets a value."""

    name: str
    node: ast.AST  # the Name(Store) / arg / FunctionDef / alias node
    stmt: ast.AST | None  # the statement that binds (None for a parameter)
    value: ast.AST | None  # for `name = value` (a single plain target): the value; else None
    how: str  # "assign", "augassign", "annassign", "param", "for", "with", "import", "def", "walrus", "other"

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", getattr(self.stmt, "lineno", 0))


State = dict  # name -> frozenset of Binding


@dataclass
class FunctionFlow:
    """Reaching definitions of one function: `reaching(load)` and `uses(binding)`."""

    scope: ast.AST
    bindings: list[Binding] = field(default_factory=list)
    _reach: dict[int, frozenset] = field(default_factory=dict)  # id(Name load) -> bindings
    _loads: dict[int, ast.Name] = field(default_factory=dict)
    _by_node: dict[int, Binding] = field(default_factory=dict)  # id(store node) -> binding
    escaping: set[str] = field(default_factory=set)  # global / nonlocal names: changed from elsewhere
    nested: set[str] = field(default_factory=set)  # names a nested function, lambda or class reads or binds
    parents: dict[int, ast.AST] = field(default_factory=dict)
    _before: dict[int, State] = field(default_factory=dict)  # id(statement) -> what reaches it

    def reaching(self, load: ast.AST) -> tuple[Binding, ...] | None:
        """The bindings whose value `load` (a Name read in this function's own code) may see,
        in source order; None when the read is not one this analysis saw (another scope)."""
        r = self._reach.get(id(load))
        if r is None:
            return None
        return tuple(sorted(r, key=lambda b: _pos(b.node)))

    def before(self, stmt: ast.AST, name: str) -> tuple[Binding, ...] | None:
        """The bindings of `name` that reach the start of statement `stmt` (of this function's
        own code), in source order; None when `stmt` was never reached by the analysis."""
        st = self._before.get(id(stmt))
        if st is None:
            return None
        return tuple(sorted(st.get(name, ()), key=lambda b: _pos(b.node)))

    def binding_of(self, store: ast.AST) -> Binding | None:
        return self._by_node.get(id(store))

    def uses(self, b: Binding) -> list[ast.Name]:
        """The reads that may see binding `b`, in source order."""
        out = [self._loads[k] for k, bs in self._reach.items() if b in bs]
        return sorted(out, key=_pos)

    def only_binding(self, load: ast.AST) -> Binding | None:
        """The one binding `load` sees on every path, or None (several, or none, or unknown)."""
        r = self.reaching(load)
        if r is None or len(r) != 1 or r[0].name in self.escaping or r[0].name in self.nested:
            return None
        return r[0]

    def all_uses_known(self, name: str) -> bool:
        """Every read of `name` is one this analysis saw: none in a nested scope, no global."""
        return name not in self.escaping and name not in self.nested

    def rebound_on_some_path(self, load: ast.AST) -> bool:
        r = self.reaching(load)
        return r is None or len(r) > 1

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def consumer(self, expr: ast.AST) -> ast.AST | None:
        """What uses the value of `expr`: the nearest enclosing node that is not a view of it
        (parentheses are not nodes; keyword arguments are skipped to their call)."""
        p = self.parent(expr)
        if isinstance(p, ast.keyword):
            p = self.parent(p)
        return p


def _pos(n: ast.AST) -> tuple[int, int]:
    return (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))


def function_flow(scope: ast.AST) -> FunctionFlow:
    """The reaching definitions of `scope` (a FunctionDef, AsyncFunctionDef, Lambda or Module),
    computed once per node."""
    cached = getattr(scope, "_syncscan_function_flow", None)
    if cached is not None:
        return cached
    ff = _Analysis(scope).run()
    try:
        scope._syncscan_function_flow = ff  # type: ignore[attr-defined]
    except AttributeError:  # a node type without __dict__: not cached
        pass
    else:
        _MEMOISED.append(scope)
    return ff


# the nodes that hold their flow: node -> flow -> its parents -> node is a cycle, which keeps the
# whole tree until the cyclic collector runs unless `forget` drops them when the file's lint ends
_MEMOISED: list[ast.AST] = []


def forget() -> None:
    """Drop every memoised flow (the engine calls it when a file's lint ends)."""
    for scope in _MEMOISED:
        scope.__dict__.pop("_syncscan_function_flow", None)
    _MEMOISED.clear()


def _join(a: State | None, b: State | None) -> State | None:
    if a is None:
        return b
    if b is None:
        return a
    out = dict(a)
    for k, v in b.items():
        out[k] = out[k] | v if k in out else v
    # a name bound on one side only may also be unbound on the other: it keeps its bindings, the
    # unbound path adds none (a read there raises NameError, which no rewrite changes)
    return out


class _Analysis:
    def __init__(self, scope: ast.AST):
        self.scope = scope
        self.ff = FunctionFlow(scope)
        self.loops: list[tuple[list, list]] = []  # (break states, continue states)
        self.try_states: list[list] = []  # states seen inside try bodies, for their handlers

    # -- driver -------------------------------------------------------------------------------
    def run(self) -> FunctionFlow:
        scope = self.scope
        self._parents(scope)
        state: State = {}
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = scope.args
            for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x is not None]:
                state[p.arg] = frozenset({self._bind(p.arg, p, None, None, "param")})
        body = getattr(scope, "body", [])
        self._block(body if isinstance(body, list) else [ast.Expr(body)], state)
        return self.ff

    def _parents(self, scope: ast.AST) -> None:
        parents = self.ff.parents
        todo = [scope]
        while todo:
            n = todo.pop()
            for c in children(n, lean=False):  # (ast.iter_child_nodes, without its generator's cost)
                parents[id(c)] = n
                if not isinstance(c, (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)):
                    todo.append(c)

    def _bind(self, name, node, stmt, value, how) -> Binding:
        b = self.ff._by_node.get(id(node))
        if b is not None and b.name == name:  # a loop's body walked again: the same binding
            return b
        b = Binding(name, node, stmt, value, how)
        self.ff.bindings.append(b)
        self.ff._by_node[id(node)] = b
        return b

    # -- statements ---------------------------------------------------------------------------
    def _block(self, stmts, state: State | None) -> State | None:
        for s in stmts:
            if state is None:
                return None  # unreachable code after return / raise / break / continue
            if self.try_states:
                self.try_states[-1].append(state)
            prev = self.ff._before.get(id(s))
            self.ff._before[id(s)] = state if prev is None else _join(prev, state) or state
            state = self._stmt(s, state)
        return state

    def _stmt(self, s: ast.stmt, state: State) -> State | None:
        if isinstance(s, ast.Assign):
            self._reads(s.value, state)
            for t in s.targets:
                self._reads_in_target(t, state)
            new = dict(state)
            plain = len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
            for t in s.targets:
                self._targets(t, s, s.value if plain else None, "assign", new)
            return new
        if isinstance(s, ast.AugAssign):
            self._reads(s.value, state)
            self._reads_in_target(s.target, state)
            if isinstance(s.target, ast.Name):
                self._record(s.target, state)  # `x += 1` reads x
                new = dict(state)
                new[s.target.id] = frozenset({self._bind(s.target.id, s.target, s, None, "augassign")})
                return new
            return state
        if isinstance(s, ast.AnnAssign):
            if s.value is None:
                return state
            self._reads(s.value, state)
            self._reads_in_target(s.target, state)
            new = dict(state)
            self._targets(s.target, s, s.value if isinstance(s.target, ast.Name) else None, "annassign", new)
            return new
        if isinstance(s, (ast.For, ast.AsyncFor)):
            self._reads(s.iter, state)
            return self._loop(s, state, lambda st: self._bound_target(s.target, s, "for", st))
        if isinstance(s, ast.While):
            self._reads(s.test, state)
            return self._loop(s, state, lambda st: self._reads_then(s.test, st))
        if isinstance(s, ast.If):
            self._reads(s.test, state)
            return _join(self._block(s.body, dict(state)), self._block(s.orelse, dict(state)))
        if isinstance(s, (ast.With, ast.AsyncWith)):
            new = dict(state)
            for item in s.items:
                self._reads(item.context_expr, new)
                if item.optional_vars is not None:
                    self._reads_in_target(item.optional_vars, new)
                    self._targets(item.optional_vars, s, None, "with", new)
            return self._block(s.body, new)
        if isinstance(s, (ast.Return, ast.Expr)) or type(s).__name__ == "TypeAlias":
            v = getattr(s, "value", None)
            if v is not None:
                self._reads(v, state)
            return None if isinstance(s, ast.Return) else self._walrus(v, s, state)
        if isinstance(s, ast.Raise):
            for v in (s.exc, s.cause):
                if v is not None:
                    self._reads(v, state)
            return None
        if isinstance(s, ast.Assert):
            self._reads(s.test, state)
            if s.msg is not None:
                self._reads(s.msg, state)
            return state
        if isinstance(s, ast.Break):
            if self.loops:
                self.loops[-1][0].append(state)
            return None
        if isinstance(s, ast.Continue):
            if self.loops:
                self.loops[-1][1].append(state)
            return None
        if isinstance(s, ast.Delete):
            new = dict(state)
            for t in s.targets:
                self._reads_in_target(t, state)
                if isinstance(t, ast.Name):
                    new[t.id] = frozenset()
            return new
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            new = dict(state)
            for a in s.names:
                name = (a.asname or a.name).split(".")[0]
                if name != "*":
                    new[name] = frozenset({self._bind(name, a, s, None, "import")})
            return new
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in s.decorator_list:
                self._reads(d, state)
            if not isinstance(s, ast.ClassDef):
                for d in list(s.args.defaults) + [d for d in s.args.kw_defaults if d is not None]:
                    self._reads(d, state)
            self._nested(s)
            new = dict(state)
            new[s.name] = frozenset({self._bind(s.name, s, s, None, "def")})
            return new
        if isinstance(s, (ast.Global, ast.Nonlocal)):
            self.ff.escaping.update(s.names)
            return state
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            return self._try(s, state)
        if type(s).__name__ == "Match":
            return self._match(s, state)
        # pass and anything new: reads only
        for c in ast.iter_child_nodes(s):
            if isinstance(c, ast.expr):
                self._reads(c, state)
        return state

    def _loop(self, s, state: State, enter) -> State | None:
        """A loop: the body runs from the state before it joined with the states its own end and
        its `continue`s reach, until nothing new reaches; it is left when the test fails (or the
        iterator ends: then `else` runs) or by `break`."""
        head = dict(state)
        exits: list = []
        for _ in range(50):  # reaching sets only grow: a few rounds settle
            self.loops.append(([], []))
            entered = enter(dict(head))
            end = self._block(s.body, entered)
            brk, cont = self.loops.pop()
            new_head: State = head
            for st in [end, *cont]:
                new_head = _join(new_head, st) or new_head
            exits = brk
            if new_head == head:
                break
            head = new_head
        out = self._block(s.orelse, dict(head)) if s.orelse else head
        for st in exits:
            out = _join(out, st)
        return out

    def _try(self, s, state: State) -> State | None:
        self.try_states.append([state])
        end = self._block(s.body, dict(state))
        seen = self.try_states.pop()
        if end is not None:
            seen.append(end)
        anywhere = None
        for st in seen:
            anywhere = _join(anywhere, st)
        out = self._block(s.orelse, dict(end)) if end is not None and s.orelse else end
        for h in s.handlers:
            hs = dict(anywhere or state)
            if h.type is not None:
                self._reads(h.type, hs)
            if h.name:
                hs[h.name] = frozenset({self._bind(h.name, h, h, None, "other")})
            out = _join(out, self._block(h.body, hs))
        if s.finalbody:
            fin_in = _join(out, anywhere)  # a finally block runs on every way out
            fin = self._block(s.finalbody, dict(fin_in or state))
            return fin if out is not None else None
        return out

    def _match(self, s, state: State) -> State | None:
        self._reads(s.subject, state)
        out: State | None = dict(state)  # no case matched
        for case in s.cases:
            cs = dict(state)
            for n in ast.walk(case.pattern):
                name = getattr(n, "name", None) if not isinstance(n, ast.MatchClass) else None
                if isinstance(name, str):
                    cs[name] = frozenset({self._bind(name, n, s, None, "other")})
                if isinstance(n, ast.expr):
                    self._reads(n, state)
            if case.guard is not None:
                self._reads(case.guard, cs)
            out = _join(out, self._block(case.body, cs))
        return out

    # -- targets and reads --------------------------------------------------------------------
    def _targets(self, t, stmt, value, how, state: State) -> None:
        if isinstance(t, ast.Name):
            state[t.id] = frozenset({self._bind(t.id, t, stmt, value, how)})
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._targets(e, stmt, None, how, state)
        elif isinstance(t, ast.Starred):
            self._targets(t.value, stmt, None, how, state)
        # attributes and subscripts bind no name

    def _bound_target(self, t, stmt, how, state: State) -> State:
        self._reads_in_target(t, state)
        self._targets(t, stmt, None, how, state)
        return state

    def _reads_in_target(self, t, state: State) -> None:
        """`x[i] = v` / `x.a = v` read x and i."""
        if isinstance(t, (ast.Subscript, ast.Attribute)):
            self._reads(t.value, state)
            if isinstance(t, ast.Subscript):
                self._reads(t.slice, state)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._reads_in_target(e, state)
        elif isinstance(t, ast.Starred):
            self._reads_in_target(t.value, state)

    def _reads_then(self, expr: ast.AST, state: State) -> State:
        self._reads(expr, state)
        return state

    def _record(self, name: ast.Name, state: State) -> None:
        prev = self.ff._reach.get(id(name), frozenset())
        self.ff._reach[id(name)] = prev | state.get(name.id, frozenset())
        self.ff._loads[id(name)] = name

    def _reads(self, expr: ast.AST | None, state: State) -> None:
        if expr is None:
            return
        todo = [expr]
        while todo:
            n = todo.pop()
            if isinstance(n, ast.Name):
                if isinstance(n.ctx, ast.Load):
                    self._record(n, state)
                continue
            if isinstance(n, _COMPS):
                self._comprehension(n, state)
                continue
            if isinstance(n, _SCOPES):
                self._nested(n)
                if isinstance(n, ast.Lambda):
                    for d in list(n.args.defaults) + [d for d in n.args.kw_defaults if d is not None]:
                        self._reads(d, state)
                continue
            todo += children(n)  # (leaf singletons left out: none is a Name, a comprehension or a scope)

    def _walrus(self, v, stmt, state: State) -> State:
        """`(n := expr)` inside an expression statement binds n afterwards."""
        if v is None:
            return state
        new = None
        for n in ast.walk(v):
            if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                new = new or dict(state)
                new[n.target.id] = frozenset({self._bind(n.target.id, n.target, stmt, n.value, "walrus")})
        return new or state

    def _comprehension(self, comp, state: State) -> None:
        """A comprehension's reads of this function's names, minus the names its `for`s bind."""
        own: set[str] = set()
        for g in comp.generators:
            for n in ast.walk(g.target):
                if isinstance(n, ast.Name):
                    own.add(n.id)
        inner = {k: v for k, v in state.items() if k not in own}
        parts = [g.iter for g in comp.generators] + [c for g in comp.generators for c in g.ifs]
        parts += [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]
        for part in parts:
            for n in ast.walk(part):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in own:
                    self._record(n, inner)
                elif isinstance(n, _SCOPES):
                    self._nested(n)
                elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                    self.ff.escaping.add(n.target.id)  # binds in this function, from inside an expression

    def _nested(self, node: ast.AST) -> None:
        """A nested function, lambda or class: its reads of this function's names are not tracked
        (a closure runs at any call), and a `nonlocal` there may change them."""
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                self.ff.nested.add(n.id)
            elif isinstance(n, (ast.Nonlocal, ast.Global)):
                self.ff.escaping.update(n.names)
