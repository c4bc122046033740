"""Finding and reading the files to lint: folders recursively, `-` for stdin, notebooks.

A notebook's code cells are joined into one virtual module (so names flow between cells, as
they do when it runs), with IPython magics and shell lines blanked out, and a map back from
each virtual line to (cell, line in cell).
"""

from __future__ import annotations

import fnmatch
import io
import json
import os
import tokenize
from dataclasses import dataclass
from pathlib import Path

DEFAULT_EXCLUDE = (".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules",
                   "build", "dist", ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                   ".syncscan_cache", "__pypackages__", ".ipynb_checkpoints", "site-packages")
SUFFIXES = (".py", ".pyi", ".ipynb")
MAX_BYTES = 20_000_000  # larger "source files" are generated data, not code


class ReadError(Exception):
    """A file that cannot be linted: the message is one line, without the path."""


@dataclass
class Source:
    path: str  # as the user gave it (relative where they gave it so)
    text: str
    cells: list[tuple[int, int]] | None = None  # virtual line -> (cell number, line in cell), 1-based
    notebook: dict | None = None  # the parsed notebook, kept for --fix

    def locate(self, line: int) -> tuple[int | None, int]:
        if self.cells is None or not 0 < line <= len(self.cells):
            return None, line
        return self.cells[line - 1]


def _excluded(path: Path, patterns) -> bool:
    s = path.as_posix()
    return any(fnmatch.fnmatchcase(path.name, p) or fnmatch.fnmatchcase(s, p) or
               fnmatch.fnmatchcase(s, f"*/{p}") or fnmatch.fnmatchcase(s, f"*/{p}/*") for p in patterns)


def discover(paths: list[str], exclude=()) -> tuple[list[str], list[tuple[str, str]]]:
    """(files to lint, [(path, error)]) for the given files and folders. Explicit files are linted
    whatever their suffix; folders contribute .py/.pyi/.ipynb files not excluded."""
    files, errors, seen = [], [], set()
    patterns = tuple(DEFAULT_EXCLUDE) + tuple(exclude)
    for p in paths:
        if p == "-":
            files.append("-")
            continue
        path = Path(p)
        if not path.exists():
            errors.append((p, "no such file or directory"))
            continue
        if path.is_dir():
            for root, dirs, names in os.walk(path):
                rootp = Path(root)
                dirs[:] = sorted(d for d in dirs if not _excluded(rootp / d, patterns))
                for n in sorted(names):
                    fp = rootp / n
                    if n.endswith(SUFFIXES) and not _excluded(fp, tuple(exclude)):
                        s = str(fp)
                        if s not in seen:
                            seen.add(s)
                            files.append(s)
        else:
            if str(path) not in seen and not (exclude and _excluded(path, tuple(exclude))):
                seen.add(str(path))
                files.append(str(path))
    return files, errors


def decode(data: bytes) -> str:
    if b"\0" in data[:8192]:
        raise ReadError("binary file, not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        raise ReadError("not valid UTF-8 (or its declared encoding)") from None
    return text[1:] if text.startswith("\ufeff") else text


def read(path: str, stdin_text: str | None = None) -> Source:
    if path == "-":
        return Source("-", stdin_text or "")
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise ReadError(f"file too large to lint ({size // 1_000_000} MB)")
        with open(path, "rb") as fh:
            data = fh.read()
    except IsADirectoryError:
        raise ReadError("is a directory") from None
    except PermissionError:
        raise ReadError("permission denied") from None
    except FileNotFoundError:
        raise ReadError("no such file or directory") from None
    except OSError as e:
        raise ReadError(f"cannot read: {e.strerror or e}") from None
    if path.endswith(".ipynb"):
        return read_notebook(path, data)
    return Source(path, decode(data))


_MAGIC_PREFIXES = ("%", "!", "?")


def notebook_cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def read_notebook(path: str, data: bytes) -> Source:
    try:
        nb = json.loads(decode(data))
        cells = nb["cells"]
        assert isinstance(cells, list)
    except (ValueError, KeyError, TypeError, AssertionError):
        raise ReadError("not a valid Jupyter notebook (JSON with a list of cells)") from None
    lang = (nb.get("metadata", {}).get("kernelspec", {}) or {}).get("language", "python")
    if lang and lang.lower() != "python":
        return Source(path, "", [], nb)
    out, where = [], []
    for i, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        lines = notebook_cell_source(cell).split("\n")
        if lines and lines[0].lstrip().startswith("%%"):  # a cell magic: the cell is not Python
            lines = [""] * len(lines)
        for j, line in enumerate(lines, start=1):
            stripped = line.lstrip()
            if stripped.startswith(_MAGIC_PREFIXES) or stripped.endswith("?") and not stripped.startswith("#"):
                # keep the line count; indentation stays valid with `pass`
                line = line[: len(line) - len(stripped)] + "pass  # magic" if stripped else line
            out.append(line)
            where.append((i, j))
        out.append("")  # a blank line between cells keeps statements apart
        where.append((i, len(lines) + 1))
    return Source(path, "\n".join(out) + "\n", where, nb)
