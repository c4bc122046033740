"""Rank-conditional code: statements that only some ranks of a distributed job run.

    if rank == 0:                      print(loss.item())      # rank 0 only
    if dist.get_rank() == 0:           ...
    if accelerator.is_main_process:    ...                     # rank 0 only
    if not is_main_process(): return                           # what follows: rank 0 only
    @rank_zero_only                                            # the whole function: rank 0 only
    def log(...): ...

A sync that only some ranks run makes every other rank wait for it at the next collective, so a
finding under such a condition carries it (`rank_condition` in JSON: the test as written, and
`ranks`: "0", "not 0" or "some"), and `syncscan profile` on several ranks joins it with the sites
it measured on those ranks only.

Recognised: names and attributes called `rank`, `local_rank`, `global_rank`, `is_main_process`,
`is_global_zero`, ... (RANK_NAMES), calls of `get_rank()`, `is_main_process()`, ...
(RANK_CALLS), and `os.environ["RANK"]`; an `and` with one of them keeps its ranks, anything else
around them makes it "some".
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from syncscan.lint.tree import release_closures, segment, split_lines_no_ff, walk

# values that are a rank, or say whether this is the main rank (attribute or plain name)
RANK_NAMES = {"rank", "local_rank", "global_rank", "node_rank", "world_rank", "process_index",
              "local_process_index", "RANK", "LOCAL_RANK", "GLOBAL_RANK", "WORLD_RANK"}
MAIN_NAMES = {"is_main_process", "is_local_main_process", "is_global_zero", "is_local_zero", "is_master",
              "is_main", "is_rank_zero", "is_rank0", "main_process", "master_process", "is_world_process_zero",
              "is_local_process_zero", "is_main_rank", "is_master_process", "is_chief"}
RANK_CALLS = {"get_rank", "get_local_rank", "get_global_rank", "get_node_local_rank", "get_process_index"}
MAIN_CALLS = MAIN_NAMES | {"is_master_ordinal", "is_main_worker"}
ENV_KEYS = {"RANK", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"}
RANK_ZERO_DECORATORS = {"rank_zero_only", "main_process_only", "on_main_process", "master_only"}
# words without which a file has no rank condition (a cheap test before walking its tree)
WORDS = ("rank", "main_process", "master", "global_zero", "local_zero", "is_main", "process_index",
         "is_chief", "PROCID")


@dataclass(frozen=True)
class RankCondition:
    test: str      # the condition as written; "not (...)" for an else branch
    ranks: str     # "0" (the main rank only), "not 0" (every rank but the main one), "some"
    line: int      # the line of the `if` (or decorator) that sets it

    def to_json(self) -> dict:
        return {"test": self.test, "ranks": self.ranks, "line": self.line}


def _terminal(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _env_rank(node: ast.AST) -> bool:
    """os.environ["RANK"], os.environ.get("RANK"), os.getenv("RANK") (possibly inside int())."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value in ENV_KEYS and (_terminal(node.value) == "environ")
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        name = _terminal(node.func)
        return name in ("get", "getenv") and node.args[0].value in ENV_KEYS
    return False


def _kind(node: ast.AST) -> Optional[str]:
    """"rank" (a rank number), "main" (a main-rank flag), or None."""
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "int" and node.args:
            return _kind(node.args[0])
        name = _terminal(node.func)
        if name in RANK_CALLS:
            return "rank"
        if name in MAIN_CALLS:
            return "main"
        return "rank" if _env_rank(node) else None
    if _env_rank(node):
        return "rank"
    name = _terminal(node)
    if name in RANK_NAMES:
        return "rank"
    if name in MAIN_NAMES:
        return "main"
    return None


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def _mentions_rank(node: ast.AST) -> bool:
    return any(_kind(n) is not None for n in ast.walk(node))


