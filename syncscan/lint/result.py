"""One file's lint result: its findings and its call graph (the record workers send back and the
cache keeps). Its own module, away from the engine, so that a run served from the cache does not
import the inference."""

from __future__ import annotations

from syncscan.lint.finding import Finding
from syncscan.lint.records import Record


class FileResult(Record):
    _fields = ("path", "findings", "functions", "error", "skipped", "deps", "compile")
    path: str
    findings: list[Finding]
    # function key -> {"name", "method", "hot": its root frequency ("step", "epoch" or ""), "calls":
    # [(callee name, via: "" / "self" / "attr" / "def" / "wraps", local place of the call)]}: the
    # call graph (hotpath)
    functions: dict[str, dict]
    error: str | None
    skipped: bool
    # (path, size, mtime_ns) of the other files of the tree whose functions gave kinds here: the result
    # holds while they are unchanged
    deps: list[tuple[str, int, int]]
    compile: dict  # what torch.compile traces here (lint/compiled.py)

    def __init__(self, path: str, findings: list[Finding] | None = None, functions: dict[str, dict] | None = None,
                 error: str | None = None, skipped: bool = False, deps: list[tuple[str, int, int]] | None = None,
                 compile: dict | None = None):
        self.path = path
        self.findings = [] if findings is None else findings
        self.functions = {} if functions is None else functions
        self.error, self.skipped = error, skipped
        self.deps = [] if deps is None else deps
        self.compile = {} if compile is None else compile

    def to_cache(self, graph: bool = False) -> dict:
        """A JSON-able dict (results travel from workers and into the cache this way). The call
        graph is most of it, so each function is a list `[key, name, method, hot, n1, via1, local1,
        n2, via2, local2, ...]` with this file's path left out of the key. With `graph`, `functions`
        holds only the functions findings stand in (memory stays flat) and `graph` all of them (what
        torch.compile's reach needs: runner._settle_compiled)."""
        prefix = self.path + "::"
        used = {f.function for f in self.findings} if graph else None
        functions, rows = [], []
        for k, v in self.functions.items():
            if v.keys() != _FUNCTION_KEYS:  # not the usual shape: kept as it is
                row: list = [k, {**v, "calls": [list(c) for c in v["calls"]]}]
            else:
                row = ["::" + k[len(prefix):] if k.startswith(prefix) else k, v["name"], v["method"], v["hot"]]
                for call in v["calls"]:
                    row += call if len(call) == 3 else (*call, "")
            rows.append(row)
            if used is None or k in used:
                functions.append(row)
        findings = []
        for f in self.findings:  # (the path left out of function keys: a result is the same whatever
            d = f.cache_json()  # spelling of the path it was linted under, relative or absolute)
            if d["function"].startswith(prefix):
                d["function"] = d["function"][len(prefix) - 2:]
            findings.append(d)
        return {"findings": findings, "functions": functions, "error": self.error, "skipped": self.skipped,
                "deps": [list(d) for d in self.deps], **({"compile": self.compile} if self.compile else {}),
                **({"graph": rows} if graph and rows else {})}

    @classmethod
    def from_cache(cls, path: str, d: dict) -> FileResult:
        functions = {}
        for row in d["functions"]:
            key = path + row[0] if row[0].startswith("::") else row[0]
            if len(row) == 2 and isinstance(row[1], dict):
                functions[key] = {**row[1], "calls": [tuple(c) for c in row[1]["calls"]]}
                continue
            calls = iter(row[4:])
            functions[key] = {"name": row[1], "method": row[2], "hot": row[3],
                              "calls": list(zip(calls, calls, calls))}
        fr = cls(path, [Finding.from_cache(f) for f in d["findings"]], functions, d.get("error"),
                 d.get("skipped", False), [tuple(x) for x in d.get("deps", ())], d.get("compile") or {})
        for f in fr.findings:
            f.path = path
            if f.function.startswith("::"):
                f.function = path + f.function
        return fr


_FUNCTION_KEYS = {"name": None, "method": None, "hot": None, "calls": None}.keys()
