"""What a rule is: a class with its documentation, its examples (which are also its tests), and
visitor methods over `ast` nodes that report findings through the lint context.

Modelled on Fixit 2 (examples are tests and docs) and ruff (what / why / example / use instead /
fix safety). A rule subscribes to node types by defining `visit_<NodeType>(self, node, ctx)`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import ClassVar

FIX_SAFETIES = ("none", "safe", "unsafe")


@dataclass(frozen=True)
class Bad:
    """An example the rule must flag: exactly `count` findings of the rule, the first at `line`
    (1-based within the snippet). `fixed`, when given, is the snippet after the rule's fix."""

    code: str
    line: int | None = None
    count: int = 1
    fixed: str | None = None
    unsafe: bool = False  # the fix in `fixed` needs --unsafe-fixes


@dataclass(frozen=True)
class Good:
    """An example the rule must not flag."""

    code: str


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions; the end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "content": self.content}

    @classmethod
    def from_json(cls, d: dict) -> "Edit":
        return cls(d["line"], d["column"], d["end_line"], d["end_column"], d["content"])


@dataclass(frozen=True)
class Fix:
    applicability: str  # "safe" | "unsafe"
    edits: tuple[Edit, ...]
    message: str = ""  # what the fix does, one line
    assumption: str = ""  # for unsafe fixes: under what the result is unchanged
    imports: tuple[str, ...] = ()  # modules the new code needs, e.g. ("torch",)

    def to_json(self) -> dict:
        return {"applicability": self.applicability, "message": self.message,
                "assumption": self.assumption, "imports": list(self.imports),
                "edits": [e.to_json() for e in self.edits]}

    @classmethod
    def from_json(cls, d: dict | None) -> "Fix | None":
        if not d:
            return None
        return cls(d["applicability"], tuple(Edit.from_json(e) for e in d["edits"]),
                   d.get("message", ""), d.get("assumption", ""), tuple(d.get("imports", ())))


@dataclass
class Finding:
    path: str
    line: int
    column: int  # 1-based, in characters
    end_line: int
    end_column: int  # 1-based, exclusive
    code: str
    name: str
    message: str
    suggestion: str = ""
    fix: Fix | None = None
    context: str = "cold"  # "hot" | "cold", settled after the call graph is known
    function: str = ""  # enclosing function key, for the hot-path call graph
    local_hot: bool = False  # hot from where it stands (loop, forward, loss), before the call graph
    cell: int | None = None  # notebook cell (1-based) when linting .ipynb
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        d = {
            "path": self.path, "line": self.line, "column": self.column,
            "end_line": self.end_line, "end_column": self.end_column,
            "code": self.code, "name": self.name, "message": self.message,
            "context": self.context, "suggestion": self.suggestion,
            "fix": self.fix.to_json() if self.fix else None,
        }
        if self.cell is not None:
            d["cell"] = self.cell
        if self.extra:
            d.update(self.extra)
        return d

    def cache_json(self) -> dict:
        d = self.to_json()
        d["function"] = self.function
        d["local_hot"] = self.local_hot
        return d

    @classmethod
    def from_cache(cls, d: dict) -> "Finding":
        known = {"path", "line", "column", "end_line", "end_column", "code", "name", "message",
                 "context", "suggestion", "fix", "function", "local_hot", "cell"}
        return cls(d["path"], d["line"], d["column"], d["end_line"], d["end_column"], d["code"],
                   d["name"], d["message"], d.get("suggestion", ""), Fix.from_json(d.get("fix")),
                   d.get("context", "cold"), d.get("function", ""), d.get("local_hot", False),
                   d.get("cell"), {k: v for k, v in d.items() if k not in known})


class Rule:
    """Base class of every rule. Subclasses set the documentation attributes and visitor methods."""

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case
    summary: ClassVar[str]  # what it flags, one line
    why: ClassVar[str]  # why it makes the host wait
    rewrite: ClassVar[str]  # the sync-free way, in general
    fix_safety: ClassVar[str] = "none"  # the strongest fix it offers: none / safe / unsafe
    fix_assumption: ClassVar[str] = ""  # what an unsafe fix assumes
    bad: ClassVar[tuple[Bad, ...]] = ()
    good: ClassVar[tuple[Good, ...]] = ()
    # words of which at least one must appear in a file for this rule to possibly fire there
    triggers: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "code" in cls.__dict__:
            assert cls.fix_safety in FIX_SAFETIES, cls
            cls.handlers = {n[6:]: getattr(cls, n) for n in dir(cls) if n.startswith("visit_")}

    def report(self, ctx, node: ast.AST, message: str, suggestion: str = "", fix: Fix | None = None,
               end_node: ast.AST | None = None) -> None:
        ctx.report(self, node, message, suggestion, fix, end_node)