def classify(test: ast.AST) -> Optional[str]:
    """The ranks a test lets through: "0", "not 0", "some"; None when it says nothing of ranks."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = classify(test.operand)
        return {"0": "not 0", "not 0": "0"}.get(inner or "", inner)
    if isinstance(test, ast.BoolOp):
        parts = [classify(v) for v in test.values]
        if not any(parts):
            return None
        if isinstance(test.op, ast.And):  # rank 0 and something else: still rank 0 only
            for want in ("0", "not 0"):
                if want in parts:
                    return want
        return "some"
    k = _kind(test)
    if k == "main":
        return "0"
    if k == "rank":  # `if rank:` is every rank but 0
        return "not 0"
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right, op = test.left, test.comparators[0], test.ops[0]
        rank_side = _kind(left) or _kind(right)
        zero = _is_zero(right) if _kind(left) else _is_zero(left)
        if rank_side == "rank" and zero:
            if isinstance(op, (ast.Eq, ast.LtE)) and _kind(left) or isinstance(op, (ast.Eq, ast.GtE)) and _kind(right):
                return "0"
            if isinstance(op, (ast.NotEq, ast.Gt)) and _kind(left) or isinstance(op, (ast.NotEq, ast.Lt)) and _kind(right):
                return "not 0"
        if rank_side == "main" and isinstance(right if _kind(left) else left, ast.Constant):
            value = (right if _kind(left) else left).value
            if value is True or value is False:
                eq = isinstance(op, (ast.Eq, ast.Is))
                return "0" if eq == bool(value) else "not 0"
    return "some" if _mentions_rank(test) else None


def _negate(c: RankCondition, test: ast.AST, text) -> RankCondition:
    """The condition of the other branch (`not rank_test`, or the operand of a `not`)."""
    said = text(test.operand) if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else f"not ({c.test})"
    return RankCondition(said, {"0": "not 0", "not 0": "0"}.get(c.ranks, "some"), c.line)


def _ends_block(body: list) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


Span = tuple  # ((line, col), (end_line, end_col)), 1-based columns as findings have


def _span(first: ast.AST, last: ast.AST) -> Span:
    return ((first.lineno, first.col_offset + 1), (last.end_lineno or last.lineno, (last.end_col_offset or 0) + 1))


def regions(tree: ast.AST, source: str) -> list[tuple[Span, RankCondition]]:
    """Every stretch of code that runs under a rank condition, with it (innermost last)."""
    out: list[tuple[Span, RankCondition]] = []
    lines: list[str] | None = None

    def text(node: ast.AST) -> str:
        # (the source split once: ast.get_source_segment splits the whole file on every call)
        nonlocal lines
        if lines is None:
            lines = split_lines_no_ff(source)
        return " ".join((segment(lines, node) or ast.unparse(node)).split())

    def block(stmts: list) -> None:
        for i, st in enumerate(stmts):
            if isinstance(st, ast.If):
                ranks = classify(st.test)
                if ranks is not None:
                    cond = RankCondition(text(st.test), ranks, st.lineno)
                    out.append((_span(st.body[0], st.body[-1]), cond))
                    if st.orelse:
                        out.append((_span(st.orelse[0], st.orelse[-1]), _negate(cond, st.test, text)))
                    elif _ends_block(st.body) and i + 1 < len(stmts):  # `if rank != 0: return`
                        out.append((_span(stmts[i + 1], stmts[-1]), _negate(cond, st.test, text)))
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in st.decorator_list:
                    if _terminal(d.func if isinstance(d, ast.Call) else d) in RANK_ZERO_DECORATORS:
                        out.append((_span(st.body[0], st.body[-1]), RankCondition(f"@{text(d)}", "0", d.lineno)))
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(st, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    block(inner)
            for h in getattr(st, "handlers", []) or []:
                block(h.body)
            for case in getattr(st, "cases", []) or []:
                block(case.body)

    if isinstance(tree, ast.Module):
        block(tree.body)
    for n in walk(tree):  # conditional expressions: `x.item() if rank == 0 else None`
        if isinstance(n, ast.IfExp):
            ranks = classify(n.test)
            if ranks is not None:
                cond = RankCondition(text(n.test), ranks, n.lineno)
                out.append((_span(n.body, n.body), cond))
                out.append((_span(n.orelse, n.orelse), _negate(cond, n.test, text)))
    release_closures(block)
    return out


def _inside(pos: tuple, span: Span) -> bool:
    return span[0] <= pos <= span[1]


def annotate(findings: list, tree: ast.AST, source: str) -> None:
    """Give each finding under a rank condition its innermost one (`extra["rank_condition"]`)."""
    if not findings or not any(w in source for w in WORDS):
        return
    found = regions(tree, source)
    if not found:
        return
    for f in findings:
        pos = (f.line, f.column)
        best = None
        for span, cond in found:
            if _inside(pos, span) and (best is None or span[0] >= best[0][0] and span[1] <= best[0][1]):
                best = (span, cond)
        if best is not None:
            f.extra["rank_condition"] = best[1].to_json()


def label(cond: Optional[dict]) -> str:
    """How the text output says it: `rank 0 only`, `not on rank 0`, `some ranks: <test>`."""
    if not cond:
        return ""
    return {"0": "rank 0 only", "not 0": "not on rank 0"}.get(cond.get("ranks"), f"some ranks: {cond.get('test')}")
