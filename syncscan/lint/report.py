"""Output formats for lint findings: text (with the source line and the rewrite), json (stable,
for tools), sarif 2.1.0 (GitHub code scanning), github (workflow-command annotations).

Every format shows the same findings (hot ones, plus cold ones with --all). Notebook findings
are located by cell: `nb.ipynb:cell 3:line 2:5` in text, a `cell` field in JSON; SARIF and
GitHub annotations point at the line of the .ipynb file that holds the cell's line.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from urllib.parse import quote

import syncscan
from syncscan.lint.lines import split_lines
from syncscan.lint.rule import Finding

JSON_KEYS = ("path", "line", "column", "end_line", "end_column", "code", "name", "message", "context",
             "suggestion", "fix")  # always present; `cell` too for notebooks (tests pin this)
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS_URL = "https://github.com/syncscan/syncscan/blob/main/docs/rules.md"


def location(f: Finding) -> str:
    if f.cell is not None:
        return f"{f.path}:cell {f.cell}:line {f.line}:{f.column}"
    return f"{f.path}:{f.line}:{f.column}"


def text(findings: list[Finding], sources: dict, *, color: bool = False, show_source: bool = True) -> str:
    out = []
    for f in findings:
        code = f"\033[1;31m{f.code}\033[0m" if color else f.code
        label = ", ".join(x for x in (f.context, cost_label(f.extra.get("cost"))) if x)
        out.append(f"{location(f)}: {code} [{label}] {f.message}")
        if show_source:
            line = _source_line(f, sources)
            if line is not None and line.strip():
                stripped = line.rstrip()
                indent = len(stripped) - len(stripped.lstrip())
                start = max(f.column - 1, indent)
                end = f.end_column - 1 if f.end_line == f.line else len(stripped)
                width = max(1, min(end, len(stripped)) - start)
                out.append(f"    {stripped[indent:]}")
                out.append(f"    {' ' * (start - indent)}{'^' * width}")
        if f.suggestion:
            out.append(f"  rewrite: {f.suggestion}")
        if f.fix is not None:
            how = "--fix" if f.fix.applicability == "safe" else "--fix --unsafe-fixes"
            what = f.fix.message or "apply the rewrite"
            assumes = f"; assumes {f.fix.assumption}" if f.fix.applicability == "unsafe" and f.fix.assumption else ""
            out.append(f"  fix ({f.fix.applicability}): {what}{assumes} [{how}]")
    return "\n".join(out)


def cost_label(cost: dict | None) -> str:
    """What `lint --costs` measured for a finding: `1.900 ms/step GPU idle` (and, from a report
    with the replay's estimate, `rewrite saves 2.100 ms/step`), `would sync 2/step` (a report
    from a run without a GPU), `did not sync`; nothing for files the run did not profile."""
    if not cost:
        return ""
    if cost.get("status") == "confirmed":
        if cost.get("measured") is False:
            return f"would sync {cost.get('syncs_per_step') or 0:g}/step"
        saving = cost.get("saving_rewrite_ms_per_step")
        more = "" if saving is None else (f", rewrite saves {saving:.3f} ms/step" if saving >= 0
                                          else f", rewrite costs {-saving:.3f} ms/step more")
        return f"{cost.get('gpu_idle_ms_per_step') or 0.0:.3f} ms/step GPU idle{more}"
    if cost.get("status") == "not_observed":
        return "did not sync when profiled" if cost.get("measured", True) else "not among the ops that would sync"
    return ""


def cost_summary(findings: list[Finding], report_path: str) -> str:
    """One line: how many of the shown findings the profile confirmed, and what they cost."""
    by = Counter(f.extra.get("cost", {}).get("status") for f in findings)
    measured = [f.extra["cost"] for f in findings if f.extra.get("cost", {}).get("status") == "confirmed"]
    total = sum(c.get("gpu_idle_ms_per_step") or 0.0 for c in measured)
    cost = (f" ({total:.3f} ms/step GPU idle in all)"
            if measured and all(c.get("measured", True) for c in measured) else "")
    return (f"Costs from {report_path}: {by['confirmed']} synced in the profile{cost}, "
            f"{by['not_observed']} did not, {by['not_profiled']} in files it did not profile.")


def _source_line(f: Finding, sources: dict) -> str | None:
    src = sources.get(f.path)
    if src is None:
        return None
    if src.cells is not None:
        try:
            idx = src.cells.index((f.cell, f.line))
        except ValueError:
            return None
        return src.text.split("\n")[idx]
    lines = split_lines(src.text)
    return lines[f.line - 1] if 0 < f.line <= len(lines) else None


def summary(findings: list[Finding], n_files: int, hidden_cold: int, fixable: Counter) -> str:
    hot = sum(f.context == "hot" for f in findings)
    with_findings = len({f.path for f in findings})
    where = f"{n_files} file{'s' if n_files != 1 else ''}" if with_findings == n_files else \
        f"{with_findings} of {n_files} files"
    parts = [f"Found {len(findings)} sync{'s' if len(findings) != 1 else ''} ({hot} hot) in {where}."]
    if hidden_cold:
        parts.append(f"{hidden_cold} more in cold code (setup, __init__, one-off code): show them with --all.")
    if fixable["safe"] or fixable["unsafe"]:
        s = f"{fixable['safe']} fixable with --fix"
        if fixable["unsafe"]:
            s += f", {fixable['unsafe']} more with --fix --unsafe-fixes"
        parts.append(s + ".")
    return " ".join(parts)


def as_json(findings: list[Finding]) -> str:
    return json.dumps([f.to_json() for f in findings], indent=2, ensure_ascii=False)


def statistics(findings: list[Finding]) -> str:
    counts = Counter((f.code, f.name) for f in findings)
    hot = Counter(f.code for f in findings if f.context == "hot")
    fixable = {f.code for f in findings if f.fix is not None}
    rows = [f"{n:6d}  {code}  {name}  ({hot[code]} hot){'  [*]' if code in fixable else ''}"
            for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))]
    return "\n".join(rows)


# -- paths for code scanning -----------------------------------------------------------------

_REPO_ROOTS: dict[str, str | None] = {}


def _repo_root(folder: str) -> str | None:
    """The nearest folder holding .git (a checkout's root), or None."""
    if folder in _REPO_ROOTS:
        return _REPO_ROOTS[folder]
    d, root = folder, None
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            root = d
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    _REPO_ROOTS[folder] = root
    return root


def repo_path(path: str) -> str:
    """The path relative to the repository root (GitHub annotates repository-relative paths),
    else relative to the working folder; forward slashes, no leading './'."""
    if path == "-":
        return "stdin"
    absolute = os.path.abspath(path)
    base = _repo_root(os.path.dirname(absolute)) or os.getcwd()
    if absolute == base or absolute.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, base).replace(os.sep, "/")
    return absolute  # outside the repository and the working folder


