"""Whether a fix pays: the other syncs left on the same step path.

A fix removes the host's wait only when no other sync stays on the path the step runs: with
`test_loss += loss.item()` on the line above, keeping `total` on the device saves nothing. The
step path of a finding is the innermost loop around it in its function (what runs every pass),
or the function itself when no loop encloses it (a `forward`, a loss). For each finding with a
fix this counts the findings on that path, and the ones the fix removes (its own, its group's,
the ones it covers); when some stay, the finding says so: "this fix removes 1 of 3 syncs on this
path", in `extra["path"]` (JSON: the fix's `path`) and in the text output.

A pure function of the module's tree and its findings (no lint context), run once per file.
"""

from __future__ import annotations

import ast

from syncscan.lint.rule import Finding
from syncscan.lint.tree import children, release_closures

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _regions(tree: ast.AST) -> list[tuple[int, int, int, tuple]]:
    """(first line, last line, depth, key) of every function and loop; a loop's key names its
    function, so a loop of an inner function is not a path of the outer one."""
    out = []

    def walk(node, func_key, depth):
        for c in children(node):  # (leaf singletons left out: they hold nothing)
            if isinstance(c, _FUNCS):
                key = ("function", c.lineno, c.col_offset)
                out.append((c.lineno, c.end_lineno or c.lineno, depth + 1, key))
                walk(c, key, depth + 1)
            elif isinstance(c, _LOOPS):
                key = ("loop", func_key, c.lineno, c.col_offset)
                out.append((c.lineno, c.end_lineno or c.lineno, depth + 1, key))
                walk(c, func_key, depth + 1)
            elif not isinstance(c, ast.expr):  # statements, handlers, match cases
                walk(c, func_key, depth)
    walk(tree, ("module",), 0)
    release_closures(walk)
    return out


def path_key(regions, line: int) -> tuple:
    """The innermost function or loop holding `line`."""
    best, depth = ("module",), -1
    for a, b, d, key in regions:
        if a <= line <= b and d > depth:
            best, depth = key, d
    return best


def annotate(tree: ast.AST, findings: list[Finding]) -> None:
    """Mark every finding whose fix leaves other syncs on its step path."""
    fixed = [f for f in findings if f.fix is not None]
    if not fixed:
        return
    regions = _regions(tree)
    paths: dict[tuple, list[Finding]] = {}
    key_of: dict[int, tuple] = {}
    for f in findings:
        k = path_key(regions, f.line)
        key_of[id(f)] = k
        paths.setdefault(k, []).append(f)
    groups: dict[str, list[Finding]] = {}
    for f in fixed:
        assert f.fix is not None
        if f.fix.group:
            groups.setdefault(f.fix.group, []).append(f)
    for f in fixed:
        assert f.fix is not None
        on_path = paths[key_of[id(f)]]
        members = groups.get(f.fix.group, [f]) if f.fix.group else [f]
        covered = {c for m in members if m.fix is not None for c in m.fix.covers}
        gone = {id(m) for m in members} | {id(g) for g in on_path if (g.line, g.column) in covered}
        removed = sum(1 for g in on_path if id(g) in gone)
        left = [g for g in on_path if id(g) not in gone]
        if not left:
            continue
        where = ", ".join(f"line {g.line} ({g.code})" for g in left[:4]) + (", ..." if len(left) > 4 else "")
        f.extra["path"] = {"removes": removed, "of": len(on_path), "left": [[g.line, g.code] for g in left],
                           "note": f"this fix removes {removed} of {len(on_path)} syncs on this path; the host still "
                                   f"waits at {where}"}
