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
    starts, pos = [0], 0
    for line in text.splitlines(True):
        pos += len(line)
        starts.append(pos)
    return starts


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


def choose(findings: list[Finding], unsafe: bool) -> list[Finding]:
    """Fixes to apply in one round: allowed by safety, not overlapping each other."""
    chosen, taken = [], []
    cands = [f for f in findings if f.fix is not None and (f.fix.applicability == "safe" or unsafe)]
    for f in sorted(cands, key=_span):
        a, b = _span(f)
        if any(not (b <= x or y <= a) for x, y in taken):
            continue
        chosen.append(f)
        taken.append((a, b))
    return chosen


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


def fix_text(path: str, text: str, rules, hot_patterns, unsafe: bool, select) -> FileFix:
    """Fix one module's text: rounds of non-overlapping fixes until none applies."""
    out = FileFix(path, text, text)
    current = text
    for _ in range(MAX_ROUNDS):
        res = lint_source(path, current, rules, hot_patterns)
        if res.error:
            out.error = res.error
            return out
        chosen = choose([f for f in res.findings if select(f)], unsafe)
        if not chosen:
            break
        new = apply_edits(current, [e for f in chosen for e in f.fix.edits])
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
        out.applied.extend(chosen)
        current = new
    out.after = current
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


def fix_notebook(src, rules, hot_patterns, unsafe, select) -> FileFix:
    """Fix a notebook's code cells; other cells, outputs and metadata are left as they are."""
    fixed = fix_text(src.path, src.text, rules, hot_patterns, unsafe, select)
    out = FileFix(src.path, "", "", fixed.applied, fixed.error)
    with open(src.path, encoding="utf-8") as fh:
        raw = fh.read()
    out.before = out.after = raw
    if not fixed.changed:
        return out
    # map the fixed virtual module back onto cells: cells are separated by the blank line the
    # reader added; a fix never spans two cells (their statements are apart)
    from syncscan.lint.files import notebook_cell_source

    nb = json.loads(raw)
    before_cells = _split_cells(src.text, src.cells)
    after_cells = _split_cells_like(fixed.after, before_cells)
    if after_cells is None:
        out.error = "could not map the fixes back onto the notebook's cells"
        return out
    for (cell_no, old_virtual), new_virtual in zip(before_cells, after_cells):
        if old_virtual == new_virtual:
            continue
        cell = nb["cells"][cell_no - 1]
        original = notebook_cell_source(cell)
        new_source = _merge_magics(original, old_virtual, new_virtual)
        cell["source"] = new_source.splitlines(True) if isinstance(cell.get("source"), list) else new_source
    indent = 1 if raw.startswith("{\n \"") else 2 if raw.startswith("{\n  \"") else None
    out.after = json.dumps(nb, indent=indent, ensure_ascii=False) + ("\n" if raw.endswith("\n") else "")
    return out


def _split_cells(text, where):
    lines = text.split("\n")
    cells, cur, cur_no = [], [], None
    for line, (cell, _) in zip(lines, where):
        if cell != cur_no:
            if cur_no is not None:
                cells.append((cur_no, "\n".join(cur[:-1])))
            cur, cur_no = [], cell
        cur.append(line)
    if cur_no is not None:
        cells.append((cur_no, "\n".join(cur[:-1])))
    return cells


def _split_cells_like(text, before_cells):
    """Split fixed virtual text at the same separators: each cell ends where the next begins.
    Cells whose text is unchanged anchor the split; changed cells take what lies between."""
    rest = text
    out = []
    for i, (_, old) in enumerate(before_cells):
        if i == len(before_cells) - 1:
            out.append(rest[:-2] if rest.endswith("\n\n") else rest.rstrip("\n"))
            break
        nxt = before_cells[i + 1][1]
        sep = "\n\n" + nxt
        j = rest.find(sep) if nxt else rest.find("\n\n")
        if j < 0:
            return None
        out.append(rest[:j])
        rest = rest[j + 2:]
    return out


def _merge_magics(original, old_virtual, new_virtual):
    """The virtual text blanked magics to `pass  # magic`; put the original lines back."""
    orig_lines = original.split("\n")
    old_lines = old_virtual.split("\n")
    magic = {old_lines[i]: orig_lines[i] for i in range(min(len(orig_lines), len(old_lines)))
             if old_lines[i] != orig_lines[i]}
    return "\n".join(magic.get(line, line) for line in new_virtual.split("\n"))
