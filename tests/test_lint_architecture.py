"""The inference core's shape (issue 12): the modules of syncscan/lint import each other without a
cycle (imports inside functions count: a late import is still a cycle), and no rule or engine code
keeps facts on the lint context's `__dict__` (facts live in the typed providers of
syncscan/lint/facts.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import syncscan

PKG = Path(syncscan.__file__).resolve().parent
LINT = PKG / "lint"
RULES = PKG.parent / "rules"


def lint_import_graph() -> dict[str, set[str]]:
    """syncscan.lint module -> the syncscan.lint modules it imports (anywhere in the file, even
    under `if TYPE_CHECKING:`, which only type checkers follow: those are left out)."""
    graph: dict[str, set[str]] = {}
    names = {p.stem for p in LINT.glob("*.py")}
    for p in LINT.glob("*.py"):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        skip = {id(n) for s in ast.walk(tree) if isinstance(s, ast.If) and "TYPE_CHECKING" in ast.dump(s.test)
                for n in ast.walk(s)}
        out: set[str] = set()
        for n in ast.walk(tree):
            if id(n) in skip:
                continue
            if isinstance(n, ast.ImportFrom) and n.module:
                mod = n.module if not n.level else "syncscan.lint." + n.module if n.level == 1 else None
                if mod == "syncscan.lint":
                    out |= {a.name for a in n.names if a.name in names}
                elif mod and mod.startswith("syncscan.lint."):
                    out.add(mod.split(".")[2])
            elif isinstance(n, ast.Import):
                out |= {a.name.split(".")[2] for a in n.names if a.name.startswith("syncscan.lint.")}
        graph[p.stem] = out - {p.stem}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_no_import_cycle_in_syncscan_lint():
    graph = lint_import_graph()
    assert {"engine", "walk", "facts", "interproc", "tree", "module", "tensors"} <= set(graph)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_cycle_check_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_facts_on_the_lint_context_dict():
    offenders = []
    for p in sorted(LINT.glob("*.py")) + sorted(RULES.glob("*.py")):
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Attribute) and n.attr == "__dict__" and isinstance(n.value, ast.Name) \
                    and n.value.id in ("ctx", "self") and p.name not in ("rule.py", "registry.py"):
                offenders.append(f"{p.name}:{n.lineno}")
    assert not offenders, offenders


def test_a_rule_that_says_a_file_holds_nothing_for_it_gets_none_of_its_nodes():
    from syncscan.lint.engine import lint_source
    from syncscan.lint.rule import Rule

    seen: list[str] = []

    class Probe(Rule):
        code = "PRB001"
        name = "probe"
        summary = why = rewrite = "x"

        @staticmethod
        def applies(file) -> bool:
            return "interesting" in file.source

        def visit_Call(self, node, ctx):
            seen.append(ctx.path)

    lint_source("a.py", "import torch\nf(1)\n", [Probe()])
    lint_source("b.py", "import torch\ninteresting(1)\n", [Probe()])
    assert seen == ["b.py"]
