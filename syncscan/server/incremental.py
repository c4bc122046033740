"""Re-lint only what an edit can change, for diagnostics within the latency budget.

A full lint of a 2,000-line file takes a few hundred milliseconds; typing changes one function.
A module is a sequence of top-level statements ("blocks"). After an edit:

1. the lines the edit touched are found by comparing the old and new lines (equal prefix and
   suffix), widened by a line on each side and to whole blocks (the "span"); the span's new text
   is parsed on its own (a few lines, not the file);
2. if the span holds only function and class definitions, before and after, the edit cannot
   have changed the module's imports or globals; otherwise the caller lints the whole file;
3. the blocks to lint again ("relint") are the changed ones and their neighbours in the name
   graph (blocks that name what they define, and blocks defining what they name): what a
   function returns and what its callers pass both flow along those edges;
4. the lint runs on a reduced text: the module with every definition that the relinted blocks do
   not reach (through the names they use, and two levels of callers, as the inference reads
   them) blanked out line for line, so that every position stays where it is;
5. findings of the relinted blocks come from that lint, the others are the previous findings,
   moved by the edit's line delta.

This is a fast path, not the truth: rules that look at the whole file (a DataLoader's
`pin_memory` where the file copies to the GPU elsewhere) can see less in the reduced text. The
server lints the whole file in the background once typing pauses and replaces the fast result
when it differs (the latency benchmark counts how often it did).
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace

from syncscan.server import adapter
from syncscan.server.text import common_lines

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
CALLER_LEVELS = 2  # levels of callers the inference learns parameter kinds from (interproc.TOP)


@dataclass(frozen=True)
class Block:
    """One top-level statement: its lines (1-based, decorators included), whether it is a function
    or class definition, the module-level names it binds and the names it reads."""

    start: int
    end: int
    is_def: bool
    names: frozenset[str]
    refs: frozenset[str]

    def moved(self, delta: int) -> Block:
        return replace(self, start=self.start + delta, end=self.end + delta) if delta else self


def _bound(s: ast.stmt) -> set[str]:
    if isinstance(s, _DEFS):
        return {s.name}
    out: set[str] = set()
    for n in ast.walk(s):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, _DEFS):
            out.add(n.name)
        elif isinstance(n, ast.alias):
            out.add(n.asname or n.name.split(".")[0])
    return out


def blocks_of(tree: ast.Module, first_line: int = 1) -> list[Block]:
    """The blocks of a module (or of a span parsed alone, whose line 1 is `first_line`)."""
    shift = first_line - 1
    out = []
    for s in tree.body:
        start = min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))])
        refs = frozenset(n.id for n in ast.walk(s) if isinstance(n, ast.Name))
        out.append(Block(start + shift, (s.end_lineno or s.lineno) + shift, isinstance(s, _DEFS),
                         frozenset(_bound(s)), refs))
    return out


@dataclass
class Plan:
    """What to lint after an edit, in the new text's lines."""

    reduced: str  # the new text with the definitions nobody needs blanked out
    blocks: list[Block]  # the new text's blocks
    relint: list[Block]  # blocks whose findings come from linting `reduced`
    reuse: list[tuple[Block, int]]  # (old block, line delta): previous findings moved
    replaced_names: frozenset[str]  # module-level names whose function keys the new lint replaces
    context: int = 0  # blocks present in `reduced` (for the benchmark's notes)


