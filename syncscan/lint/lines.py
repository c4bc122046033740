"""Lines as Python's parser counts them.

`ast` line numbers count only \\n, \\r\\n and \\r; `str.splitlines` also splits at form feeds,
vertical tabs, U+2028 and a few more, which would shift every line after one of them.
"""

from __future__ import annotations

import re

_EOL = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines without their ends (a trailing line end adds no empty line, like splitlines)."""
    lines = _EOL.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def line_starts(text: str) -> list[int]:
    """Offset of the start of each line, plus len(text) as the end of the last one."""
    starts = [0] + [m.end() for m in _EOL.finditer(text)]
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts
