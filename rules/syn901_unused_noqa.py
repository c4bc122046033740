from syncscan.lint.noqa import Directive, comment_starts
from syncscan.lint.rule import Bad, Edit, Finding, Fix, Footprint, Good, Rule


class UnusedNoqa(Rule):
    code = "SYN901"
    name = "unused-noqa"
    summary = ("A `# noqa: SYN…` or `# syncscan: ignore[…]` code that suppresses nothing on its line, or names no "
               "rule (ruff's RUF100 for syncscan's codes; other tools' codes are left alone).")
    why = ("A suppression outlives the sync it was written for: once the line is rewritten, a stale `# noqa: SYN301` "
           "silently hides the next sync that lands there. A code that names no rule (a typo, `SYN031`) suppresses "
           "nothing and hides that the one meant was not suppressed.")
    rewrite = ("Remove the unused code (the whole directive when no code is left), or correct the code. Bare "
               "`# noqa` and `# syncscan: ignore` are left alone (a bare `# noqa` may be for another tool).")
    fix_safety = "safe"
    # judges every rule's findings: its examples are linted with all the rules (tests/test_rules.py)
    checks_other_rules = True
    triggers = ("SYN", "syncscan")  # a directive naming a code, `# syncscan: ignore[...]`
    ops = ()  # a comment: nothing at run time
    rewrite_hint = "remove the suppression that suppresses nothing"
    footprint = Footprint()
    bad = (
        Bad("""
import torch
def forward(self, x):
    return x + 1  # noqa: SYN101
""", line=4, fixed="""
import torch
def forward(self, x):
    return x + 1
"""),
        Bad("""
import torch
def forward(self, x):
    return torch.nonzero(x)  # noqa: E501, SYN301, SYN101
""", line=4, fixed="""
import torch
def forward(self, x):
    return torch.nonzero(x)  # noqa: E501, SYN301
"""),
        Bad("""
def f(x):
    return x  # syncscan: ignore[SYN999]
""", line=3),
        Bad("""
import torch
def forward(self, x):
    return torch.nonzero(x)  # noqa: SYN031
""", line=4),
    )
    good = (
        Good("""
import torch
def forward(self, x):
    return torch.nonzero(x)  # noqa: SYN301
"""),
        Good("""
def f(x):
    return x  # noqa: E501
"""),
        Good("""
def f(x):
    return x  # noqa
"""),
        Good('''
def f(x):
    """Write `# noqa: SYN101` on the line."""
    return x
'''),
    )

    def check_directives(self, path: str, source: str, lines: list[str], table: dict[int, list[Directive]],
                         ran: set[str]) -> list[Finding]:
        """Findings for the directives (after suppression) with codes that suppressed nothing
        although their rule ran, or that name no rule."""
        from syncscan.lint.config import known_code

        out = []
        comments = None
        for line, found in sorted(table.items()):
            for d in found:
                unused, unknown = [], []
                if d.codes is not None:  # a bare one may be for another tool, as ruff leaves it
                    for c in d.codes:
                        ours = c.code.startswith("SYN") or d.kind == "ignore"
                        if not ours or c.code in d.used:
                            continue
                        if not known_code(c.code):
                            unknown.append(c)
                        elif any(r.startswith(c.code) for r in ran):
                            unused.append(c)
                if not unused and not unknown:
                    continue
                if comments is None:
                    comments = comment_starts(source) or set()
                text = lines[line - 1]
                if not any(ln == line and col <= d.start for ln, col in comments):
                    continue  # inside a string, not a comment
                out.append(self._finding(path, text, d, unused, unknown))
        return out

    def _finding(self, path, text, d: Directive, unused, unknown) -> Finding:
        parts = []
        if unused:
            parts.append("unused: " + ", ".join(f"`{c.code}`" for c in unused))
        if unknown:
            parts.append("no such rule: " + ", ".join(f"`{c.code}`" for c in unknown))
        drop = [*unused, *unknown]
        left = [c for c in d.codes or () if c not in drop]
        body = text.rstrip("\r\n")
        fix = Fix("safe", (Edit(d.line, 1, d.line, len(body) + 1, _without(body, d, left)),),
                  "remove the unused codes" if left else "remove the directive")
        what = "`# noqa`" if d.kind == "noqa" else "`# syncscan: ignore`"
        return Finding(path, d.line, d.start + 1, d.line, d.end + 1, self.code, self.name,
                       f"{what} directive that suppresses nothing ({'; '.join(parts)})",
                       "remove it, or correct the code", fix, local="step")  # (shown in the default output wherever it is)


def _without(body: str, d: Directive, left) -> str:
    """The line with only the `left` codes in the directive, or without the directive (and
    the blanks before it) when none is left."""
    if left:
        codes = ", ".join(c.code for c in left)
        directive = f"# noqa: {codes}" if d.kind == "noqa" else f"# syncscan: ignore[{codes}]"
        return body[:d.start] + directive + body[d.end:]
    head, rest = body[:d.start].rstrip(), body[d.end:].lstrip()
    return head + ("  " + rest if rest and head else rest)
