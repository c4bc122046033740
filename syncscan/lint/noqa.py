"""Suppression comments: `# noqa`, `# noqa: SYN301`, `# syncscan: ignore`, `# syncscan:
ignore[SYN301]` on a finding's first or last line (or at the end of the backslash
continuation its last line is part of).

`apply` drops the suppressed findings and remembers which directive suppressed what, so that
rules may judge the directives themselves (SYN901, unused or unknown codes: ruff's RUF100).
`add_noqa` writes directives for findings (`syncscan lint --add-noqa`, to adopt the linter in
a codebase that has many).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

from syncscan.lint.lines import split_lines
from syncscan.lint.rule import Finding

_NOQA = re.compile(r"#\s*(?:noqa|NOQA)(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?")
_IGNORE = re.compile(r"#\s*syncscan:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
_CODE = re.compile(r"[A-Za-z]+[0-9]*")


@dataclass(frozen=True)
class Code:
    code: str
    start: int  # 0-based offsets in the line, [start, end)
    end: int


@dataclass
class Directive:
    line: int  # 1-based
    kind: str  # "noqa" | "ignore"
    start: int  # 0-based offsets of the whole directive in the line, [start, end)
    end: int
    codes: tuple[Code, ...] | None  # None: bare, suppresses everything on its line
    used: set[str] = field(default_factory=set)  # the codes (as written) that suppressed a finding

    def matches(self, code: str) -> str | None:
        """The code of the directive that suppresses `code` ("" for a bare one), or None."""
        if self.codes is None:
            return ""
        return next((c.code for c in self.codes if code.startswith(c.code)), None)


def parse_line(text: str, line: int) -> list[Directive]:
    """The directives in one line of source (a `# noqa` and a `# syncscan: ignore` may share it)."""
    out = []
    for kind, pat in (("noqa", _NOQA), ("ignore", _IGNORE)):
        m = pat.search(text)
        if m is None:
            continue
        codes = None
        if m.group("codes") is not None and m.group("codes").strip():
            base = m.start("codes")
            codes = tuple(Code(c.group(0).upper(), base + c.start(), base + c.end())
                          for c in _CODE.finditer(m.group("codes")))
        out.append(Directive(line, kind, m.start(), m.end(), codes))
    return out


def directives(lines: list[str]) -> dict[int, list[Directive]]:
    """line -> its directives, for the lines that have any."""
    out = {}
    for i, text in enumerate(lines, start=1):
        if "#" in text and ("noqa" in text or "NOQA" in text or "syncscan" in text):
            found = parse_line(text, i)
            if found:
                out[i] = found
    return out


def apply(findings: list[Finding], lines: list[str]) -> tuple[list[Finding], dict[int, list[Directive]]]:
    """(the findings no directive suppresses, the directives with what each suppressed)."""
    table = directives(lines)
    if not table:
        return findings, table
    kept = []
    for f in findings:
        if not _suppress(f, table, lines):
            kept.append(f)
    return kept, table


def continued_to(lines: list[str], line: int) -> int:
    """The last line of the backslash continuation that `line` starts or is part of (itself
    when it does not end with a backslash): a directive there covers the lines before it."""
    while 0 < line < len(lines) and lines[line - 1].endswith("\\"):
        line += 1
    return line


def _suppress(f: Finding, table: dict[int, list[Directive]], lines: list[str]) -> bool:
    for ln in dict.fromkeys((f.line, f.end_line, continued_to(lines, f.end_line))):
        for d in table.get(ln, ()):
            code = d.matches(f.code)
            if code is not None:
                d.used.add(code)
                return True
    return False


def comment_starts(source: str) -> set[tuple[int, int]] | None:
    """(line, 0-based column) of every real comment, so that a `# noqa` inside a string is not
    taken for one; None when the source does not tokenize."""
    try:
        return {tok.start for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                if tok.type == tokenize.COMMENT}
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


# -- --add-noqa ----------------------------------------------------------------------------------

def _no_comment_lines(source: str, lines: list[str]) -> set[int] | None:
    """Lines whose end lies inside a string (a multi-line string or f-string) or after a line
    continuation: a comment added there would change the code. None if it does not tokenize."""
    out: set[int] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    open_fstrings: list[int] = []
    for tok in tokens:
        name = tokenize.tok_name.get(tok.type, "")
        if name == "FSTRING_START":  # Python 3.12+: an f-string is several tokens
            open_fstrings.append(tok.start[0])
        elif name == "FSTRING_END" and open_fstrings:
            out.update(range(open_fstrings.pop(), tok.end[0]))
        elif tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            out.update(range(tok.start[0], tok.end[0]))
    out.update(i for i, text in enumerate(lines, start=1) if text.rstrip().endswith("\\"))
    return out


def noqa_edits(source: str, findings: list[Finding], blocked: Iterable[int] = ()
               ) -> tuple[dict[int, str], list[Finding]]:
    """What --add-noqa writes: (line -> its new text, without its end; the findings that no
    comment can reach). Each finding gets its code in a `# noqa` on its first line, or on its
    last when a comment cannot go on the first (inside a multi-line string); an existing
    `# noqa: X` is extended, a bare `# noqa` already covers everything; after a backslash, the
    continuation's last line takes it. `blocked`: more lines
    to leave alone (a notebook's magics)."""
    lines = split_lines(source)
    no_comment = _no_comment_lines(source, lines)
    if no_comment is None:
        return {}, list(findings)
    no_comment |= set(blocked)
    want: dict[int, list[str]] = {}
    unreachable = []
    for f in findings:
        candidates = (f.line, f.end_line, continued_to(lines, f.end_line))
        line = next((ln for ln in candidates if 0 < ln <= len(lines) and ln not in no_comment), None)
        if line is None:
            unreachable.append(f)
        elif f.code not in want.setdefault(line, []):
            want[line].append(f.code)
    edits: dict[int, str] = {}
    for line, codes in sorted(want.items()):
        body = lines[line - 1]
        noqa = next((d for d in parse_line(body, line) if d.kind == "noqa"), None)
        if noqa is None:
            edits[line] = body.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
        elif noqa.codes is not None:  # (a bare noqa directive covers them already)
            have = [c.code for c in noqa.codes]
            new = have + sorted(c for c in codes if not any(c.startswith(h) for h in have))
            if new != have:
                edits[line] = body[:noqa.start] + "# noqa: " + ", ".join(new) + body[noqa.end:]
    return edits, unreachable


def check(path: str, source: str, lines: list[str], findings: list[Finding], rules) -> list[Finding]:
    """The findings no directive suppresses, plus what the rules that judge the directives
    themselves find (SYN901), suppressible in turn."""
    kept, table = apply(findings, lines)
    judges = [r for r in rules if hasattr(r, "check_directives")]
    if not table or not judges:
        return kept
    ran = {r.code for r in rules}
    extra = [f for r in judges for f in r.check_directives(path, source, lines, table, ran)]
    if not extra:
        return kept
    extra, _ = apply(extra, lines)
    return sorted(kept + extra, key=lambda f: (f.line, f.column, f.code))