def _uri(path: str) -> str:
    rel = repo_path(path)
    if os.path.isabs(rel):
        return "file://" + quote(rel.replace(os.sep, "/"), safe="/")
    return quote(rel, safe="/")


def _file_position(f: Finding, sources: dict | None, end: bool = False) -> tuple[int, int] | None:
    """A notebook finding's position in the .ipynb file's text."""
    from syncscan.lint.files import notebook_position

    src = (sources or {}).get(f.path)
    if src is None or f.cell is None:
        return None
    return notebook_position(src, f.cell, f.end_line if end else f.line, f.end_column if end else f.column)


def _where(f: Finding) -> str:
    return f"cell {f.cell}, line {f.line}: " if f.cell is not None else ""


# -- github ----------------------------------------------------------------------------------

def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github(findings: list[Finding], sources: dict | None = None) -> str:
    out = []
    for f in findings:
        level = "error" if f.context == "hot" else "warning"
        msg = f"{_where(f)}{f.code} [{f.context}] {f.message}" + (f" Rewrite: {f.suggestion}" if f.suggestion else "")
        props = [f"file={_escape_property(repo_path(f.path))}"]
        if f.cell is None:
            start, end = (f.line, f.column), (f.end_line, f.end_column)
        else:
            start, end = _file_position(f, sources), _file_position(f, sources, end=True)
        if start is not None:
            props += [f"line={start[0]}", f"col={start[1]}"]
            if end is not None:
                props += [f"endLine={end[0]}", f"endColumn={end[1]}"]
        props.append(f"title={_escape_property(f'syncscan {f.code} ({f.name})')}")
        out.append(f"::{level} {','.join(props)}::{_escape_data(msg)}")
    return "\n".join(out)


# -- sarif -----------------------------------------------------------------------------------

def _rule_descriptor(code: str, r) -> dict:
    if r is None:
        return {"id": code, "shortDescription": {"text": code}, "defaultConfiguration": {"level": "warning"}}
    return {
        "id": code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.why},
        "helpUri": f"{DOCS_URL}#{code.lower()}",
        "help": {"text": f"{r.why}\n\nUse instead: {r.rewrite}",
                 "markdown": f"**Why is this bad?** {r.why}\n\n**Use instead.** {r.rewrite}"},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["performance", "pytorch", "host-device-sync"], "fix": r.fix_safety},
    }


def sarif(findings: list[Finding], rules, sources: dict | None = None) -> str:
    used = sorted({f.code for f in findings})
    by_code = {r.code: r for r in rules}
    rule_index = {c: i for i, c in enumerate(used)}
    results = []
    for f in findings:
        uri = _uri(f.path)
        if f.cell is None:
            region = {"startLine": f.line, "startColumn": f.column, "endLine": f.end_line,
                      "endColumn": f.end_column}
        else:
            start, end = _file_position(f, sources), _file_position(f, sources, end=True)
            region = {"startLine": start[0], "startColumn": start[1]} if start else {"startLine": 1}
            if start and end and end >= start:
                region.update(endLine=end[0], endColumn=end[1])
        res = {
            "ruleId": f.code,
            "ruleIndex": rule_index[f.code],
            "level": "error" if f.context == "hot" else "warning",
            "message": {"text": _where(f) + f.message + (f" Rewrite: {f.suggestion}" if f.suggestion else "")},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}],
            "properties": {"context": f.context, **({"cell": f.cell, "cellLine": f.line} if f.cell else {})},
        }
        # a notebook's fix edits are in cell coordinates, which SARIF cannot express
        if f.fix is not None and f.cell is None:
            res["fixes"] = [{
                "description": {"text": f.fix.message or f.suggestion or "apply the rewrite"},
                "artifactChanges": [{
                    "artifactLocation": {"uri": uri},
                    "replacements": [{
                        "deletedRegion": {"startLine": e.line, "startColumn": e.column,
                                          "endLine": e.end_line, "endColumn": e.end_column},
                        "insertedContent": {"text": e.content},
                    } for e in f.fix.edits],
                }],
            }]
        results.append(res)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "syncscan", "version": syncscan.__version__,
                                "informationUri": "https://github.com/syncscan/syncscan",
                                "rules": [_rule_descriptor(c, by_code.get(c)) for c in used]}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)
