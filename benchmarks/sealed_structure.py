"""A sealed set's misses as structure: each missed statement with every name abstracted. Reading it unseals the set.

`sealed_aggregates.py` counts a sealed set's misses; this prints each missed statement (or an `if` / `while`
test) with every name replaced by where it comes from and the kind the linter infers there: `<P|tensor>` a
parameter, `<L:Call:sort|None>` a local last bound to a call of `.sort`, `<L:Compare|None>`, `<loopvar|host>`,
`<G|other>` anything else; attribute names are kept only when they are common tensor API (`.to`, `.log_prob`),
others print as `a_<kind>`, and strings as `'s'`. No path, line number or identifier of the code is printed, and
the lines come sorted. It shows *why* a site is missed (session 14, docs/accuracy.md), and with that the set is
no longer a blind test: say so wherever a figure of it is quoted afterwards.

    python benchmarks/sealed_structure.py --set fresh10 [--rule SYN204 ...]
"""

from __future__ import annotations

import argparse
import ast
import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import accuracy as A  # noqa: E402

from syncscan.lint.engine import lint_source  # noqa: E402
from syncscan.lint.rule import Rule  # noqa: E402

API = frozenset("""to cuda cpu item sum mean max min any all abs norm shape size device dtype float long int bool detach
clone numel nonzero view reshape squeeze unsqueeze grad data T tolist numpy type_as type new_tensor new_zeros new_ones
append extend keys values items get sqrt exp log pow clamp argmax argmin topk sort unique index_select masked_fill where
isnan isinf isfinite eq ne gt lt ge le double half contiguous expand repeat flatten transpose permute zero_ add_ mul_
copy_ fill_ sub_ div_ matmul mm bmm sample log_prob rsample backward step zero_grad state param_groups weight bias
training eval train forward parameters buffers register_buffer""".split())
KEPT_NAMES = frozenset({"self", "torch", "np", "F", "nn", "math", "len", "max", "min", "int", "float", "bool", "sum",
                        "abs", "range", "list", "tuple", "isinstance", "any", "all", "zip", "enumerate"})


class _Kinds(Rule):
    """Records the kind the linter infers for every name, attribute and call on the given lines."""
    code = "PRB001"
    name = "probe"
    summary = why = rewrite = "(probe)"
    ops = ()
    bad = good = ()

    def __init__(self, lines: set[int]):
        self.lines, self.kinds = lines, {}

    def _see(self, node, ctx):
        if any(node.lineno <= line <= node.end_lineno for line in self.lines):
            self.kinds[(node.lineno, node.col_offset, type(node).__name__)] = ctx.kind(node)

    visit_Name = visit_Attribute = visit_Call = visit_Subscript = _see


def _origins(fn, line: int) -> tuple[set[str], dict[str, str]]:
    """The function's parameters, and what each local was last bound to before `line`."""
    if fn is None:
        return set(), {}
    a = fn.args
    params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]}
    local: dict[str, str] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and n.lineno < line:
            v = n.value
            what = type(v).__name__
            if isinstance(v, ast.Call):
                what += ":" + (v.func.attr if isinstance(v.func, ast.Attribute) and v.func.attr in API else "")
            for t in n.targets:
                local.update((x.id, what) for x in ast.walk(t) if isinstance(x, ast.Name))
        elif isinstance(n, (ast.For, ast.comprehension)):
            for x in ast.walk(n.target):
                if isinstance(x, ast.Name):
                    local.setdefault(x.id, "loopvar")
    return params, local


def structure(path: Path, line: int, kinds: dict, tree: ast.Module) -> str:
    fns = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
           and n.lineno <= line <= n.end_lineno]
    params, local = _origins(max(fns, key=lambda f: f.lineno) if fns else None, line)
    stmts = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno <= line <= n.end_lineno]
    if not stmts:
        return "?"
    sm = min(stmts, key=lambda n: n.end_lineno - n.lineno)
    head, node = ("", sm)
    if isinstance(sm, (ast.If, ast.While)):
        head, node = type(sm).__name__ + " ", sm.test
    elif isinstance(sm, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.With, ast.Try)):
        return type(sm).__name__

    class Abstract(ast.NodeTransformer):
        def visit_Name(self, n):
            if n.id in KEPT_NAMES:
                return n
            k = kinds.get((n.lineno, n.col_offset, "Name")) if isinstance(n.ctx, ast.Load) else "stored"
            where = "P" if n.id in params else f"L:{local[n.id]}" if n.id in local else "G"
            return ast.Name(f"<{where}|{k}>", n.ctx)

        def visit_Attribute(self, n):
            k = kinds.get((n.lineno, n.col_offset, "Attribute"))
            self.generic_visit(n)
            if n.attr not in API and not (isinstance(n.value, ast.Name) and n.value.id in ("torch", "np", "F", "nn")):
                n.attr = f"a_{k}"
            return n

        def visit_Constant(self, n):
            return ast.Constant("s") if isinstance(n.value, str) else n

    return head + ast.unparse(Abstract().visit(copy.deepcopy(node)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=sorted(A.SETS), required=True)
    ap.add_argument("--rule", action="append", default=[], help="only the misses expected of this rule")
    a = ap.parse_args(argv)
    data, res = A.measure_set(A.SETS[a.set], false_flags=False, quiet=True)
    packages = A.PACKAGES + A.SET_PACKAGES.get(data["meta"].get("set"), ())
    roots = A.ensure_sources(data["meta"], quiet=True, packages=packages, repo_files=A.repo_files(data))
    by_file: dict[Path, list] = {}
    for r in res["rows"]:
        if r["category"] == "direct" and not r["found"] and (not a.rule or r["expected"] in a.rule):
            by_file.setdefault(A.local_path(r["site"]["package"], r["site"]["path"], roots), []).append(r)
    out = []
    for path, rows in by_file.items():
        source = path.read_text()
        probe = _Kinds({r["site"]["line"] for r in rows})
        lint_source(str(path), source, [probe], cross_file=True)
        tree = ast.parse(source)
        for r in rows:
            ops = " + ".join(sorted(r["site"].get("ops") or ["?"]))
            out.append(f"{r['expected']:8s} {ops[:50]:50s} | {structure(path, r['site']['line'], probe.kinds, tree)[:220]}")
    print(f"{a.set}: {sum(len(v) for v in by_file.values())} missed direct sites")
    for line in sorted(out):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
