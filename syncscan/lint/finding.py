"""What a rule reports: a `Finding`, with an optional `Fix` made of `Edit`s (re-exported by
rule.py, where rules take them from). Records, not dataclasses (records.py says why): a lint
served from the cache builds these and nothing of the rules' machinery."""

from __future__ import annotations

from syncscan.lint.records import Frozen, Record


class Edit(Frozen):
    """Replace the text between two 1-based (line, column) positions; the end is exclusive."""

    _fields = ("line", "column", "end_line", "end_column", "content")
    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    def __init__(self, line: int, column: int, end_line: int, end_column: int, content: str):
        self._set(line=line, column=column, end_line=end_line, end_column=end_column, content=content)

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "content": self.content}

    @classmethod
    def from_json(cls, d: dict) -> Edit:
        return cls(d["line"], d["column"], d["end_line"], d["end_column"], d["content"])


class Fix(Frozen):
    _fields = ("applicability", "edits", "message", "assumption", "imports", "group", "covers")
    applicability: str  # "safe" | "unsafe"
    edits: tuple[Edit, ...]
    message: str  # what the fix does, one line
    assumption: str  # for unsafe fixes: under what the result is unchanged
    imports: tuple[str, ...]  # modules the new code needs, e.g. ("torch",)
    # fixes of one file with the same group are applied together or not at all (the sync goes
    # only when all of them are): the accumulators of one loop, the two masked reads of one loss
    group: str
    # (line, column) of other findings whose syncs this fix removes too (a loss call's fix deletes
    # the masked reads before it)
    covers: tuple[tuple[int, int], ...]

    def __init__(self, applicability: str, edits: tuple[Edit, ...], message: str = "", assumption: str = "",
                 imports: tuple[str, ...] = (), group: str = "", covers: tuple[tuple[int, int], ...] = ()):
        self._set(applicability=applicability, edits=edits, message=message, assumption=assumption,
                  imports=imports, group=group, covers=covers)

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
    def from_json(cls, d: dict | None) -> Fix | None:
        if not d:
            return None
        return cls(d["applicability"], tuple(Edit.from_json(e) for e in d["edits"]),
                   d.get("message", ""), d.get("assumption", ""), tuple(d.get("imports", ())),
                   d.get("group", ""), tuple(tuple(c) for c in d.get("covers", ())))


_KNOWN = frozenset({"path", "line", "column", "end_line", "end_column", "code", "name", "message", "context",
                    "confidence", "suggestion", "fix", "function", "local", "cell", "compile"})


class Finding(Record):
    _fields = ("path", "line", "column", "end_line", "end_column", "code", "name", "message", "suggestion", "fix",
               "context", "function", "local", "cell", "extra", "confidence", "compile")
    path: str
    line: int
    column: int  # 1-based, in characters
    end_line: int
    end_column: int  # 1-based, exclusive
    code: str
    name: str
    message: str
    suggestion: str
    fix: Fix | None
    context: str  # "hot" | "epoch" | "cold", settled after the call graph is known (hotpath)
    function: str  # enclosing function key, for the hot-path call graph
    local: str  # its place within the function: "", "step", "data", "epoch", "periodic" (hotpath)
    cell: int | None  # notebook cell (1-based) when linting .ipynb
    extra: dict
    # "high": the values involved are known to be what the message says; "low": only probably (a value of
    # unknown origin taken for a tensor, code in a test); see README "Confidence"
    confidence: str
    compile: dict | None  # in code torch.compile traces: the effect (lint/compiled.py), else None

    def __init__(self, path: str, line: int, column: int, end_line: int, end_column: int, code: str, name: str,
                 message: str, suggestion: str = "", fix: Fix | None = None, context: str = "cold",
                 function: str = "", local: str = "", cell: int | None = None, extra: dict | None = None,
                 confidence: str = "high", compile: dict | None = None):
        self.path, self.line, self.column, self.end_line, self.end_column = path, line, column, end_line, end_column
        self.code, self.name, self.message, self.suggestion, self.fix = code, name, message, suggestion, fix
        self.context, self.function, self.local, self.cell = context, function, local, cell
        self.extra = {} if extra is None else extra
        self.confidence, self.compile = confidence, compile

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
    def from_cache(cls, d: dict) -> Finding:
        extra = {k: v for k, v in d.items() if k not in _KNOWN}
        if d.get("fix") and "path" in d["fix"]:
            extra["path"] = d["fix"]["path"]
        return cls(d["path"], d["line"], d["column"], d["end_line"], d["end_column"], d["code"],
                   d["name"], d["message"], d.get("suggestion", ""), Fix.from_json(d.get("fix")),
                   d.get("context", "cold"), d.get("function", ""), d.get("local", ""),
                   d.get("cell"), extra, d.get("confidence", "high"), d.get("compile"))
