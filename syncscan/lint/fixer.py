"""Applying fixes: text edits on exact spans (formatting and comments outside them untouched),
repeated until nothing fixable is left (as ruff does), imports added with LibCST, every result
checked to parse with both `ast` and LibCST before anything is written, written atomically."""

from __future__ import annotations

import ast
import difflib
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field

from syncscan.lint.engine import lint_source
from syncscan.lint.lines import line_starts
from syncscan.lint.rule import Edit, Finding

MAX_ROUNDS = 8


@dataclass
class FileFix:
    path: str
    before: str
    after: str
    applied: list[Finding] = field(default_factory=list)
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.after != self.before and self.error is None

    def diff(self) -> str:
        return "".join(difflib.unified_diff(self.before.splitlines(True), self.after.splitlines(True),
                                            f"a/{self.path}", f"b/{self.path}"))


def _offsets(text: str) -> list[int]:
    return line_starts(text)


def apply_edits(text: str, edits: list[Edit]) -> str:
    starts = _offsets(text)

    def off(line, col):
        return starts[min(line - 1, len(starts) - 1)] + col - 1

    spans = sorted(((off(e.line, e.column), off(e.end_line, e.end_column), e.content) for e in edits), reverse=True)
    for a, b, content in spans:
        text = text[:a] + content + text[b:]
    return text


def _span(f: Finding):
    es = f.fix.edits
    return (min((e.line, e.column) for e in es), max((e.end_line, e.end_column) for e in es))


def _edits_span(edits) -> tuple:
    return (min((e.line, e.column) for e in edits), max((e.end_line, e.end_column) for e in edits))


def _overlap(a, b) -> bool:
    return not (a[1] <= b[0] or b[1] <= a[0])


def choose(findings: list[Finding], unsafe: bool, selected=None) -> list[Finding]:
    """Fixes to apply in one round: allowed by safety, not overlapping each other. Fixes of one
    group (`Fix.group`) come together or not at all: every finding of the group must be selected
    and allowed, and their distinct edits must not overlap (the same edit in several of them, as
    the two masked reads of one loss carry, is applied once: see `edits_of`).
    `selected(f)` says which findings the user asked to fix (default: all)."""
    selected = selected or (lambda f: True)
    ok = [f for f in findings if f.fix is not None and (f.fix.applicability == "safe" or unsafe) and selected(f)]
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        if f.fix is not None and f.fix.group:
            groups.setdefault(f.fix.group, []).append(f)
    ok_ids = {id(f) for f in ok}
    units: list[tuple[tuple, list[Finding]]] = []  # (span, findings applied together)
    seen_groups = set()
    for f in ok:
        g = f.fix.group
        if not g:
            units.append((_span(f), [f]))
            continue
        if g in seen_groups:
            continue
        seen_groups.add(g)
        members = groups[g]
        if any(id(m) not in ok_ids for m in members):
            continue  # a member is not to be fixed: the sync would stay, so none is
        edits = edits_of(members)
        spans = sorted(_edits_span([e]) for e in edits)
        if any(_overlap(a, b) for a, b in zip(spans, spans[1:])):
            continue
        units.append((_edits_span(edits), members))
    chosen, taken = [], []
    for _unit_span, members in sorted(units, key=lambda u: u[0]):
        edit_spans = [_edits_span([e]) for e in edits_of(members)]
        if any(_overlap(a, t) for a in edit_spans for t in taken):
            continue
        chosen.extend(members)
        taken.extend(edit_spans)
    return chosen


def edits_of(findings: list[Finding]) -> list[Edit]:
    """The edits of these findings' fixes, each distinct edit once."""
    out, seen = [], set()
    for f in findings:
        for e in f.fix.edits:
            if e not in seen:
                seen.add(e)
                out.append(e)
    return out


def removed(findings: list[Finding], chosen: list[Finding]) -> list[Finding]:
    """The findings whose syncs the chosen fixes remove: their own and those they cover."""
    covered = {c for f in chosen for c in f.fix.covers}
    ids = {id(f) for f in chosen}
    return chosen + [f for f in findings if id(f) not in ids and (f.line, f.column) in covered]


def add_imports(text: str, modules: set[str]) -> str:
    if not modules:
        return text
    tree = ast.parse(text)
    have = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            have.update(a.asname or a.name.split(".")[0] for a in n.names)
    missing = sorted(m for m in modules if m.split(".")[0] not in have)
    if not missing:
        return text
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    mod = cst.parse_module(text)
    ctx = CodemodContext()
    for m in missing:
        AddImportsVisitor.add_needed_import(ctx, m)
    return AddImportsVisitor(ctx).transform_module(mod).code


def parses(text: str) -> str | None:
    """None if both Python and LibCST parse the text, else why not."""
    try:
        ast.parse(text)
    except SyntaxError as e:
        return f"the fixed code would not parse (line {e.lineno}: {e.msg})"
    try:
        import libcst as cst

        cst.parse_module(text)
    except Exception as e:  # libcst raises its own ParserSyntaxError
        return f"the fixed code would not parse with LibCST ({type(e).__name__})"
    return None


