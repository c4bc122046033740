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
# prefilter words that show torch code or a training step (for `Rule.triggers`: rules that fire
# only on values known to be tensors can fire in any file holding one of these)
TORCH_CODE = ("torch", "ensor", "forward", "backward", "loss", "cuda", "DataLoader", "step(")  # "ensor": [Tt]ensor


@dataclass(frozen=True)
class Bad:
    """An example the rule must flag: exactly `count` findings of the rule, the first at `line`
    (1-based within the snippet). `fixed`, when given, is the snippet after the rule's fix."""

    code: str
    line: int | None = None
    count: int = 1
    fixed: str | None = None
    unsafe: bool = False  # the fix in `fixed` needs --unsafe-fixes
    suggests: str | None = None  # text the first finding's suggestion must contain (the advice fits this code)


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
    # fixes of one file with the same group are applied together or not at all (the sync goes
    # only when all of them are): the accumulators of one loop, the two masked reads of one loss
    group: str = ""
    # (line, column) of other findings whose syncs this fix removes too (a loss call's fix deletes
    # the masked reads before it)
    covers: tuple[tuple[int, int], ...] = ()

    def to_json(self) -> dict:
        d = {"applicability": self.applicability, "message": self.message,
             "assumption": self.assumption, "imports": list(self.imports),
             "edits": [e.to_json() for e in self.edits]}
        if self.group:
            d["group"] = self.group
        if self.covers:
            d["covers"] = [list(c) for c in self.covers]
        return d

    @classmethod
    def from_json(cls, d: dict | None) -> "Fix | None":
        if not d:
            return None
        return cls(d["applicability"], tuple(Edit.from_json(e) for e in d["edits"]),
                   d.get("message", ""), d.get("assumption", ""), tuple(d.get("imports", ())),
                   d.get("group", ""), tuple(tuple(c) for c in d.get("covers", ())))


@dataclass(frozen=True)
class Footprint:
    """What a rule's rewrite still runs, per instance of the op that synced: the replay's model of
    the rewrite (syncscan.trace.estimate). `ops`: forward ops that launch GPU work (each at the
    trace's median op cost); `backward_nodes`: backward nodes (at the median node cost);
    `keeps_gpu_work`: the synced op's GPU work stays (a pinned copy is still a copy);
    `keeps_host_time`: its host time stays, less its waits (the same op without the sync)."""

    ops: int = 0
    backward_nodes: int = 0
    keeps_gpu_work: bool = False
    keeps_host_time: bool = False


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
    context: str = "cold"  # "hot" | "epoch" | "cold", settled after the call graph is known (hotpath)
    function: str = ""  # enclosing function key, for the hot-path call graph
    local: str = ""  # its place within the function: "", "step", "data", "epoch", "periodic" (hotpath)
    cell: int | None = None  # notebook cell (1-based) when linting .ipynb
    extra: dict = field(default_factory=dict)
    # "high": the values involved are known to be what the message says; "low": only probably (a value of
    # unknown origin taken for a tensor, code in a test); see README "Confidence"
    confidence: str = "high"
    compile: dict | None = None  # in code torch.compile traces: the effect (lint/compiled.py), else None

    def to_json(self) -> dict:
        d = {
            "path": self.path, "line": self.line, "column": self.column,
            "end_line": self.end_line, "end_column": self.end_column,
            "code": self.code, "name": self.name, "message": self.message,
            "context": self.context, "confidence": self.confidence, "suggestion": self.suggestion,
            "fix": self.fix.to_json() if self.fix else None,
            "compile": self.compile,
        }
        if self.cell is not None:
            d["cell"] = self.cell
        if self.extra:
            d.update({k: v for k, v in self.extra.items() if k != "path"})
            if "path" in self.extra and d["fix"] is not None:
                d["fix"]["path"] = self.extra["path"]  # what the fix leaves on its step path (steppath)
        return d

    def cache_json(self) -> dict:
        d = self.to_json()
        d["function"] = self.function
        d["local"] = self.local
        return d

    @classmethod
    def from_cache(cls, d: dict) -> "Finding":
        known = {"path", "line", "column", "end_line", "end_column", "code", "name", "message",
                 "context", "confidence", "suggestion", "fix", "function", "local", "cell", "compile"}
        extra = {k: v for k, v in d.items() if k not in known}
        if d.get("fix") and "path" in d["fix"]:
            extra["path"] = d["fix"]["path"]
        return cls(d["path"], d["line"], d["column"], d["end_line"], d["end_column"], d["code"],
                   d["name"], d["message"], d.get("suggestion", ""), Fix.from_json(d.get("fix")),
                   d.get("context", "cold"), d.get("function", ""), d.get("local", ""),
                   d.get("cell"), extra, d.get("confidence", "high"), d.get("compile"))


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
    # prefilter: words of which at least one appears in any file where this rule can fire (a file
    # with no rule's words is not parsed: syncscan.lint.registry.trigger_words); each rule's bad
    # examples must contain one (tests/test_catalog.py)
    triggers: ClassVar[tuple[str, ...]] = ()
    # -- the runtime side: syncscan/catalog_data.py is generated from these (syncscan.lint.catalog_gen)
    # profiler op names whose syncs this rule explains (each op belongs to one rule); () when the
    # rule's syncs show under another rule's ops (int(t) runs aten::item, SYN101's)
    ops: ClassVar[tuple[str, ...] | None] = None
    copy_directions: ClassVar[tuple[str, ...]] = ()  # "DtoH"/"HtoD": a sync inside a copy op of that direction
    runtime_calls: ClassVar[tuple[str, ...]] = ()  # CUDA calls made outside any op (cudaDeviceSynchronize)
    # torch's Python functions whose calls hold the host until other processes arrive
    # (torch.distributed.barrier): timed from the Python stacks of a multi-rank run's traces
    host_functions: ClassVar[tuple[str, ...]] = ()
    rewrite_hint: ClassVar[str] = ""  # the rewrite in one line, shown beside each runtime site
    footprint: ClassVar[Footprint | None] = None  # what the rewrite still runs, for the replay
    # findings run every step wherever they are written (per-sample work in a Dataset): shown as hot
    per_step: ClassVar[bool] = False

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "code" in cls.__dict__:
            assert cls.fix_safety in FIX_SAFETIES, cls
            cls.handlers = {n[6:]: getattr(cls, n) for n in dir(cls) if n.startswith("visit_")}

    def report(self, ctx, node: ast.AST, message: str, suggestion: str = "", fix: Fix | None = None,
               end_node: ast.AST | None = None, confidence: str | None = None) -> None:
        ctx.report(self, node, message, suggestion, fix, end_node, confidence)
