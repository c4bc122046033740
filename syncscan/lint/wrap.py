"""Fixed lines that fit the project's line length.

A rewrite is often longer than what it replaces (`F.cross_entropy(logits.movedim(-1, 1),
target.masked_fill(~mask, -100), ignore_index=-100)`). A line a fix made longer than the
project allows is split the way black does it: at the last bracket pair of the line whose
contents are not empty (a "right-hand split"), the contents on their own line one indent deeper,
or, when they still do not fit, one argument per line with a trailing comma. Only lines that a
fix wrote are touched; the rest of the file keeps its formatting, and a comment at the end of
the line stays on its first line.

The limit is the project's: `line-length` of `[tool.ruff]` (or ruff.toml / .ruff.toml) or of
`[tool.black]` in the nearest configuration above the file, else 88 (both tools' default).
"""

from __future__ import annotations

import difflib
import io
import os
import tokenize
from functools import lru_cache

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

DEFAULT = 88
INDENT = "    "
_OPEN = {"(": ")", "[": "]", "{": "}"}


@lru_cache(maxsize=256)
def _limit_in(folder: str) -> int | None:
    """The line length a configuration file in `folder` sets; 0 when the folder has a configuration
    that sets none (the project's root: the default applies), None when it has no configuration."""
    for name in ("ruff.toml", ".ruff.toml"):
        p = os.path.join(folder, name)
        if os.path.isfile(p):
            data = _toml(p)
            for table in (data, data.get("format", {}) if isinstance(data.get("format"), dict) else {}):
                v = table.get("line-length")
                if isinstance(v, int) and v > 0:
                    return v
    p = os.path.join(folder, "pyproject.toml")
    if os.path.isfile(p):
        tool = _toml(p).get("tool", {})
        for name in ("ruff", "black"):
            v = tool.get(name, {}).get("line-length") if isinstance(tool.get(name), dict) else None
            if isinstance(v, int) and v > 0:
                return v
        return 0
    return 0 if any(os.path.isfile(os.path.join(folder, n)) for n in ("ruff.toml", ".ruff.toml")) else None