def _wrapped(before: str, after: str, line_length: int | None) -> str:
    """`after` with the lines the fixes made too long split (syncscan.lint.wrap), if that parses."""
    if not line_length or after == before:
        return after
    from syncscan.lint.wrap import wrap_changed

    wrapped = wrap_changed(before, after, line_length)
    return wrapped if wrapped == after or parses(wrapped) is None else after


def fix_text(path: str, text: str, rules, hot_patterns, unsafe: bool, select,
             line_length: int | None = None) -> FileFix:
    """Fix one module's text: rounds of non-overlapping fixes until none applies; then, with a
    `line_length`, the lines the fixes made longer than that are wrapped."""
    out = FileFix(path, text, text)
    current = text
    for _ in range(MAX_ROUNDS):
        res = lint_source(path, current, rules, hot_patterns)
        if res.error:
            out.error = res.error
            return out
        chosen = choose(res.findings, unsafe, select)
        if not chosen:
            break
        new = apply_edits(current, edits_of(chosen))
        why = parses(new)
        if why is None:
            try:
                new = add_imports(new, {m for f in chosen for m in f.fix.imports})
            except Exception as e:
                why = f"could not add imports ({type(e).__name__})"
        if why is not None:
            out.error = why
            out.after = text
            return out
        out.applied.extend(removed(res.findings, chosen))
        current = new
    out.after = _wrapped(text, current, line_length)
    return out


def write_atomic(path: str, text: str) -> None:
    """Write via a temporary file in the same folder and a rename: a crash leaves the old file."""
    d = os.path.dirname(os.path.abspath(path))
    st = os.stat(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{os.path.basename(path)}.", suffix=".syncscan-tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# -- notebooks ---------------------------------------------------------------------------------
# A notebook is fixed cell by cell. Fixes are found in the virtual module that joins the code
# cells (files.virtual_module) and each edit is translated through its line map onto the cell's
# own source; that is exact because every line an edit may touch is copied verbatim into the
# virtual module (edits touching a magic line or two cells are not applied). The new sources are
# spliced into the JSON text in place, so outputs, metadata, the other cells and the file's
# formatting stay byte for byte as they were.


@dataclass
class NotebookFix(FileFix):
    cells_before: dict[int, str] = field(default_factory=dict)
    cells_after: dict[int, str] = field(default_factory=dict)

    def diff(self) -> str:
        out: list[str] = []
        for n in sorted(self.cells_after):
            a, b = self.cells_before.get(n, ""), self.cells_after[n]
            if a != b:
                out.extend(difflib.unified_diff(_diff_lines(a), _diff_lines(b), f"a/{self.path}:cell {n}",
                                                f"b/{self.path}:cell {n}"))
        return "".join(out)


def _diff_lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1] + "\n"] if parts[-1] else [])


def fix_notebook(src, rules, hot_patterns, unsafe, select, line_length: int | None = None) -> FileFix:
    """Fix a notebook's code cells; other cells, outputs and metadata are left as they are.
    `src` is the notebook's files.Source (with `notebook`, `raw`, `cells` and `verbatim`)."""
    from syncscan.lint.files import cell_error, cell_text, notebook_cell_source, virtual_module

    raw = src.raw
    if raw is None:
        with open(src.path, encoding="utf-8", newline="") as fh:
            raw = fh.read()
    out = NotebookFix(src.path, raw, raw)
    if not src.cells or not src.notebook:  # no code cells, or not a Python notebook
        return out
    current = {i: cell_text(notebook_cell_source(c)) for i, c in enumerate(src.notebook.get("cells", []), start=1)
               if isinstance(c, dict) and c.get("cell_type") == "code"}
    out.cells_before = dict(current)
    for _ in range(MAX_ROUNDS):
        text, where, verbatim = virtual_module(list(current.items()))
        res = lint_source(src.path, text, rules, hot_patterns)
        if res.error:
            out.error = cell_error(res.error, where)
            return out
        chosen = choose(res.findings, unsafe,
                        lambda f, where=where, verbatim=verbatim: select(f) and _fits_cells(f, where, verbatim))
        if not chosen:
            break
        by_cell: dict[int, list[Edit]] = {}
        for e in edits_of(chosen):
            cell, line = where[e.line - 1]
            end_line = where[e.end_line - 1][1] if e.end_line <= len(where) else line
            by_cell.setdefault(cell, []).append(Edit(line, e.column, end_line, e.end_column, e.content))
        new = dict(current)
        for cell, edits in by_cell.items():
            new[cell] = _apply_cell_edits(current[cell], edits)
        new_text = virtual_module(list(new.items()))[0]
        why = parses(new_text)
        if why is None:
            modules = {m for f in chosen for m in f.fix.imports}
            new = _add_notebook_imports(new, new_text, modules)
            why = parses(virtual_module(list(new.items()))[0])
        if why is not None:
            out.error = why
            return out
        out.applied.extend(removed(res.findings, chosen))
        current = new
    current = {n: _wrapped(out.cells_before[n], t, line_length) for n, t in current.items()}
    changed = {n: t for n, t in current.items() if t != out.cells_before[n]}
    if changed:
        out.cells_after = current
        out.after = _patch_sources(raw, src.notebook, changed)
    return out


