"""Code actions and hover text for the findings shown in a buffer.

- the finding's fix, as a quick fix: safe ones always, unsafe ones (kind `quickfix.unsafe`) only
  when the settings or the request's `only` ask for them; the edit carries the imports it needs
  and is offered only when the result parses;
- "Fix all safe syncscan fixes in this file" (`source.fixAll.syncscan`): `syncscan lint --fix` on
  the buffer, the findings shown;
- "Ignore SYNxxx on this line" (`# noqa: SYNxxx`): what `syncscan lint --add-noqa` writes for it
  (an existing `# noqa:` list extended; the last line when the first ends inside a string).

Edits are whole lines replaced (positions at column 0 are the same in every encoding), computed
as the difference of the buffer and the rewritten text.
"""

from __future__ import annotations

import difflib

from lsprotocol import types

from syncscan.server import adapter
from syncscan.server.diagnostics import Shown, lsp_range, message
from syncscan.server.text import common_lines, lines_with_ends, units

FIX_ALL = "source.fixAll.syncscan"
UNSAFE = "quickfix.unsafe"


def text_edits(old: str, new: str, encoding: str) -> list[types.TextEdit]:
    """Whole-line edits turning `old` into `new`."""
    a, b = lines_with_ends(old), lines_with_ends(new)
    p, s = common_lines(a, b)
    mid_a, mid_b = a[p:len(a) - s], b[p:len(b) - s]
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        start, end = p + i1, p + i2
        out.append(types.TextEdit(range=types.Range(types.Position(line=start, character=0),
                                                     types.Position(line=end, character=0)),
                                  new_text="".join(mid_b[j1:j2])))
    if out and a and not a[-1].endswith(("\n", "\r")) and out[-1].range.end.line == len(a):
        # the last line has no line end: an edit reaching it ends at its end, not past it
        last = out[-1]
        last.range.end = types.Position(line=len(a) - 1, character=units(a[-1], encoding))
    return out


def wants(only: list[str] | None, kind: str) -> bool:
    """Whether a requested `only` list admits actions of `kind` (a kind admits its sub-kinds)."""
    return only is None or any(kind == k or kind.startswith(k + ".") for k in only)


def fix_action(uri: str, path: str, text: str, s: Shown, findings: list[adapter.Finding],
               diag: types.Diagnostic | None, unsafe_ok: bool, only: list[str] | None,
               encoding: str) -> types.CodeAction | None:
    """The finding's fix (with the rest of its fix group, which only goes whole) as a quick fix."""
    f = s.finding
    if f.fix is None:
        return None
    unsafe = f.fix.applicability != "safe"
    kind = UNSAFE if unsafe else types.CodeActionKind.QuickFix.value
    if unsafe and not (unsafe_ok or (only is not None and UNSAFE in only)):
        return None
    if not wants(only, kind):
        return None
    together = adapter.fix_group(f, findings)
    new = adapter.apply_fix(path, text, together) if together else None
    if new is None:
        return None
    what = f.fix.message or "apply the rewrite"
    more = f" (and {len(together) - 1} more of its group)" if len(together) > 1 else ""
    title = f"Fix {f.code}{more}: {what}" + (f" (unsafe: assumes {f.fix.assumption.rstrip('.')})"
                                             if unsafe and f.fix.assumption else " (unsafe)" if unsafe else "")
    return types.CodeAction(title=title, kind=kind, diagnostics=[diag] if diag else None, is_preferred=not unsafe,
                            edit=types.WorkspaceEdit(changes={uri: text_edits(text, new, encoding)}))


def noqa_text(text: str, f: adapter.Finding) -> tuple[str, int] | None:
    """(the text with `# noqa: CODE` for the finding, the 0-based line changed), or None when no
    line of it can take a comment (or a bare noqa comment covers it already)."""
    return adapter.noqa_edit(text, f)


def noqa_action(uri: str, text: str, s: Shown, diag: types.Diagnostic | None,
                only: list[str] | None, encoding: str) -> types.CodeAction | None:
    if not wants(only, types.CodeActionKind.QuickFix.value):
        return None
    got = noqa_text(text, s.finding)
    if got is None:
        return None
    new, _ = got
    return types.CodeAction(title=f"Ignore {s.finding.code} on this line (# noqa: {s.finding.code})",
                            kind=types.CodeActionKind.QuickFix, diagnostics=[diag] if diag else None,
                            edit=types.WorkspaceEdit(changes={uri: text_edits(text, new, encoding)}))


def fix_all_action(uri: str, shown: list[Shown], with_edit: bool, compute) -> types.CodeAction | None:
    """The "fix all safe" source action when some shown finding has a safe fix; its edit from
    `compute()` (the fixed text, or None when nothing could be fixed) now, or on resolve."""
    if not any(s.finding.fix is not None and s.finding.fix.applicability == "safe" for s in shown):
        return None
    action = types.CodeAction(title="Fix all safe syncscan fixes in this file", kind=FIX_ALL,
                              data={"uri": uri, "action": "fixAll"})
    if with_edit:
        edit = compute()
        if edit is None:
            return None
        action.edit = edit
    return action


def hover_markdown(shown: list[Shown], docs_url: str) -> str:
    """What a hover on findings shows: each one's message, the rule's why and use-instead, this
    site's rewrite and measured cost, and a link to the rule's documentation."""
    parts = []
    for s in shown:
        f = s.finding
        r = adapter.rule_class(f.code)
        head = f"**{f.code} `{f.name}`** · {s.context}" + (f" · fix: {r.fix_safety}" if r is not None else "")
        block = [head, "", message(s).replace("\n", "  \n")]
        if r is not None:
            block += ["", f"**Why is this bad?** {r.why}", "", f"**Use instead:** {r.rewrite}"]
            safety = adapter.fix_safety_text(f.code)
            if safety:
                block += ["", safety]
        block += ["", f"[{f.code} in the rule reference]({docs_url}#{f.code.lower()})"]
        parts.append("\n".join(block))
    return "\n\n---\n\n".join(parts)


def _span(lines: list[str], s: Shown, encoding: str) -> tuple[tuple[int, int], tuple[int, int]]:
    r = lsp_range(lines, s.finding, encoding)
    return (r["start"]["line"], r["start"]["character"]), (r["end"]["line"], r["end"]["character"])


def at(shown: list[Shown], lines: list[str], encoding: str, pos: types.Position) -> list[Shown]:
    """The findings whose range holds `pos`."""
    p = (pos.line, pos.character)
    return [s for s in shown if _span(lines, s, encoding)[0] <= p <= _span(lines, s, encoding)[1]]


def overlapping(shown: list[Shown], lines: list[str], encoding: str, rng: types.Range) -> list[Shown]:
    """The findings whose range meets `rng` (a cursor is an empty range)."""
    a, b = (rng.start.line, rng.start.character), (rng.end.line, rng.end.character)
    out = []
    for s in shown:
        start, end = _span(lines, s, encoding)
        if start <= b and a <= end:
            out.append(s)
    return out

def start_of(lines: list[str], s: Shown, encoding: str) -> tuple[int, int]:
    return _span(lines, s, encoding)[0]
