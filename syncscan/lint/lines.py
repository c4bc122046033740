"""Lines as Python's parser counts them.

`ast` line numbers count only \\n, \\r\\n and \\r; `str.splitlines` also splits at form feeds,
vertical tabs, U+2028 and a few more, which would shift every line after one of them.
"""

from __future__ import annotations

def split_lines(text: str) -> list[str]:
    """The lines without their ends (a trailing line end adds no empty line, like splitlines)."""
    # (\r\n, then a lone \r, made \n: the same split as the regex \r\n|\r|\n, without importing re)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def line_starts(text: str) -> list[int]:
    """Offset of the start of each line, plus len(text) as the end of the last one."""
    import re

    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts
