"""Finding and reading the files to lint: folders recursively, `-` for stdin, notebooks.

A notebook's code cells are joined into one virtual module (so names flow between cells, as
they do when it runs), with IPython magics and shell lines replaced by `pass`, and a map back
from each virtual line to (cell, line in cell). Every other line of a code cell is copied
verbatim, so a position on it is the same position in the cell (the fixer relies on that).
"""

from __future__ import annotations

import errno
import os
import stat
from functools import lru_cache

from syncscan.lint.config import SUFFIXES
from syncscan.lint.records import Frozen, Record

# (re, json, fnmatch, tokenize and pathlib are imported where they are used: a lint served from the
# cache reads no notebook, matches no glob and decodes no coding cookie; see records.py)

DEFAULT_EXCLUDE = (".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules",
                   "build", "dist", ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                   ".syncscan_cache", "__pypackages__", ".ipynb_checkpoints", "site-packages")
MAX_BYTES = 20_000_000  # larger "source files" are generated data, not code


class ReadError(Exception):
    """A file that cannot be linted: the message is one line, without the path."""


class Source(Record):
    _fields = ("path", "text", "cells", "notebook", "verbatim", "raw", "encoding", "source_spans")
    _hidden = ("source_spans",)
    path: str  # as the user gave it (relative where they gave it so)
    text: str
    cells: list[tuple[int, int]] | None  # virtual line -> (cell number, line in cell), 1-based
    notebook: dict | None  # the parsed notebook, kept for --fix
    verbatim: list[bool] | None  # notebooks: virtual line is the cell's line unchanged
    raw: str | None  # notebooks: the file's JSON text, for --fix to patch in place
    encoding: str  # as detected (a coding cookie, or utf-8-sig for a BOM)
    source_spans: dict[int, tuple[int, int]] | None  # notebooks, lazily

    def __init__(self, path: str, text: str, cells: list[tuple[int, int]] | None = None, notebook: dict | None = None,
                 verbatim: list[bool] | None = None, raw: str | None = None, encoding: str = "utf-8",
                 source_spans: dict[int, tuple[int, int]] | None = None):
        self.path, self.text, self.cells, self.notebook, self.verbatim = path, text, cells, notebook, verbatim
        self.raw, self.encoding, self.source_spans = raw, encoding, source_spans

    def locate(self, line: int) -> tuple[int | None, int]:
        if self.cells is None or not 0 < line <= len(self.cells):
            return None, line
        return self.cells[line - 1]


# -- discovery ----------------------------------------------------------------------------------

def _matches(path: str, patterns) -> bool:
    """A pattern without a slash matches a file or folder name; one with a slash (config turns
    those into absolute patterns under the project root) matches the absolute path or a parent."""
    by_name, with_slash = _compiled(tuple(patterns))
    if by_name is not None and by_name(os.path.basename(path.rstrip("/")) or path):
        return True
    if not with_slash:
        return False
    a = os.path.abspath(path)
    while True:
        if any(m(a) for m in with_slash):
            return True
        parent = os.path.dirname(a)
        if parent == a:
            return False
        a = parent


@lru_cache(maxsize=256)
def _compiled(patterns: tuple[str, ...]):
    """(one matcher for all the name patterns, a matcher per slash pattern): one call per name
    instead of an fnmatch call per pattern (the walk asks this of every entry)."""
    names = [p for p in patterns if "/" not in p]
    return (glob_matcher(names) if names else None), tuple(glob_matcher([p]) for p in patterns if "/" in p)


def glob_matcher(patterns: list[str]):
    """Whether a string matches one of these patterns, as fnmatch.fnmatchcase says. Patterns of
    literal text and `*` (the default excludes, most configs) are matched with string methods:
    fnmatch's regexes need `re`, whose import is a few ms of a warm one-file lint."""
    if any("?" in p or "[" in p for p in patterns):
        import fnmatch
        import re

        return re.compile("|".join(fnmatch.translate(p) for p in patterns)).match
    exact = frozenset(p for p in patterns if "*" not in p)
    wild = [p.split("*") for p in patterns if "*" in p]
    if not wild:
        return exact.__contains__

    def match(s: str) -> bool:
        return s in exact or any(_star_match(parts, s) for parts in wild)

    return match


def _star_match(parts: list[str], s: str) -> bool:
    """`s` matches the glob `*`.join(parts): starts with the first part, ends with the last, and
    holds the others in order between (leftmost first: with `*` alone, that is enough)."""
    first, last = parts[0], parts[-1]
    if len(s) < len(first) + len(last) or not s.startswith(first) or not s.endswith(last):
        return False
    i, end = len(first), len(s) - len(last)
    for part in parts[1:-1]:
        i = s.find(part, i, end)
        if i < 0:
            return False
        i += len(part)
    return True


