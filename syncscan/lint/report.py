"""Output formats for lint findings: text (with the source line and the rewrite), json (stable,
for tools), sarif 2.1.0 (GitHub code scanning), github (workflow-command annotations), gitlab
(a GitLab Code Quality report) and junit (JUnit XML).

Every format shows the same findings (hot ones, plus cold ones with --all). Every location is
`path:line:col` (what problem matchers parse); for a notebook it is the line of the .ipynb
file that holds the cell's line, and the message starts with `cell 3, line 2:`. JSON keeps the
cell's own coordinates with a `cell` field.
"""

from __future__ import annotations

import os
from collections import Counter

import syncscan
from syncscan.lint.finding import Finding
from syncscan.lint.lines import split_lines

# (json, hashlib, urllib and the rank annotation's module are imported by the formats that use
# them: the text report of a warm one-file lint needs none of them)

JSON_KEYS = ("path", "line", "column", "end_line", "end_column", "code", "name", "message", "context",
             "confidence", "suggestion", "fix", "compile")  # always present; `cell` too for notebooks (tests pin this)
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS_URL = "https://github.com/syncscan/syncscan/blob/main/docs/rules.md"


def location(f: Finding, sources: dict | None = None) -> str:
    """`path:line:col`: for a notebook, where the cell's line lies in the .ipynb file (the
    cell's own line when that is not known); the message names the cell."""
    line, column = _position(f, sources)
    return f"{f.path}:{line}:{column}"


def _position(f: Finding, sources: dict | None, end: bool = False) -> tuple[int, int]:
    """A finding's (line, column) in its file's own text."""
    in_file = _file_position(f, sources, end) if f.cell is not None else None
    if in_file is not None:
        return in_file
    return (f.end_line, f.end_column) if end else (f.line, f.column)


def text(findings: list[Finding], sources: dict, *, color: bool = False, show_source: bool = True) -> str:
    out = []
    for f in findings:
        code = f"\033[1;31m{f.code}\033[0m" if color else f.code
        label = ", ".join(x for x in (f.context, "low confidence" if f.confidence == "low" else "",
                                      _rank_label(f.extra.get("rank_condition")),
                                      cost_label(f.extra.get("cost")),
                                      "compiled" if f.compile else "") if x)
        out.append(f"{location(f, sources)}: {code} [{label}] {_where(f)}{f.message}")
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
        if f.compile:
            out += compile_lines(f.compile)
        if f.fix is not None:
            how = "--fix" if f.fix.applicability == "safe" else "--fix --unsafe-fixes"
            what = f.fix.message or "apply the rewrite"
            assumes = f"; assumes {f.fix.assumption}" if f.fix.applicability == "unsafe" and f.fix.assumption else ""
            out.append(f"  fix ({f.fix.applicability}): {what}{assumes} [{how}]")
            if f.extra.get("path"):
                out.append(f"  note: {f.extra['path']['note']}")
    return "\n".join(out)


EFFECT_WORDS = {"graph-break": "graph break", "dynamic-shape": "data-dependent shape (graph break)",
                "cudagraph-skip": "CUDA graphs skipped", "traced": "traced", "unverified": "effect not checked"}


def _rank_label(cond: dict | None) -> str:
    if not cond:
        return ""
    from syncscan.lint.ranks import label

    return label(cond)


def compile_lines(c: dict) -> list[str]:
    """What torch.compile makes of a finding in compiled code (its `compile` object), as text."""
    where = c.get("compiled_by") or ""
    out = [f"  torch.compile ({where}): {EFFECT_WORDS.get(c['effect'], c['effect'])}: {c['why']}"]
    if c.get("cudagraphs"):
        out.append(f"    CUDA graphs (mode=\"reduce-overhead\"): {c['cudagraphs']}")
    for o in c.get("options") or ():
        out.append(f"    compile option: {o}")
    return out


def _compile_note(f: Finding) -> str:
    """One sentence for formats with one message per finding (SARIF, GitHub annotations)."""
    if not f.compile:
        return ""
    return f" Under torch.compile: {EFFECT_WORDS.get(f.compile['effect'], f.compile['effect'])}."


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


def shown_by_default(f: Finding) -> bool:
    """The default output (no --all): hot findings of high confidence."""
    return f.context == "hot" and f.confidence == "high"


def summary(findings: list[Finding], n_files: int, hidden: Counter | int, fixable: Counter) -> str:
    """The closing line; `hidden`: the findings not shown, by context (or their number, all cold)."""
    hidden = hidden if isinstance(hidden, Counter) else Counter({"cold": hidden})
    hot = sum(f.context == "hot" for f in findings)
    with_findings = len({f.path for f in findings})
    where = f"{n_files} file{'s' if n_files != 1 else ''}" if with_findings == n_files else \
        f"{with_findings} of {n_files} files"
    parts = [f"Found {len(findings)} sync{'s' if len(findings) != 1 else ''} ({hot} hot) in {where}."]
    more = []
    if hidden["low"]:
        more.append(f"{hidden['low']} in hot code of low confidence (values only probably tensors)")
    if hidden["epoch"]:
        more.append(f"{hidden['epoch']} in per-epoch code (evaluation, checkpoints, periodic logging)")
    if hidden["cold"]:
        more.append(f"{hidden['cold']} in cold code (setup, __init__, one-off code)")
    if more:
        parts.append(f"{' and '.join(more)}: show them with --all.".replace(" in ", " more in ", 1))
    if fixable["safe"] or fixable["unsafe"]:
        s = f"{fixable['safe']} fixable with --fix"
        if fixable["unsafe"]:
            s += f", {fixable['unsafe']} more with --fix --unsafe-fixes"
        parts.append(s + ".")
    return " ".join(parts)


