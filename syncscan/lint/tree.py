"""One module's syntax tree and source, with the lookups every other provider needs: children and
walks (fast versions of `ast.iter_child_nodes` / `ast.walk`), parents, source segments, positions,
and the nodes of a function's own body. Built once per file and memoised; nothing here knows about
kinds, rules or imports.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Callable, Iterator
from itertools import repeat
from typing import Any, Union

from syncscan.lint.lines import split_lines

# -- fast tree plumbing -------------------------------------------------------------------------
# `ast.iter_child_nodes` / `ast.walk` / `ast.get_source_segment` dominated the profile; these do
# the same with per-type field tables. Leaf singletons (Load, Add, Eq, ...) have no children and
# no rule looks at them, so the "lean" tables skip the fields that hold only them.
LEAF_TYPES = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
_LEAF_TYPE_NAMES = frozenset({"expr_context", "boolop", "operator", "unaryop", "cmpop"})
_SCALAR_TYPES = frozenset({"identifier", "string", "constant", "int"})
_MAY_HOLD_NONE = frozenset({"keys", "kw_defaults"})  # `{**d}` keys, keyword-only args without default
_ASDL = re.compile(r"^(\w+)\((.*)\)$")
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_DEFS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})  # (exact classes: what ast.parse builds)
_HOLDS_STATEMENTS = frozenset(c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.AST)
                              and {"body", "orelse", "finalbody", "handlers", "cases"} & set(c._fields))
# nodes with no child in the lean lists (a Name's context is a leaf singleton): about half of all nodes
LEAVES = frozenset({ast.Name, ast.Constant})


def _generic_children(node: ast.AST, lean: bool) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, minus the leaf singletons when `lean`."""
    return [c for c in ast.iter_child_nodes(node) if not (lean and isinstance(c, LEAF_TYPES))]


def _make_child_fn(t: type, lean: bool) -> Callable[[ast.AST], list[ast.AST]]:
    """A function listing a node's children in `ast.iter_child_nodes` order, written for the
    node type from its ASDL signature (the class docstring, e.g. `BinOp(expr left, operator op,
    expr right)`): identifier/string/constant/int fields are skipped without a look, optional
    fields tested for None, lists copied whole. Unknown layouts use the generic walk."""
    m = _ASDL.match((t.__doc__ or "").strip().split("\n")[0])
    fields = []
    for part in m.group(2).split(",") if m and m.group(2).strip() else []:
        typ, _, name = part.strip().partition(" ")
        fields.append((typ, name.strip()))
    if m is None or m.group(1) != t.__name__ or tuple(n for _, n in fields) != tuple(getattr(t, "_fields", ())):
        return lambda node: _generic_children(node, lean)
    # one list display (`[node.func, *node.args, *node.keywords]`): no `append` call per child
    parts = []
    for typ, name in fields:
        base = typ.rstrip("?*")
        if base in _SCALAR_TYPES or (lean and base in _LEAF_TYPE_NAMES):
            continue
        if typ.endswith("*"):
            parts.append(f"*[c for c in node.{name} if c is not None]" if name in _MAY_HOLD_NONE else f"*node.{name}")
        elif typ.endswith("?"):
            parts.append(f"*((node.{name},) if node.{name} is not None else ())")
        else:
            parts.append(f"node.{name}")
    lines = ["def children(node):", "    try:", f"        return [{', '.join(parts)}]",
             "    except AttributeError:  # a node built by hand without every field",
             "        return _generic_children(node, lean)"]
    ns: dict = {"_generic_children": _generic_children, "lean": lean}
    exec("\n".join(lines), ns)  # noqa: S102 - generated from ast's own field lists
    return ns["children"]


class ChildTable(dict):
    """node class -> the function listing such a node's children (`children`), made on first use. The
    hottest walks call `table[node.__class__](node)` themselves: one Python call per node, not two."""

    def __init__(self, lean: bool):
        super().__init__()
        self.lean = lean

    def __missing__(self, t: type) -> Callable[[ast.AST], list[ast.AST]]:
        fn = self[t] = _make_child_fn(t, self.lean)
        return fn


LEAN_CHILDREN = ChildTable(True)
_child_tables = {True: LEAN_CHILDREN, False: ChildTable(False)}


def child_table(lean: bool = True) -> ChildTable:
    return _child_tables[lean]


def children(node: ast.AST, lean: bool = True) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, minus the leaf singletons (Load, Add, Eq, ...) when `lean`."""
    return _child_tables[lean][node.__class__](node)


def walk(node: ast.AST, lean: bool = True) -> Iterator[ast.AST]:
    """`ast.walk(node)` in the same (breadth-first) order, minus the leaf singletons when `lean`."""
    todo = [node]
    table = _child_tables[lean]
    leaves = LEAVES if lean else ()
    for n in todo:  # (a list iterator sees what is appended while it runs: breadth first, no index kept)
        yield n
        if n.__class__ not in leaves:
            todo += table[n.__class__](n)


# Fields that hold statement lists, in `_fields` order within every node type that has them.
# Statements only ever sit in these lists (directly, or one level down in an `ExceptHandler` /
# `match_case`), so a walk over them alone reaches every statement without touching expressions.
_STMT_LIST_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")
_stmt_fields_cache: dict[type, tuple[str, ...]] = {}


def statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement under `tree` (plus the `ExceptHandler` / `match_case` nodes between them),
    in the same relative order as `ast.walk` (breadth first), without visiting expressions:
    a statement's depth and its parent's position decide its place, exactly as in the full walk."""
    cache = _stmt_fields_cache
    todo = deque([tree])
    pop, extend = todo.popleft, todo.extend
    while todo:
        node = pop()
        yield node
        t = node.__class__
        fields = cache.get(t)
        if fields is None:
            fields = cache[t] = tuple(f for f in t._fields if f in _STMT_LIST_FIELDS)
        for f in fields:
            v = getattr(node, f, None)
            if v.__class__ is list:  # `body` of a Lambda / IfExp is an expression, not a list
                extend(v)


