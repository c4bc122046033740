"""Buffer text as LSP counts it: lines end at \\n, \\r\\n or \\r only (as Python's parser counts
them; `str.splitlines` would also split at form feeds and U+2028), and a column is counted in the
position encoding the client and server agreed on (UTF-16 code units unless both chose otherwise).

syncscan's findings give 1-based lines and 1-based columns in characters (code points), end
exclusive; LSP positions are 0-based lines and 0-based columns in code units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_EOL = re.compile(r"\r\n|\r|\n")
# characters str.splitlines also breaks at, which neither Python's parser nor LSP count
_OTHER_BREAKS = re.compile("[\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


@dataclass(frozen=True)
class Pos:
    """An LSP position: 0-based line, column in the agreed code units."""

    line: int
    character: int


def lines_with_ends(text: str) -> list[str]:
    """The lines, each with its line end; a text ending in a line end has no empty last line."""
    if _OTHER_BREAKS.search(text) is None:
        return text.splitlines(True)  # the same here, and several times faster
    out, start = [], 0
    for m in _EOL.finditer(text):
        out.append(text[start:m.end()])
        start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


def strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def units(s: str, encoding: str) -> int:
    """Length of `s` in code units of the encoding."""
    if encoding == UTF32 or s.isascii():
        return len(s)
    if encoding == UTF8:
        return len(s.encode("utf-8", "surrogatepass"))
    return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)


def char_index(line: str, column_units: int, encoding: str) -> int:
    """The character index in `line` (without its end) at `column_units` code units, clamped."""
    if encoding == UTF32 or line.isascii():
        return max(0, min(column_units, len(line)))
    n = 0
    for i, c in enumerate(line):
        if n >= column_units:
            return i
        n += 1 if encoding == UTF16 and ord(c) <= 0xFFFF else (2 if encoding == UTF16 else len(c.encode("utf-8")))
    return len(line)


def to_lsp(lines: list[str], line: int, column: int, encoding: str) -> Pos:
    """A 1-based (line, character column) position of a finding as an LSP position."""
    i = line - 1
    if i < 0:
        return Pos(0, 0)
    if i >= len(lines):
        return Pos(len(lines), 0)
    text = strip_eol(lines[i])
    return Pos(i, units(text[:max(column - 1, 0)], encoding))


def offset(lines: list[str], pos: Pos, encoding: str) -> int:
    """The character offset in the text of an LSP position (clamped to the text)."""
    if pos.line >= len(lines):
        return sum(len(x) for x in lines)
    before = sum(len(x) for x in lines[:pos.line])
    return before + char_index(strip_eol(lines[pos.line]), pos.character, encoding)


def apply_change(text: str, start: Pos, end: Pos, new: str, encoding: str) -> str:
    """`text` with the range start..end replaced by `new` (an incremental didChange)."""
    lines = lines_with_ends(text)
    a, b = offset(lines, start, encoding), offset(lines, end, encoding)
    if b < a:
        a, b = b, a
    return text[:a] + new + text[b:]


def common_lines(old: list[str], new: list[str]) -> tuple[int, int]:
    """(p, s): the number of equal leading and trailing lines, p + s <= both lengths."""
    n = min(len(old), len(new))
    p = 0
    while p < n and old[p] == new[p]:
        p += 1
    s = 0
    while s < n - p and old[-1 - s] == new[-1 - s]:
        s += 1
    return p, s
