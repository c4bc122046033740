"""Findings as LSP diagnostics (a renderer: it formats what analysis settled, it decides nothing).

Message: `[hot] <what syncs>`, then `rewrite: ...`, then the measured cost when a profile
confirmed the site. Severity by context (hot: warning, epoch: information, cold: hint) and error
for a site the profile measured on a GPU; each configurable, "off" hides. A finding of low
confidence (the values are only probably tensors; `syncscan lint` hides them without --all) is
shown as a cold one is, whatever its context: a hint by default, hidden when cold is "off"; its
message says `[hot, low confidence]`. Order: sites the profile confirmed first, by predicted
saving, then by position.

Diagnostics are built as the JSON objects the protocol sends (a few thousand per keystroke in a
big file; typed objects and their serialisation cost more than the lint of the change).
"""

from __future__ import annotations

from dataclasses import dataclass

from syncscan.server import adapter
from syncscan.server.costs import CostNote
from syncscan.server.settings import Settings
from syncscan.server.text import to_lsp

SOURCE = "syncscan"
SEVERITY = {"error": 1, "warning": 2, "information": 3, "hint": 4}  # LSP DiagnosticSeverity


@dataclass(frozen=True)
class Shown:
    """One finding as the editor shows it: the finding, its settled context, what a profile says."""

    finding: adapter.Finding
    context: str
    cost: CostNote | None = None

    @property
    def measured(self) -> bool:
        return self.cost is not None and self.cost.confirmed and not self.cost.text.startswith("profiled without")


def severity_key(context: str, confidence: str, measured: bool = False) -> str:
    """Which `severity` setting applies: "measured" for a site a profile measured, "cold" for a
    finding of low confidence (`syncscan lint` hides those by default, as it hides cold ones), else
    its context."""
    if measured:
        return "measured"
    return "cold" if confidence == "low" else context


def severity_name(s: Shown, settings: Settings) -> str:
    key = severity_key(s.context, s.finding.confidence, s.measured)
    return settings.severity.get(key, "information")


def shown_at(f: adapter.Finding, context: str, settings: Settings) -> bool:
    """Whether a finding of this context is shown (not measured: what "fix all" may fix)."""
    return settings.severity.get(severity_key(context, f.confidence), "information") != "off"


def ordered(shown: list[Shown]) -> list[Shown]:
    """Confirmed sites first (largest predicted saving first), then the rest by position."""
    def key(s: Shown):
        f = s.finding
        confirmed = s.cost is not None and s.cost.confirmed
        return (0 if confirmed else 1, -(s.cost.rank if confirmed and s.cost else 0.0), f.line, f.column, f.code)

    return sorted(shown, key=key)


def message(s: Shown) -> str:
    f = s.finding
    label = f"{s.context}, low confidence" if f.confidence == "low" else s.context
    out = [f"[{label}] {f.message}"]
    if f.suggestion:
        out.append(f"rewrite: {f.suggestion}")
    if s.cost is not None:
        head, _, rest = s.cost.text.partition(": ")
        out.append(f"{head} (stale: {s.cost.stale}): {rest}" if s.cost.stale else s.cost.text)
    return "\n".join(out)


def lsp_range(lines: list[str] | None, f: adapter.Finding, encoding: str) -> dict:
    """The finding's range in LSP positions; `lines` None: the text is ASCII (columns are code units
    in every encoding)."""
    if lines is None:
        return {"start": {"line": f.line - 1, "character": f.column - 1},
                "end": {"line": f.end_line - 1, "character": f.end_column - 1}}
    a, b = to_lsp(lines, f.line, f.column, encoding), to_lsp(lines, f.end_line, f.end_column, encoding)
    return {"start": {"line": a.line, "character": a.character}, "end": {"line": b.line, "character": b.character}}


def diagnostic(s: Shown, lines: list[str] | None, encoding: str, settings: Settings) -> dict:
    f = s.finding
    return {
        "range": lsp_range(lines, f, encoding),
        "severity": SEVERITY[severity_name(s, settings)],
        "code": f.code,
        "codeDescription": {"href": f"{settings.docs_url}#{f.code.lower()}"},
        "source": SOURCE,
        "message": message(s),
        "data": {"name": f.name, "context": s.context, "fix": f.fix.applicability if f.fix is not None else None,
                 "confirmed": bool(s.cost and s.cost.confirmed)},
    }


def diagnostics(shown: list[Shown], lines: list[str], encoding: str, settings: Settings) -> list[dict]:
    ascii_only = all(line.isascii() for line in lines)
    return [diagnostic(s, None if ascii_only else lines, encoding, settings) for s in ordered(shown)
            if severity_name(s, settings) != "off"]
