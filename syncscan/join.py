"""Static and runtime together: match each runtime sync site to the lint finding in the same
statement, and annotate lint findings with what their sync cost when it ran.

Pure functions over a profile/analyze JSON report (the `syncs` list: one entry per site with
`file`, `line`, `rule`, `count`, `per_step`, `gpu_idle_ms`, `cpu_blocked_ms`) and lint findings.
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from syncscan.errors import UserError
from syncscan.lint.rule import Finding


def load_report(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: not a syncscan JSON report ({type(e).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("syncs"), list):
        raise UserError(f"{path}: not a syncscan profile/analyze JSON report (no 'syncs' list)")
    return data


def _parts(p: str) -> tuple[str, ...]:
    return tuple(Path(p).as_posix().split("/"))


def same_file(runtime_path: str, lint_path: str) -> int:
    """How well two paths name the same file: the number of trailing path parts they share
    (0 = different). Traces may come from another machine, so absolute paths rarely match."""
    if not runtime_path or not lint_path:
        return 0
    try:
        if os.path.samefile(runtime_path, lint_path):
            return 1000
    except OSError:
        pass
    a, b = _parts(runtime_path), _parts(os.path.abspath(lint_path))
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


@lru_cache(maxsize=256)
def _statement_spans(path: str) -> tuple[tuple[int, int], ...]:
    """(first, last) line of each statement in a file, where compound statements count only
    their header (`if t:`), since their bodies are statements of their own."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return ()
    spans = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        end = node.end_lineno or node.lineno
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            end = max(node.lineno, body[0].lineno - 1)
        spans.append((node.lineno, end))
    return tuple(spans)


def statement_span(path: str, line: int) -> tuple[int, int]:
    """The innermost statement containing `line` (just the line when the file can't be read)."""
    best = (line, line)
    for a, b in _statement_spans(path):
        if a <= line <= b and (best == (line, line) or b - a <= best[1] - best[0]):
            best = (a, b)
    return best


def site_cost(site: dict, n_steps: int) -> dict:
    """Per-step costs of one runtime site."""
    n = max(n_steps, 1)
    return {
        "gpu_idle_ms_per_step": round(float(site.get("gpu_idle_ms") or 0.0) / n, 4),
        "cpu_blocked_ms_per_step": round(float(site.get("cpu_blocked_ms") or 0.0) / n, 4),
        "syncs_per_step": round(float(site.get("count") or 0) / n, 3),
        "op": site.get("op"),
        "outer_op": site.get("outer_op"),
    }


def n_profiled_steps(report: dict) -> int:
    return max(len(report.get("steps") or []), 1)


@dataclass
class Join:
    confirmed: list[dict] = field(default_factory=list)  # {site, findings, cost}
    missed: list[dict] = field(default_factory=list)  # runtime sites in user code without a finding
    not_observed: list[Finding] = field(default_factory=list)  # hot findings that never synced
    unattributed: list[dict] = field(default_factory=list)  # runtime sites without a source line

    def to_json(self) -> dict:
        return {
            "confirmed": [{"file": c["site"].get("file"), "line": c["site"].get("line"),
                           "rule": c["site"].get("rule"), "cost": c["cost"],
                           "findings": [f.to_json() for f in c["findings"]]} for c in self.confirmed],
            "missed_by_lint": [{"file": s.get("file"), "line": s.get("line"), "op": s.get("op"),
                                "outer_op": s.get("outer_op"), "rule": s.get("rule"),
                                "cost": site_cost(s, 1)} for s in self.missed],
            "not_observed": [f.to_json() for f in self.not_observed],
            "unattributed": len(self.unattributed),
        }


def _candidates(site: dict, findings: list[Finding]) -> list[Finding]:
    file, line = site.get("file"), site.get("line")
    if not file or not line:
        return []
    scored = [(same_file(file, f.path), f) for f in findings]
    best = max((s for s, _ in scored), default=0)
    if best == 0:
        return []
    in_file = [f for s, f in scored if s == best]
    a, b = statement_span(in_file[0].path, int(line))
    hits = [f for f in in_file if a <= f.line <= b or f.line <= a <= f.end_line]
    # prefer the finding of the rule the runtime op maps to; any finding on the statement still counts
    same_rule = [f for f in hits if f.code == site.get("rule")]
    return same_rule or hits


def join(report: dict, findings: list[Finding], profiled_files: list[str] | None = None) -> Join:
    """Match runtime sites to findings. `profiled_files`: the files whose hot findings should have
    synced (default: the files the runtime sites point to)."""
    out = Join()
    n = n_profiled_steps(report)
    matched: set[int] = set()
    for site in report.get("syncs", []):
        if not site.get("file") or not site.get("line"):
            out.unattributed.append(site)
            continue
        hits = _candidates(site, findings)
        if hits:
            out.confirmed.append({"site": site, "findings": hits, "cost": site_cost(site, n)})
            matched.update(id(f) for f in hits)
        else:
            out.missed.append(site)
    files = profiled_files if profiled_files is not None else [s["file"] for s in report.get("syncs", [])
                                                                  if s.get("file")]
    for f in findings:
        if f.context == "hot" and id(f) not in matched and any(same_file(p, f.path) for p in files):
            out.not_observed.append(f)
    return out


def annotate_with_costs(findings: list[Finding], report_path: str) -> list[Finding]:
    """`syncscan lint --costs REPORT.json`: attach the measured cost to each finding whose
    statement synced at run time, mark the others, and sort by cost (most expensive first)."""
    report = load_report(report_path)
    j = join(report, findings, profiled_files=[s.get("file") for s in report["syncs"] if s.get("file")])
    cost_of: dict[int, dict] = {}
    for c in j.confirmed:
        for f in c["findings"]:
            prev = cost_of.get(id(f))
            if prev is None or c["cost"]["gpu_idle_ms_per_step"] > prev["gpu_idle_ms_per_step"]:
                cost_of[id(f)] = c["cost"]
    not_obs = {id(f) for f in j.not_observed}
    for f in findings:
        if id(f) in cost_of:
            f.extra["runtime"] = {"status": "confirmed", **cost_of[id(f)]}
        elif id(f) in not_obs:
            f.extra["runtime"] = {"status": "not_observed"}
        else:
            f.extra["runtime"] = {"status": "not_profiled"}
    rank = {"confirmed": 0, "not_observed": 1, "not_profiled": 2}
    return sorted(findings, key=lambda f: (rank[f.extra["runtime"]["status"]],
                                           -f.extra["runtime"].get("gpu_idle_ms_per_step", 0.0),
                                           f.path, f.line, f.column))
