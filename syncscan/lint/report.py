"""Output formats for lint findings: text (with the source line and the rewrite), json (stable,
for tools), sarif 2.1.0 (GitHub code scanning), github (workflow-command annotations)."""

from __future__ import annotations

import json
from collections import Counter

import syncscan
from syncscan.lint.rule import Finding


def location(f: Finding) -> str:
    if f.cell is not None:
        return f"{f.path}:cell {f.cell}:{f.line}:{f.column}"
    return f"{f.path}:{f.line}:{f.column}"


def text(findings: list[Finding], sources: dict, *, color: bool = False, show_source: bool = True) -> str:
    out = []
    for f in findings:
        code = f"\033[1;31m{f.code}\033[0m" if color else f.code
        ctx = f"[{f.context}]"
        out.append(f"{location(f)}: {code} {ctx} {f.message}")
        if show_source:
            line = _source_line(f, sources)
            if line is not None:
                stripped = line.rstrip()
                indent = len(stripped) - len(stripped.lstrip())
                start = max(f.column - 1, indent)
                end = f.end_column - 1 if f.end_line == f.line else len(stripped)
                width = max(1, min(end, len(stripped)) - start)
                out.append(f"    {stripped[indent:]}")
                out.append(f"    {' ' * (start - indent)}{'^' * width}")
        if f.fix is not None:
            note = f" (assumes {f.fix.assumption})" if f.fix.applicability == "unsafe" and f.fix.assumption else ""
            out.append(f"  fix ({f.fix.applicability}): {f.suggestion or f.fix.message}{note}")
        elif f.suggestion:
            out.append(f"  rewrite: {f.suggestion}")
    return "\n".join(out)


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
    lines = src.text.splitlines()
    return lines[f.line - 1] if 0 < f.line <= len(lines) else None


def summary(findings: list[Finding], n_files: int, hidden_cold: int, fixable: Counter) -> str:
    hot = sum(f.context == "hot" for f in findings)
    parts = [f"Found {len(findings)} sync{'s' if len(findings) != 1 else ''} ({hot} hot) in {n_files} "
             f"file{'s' if n_files != 1 else ''}."]
    if hidden_cold:
        parts.append(f"{hidden_cold} more in cold code (setup, __init__, one-off code): show them with --all.")
    if fixable["safe"] or fixable["unsafe"]:
        s = f"{fixable['safe']} fixable with --fix"
        if fixable["unsafe"]:
            s += f", {fixable['unsafe']} more with --fix --unsafe-fixes"
        parts.append(s + ".")
    return " ".join(parts)


def as_json(findings: list[Finding]) -> str:
    return json.dumps([f.to_json() for f in findings], indent=2)


def statistics(findings: list[Finding]) -> str:
    counts = Counter((f.code, f.name) for f in findings)
    hot = Counter(f.code for f in findings if f.context == "hot")
    fixable = {f.code for f in findings if f.fix is not None}
    rows = [f"{n:6d}  {code}  {name}  ({hot[code]} hot){'  [*]' if code in fixable else ''}"
            for (code, name), n in counts.most_common()]
    return "\n".join(rows)


def github(findings: list[Finding]) -> str:
    out = []
    for f in findings:
        level = "error" if f.context == "hot" else "warning"
        msg = f"{f.message}" + (f" Rewrite: {f.suggestion}" if f.suggestion else "")
        msg = msg.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        path = f.path.replace(",", "%2C").replace(":", "%3A")
        out.append(f"::{level} title=syncscan ({f.code}),file={path},line={f.line},col={f.column},"
                   f"endLine={f.end_line},endColumn={f.end_column}::{f.code} [{f.context}] {msg}")
    return "\n".join(out)


def sarif(findings: list[Finding], rules) -> str:
    used = sorted({f.code for f in findings})
    by_code = {r.code: r for r in rules}
    rule_index = {c: i for i, c in enumerate(used)}
    descriptors = []
    for c in used:
        r = by_code.get(c)
        descriptors.append({
            "id": c,
            "name": r.name if r else c,
            "shortDescription": {"text": r.summary if r else c},
            "fullDescription": {"text": f"{r.why} Rewrite: {r.rewrite}" if r else c},
            "helpUri": f"https://github.com/syncscan/syncscan/blob/main/docs/rules.md#{c.lower()}",
            "help": {"text": f"{r.why}\n\nUse instead: {r.rewrite}" if r else c},
            "defaultConfiguration": {"level": "warning"},
        })
    results = []
    for f in findings:
        res = {
            "ruleId": f.code,
            "ruleIndex": rule_index[f.code],
            "level": "error" if f.context == "hot" else "warning",
            "message": {"text": f.message + (f" Rewrite: {f.suggestion}" if f.suggestion else "")},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.path.replace("\\", "/").lstrip("./") or f.path},
                "region": {"startLine": f.line, "startColumn": f.column,
                           "endLine": f.end_line, "endColumn": f.end_column},
            }}],
            "properties": {"context": f.context},
        }
        if f.fix is not None:
            res["fixes"] = [{
                "description": {"text": f.fix.message or f.suggestion},
                "artifactChanges": [{
                    "artifactLocation": {"uri": f.path.replace("\\", "/").lstrip("./") or f.path},
                    "replacements": [{
                        "deletedRegion": {"startLine": e.line, "startColumn": e.column,
                                          "endLine": e.end_line, "endColumn": e.end_column},
                        "insertedContent": {"text": e.content},
                    } for e in f.fix.edits],
                }],
            }]
        results.append(res)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "syncscan", "version": syncscan.__version__,
                                "informationUri": "https://github.com/syncscan/syncscan", "rules": descriptors}},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2)
