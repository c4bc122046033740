"""Static and runtime together: match each runtime sync site to the lint finding in the same
statement, and annotate lint findings with what their sync cost when it ran.

Pure functions over a profile/analyze JSON report and lint findings. The runtime sites are the
report's `syncs` (measured on a GPU: `count`, `per_step`, `gpu_idle_ms`, `cpu_blocked_ms`), or,
for a run without GPU activity, its `would_sync` list (ops that would sync on a GPU, found by
name: counts only), as `sync_summary` and --fail-on-sync count them.

How a site is matched (`match` in the output):
- "statement": the finding lies in the statement of the site's call line (the profiler's
  sync-debug hook records it);
- "function": the site knows only the line where its function is defined (a trace's Python stack
  without the hook, e.g. a CPU run): a finding of a rule that produces that op, in that function;
- "forward": a sync in backward lands on the `loss.backward()` line; it takes the findings of the
  forward site that created it (the same forward op), else those of its forward function.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from syncscan.lint.rule import Finding
from syncscan.schema import JoinReport

# lint rules whose code makes the op a runtime rule names (used only for function-level
# matches, where the statement is unknown; a statement match takes any finding on it)
_SCALAR_READS = {"SYN101", "SYN102", "SYN103", "SYN104", "SYN105", "SYN106", "SYN107", "SYN108",
                 "SYN401", "SYN402", "SYN403", "SYN404", "SYN405", "SYN406", "SYN408"}
RELATED = {
    **{c: _SCALAR_READS for c in _SCALAR_READS},
    "SYN201": {"SYN201", "SYN102", "SYN105"},
    "SYN204": {"SYN204", "SYN202", "SYN203", "SYN207", "SYN206"},
    "SYN302": {"SYN302", "SYN304", "SYN306"},
    "SYN303": {"SYN303", "SYN207", "SYN308"},
    "SYN501": {"SYN501", "SYN502"},
    "SYN502": {"SYN501", "SYN502", "SYN504"},
}
_STACK_FRAME = re.compile(r"^(?P<file>.+):(?P<line>\d+) in (?P<func>.*)$")


def runtime_sites(report: dict) -> tuple[list[dict], bool]:
    """(sites, measured): the measured syncs, or without GPU activity the ops that would sync."""
    if report.get("gpu_activity") is False and isinstance(report.get("would_sync"), list):
        return [s for s in report["would_sync"] if isinstance(s, dict)], False
    return [s for s in report.get("syncs") or [] if isinstance(s, dict)], True


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
    except (OSError, ValueError):
        pass
    a, b = _parts(runtime_path), _parts(os.path.abspath(lint_path))
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


@lru_cache(maxsize=256)
def _tree(path: str, mtime: float):
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


def _parse(path: str):
    try:
        return _tree(path, os.stat(path).st_mtime)
    except OSError:
        return None


def _statement_spans(path: str) -> list[tuple[int, int]]:
    """(first, last) line of each statement in a file, where compound statements count only
    their header (`if t:`), since their bodies are statements of their own."""
    tree = _parse(path)
    spans = []
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.stmt):
            continue
        end = node.end_lineno or node.lineno
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            end = max(node.lineno, body[0].lineno - 1)
        spans.append((node.lineno, end))
    return spans


def statement_span(path: str, line: int) -> tuple[int, int]:
    """The innermost statement containing `line` (just the line when the file can't be read)."""
    best = (line, line)
    for a, b in _statement_spans(path):
        if a <= line <= b and (best == (line, line) or b - a <= best[1] - best[0]):
            best = (a, b)
    return best


def function_span(path: str, def_line: int) -> tuple[int, int] | None:
    """The lines of the function a trace names by `def_line` (its code object's first line: the
    `def`, or its first decorator), or None."""
    tree = _parse(path)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            if def_line in (node.lineno, first):
                return first, node.end_lineno or node.lineno
    return None


def enclosing_span(path: str, line: int, function: str | None) -> tuple[int, int] | None:
    """The lines of the innermost function around `line` when it is named `function` (the whole
    file for `<module>`), or None. A trace's frame that was already running when the profiler
    started records the line it was at then, not its def line: its function still holds it."""
    tree = _parse(path)
    if tree is None or not function:
        return None
    name = function.split(".")[-1]
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno or node.lineno
            if first <= line <= end and (best is None or end - first < best[2] - best[1]):
                best = (node.name, first, end)
    if best is not None:
        return best[1:] if best[0] == name else None
    end = max((n.end_lineno or n.lineno for n in tree.body), default=0)
    return (1, end) if name == "<module>" and line <= end else None


def site_cost(site: dict, n_steps: int, measured: bool = True) -> dict:
    """Per-step costs of one runtime site (None where a run without a GPU measured nothing)."""
    n = max(n_steps, 1)

    def per_step(key):
        return round(float(site.get(key) or 0.0) / n, 4) if measured else None

    wait = site.get("host_wait_ms")  # a blocking torch.distributed call (syncscan.multirank): its measured wait
    return {
        **({"host_wait_ms_per_step": round(float(wait) / n, 4)} if wait is not None else {}),
        "measured": measured,
        "gpu_idle_ms_per_step": per_step("gpu_idle_ms"),
        "cpu_blocked_ms_per_step": per_step("cpu_blocked_ms"),
        "syncs_per_step": round(float(site.get("count") or 0) / n, 3),
        # the replay's estimate (already per step): the site's syncs removed / its rewrite applied
        "saving_syncs_ms_per_step": site.get("saving_syncs_ms") if measured else None,
        "saving_rewrite_ms_per_step": site.get("saving_rewrite_ms") if measured else None,
        "op": site.get("op"),
        "outer_op": site.get("outer_op"),
    }


def n_profiled_steps(report: dict) -> int:
    return max(len(report.get("steps") or []), 1)


def _site_json(site: dict, cost: dict) -> Any:
    out = {"file": site.get("file"), "line": site.get("line"), "line_kind": site.get("line_kind"),
           "function": site.get("function"), "op": site.get("op"), "outer_op": site.get("outer_op"),
           "phase": site.get("phase"), "rule": site.get("rule"), "cost": cost}
    if site.get("ranks") is not None:  # a report of several ranks: the ranks it ran on
        out["ranks"] = site["ranks"]
    return out


@dataclass
class Join:
    measured: bool = True
    confirmed: list[dict] = field(default_factory=list)  # {site, findings, cost, match}
    missed: list[dict] = field(default_factory=list)  # {site, cost}: runtime sites without a finding
    not_observed: list[Finding] = field(default_factory=list)  # hot findings that never synced
    unattributed: list[dict] = field(default_factory=list)  # runtime sites without a source line
    stale: list[dict] = field(default_factory=list)  # sites whose line does not fit the file now

    def to_json(self, linted: Iterable[str] = (), lint_errors: Iterable[str] = ()) -> JoinReport:
        """The report's `join` record; `linted`: the files linted for it, `lint_errors`: why some
        could not be."""
        confirmed: list[Any] = []
        for c in self.confirmed:
            f0 = c["findings"][0]
            confirmed.append({**_site_json(c["site"], c["cost"]), "match": c["match"],
                              "lint_codes": sorted({f.code for f in c["findings"]}),
                              "rewrite": f0.suggestion or c["site"].get("rewrite"),
                              "findings": [f.to_json() for f in c["findings"]]})
        return {
            "measured": self.measured,
            "confirmed": confirmed,
            "missed_by_lint": [_site_json(m["site"], m["cost"]) for m in self.missed],
            "not_observed": [f.to_json() for f in self.not_observed],  # type: ignore[misc]  # lint's own shape
            "unattributed": len(self.unattributed),
            "stale": [_site_json(m["site"], m["cost"]) for m in self.stale],
            "linted": list(linted),
            "lint_errors": list(lint_errors),
        }


def _in_file(path: str, findings: list[Finding]) -> list[Finding]:
    """The findings of the linted file that `path` names best."""
    if not path:
        return []
    scored = [(same_file(path, f.path), f) for f in findings]
    best = max((s for s, _ in scored), default=0)
    return [f for s, f in scored if s == best] if best else []


def _statement_hits(site: dict, findings: list[Finding]) -> list[Finding]:
    """Findings in the site's statement, or in any of its statements when the detailed pass split
    one site over several lines (`sources`), or in the user's own frame of its call chain."""
    locations = [(site["file"], site["line"])] + [
        (s["file"], s["line"]) for s in site.get("sources") or []
        if isinstance(s, dict) and s.get("file") and s.get("line")] + [
        # a sync inside a wrapper library (timm's scaler, Lightning): the user's line that called it
        (fr["file"], fr["line"]) for fr in site.get("frames") or []
        if isinstance(fr, dict) and not fr.get("library") and fr.get("file") and fr.get("line")]
    out: list[Finding] = []
    for file, line in dict.fromkeys(locations):
        in_file = _in_file(file, findings)
        if not in_file:
            continue
        a, b = statement_span(in_file[0].path, int(line))
        hits = [f for f in in_file if a <= f.line <= b or f.line <= a <= f.end_line]
        # prefer the finding of the rule the runtime op maps to; any finding on the statement counts
        same_rule = [f for f in hits if f.code == site.get("rule")]
        out.extend(f for f in same_rule or hits if f not in out)
    return out


def _function_hits(file: str, def_line: int, rule: str | None, findings: list[Finding],
                   function: str | None = None) -> list[Finding]:
    in_file = _in_file(file, findings)
    if not in_file or not rule:
        return []
    span = function_span(in_file[0].path, int(def_line)) or enclosing_span(in_file[0].path, int(def_line), function)
    if span is None:
        return []
    inside = [f for f in in_file if span[0] <= f.line <= span[1]]
    return ([f for f in inside if f.code == rule]
            or [f for f in inside if f.code in RELATED.get(rule, {rule})])


def _fits(site: dict, paths: list[str]) -> bool:
    """Whether the site's line can be in the file as it is now: a def line must start a function
    (or lie in the function the trace names: a frame already running when the profiler started),
    a call line must exist. False means the file changed since the run (or is another file of the
    same name); True where it cannot tell."""
    scored = [(same_file(site["file"], p), p) for p in paths]
    if not scored:
        return True
    score, path = max(scored)
    tree = _parse(path)
    if not score or tree is None:
        return True
    line = int(site["line"])
    if site.get("line_kind") == "def":
        return function_span(path, line) is not None or enclosing_span(path, line, site.get("function")) is not None
    return line <= max((n.end_lineno or n.lineno for n in tree.body), default=0)


def stack_frames(site: dict) -> list[tuple[str, int]]:
    """(file, def line) of the site's Python stack, innermost first."""
    out = []
    for entry in reversed(site.get("stack") or []):
        m = _STACK_FRAME.match(str(entry))
        if m:
            out.append((m["file"], int(m["line"])))
    return out


def _match(site: dict, findings: list[Finding], forward_hits: dict) -> tuple[list[Finding], str]:
    if site.get("line_kind") == "def":
        hits, how = _function_hits(site["file"], site["line"], site.get("rule"), findings,
                                   site.get("function")), "function"
    else:
        hits, how = _statement_hits(site, findings), "statement"
    if hits or site.get("phase") != "backward":
        return hits, how
    # a sync in backward: the hook puts it on the backward() call; its cause is the forward op
    fwd = forward_hits.get((site.get("forward_op"), site.get("scope")), [])
    if fwd:
        return fwd, "forward"
    for file, line in stack_frames(site):
        hits = _function_hits(file, line, site.get("rule"), findings)
        if hits:
            return hits, "forward"
    return [], how


def join(report: dict, findings: list[Finding], profiled_files: list[str] | None = None) -> Join:
    """Match runtime sites to findings. `profiled_files`: the files whose hot findings should have
    synced (default: the files the runtime sites point to)."""
    sites, measured = runtime_sites(report)
    out = Join(measured=measured)
    files = profiled_files if profiled_files is not None else [s["file"] for s in sites if s.get("file")]
    paths = list(dict.fromkeys([*(f.path for f in findings), *(profiled_files or [])]))
    n = n_profiled_steps(report)
    matched: set[int] = set()
    forward_hits: dict[tuple, list[Finding]] = {}
    # forward sites first: a backward site may take the findings of the forward op behind it
    order = sorted(range(len(sites)), key=lambda i: sites[i].get("phase") == "backward")
    results: dict[int, tuple] = {}
    for i in order:
        site = sites[i]
        if not site.get("file") or not site.get("line"):
            continue
        if not _fits(site, paths):
            results[i] = (None, "stale")
            continue
        hits, how = _match(site, findings, forward_hits)
        results[i] = (hits, how)
        if hits and site.get("phase") != "backward":
            known = forward_hits.setdefault((site.get("outer_op"), site.get("scope")), [])
            known.extend(f for f in hits if f not in known)
    for i, site in enumerate(sites):  # in the report's order: ranked by cost
        if i not in results:
            out.unattributed.append(site)
            continue
        hits, how = results[i]
        cost = site_cost(site, n, measured)
        if hits is None:
            out.stale.append({"site": site, "cost": cost})
        elif hits:
            out.confirmed.append({"site": site, "findings": hits, "cost": cost, "match": how})
            matched.update(id(f) for f in hits)
        else:
            out.missed.append({"site": site, "cost": cost})
    # a file the run saw in another version says nothing about which of its findings synced
    stale = [m["site"]["file"] for m in out.stale]
    for f in findings:
        if (f.context == "hot" and id(f) not in matched and any(same_file(p, f.path) for p in files)
                and not any(same_file(p, f.path) for p in stale)):
            out.not_observed.append(f)
    return out


def annotate_with_costs(findings: list[Finding], report) -> list[Finding]:
    """`syncscan lint --costs REPORT.json`: attach the measured cost to each finding whose
    statement synced at run time (`cost` in JSON), mark the others, and sort by cost (most
    expensive first). `report`: a profile/analyze report (syncscan.schema.read_report)."""
    j = join(report, findings)
    cost_of: dict[int, dict] = {}
    for c in j.confirmed:
        for f in c["findings"]:
            prev = cost_of.get(id(f))
            if prev is None:
                cost_of[id(f)] = dict(c["cost"], match=c["match"])
            else:  # several sites of one statement (e.g. two masks): their costs add up
                for k in ("gpu_idle_ms_per_step", "cpu_blocked_ms_per_step", "syncs_per_step",
                          "saving_syncs_ms_per_step", "saving_rewrite_ms_per_step"):
                    if prev.get(k) is not None and c["cost"].get(k) is not None:
                        prev[k] = round(prev[k] + c["cost"][k], 4)
    not_obs = {id(f) for f in j.not_observed}
    for f in findings:
        if id(f) in cost_of:
            f.extra["cost"] = {"status": "confirmed", **cost_of[id(f)]}
        elif id(f) in not_obs:
            f.extra["cost"] = {"status": "not_observed", "measured": j.measured}
        else:
            f.extra["cost"] = {"status": "not_profiled"}
    rank = {"confirmed": 0, "not_observed": 1, "not_profiled": 2}

    def key(f):  # the predicted saving when the report has one, else the GPU idle measured
        c = f.extra["cost"]
        saving = c.get("saving_rewrite_ms_per_step")
        return (rank[c["status"]], -(saving if saving is not None else c.get("gpu_idle_ms_per_step") or 0.0),
                -(c.get("gpu_idle_ms_per_step") or 0.0), -(c.get("syncs_per_step") or 0.0),
                f.path, f.line, f.column)

    return sorted(findings, key=key)