def release_closures(*fns: Callable) -> None:
    """Empty the cells through which these nested functions call themselves or each other. Such a
    function is a cycle (function -> cell -> function) that keeps what it captured, often nodes of
    the file's tree, until the cyclic collector runs; emptied, it is freed when it goes out of scope."""
    for fn in fns:
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                if any(cell.cell_contents is f for f in fns):
                    cell.cell_contents = None
            except ValueError:  # (an empty cell)
                pass


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# what str.splitlines also ends a line at, and ast does not
_OTHER_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def param_defaults(a: ast.arguments) -> dict[str, ast.expr]:
    """Parameter name -> its default expression (keyword-only ones without a default left out)."""
    positional = a.posonlyargs + a.args
    out = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults))
    out.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    return out


def split_lines_no_ff(source: str) -> list[str]:
    """The lines `ast.get_source_segment` counts in (only \\r, \\n, \\r\\n end a line), with their ends."""
    if _OTHER_BREAKS.search(source) is None:  # (nearly every text: str.splitlines, in C, splits the same)
        return source.splitlines(keepends=True)
    return _LINE.findall(source)


def segment(lines: list[str], node: Any) -> str | None:
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


class SourceTree:
    """A parsed module: its path, text and tree, and the lookups over them (memoised)."""

    def __init__(self, path: str, source: str, tree: ast.Module):
        self.path = path
        self.source = source
        self.tree = tree
        self.lines = split_lines(source)  # for positions (no line ends)
        self._segment_lines: list[str] | None = None
        self._ast_lines: list[str] | None = None
        self._parents: dict[int, ast.AST] | None = None
        self._leaf_parents: dict[int, ast.AST] | None = None
        self._own: dict[int, list[ast.AST]] = {}

    @property
    def segment_lines(self) -> list[str]:
        """The lines as `ast` counts them, with their ends (for source segments)."""
        if self._segment_lines is None:
            self._segment_lines = split_lines_no_ff(self.source)
        return self._segment_lines

    @property
    def ast_lines(self) -> list[str]:
        """The lines as `ast` counts them (only \\n, \\r\\n and \\r end a line), without their ends;
        a trailing line end gives a last empty line."""
        if self._ast_lines is None:
            self._ast_lines = re.split(r"\r\n|\r|\n", self.source)
        return self._ast_lines

    def text(self, node: ast.AST) -> str:
        return segment(self.segment_lines, node) or ""

    def between(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        """The source text between two (line, UTF-8 byte column) positions of `ast`."""
        lines = self.segment_lines
        (l1, c1), (l2, c2) = start, end
        if l1 == l2:
            return lines[l1 - 1].encode()[c1:c2].decode()
        return "".join([lines[l1 - 1].encode()[c1:].decode(), *lines[l1:l2 - 1], lines[l2 - 1].encode()[:c2].decode()])

    def parent(self, node: ast.AST) -> ast.AST | None:
        if isinstance(node, LEAF_TYPES):  # shared singletons: the last parent ast.walk meets
            if self._leaf_parents is None:
                self._leaf_parents = {}
                for p in walk(self.tree, lean=False):
                    for c in children(p, lean=False):
                        self._leaf_parents[id(c)] = p
            return self._leaf_parents.get(id(node))
        if self._parents is None:
            parents = self._parents = {}
            todo: list[ast.AST] = [self.tree]
            for p in todo:  # (walk's breadth-first order, each node's children listed once)
                if p.__class__ in LEAVES:
                    continue
                cs = LEAN_CHILDREN[p.__class__](p)
                if cs:
                    parents.update(zip(map(id, cs), repeat(p)))  # (each child -> p, in one call)
                    todo += cs
        return self._parents.get(id(node))

    def position(self, node: Any, end: bool = False) -> tuple[int, int]:
        """1-based (line, character column) of a node's start or end."""
        line = node.end_lineno if end else node.lineno
        col = node.end_col_offset if end else node.col_offset
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if not text.isascii():
            col = len(text.encode("utf-8")[:col].decode("utf-8", "replace"))
        return line, col + 1

    def own_nodes(self, fn: Any) -> list[ast.AST]:
        """The nodes of `fn`'s body (depth first), not those of functions or classes defined in it
        (lambdas are walked: they run with the function around them), memoised per function."""
        out = self._own.get(id(fn))
        if out is None:
            out = self._own[id(fn)] = []
            todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
            while todo:
                n = todo.pop()
                out.append(n)
                t = n.__class__
                if t in LEAVES:
                    continue
                cs = LEAN_CHILDREN[t](n)
                # (a def is a statement: only a node holding statement lists may have one among its children)
                todo += [c for c in cs if c.__class__ not in _DEFS] if t in _HOLDS_STATEMENTS else cs
        return out