def _toml(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def line_length_for(path: str) -> int:
    """The project's line length for the file at `path` (see the module's docstring)."""
    d = os.path.dirname(os.path.abspath(path)) if path not in ("-", "") else os.getcwd()
    while True:
        v = _limit_in(d)
        if v is not None:  # the nearest configuration decides, as ruff's does
            return v or DEFAULT
        parent = os.path.dirname(d)
        if parent == d:
            return DEFAULT
        d = parent


def wrap_changed(before: str, after: str, limit: int) -> str:
    """`after` with each line that differs from `before` and is longer than `limit` split, where
    it can be (see the module's docstring)."""
    old, new = before.splitlines(True), after.splitlines(True)
    out: list[str] = []
    inside = _inside_brackets(after, len(new))
    sm = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, _, _, j1, j2 in sm.get_opcodes():
        for j in range(j1, j2):
            line = new[j]
            if op == "equal" or len(line.rstrip("\r\n")) <= limit:
                out.append(line)
                continue
            end = line[len(line.rstrip("\r\n")):]
            split = split_line(line.rstrip("\r\n"), limit, inside=inside[j])
            out.append((end or "\n").join(split) + end if split else line)
    return "".join(out)


def _inside_brackets(text: str, n: int) -> list[bool]:
    """For each line: whether it starts inside an open bracket (a continuation line of a call or
    a literal, where a line break is allowed between its elements)."""
    out = [False] * n
    depth, line = 0, 1
    try:
        for t in tokenize.generate_tokens(io.StringIO(text).readline):
            while line < t.start[0]:
                line += 1
                if line - 1 < n:
                    out[line - 1] = depth > 0
            if t.type == tokenize.OP and t.string in _OPEN:
                depth += 1
            elif t.type == tokenize.OP and t.string in _OPEN.values():
                depth -= 1
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [False] * n
    return out


def _tokens(text: str):
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


def split_line(line: str, limit: int, depth: int = 0, inside: bool = False) -> list[str] | None:
    """The line as several that fit `limit`, or None when no split helps (or the line is not one
    whole piece of code: an unfinished bracket, a backslash, a string running on). `inside`: the
    line continues an open bracket, so its own top-level commas may end lines."""
    if depth > 3 or line.rstrip().endswith("\\"):
        return None
    indent = line[: len(line) - len(line.lstrip())]
    code = line.strip()
    toks = _tokens(code)
    if not toks:
        return None
    comment = ""
    if toks[-1].type == tokenize.COMMENT:
        comment = "  " + toks[-1].string
        toks = toks[:-1]
        code = code[: toks[-1].end[1]] if toks else ""
    if any(t.start[0] != 1 or t.end[0] != 1 for t in toks):
        return None  # a string over several lines
    pairs = _pairs(toks)
    if pairs is None:
        return None
    if inside:
        top = [t for _, t in _level(toks)]
        cuts = [t for t in top if t.type == tokenize.OP and t.string == ","]
        if cuts and not (len(cuts) == 1 and cuts[0] is toks[-1]) \
                and not any(t.type == tokenize.NAME and t.string in ("lambda", "for") for t in top):
            # `a(...), b(...), c=1,` continuing a call: one element per line, as black lays them out
            pieces, start = [], 0
            for c in cuts:
                pieces.append(code[start:c.end[1]].strip())
                start = c.end[1]
            if code[start:].strip():
                pieces.append(code[start:].strip() + ",")
            lines = []
            for k, piece in enumerate(pieces):
                piece_line = indent + piece + (comment if k == 0 else "")
                if len(piece_line) > limit:
                    sub = split_line(indent + piece, limit, depth + 1)
                    if sub is None:
                        return None
                    lines.extend(sub)
                else:
                    lines.append(piece_line)
            return lines
    # depth-0 pairs, right to left: the first whose contents are not empty and whose head and
    # tail fit (black's right-hand split, trailers like `.sum()` skipped)
    for a, b, _ in sorted((p for p in pairs if p[2] == 0), key=lambda p: -p[0]):
        a_col, b_col = toks[a].start[1], toks[b].start[1]
        body = code[a_col + 1:b_col].strip()
        if not body:
            continue
        head = indent + code[: a_col + 1] + comment  # (a long comment stays: it is not code)
        tail = indent + code[b_col:]
        if len(indent + code[: a_col + 1]) > limit or len(tail) > limit:
            continue
        inner = indent + INDENT
        if len(inner + body) <= limit:
            return [head, inner + body, tail]
        parts = _top_level_commas(code, toks, a, b)
        is_call = a > 0 and (toks[a - 1].type == tokenize.NAME or toks[a - 1].string in (")", "]"))
        if len(parts) > 1 or is_call:
            # a trailing comma, as black adds; not after the one element of `( ... )`: a tuple
            comma = "," if toks[a].string != "(" or is_call or len(parts) > 1 else ""
            fitted = _fit([inner + part + comma for part in parts], limit, depth)
            return None if fitted is None else [head, *fitted, tail]
        sub = _operator_split(body, inner, limit, depth) or split_line(inner + body, limit, depth + 1)
        if sub is not None:
            return [head, *sub, tail]
    return None


# binary operators by how loosely they bind: a long expression is split before its loosest ones
_PRIORITY = {"or": 1, "and": 2, "<": 3, ">": 3, "==": 3, ">=": 3, "<=": 3, "!=": 3, "in": 3, "is": 3, "|": 4,
             "^": 5, "&": 6, "<<": 7, ">>": 7, "+": 8, "-": 8, "*": 9, "/": 9, "//": 9, "%": 9, "@": 9}


def _operator_split(body: str, inner: str, limit: int, depth: int) -> list[str] | None:
    """`a + b` inside brackets, one operand per line, each line starting with the operator (as
    black splits), at the loosest operators of the expression's own level."""
    toks = _tokens(body)
    if not toks or any(t.start[0] != 1 for t in toks):
        return None
    cuts = []
    for i, t in _level(toks):
        if t.string in _PRIORITY and i > 0 and t.type in (tokenize.NAME, tokenize.OP):
            prev = toks[i - 1]
            if prev.type == tokenize.OP and prev.string not in (")", "]", "}"):
                continue  # unary minus / plus
            if t.string == "in" and prev.string == "not" or t.string == "not":
                continue
            cuts.append((i, _PRIORITY[t.string]))
    if not cuts:
        return None
    loosest = min(p for _, p in cuts)
    starts = [toks[i].start[1] for i, p in cuts if p == loosest]
    pieces, prev = [], 0
    for c in starts:
        pieces.append(body[prev:c].strip())
        prev = c
    pieces.append(body[prev:].strip())
    return _fit([inner + piece for piece in pieces], limit, depth)


def _fit(lines: list[str], limit: int, depth: int) -> list[str] | None:
    """The lines, each one still too long split again (None when one cannot be)."""
    out: list[str] = []
    for line in lines:
        if len(line) <= limit:
            out.append(line)
            continue
        sub = split_line(line, limit, depth + 1)
        if sub is None:
            return None
        out.extend(sub)
    return out


def _pairs(toks) -> list[tuple[int, int, int]] | None:
    """(opening index, closing index, nesting depth) of every bracket pair; None if unbalanced."""
    stack, out = [], []
    for i, t in enumerate(toks):
        if t.type == tokenize.OP and t.string in _OPEN:
            stack.append(i)
        elif t.type == tokenize.OP and t.string in _OPEN.values():
            if not stack or _OPEN[toks[stack[-1]].string] != t.string:
                return None
            a = stack.pop()
            out.append((a, i, len(stack)))
    return None if stack else out


def _level(toks):
    """(index, token) of the tokens outside every bracket of `toks` (brackets themselves left out)."""
    depth = 0
    for i, t in enumerate(toks):
        if t.type == tokenize.OP and t.string in _OPEN:
            depth += 1
        elif t.type == tokenize.OP and t.string in _OPEN.values():
            depth -= 1
        elif depth == 0:
            yield i, t


def _top_level_commas(code: str, toks, a: int, b: int) -> list[str]:
    """The comma-separated parts between brackets a and b, split only at their own depth."""
    parts, start = [], toks[a].end[1]
    for _, t in _level(toks[a + 1:b]):
        if t.type == tokenize.OP and t.string == ",":
            parts.append(code[start:t.start[1]].strip())
            start = t.end[1]
    last = code[start:toks[b].start[1]].strip()
    if last:
        parts.append(last)
    return parts