def _fits_cells(f: Finding, where, verbatim) -> bool:
    """Every edit of the fix lies in one cell, on lines copied verbatim from it."""
    for e in f.fix.edits:
        if not (0 < e.line <= e.end_line <= len(where)):
            return False
        cell = where[e.line - 1][0]
        last = e.end_line if e.end_column > 1 else e.end_line - 1  # ending at column 1: the line before
        for ln in range(e.line, max(e.line, last) + 1):
            if not verbatim[ln - 1] or where[ln - 1][0] != cell:
                return False
        if where[e.end_line - 1][0] != cell:
            return False
    return True


def _apply_cell_edits(text: str, edits: list[Edit]) -> str:
    """apply_edits for a cell's text, whose lines end with \\n only."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def off(line, col):
        return min(len(text), (starts[line - 1] if line - 1 < len(starts) else len(text)) + col - 1)

    for a, b, content in sorted(((off(e.line, e.column), off(e.end_line, e.end_column), e.content) for e in edits),
                                reverse=True):
        text = text[:a] + content + text[b:]
    return text


def _add_notebook_imports(cells: dict[int, str], text: str, modules: set[str]) -> dict[int, str]:
    """Add `import m` for the modules no cell imports yet, at the top of the first code cell
    (after its comments, magics and __future__ imports)."""
    if not modules:
        return cells
    have = set()
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Import):
            have.update(a.asname or a.name.split(".")[0] for a in n.names)
    missing = sorted(m for m in modules if m.split(".")[0] not in have)
    if not missing:
        return cells
    from syncscan.lint.files import PYTHON_CELL_MAGICS, python_lines

    for number, source in cells.items():
        lines = source.split("\n")
        head = next((ln for ln in lines if ln.strip()), "")
        if head.startswith("%%") and head[2:].split(" ", 1)[0] not in PYTHON_CELL_MAGICS:
            continue  # a cell that is not Python (%%bash): imports cannot go there
        converted = python_lines(lines)
        k = 0
        while k < len(lines) and (not converted[k][1] and lines[k].strip() or lines[k].lstrip().startswith("#")
                                  or lines[k].lstrip().startswith("from __future__")):
            k += 1
        new = dict(cells)
        added = [f"import {m}" for m in missing]
        new[number] = "\n".join(lines[:k] + added + lines[k:]) if source else "\n".join(added)
        return new
    return cells


def _patch_sources(raw: str, nb: dict, changed: dict[int, str]) -> str:
    """The notebook's JSON text with the changed cells' sources replaced in place."""
    import re

    from syncscan.lint.files import notebook_source_spans

    ensure_ascii = raw.isascii() and re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]|[1-9a-fA-F][0-9a-fA-F]{2})"
                                               r"[0-9a-fA-F]", raw) is not None
    spans = notebook_source_spans(raw)
    if spans is None or any(n not in spans for n in changed):
        # not laid out as expected (a cell without "source"): write the whole notebook anew
        for n, text in changed.items():
            cell = nb["cells"][n - 1]
            cell["source"] = text.splitlines(True) if isinstance(cell.get("source"), list) else text
        m = re.match(r"\{\n( +)\"", raw)
        return json.dumps(nb, indent=len(m.group(1)) if m else None, ensure_ascii=ensure_ascii) + \
            ("\n" if raw.endswith("\n") else "")
    for n in sorted(changed, reverse=True):
        start, end = spans[n]
        raw = raw[:start] + _encode_source(raw, start, end, changed[n], ensure_ascii) + raw[end:]
    return raw


def _encode_source(raw: str, start: int, end: int, text: str, ensure_ascii: bool) -> str:
    """A cell's new source as JSON, in the layout its old one had (a string, or a list of lines
    with the same indentation and separators)."""
    import re

    from syncscan.lint.files import json_array_items

    old = raw[start:end]
    if not old.startswith("["):
        return json.dumps(text, ensure_ascii=ensure_ascii)
    items = text.splitlines(True)  # what nbformat writes
    if not items:
        return "[]"
    elements = list(json_array_items(old, 0))
    first_ws = re.match(r"\[(\s*)", old).group(1)
    last_ws = re.search(r"(\s*)\]$", old).group(1)
    if len(elements) >= 2:
        sep = old[elements[0][1]:elements[1][0]]
    elif elements:
        sep = "," + (first_ws or " ")
    else:  # was empty: indent one level deeper than the "source" key, as the file does
        line_start = raw.rfind("\n", 0, start) + 1
        key_indent = re.match(r"[ \t]*", raw[line_start:]).group(0)
        unit = re.match(r"\{\n([ \t]+)\"", raw)
        if unit is None:
            first_ws, last_ws, sep = "", "", ", "
        else:
            first_ws, last_ws = "\n" + key_indent + unit.group(1), "\n" + key_indent
            sep = "," + first_ws
    return "[" + first_ws + sep.join(json.dumps(i, ensure_ascii=ensure_ascii) for i in items) + last_ws + "]"