def as_json(findings: list[Finding]) -> str:
    import json

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
    from syncscan.lint.folders import nearest

    return nearest(folder, (".git",), _REPO_ROOTS)


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
    from urllib.parse import quote

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
        msg = f"{_where(f)}{f.code} [{f.context}] {f.message}" + (f" Rewrite: {f.suggestion}" if f.suggestion else "") \
            + _compile_note(f)
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
    for f, fp in zip(findings, fingerprints(findings, sources)):
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
            "message": {"text": _where(f) + f.message + (f" Rewrite: {f.suggestion}" if f.suggestion else "")
                        + _compile_note(f)},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}],
            "partialFingerprints": {"syncscanFingerprint/v1": fp},
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
    import json

    return json.dumps(doc, indent=2, ensure_ascii=False)


# -- fingerprints ----------------------------------------------------------------------------
# A finding's identity across runs, for code scanning (SARIF partialFingerprints) and GitLab:
# its rule, file, function and the text of its line (without blanks), not its line number, so
# that code moving up or down keeps the alert; identical ones in a file are numbered.

def fingerprints(findings: list[Finding], sources: dict | None = None) -> list[str]:
    import hashlib

    seen: Counter = Counter()
    lines: dict[str, list[str] | None] = {}
    out = []
    for f in findings:
        text = "".join((_line_text(f, sources, lines) or "").split())
        function = f.function.split("::", 1)[-1] if f.function else ""
        key = "\0".join((f.code, repo_path(f.path), str(f.cell or ""), function, text))
        seen[key] += 1
        out.append(hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()[:32])
    return out


def _line_text(f: Finding, sources: dict | None, memo: dict) -> str | None:
    """The source line of a finding, from the sources kept or read from its file (once)."""
    line = _source_line(f, sources or {})
    if line is not None:
        return line
    if f.path not in memo:
        from syncscan.lint.files import ReadError, read

        try:
            src = read(f.path) if f.path != "-" else None
        except ReadError:
            src = None
        memo[f.path] = {f.path: src} if src is not None else None
    return _source_line(f, memo[f.path]) if memo[f.path] else None


# -- gitlab ----------------------------------------------------------------------------------

def gitlab(findings: list[Finding], sources: dict | None = None) -> str:
    """A GitLab Code Quality report (artifacts:reports:codequality): a JSON array of issues."""
    out = []
    for f, fp in zip(findings, fingerprints(findings, sources)):
        begin, end = _position(f, sources)[0], _position(f, sources, end=True)[0]
        out.append({
            "type": "issue",
            "check_name": f.code,
            "description": f"{f.code} [{f.context}] {_where(f)}{f.message}{_compile_note(f)}",
            "content": {"body": f"Rewrite: {f.suggestion}" if f.suggestion else f.message},
            "categories": ["Performance"],
            "severity": "major" if f.context == "hot" else "minor",
            "fingerprint": fp,
            "location": {"path": repo_path(f.path), "lines": {"begin": begin, "end": max(begin, end)}},
        })
    import json

    return json.dumps(out, indent=2, ensure_ascii=False)


# -- junit -----------------------------------------------------------------------------------

def junit(findings: list[Finding], sources: dict | None = None) -> str:
    """JUnit XML: a test suite per file, a failed test case per finding (one passing case when
    there is none, as ruff writes)."""
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name="syncscan", tests=str(max(1, len(findings))),
                      failures=str(len(findings)), errors="0")
    if not findings:
        suite = ET.SubElement(root, "testsuite", name="syncscan", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No syncs found", classname="syncscan")
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    for path, fs in by_path.items():
        name = repo_path(path)
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(fs)), failures=str(len(fs)), errors="0")
        for f in fs:
            line, column = _position(f, sources)
            case = ET.SubElement(suite, "testcase", name=f"org.syncscan.{f.code}", classname=name,
                                 file=name, line=str(line))
            failure = ET.SubElement(case, "failure",
                                    message=_xml_text(f"{f.code} [{f.context}] {f.message}{_compile_note(f)}"))
            failure.text = _xml_text(f"line {line}, col {column}, {_where(f)}{f.message}"
                                     + (f" Rewrite: {f.suggestion}" if f.suggestion else ""))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def _xml_text(s: str) -> str:
    """Characters XML 1.0 cannot hold (control characters from odd sources) dropped."""
    return "".join(c for c in s if c in "\t\n\r" or " " <= c <= "\ud7ff" or "\ue000" <= c <= "\ufffd"
                   or c >= "\U00010000")


def fixed_list(fixed: dict[str, list[Finding]]) -> str:
    """--show-fixes: what was fixed, per file and rule (ruff's layout)."""
    out = []
    for path in sorted(fixed):
        if not fixed[path]:
            continue
        out.append(f"- {path}:")
        counts = Counter((f.code, f.name) for f in fixed[path])
        for (code, name), n in sorted(counts.items()):
            out.append(f"    {n} × {code} ({name})")
    return "\n".join(out)