def plan(old_lines: list[str], old_blocks: list[Block], new_lines: list[str]) -> Plan | None:
    """The fast path for an edit from `old_lines` to `new_lines` (lines with their ends), or None
    when the whole file must be linted (the edit touches module-level code, or its span does not
    parse on its own)."""
    p, s = common_lines(old_lines, new_lines)
    n_old, n_new = len(old_lines), len(new_lines)
    delta = n_new - n_old
    lo, hi = max(p, 1), min(n_old - s + 1, n_old)  # the touched lines, a line of slack each side
    touched = [b for b in old_blocks if b.end >= lo and b.start <= hi]
    start = min([lo, *(b.start for b in touched)])
    end = max([hi, *(b.end for b in touched)])
    if end < start:  # an empty file before or after
        return None
    span_text = "".join(new_lines[start - 1:end + delta])
    tree = adapter.parse(span_text)
    if isinstance(tree, str):
        return None
    fresh = blocks_of(tree, start)
    if any(not b.is_def for b in touched) or any(not b.is_def for b in fresh):
        return None
    before = [b for b in old_blocks if b.end < start]
    after = [b for b in old_blocks if b.start > end]
    blocks = before + fresh + [b.moved(delta) for b in after]
    changed_names = frozenset().union(*(b.names for b in fresh + touched))
    changed_refs = frozenset().union(*(b.refs for b in fresh))
    fresh_ids = {id(b) for b in fresh}
    # callers of what changed (what it returns), and functions it calls (what it passes them); a
    # module-level statement it reads is no callee: nothing flows into it from a function body
    relint = [b for b in blocks if id(b) in fresh_ids or b.refs & changed_names
              or b.is_def and b.names & changed_refs]
    needed = _context(blocks, relint)
    reduced = _blank(new_lines, [b for b in blocks if b.is_def and id(b) not in needed])
    relint_ids = {id(b) for b in relint}
    reuse = [(b, 0) for b in before if id(b) not in relint_ids]
    moved = {id(b): m for b, m in zip(after, blocks[len(before) + len(fresh):])}
    reuse += [(b, delta) for b in after if id(moved[id(b)]) not in relint_ids]
    replaced = changed_names.union(*(b.names for b in relint))
    return Plan(reduced, blocks, relint, reuse, replaced, len(needed))


def _context(blocks: list[Block], relint: list[Block]) -> set[int]:
    """ids of the blocks the relinted ones need present: their callers (two levels: what callers
    pass), then everything those name, transitively (what the names hold, what calls return)."""
    by_name: dict[str, list[Block]] = {}
    for b in blocks:
        for n in b.names:
            by_name.setdefault(n, []).append(b)
    need = {id(b): b for b in relint}
    frontier = list(relint)
    for _ in range(CALLER_LEVELS):  # (only functions and classes have callers that pass them values)
        names = frozenset().union(*(b.names for b in frontier if b.is_def))
        frontier = [b for b in blocks if id(b) not in need and b.refs & names]
        need.update((id(b), b) for b in frontier)
    todo = list(need.values())
    while todo:
        b = todo.pop()
        for n in b.refs:
            for d in by_name.get(n, ()):
                if id(d) not in need:
                    need[id(d)] = d
                    todo.append(d)
    return set(need)


def _blank(lines: list[str], drop: list[Block]) -> str:
    out = list(lines)
    for b in drop:
        for i in range(b.start - 1, min(b.end, len(out))):
            line = out[i]
            out[i] = line[len(line.rstrip("\r\n")):]  # keep the line end: every position stays
    return "".join(out)


def within(blocks: list[Block], line: int) -> Block | None:
    for b in blocks:
        if b.start <= line <= b.end:
            return b
    return None


def moved_finding(f: adapter.Finding, delta: int) -> adapter.Finding:
    """A copy of the finding `delta` lines further down (its fix's edits too)."""
    fix = f.fix
    if delta and fix is not None:
        fix = fix.replace(edits=tuple(e.replace(line=e.line + delta, end_line=e.end_line + delta)
                                      for e in fix.edits))
    return f.replace(line=f.line + delta, end_line=f.end_line + delta, fix=fix, extra=dict(f.extra))


def top_name(key: str, path: str) -> str:
    """The module-level name a function key of `path` belongs to (`Net` of `path::Net.forward`)."""
    prefix = path + "::"
    q = key.removeprefix(prefix)
    return q.split(".", 1)[0]


def merge(plan_: Plan, path: str, old: adapter.FileSummary, new: adapter.FileSummary) -> adapter.FileSummary:
    """The whole file's summary after the edit: the relinted blocks' findings and functions from
    `new` (the reduced lint), the rest from `old` (moved)."""
    findings = [f for f in new.findings if within(plan_.relint, f.line) is not None]
    old_sorted = sorted(old.findings, key=lambda f: f.line)
    starts = [f.line for f in old_sorted]
    for b, delta in plan_.reuse:
        for f in old_sorted[bisect_left(starts, b.start):bisect_right(starts, b.end)]:
            findings.append(moved_finding(f, delta) if delta else f)
    findings.sort(key=lambda f: (f.line, f.column, f.code))
    functions = {k: v for k, v in old.functions.items() if top_name(k, path) not in plan_.replaced_names}
    functions.update((k, v) for k, v in new.functions.items() if top_name(k, path) in plan_.replaced_names)
    return adapter.FileSummary(path, findings, functions, new.error, new.deps)