def _excluded_explicit(path: str, patterns) -> bool:
    """A path the user named: excluded when a name pattern matches any of its folders (relative
    to the working folder) or its name, or a slash pattern matches it or a parent."""
    if not patterns:
        return False
    import fnmatch
    from pathlib import Path

    slash = [p for p in patterns if "/" in p]
    if slash and _matches(path, slash):
        return True
    names = [p for p in patterns if "/" not in p]
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    rel = os.path.relpath(absolute, cwd) if absolute.startswith(cwd + os.sep) else os.path.normpath(path)
    parts = [s for s in Path(rel).parts if s not in (os.sep, "..", ".")]
    return any(fnmatch.fnmatchcase(part, p) for part in parts for p in names)


def _why_missing(path: str) -> str:
    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as e:
            if e.errno == errno.ELOOP:
                return "symbolic link loop"
        return "broken symbolic link"
    return "no such file or directory"


def discover(paths: list[str], cfg=None, folders: list[str] | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """(files to lint, [(path, error)]) for the given files and folders. `cfg` is a Config, a
    config.Settings (each file's own config: its excludes apply to the files under it), or a
    list of exclude patterns.

    Explicit files are linted whatever their suffix (and whatever .gitignore says, as ruff
    does); folders contribute .py/.pyi/.ipynb files that are not excluded, by the default
    excludes, the config's, and git's ignore files (unless respect-gitignore is off). The
    configured excludes apply to explicit paths too (pre-commit passes files one by one).
    Anything that is not a regular file (a FIFO, a socket, a device) is never opened: it is
    an error naming it, and the others are still linted. `folders`, when given, gets every
    folder the walk lists (the project index watches them for new files)."""
    from syncscan.lint.config import Config

    if cfg is None or isinstance(cfg, (list, tuple)):  # no config, or bare exclude patterns
        cfg = Config(exclude=list(cfg or ()))
    settings = cfg
    files: list[str] = []
    errors: list[tuple[str, str]] = []
    seen: set[str] = set()
    for p in paths:
        if p == "-":
            if p not in seen:  # `lint - -`: stdin can be read once
                seen.add(p)
                files.append(p)
            continue
        if not os.path.exists(p):
            errors.append((p, _why_missing(p)))
            continue
        if _excluded_explicit(p, settings.for_path(p).exclude):
            continue
        if os.path.isdir(p):
            _walk(p, settings, files, errors, seen, folders)
            continue
        kind = special_kind(p)
        if kind is not None:
            errors.append((p, f"not a regular file ({kind}): not read"))
            continue
        _add(p, files, seen)
    return files, errors


def _add(path: str, files: list[str], seen: set[str]) -> None:
    """A file to lint, once (a file named twice, or found in two folders named, is linted once)."""
    s = os.path.normpath(path)
    if s not in seen:
        seen.add(s)
        files.append(s)


def special_kind(path: str, st: os.stat_result | None = None) -> str | None:
    """What a path is when it is neither a regular file nor a folder (a FIFO, a socket...)."""
    if st is None:
        try:
            st = os.stat(path)
        except OSError:
            return None
    mode = st.st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a special file"


def _walk(top: str, settings, files: list[str], errors: list[tuple[str, str]], seen: set[str],
          folders: list[str] | None = None) -> None:
    """Add the files under `top` in os.walk's order (a folder's files, then its sub-folders,
    each sorted); symbolic links to folders are not followed (no cycles)."""
    from syncscan.lint import gitignore

    top_abs = os.path.abspath(top)
    chain = gitignore.chain_for_walk(top_abs) if settings.for_path(top).respect_gitignore else None
    todo = [(top, top_abs, chain)]
    while todo:
        folder, folder_abs, chain = todo.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:  # e.g. a folder without read permission
            errors.append((folder, "cannot list folder: " + (exc.strerror or str(exc)).lower()))
            continue
        if folders is not None:
            folders.append(folder)
        cfg = settings.for_path(folder)
        patterns = DEFAULT_EXCLUDE + tuple(cfg.exclude)
        git = chain if cfg.respect_gitignore else None
        subfolders = []
        for e in entries:
            fp = os.path.join(folder, e.name)
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if not is_dir and not e.name.endswith(SUFFIXES):
                continue
            if _matches(fp, patterns):
                continue
            fp_abs = os.path.join(folder_abs, e.name)
            if git is not None and gitignore.ignored(fp_abs, is_dir, git):
                continue
            if is_dir:
                subfolders.append((fp, fp_abs))
                continue
            try:
                regular = e.is_file()  # follows a symbolic link to its target
            except OSError:
                regular = False
            if not regular:
                if not os.path.exists(fp):
                    errors.append((fp, _why_missing(fp)))
                elif e.is_dir():  # a symbolic link to a folder named like a source file
                    continue
                else:
                    errors.append((fp, f"not a regular file ({special_kind(fp) or 'a special file'}): not read"))
                continue
            _add(fp, files, seen)
        for fp, fp_abs in reversed(subfolders):
            todo.append((fp, fp_abs, gitignore.enter(fp_abs, chain) if cfg.respect_gitignore else None))


# -- reading ------------------------------------------------------------------------------------

def _decode(data: bytes) -> tuple[str, str]:
    if b"\0" in data[:8192]:
        raise ReadError("binary file, not Python source")
    first, _, rest = data.partition(b"\n")
    try:
        if b"coding" in first or b"coding" in rest.partition(b"\n")[0]:  # a coding cookie may be there
            import io
            import tokenize

            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        else:  # what detect_encoding says of a file without one (read by it, this imports re: a few ms)
            encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        raise ReadError("not valid UTF-8 (or its declared encoding)") from None
    if text.startswith("\ufeff"):
        text, encoding = text[1:], "utf-8-sig"
    return text, encoding


def decode(data: bytes) -> str:
    return _decode(data)[0]


class Stdin(Frozen):
    """Standard input's text and the name it is linted as (--stdin-filename): a name ending in
    .ipynb makes it a notebook."""

    _fields = ("text", "name")
    text: str
    name: str | None

    def __init__(self, text: str, name: str | None = None):
        self._set(text=text, name=name)


def read(path: str, stdin: Stdin | str | None = None) -> Source:
    if path == "-":
        if isinstance(stdin, Stdin):
            if stdin.name and stdin.name.endswith(".ipynb"):
                return notebook_source("-", stdin.text)
            return Source("-", stdin.text)
        return Source("-", stdin or "")
    try:
        kind = special_kind(path)
        if kind is not None:  # never opened: a FIFO would block the read forever
            raise ReadError(f"not a regular file ({kind}): not read")
        # O_NONBLOCK: should it have become a FIFO since, the open does not wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with open(fd, "rb", closefd=True) as fh:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise ReadError("is a directory")
            kind = special_kind(path, st)
            if kind is not None:
                raise ReadError(f"not a regular file ({kind}): not read")
            if st.st_size > MAX_BYTES:
                raise ReadError(f"file too large to lint ({st.st_size // 1_000_000} MB)")
            data = fh.read()
    except IsADirectoryError:
        raise ReadError("is a directory") from None
    except PermissionError:
        raise ReadError("permission denied") from None
    except FileNotFoundError:
        raise ReadError(_why_missing(path)) from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ReadError("symbolic link loop") from None
        raise ReadError(f"cannot read: {e.strerror or e}") from None
    if path.endswith(".ipynb"):
        return read_notebook(path, data)
    text, encoding = _decode(data)
    return Source(path, text, encoding=encoding)


# -- notebooks ----------------------------------------------------------------------------------

def notebook_cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def read_notebook(path: str, data: bytes) -> Source:
    return notebook_source(path, _decode(data)[0])


def notebook_source(path: str, text: str) -> Source:
    """A notebook's Source from its JSON text: the code cells joined (see virtual_module)."""
    if not text.strip():  # an empty file: an empty notebook, as an empty .py is an empty module
        return Source(path, "", [], {"cells": []}, [], text)
    import json

    try:
        nb = json.loads(text)
    except ValueError:
        raise ReadError("not a valid Jupyter notebook (not JSON)") from None
    except RecursionError:
        raise ReadError("not a valid Jupyter notebook (JSON nested too deeply)") from None
    if not isinstance(nb, dict):
        raise ReadError("not a valid Jupyter notebook (JSON with a list of cells)")
    if "cells" not in nb and "worksheets" in nb:
        raise ReadError("nbformat 3 notebook; convert it with `jupyter nbconvert --to notebook`")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise ReadError("not a valid Jupyter notebook (JSON with a list of cells)")
    for i, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            raise ReadError(f"not a valid Jupyter notebook (cell {i} is not an object)")
        src = cell.get("source", "")
        if not (isinstance(src, str) or isinstance(src, list) and all(isinstance(s, str) for s in src)):
            raise ReadError(f"not a valid Jupyter notebook (cell {i}: source is not text)")
    if notebook_language(nb) != "python":
        return Source(path, "", [], nb, [], text)
    code = [(i, notebook_cell_source(c)) for i, c in enumerate(cells, start=1) if c.get("cell_type") == "code"]
    vtext, where, verbatim = virtual_module(code)
    return Source(path, vtext, where, nb, verbatim, text)


def notebook_language(nb: dict) -> str:
    """The kernel's language, lower case; "python" unless the metadata names another one.
    Metadata of odd shapes (`"kernelspec": "python3"`, a list `language_info`) name none."""
    meta = nb.get("metadata")
    if not isinstance(meta, dict):
        return "python"
    for key, field_ in (("kernelspec", "language"), ("language_info", "name")):
        table = meta.get(key)
        value = table.get(field_) if isinstance(table, dict) else None
        if isinstance(value, str) and value.strip():
            return value.strip().lower()
    return "python"


def cell_text(source: str) -> str:
    """A cell's source with line ends normalised to \\n (what the virtual module holds)."""
    return source.replace("\r\n", "\n").replace("\r", "\n")


def virtual_module(cells: list[tuple[int, str]]) -> tuple[str, list[tuple[int, int]], list[bool]]:
    """Join code cells [(cell number, source)] into one module: (text, line map, verbatim flags).
    Cells are separated by one blank line, which maps to the line after the cell's last."""
    out: list[str] = []
    where: list[tuple[int, int]] = []
    verbatim: list[bool] = []
    for number, source in cells:
        lines = cell_text(source).split("\n")
        for j, (line, same) in enumerate(python_lines(lines), start=1):
            out.append(line)
            where.append((number, j))
            verbatim.append(same)
        out.append("")  # a blank line between cells keeps statements apart
        where.append((number, len(lines) + 1))
        verbatim.append(False)
    return "\n".join(out) + "\n", where, verbatim


@lru_cache(maxsize=1)
def _magic_patterns():
    """(IPython help syntax: `obj?`, `obj.attr??`, `%magic?`, `?obj`; a magic assigned: `files = !ls`,
    `t = %timeit -o f()`), compiled on first use."""
    import re

    return (re.compile(r"^\s*(?:\?.*|%{0,2}[\w*]+(?:\.[\w*]+)*\?{1,2})\s*$").match,
            re.compile(r"^\s*[\w.,\s()\[\]*]+?\s*=\s*[%!]").match)

# cell magics whose body is Python run in the notebook's namespace: lint the body
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


def python_lines(lines: list[str]) -> list[tuple[str, bool]]:
    """Each line of a code cell as valid Python: (text, unchanged). Magics (`%`, `%%`, `!`,
    `?` help, `x = !cmd`) are replaced by `pass` at their indentation, but only where a
    statement can start: never inside brackets, strings or after a backslash."""
    first = next((k for k, ln in enumerate(lines) if ln.strip()), None)
    if first is not None and lines[first].startswith("%%"):
        name = lines[first][2:].split(None, 1)[0] if lines[first][2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:  # the cell is not Python (%%bash, %%html, %%writefile)
            return [("", ln == "") for ln in lines]
        body = python_lines(lines[first + 1:])
        return [(ln, True) for ln in lines[:first]] + [("pass  # magic", False)] + body
    out: list[tuple[str, bool]] = []
    state = _ScanState()
    magic_continues = False
    help_, assign_magic = _magic_patterns()
    for line in lines:
        at_start = state.at_statement_start()
        stripped = line.lstrip()
        if magic_continues or at_start and stripped and (
                stripped.startswith(("%", "!", "?")) or help_(line) or assign_magic(line)):
            indent = line[: len(line) - len(stripped)]
            out.append((indent + "pass  # magic" if not magic_continues else "", False))
            magic_continues = line.rstrip().endswith("\\")
            continue
        out.append((line, True))
        state.feed(line)
    return out


class _ScanState:
    """Just enough of Python's tokenizer to know whether a line starts a new statement: open
    brackets, an open string, a backslash continuation."""

    def __init__(self):
        self.depth = 0
        self.string: str | None = None  # the open string's closing quote(s)
        self.backslash = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.string is None and not self.backslash

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        code_end = n
        while i < n:
            c = line[i]
            if self.string is not None:
                if c == "\\":
                    i += 2
                    continue
                if line.startswith(self.string, i):
                    i += len(self.string)
                    self.string = None
                    continue
                i += 1
                continue
            if c == "#":
                code_end = i
                break
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c in "\"'":
                q = c * 3 if line.startswith(c * 3, i) else c
                self.string = q
                i += len(q)
                continue
            i += 1
        continued = line[:code_end].endswith("\\")
        if self.string is not None and len(self.string) == 1 and not continued:
            self.string = None  # an unterminated one-line string: Python will report it
        self.backslash = continued and self.string is None


# -- positions in a notebook's JSON text ----------------------------------------------------------
# --fix patches a cell's "source" in place (every other byte of the file stays as it was), and
# SARIF / GitHub annotations point into the .ipynb file itself: both need where each cell's
# source lies in the JSON text.

@lru_cache(maxsize=1)
def _json_parts():
    """(json's decoder, its string scanner, a whitespace matcher), imported on first use."""
    import json
    import re

    return json.JSONDecoder(), json.decoder.scanstring, re.compile(r"[ \t\n\r]*").match


def _skip_ws(s: str, i: int) -> int:
    return _json_parts()[2](s, i).end()


def _members(s: str, i: int):
    """(key, value start, value end) of the JSON object starting at s[i] == '{'."""
    if s[i] != "{":
        raise ValueError("not an object")
    i = _skip_ws(s, i + 1)
    if s[i] == "}":
        return
    while True:
        key, i = _json_parts()[1](s, i + 1)
        i = _skip_ws(s, i)
        if s[i] != ":":
            raise ValueError("expected ':'")
        i = _skip_ws(s, i + 1)
        _, end = _json_parts()[0].raw_decode(s, i)
        yield key, i, end
        i = _skip_ws(s, end)
        if s[i] == "}":
            return
        i = _skip_ws(s, i + 1)


def json_array_items(s: str, i: int):
    """(start, end) of each element of the JSON array starting at s[i] == '['."""
    if s[i] != "[":
        raise ValueError("not an array")
    i = _skip_ws(s, i + 1)
    if s[i] == "]":
        return
    while True:
        _, end = _json_parts()[0].raw_decode(s, i)
        yield i, end
        i = _skip_ws(s, end)
        if s[i] == "]":
            return
        i = _skip_ws(s, i + 1)


def notebook_source_spans(raw: str) -> dict[int, tuple[int, int]] | None:
    """Cell number (1-based) -> (start, end) offsets of its "source" value in the JSON text, or
    None if the text is not laid out as a notebook object."""
    try:
        spans = {}
        for key, start, _ in _members(raw, _skip_ws(raw, 0)):
            if key == "cells":
                spans = {}
                for n, (cs, _) in enumerate(json_array_items(raw, start), start=1):
                    for k, vs, ve in _members(raw, cs):
                        if k == "source":
                            spans[n] = (vs, ve)
        return spans
    except (ValueError, IndexError):
        return None


def notebook_position(src: Source, cell: int, line: int, column: int) -> tuple[int, int] | None:
    """Where (cell, line, column) lies in the .ipynb file's own text (1-based line, column), for
    annotations on the file; None when the source is not one JSON string per line."""
    if not src.raw:
        return None
    spans = src.source_spans
    if spans is None:
        spans = src.source_spans = notebook_source_spans(src.raw) or {}
    if cell not in spans:
        return None
    import json

    start, end = spans[cell]
    raw = src.raw
    if raw[start] == "[":
        items = list(json_array_items(raw, start))
        if not 0 < line <= len(items):
            return None
        item_start, item_end = items[line - 1]
        text = json.loads(raw[item_start:item_end])
        offset = item_start + 1 + len(json.dumps(text[: max(0, column - 1)], ensure_ascii=False)) - 2
    else:  # one string: the whole cell on one line of the file
        text = json.loads(raw[start:end])
        lines = cell_text(text).split("\n")
        if not isinstance(text, str) or not 0 < line <= len(lines):
            return None
        index = sum(len(ln) + 1 for ln in lines[: line - 1]) + max(0, column - 1)
        offset = start + 1 + len(json.dumps(text[:index], ensure_ascii=False)) - 2
    line_start = raw.rfind("\n", 0, offset) + 1
    return raw.count("\n", 0, offset) + 1, offset - line_start + 1


def cell_error(message: str, where: list[tuple[int, int]]) -> str:
    """An engine message about the virtual module ("syntax error at line 57: ...") in terms of
    the notebook ("... at cell 4, line 3: ...")."""
    def repl(m):
        n = int(m.group(1))
        if 0 < n <= len(where):
            return "cell {}, line {}".format(*where[n - 1])
        return m.group(0)

    import re

    return re.sub(r"\bline (\d+)", repl, message)
