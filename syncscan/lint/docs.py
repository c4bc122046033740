"""Each rule's documentation in ruff's layout (What it does / Why is this bad? / Example / Use
instead / Fix safety), built from the rule class, for `syncscan rules CODE` and for the rule
reference docs/rules.md (`syncscan rules --format markdown`; a test keeps it in sync)."""

from __future__ import annotations

import textwrap

GROUPS = {"SYN1": "Values read on the host", "SYN2": "Transfers between host and device",
          "SYN3": "Data-dependent shapes", "SYN4": "Missing arguments that would make the call sync-free",
          "SYN5": "Explicit waits", "SYN6": "The input pipeline", "SYN9": "Suppression comments"}


def _code(snippet: str) -> str:
    return textwrap.dedent(snippet).strip("\n")


def example_pair(r):
    """(example that syncs, the same code rewritten or None): the first bad example with a
    `fixed` version if there is one, so Example and Use instead show one piece of code."""
    with_fix = next((b for b in r.bad if b.fixed), None)
    if with_fix is not None:
        return _code(with_fix.code), _code(with_fix.fixed)
    return (_code(r.bad[0].code) if r.bad else None), None


def fix_safety(r) -> str:
    if r.fix_safety == "none":
        return "No automatic fix: the rewrite depends on code around it."
    if r.fix_safety == "safe":
        return "Safe fix (`syncscan lint --fix`): the rewritten code computes the same values."
    return f"Unsafe fix (`syncscan lint --fix --unsafe-fixes`). It assumes {r.fix_assumption.rstrip('.')}."


def sections(r, level: int = 2) -> list[str]:
    """The rule's documentation as markdown lines, headings at `level`."""
    h = "#" * level
    example, fixed = example_pair(r)
    out = [f"{h} What it does", "", r.summary, "", f"{h} Why is this bad?", "", r.why]
    if example is not None:
        out += ["", f"{h} Example", "", "```python", example, "```"]
    out += ["", f"{h} Use instead", "", r.rewrite]
    if fixed is not None:
        out += ["", "```python", fixed, "```"]
    if r.good:
        out += ["", "Not flagged:", "", "```python", _code(r.good[0].code), "```"]
    out += ["", f"{h} Fix safety", "", fix_safety(r)]
    compiled = compile_effect(r.code)
    if compiled:
        out += ["", f"{h} Under torch.compile", "", *compiled]
    return out


def compile_effect(code: str) -> list[str]:
    """What torch.compile makes of the rule's sync (rules/_compile.py), as markdown lines."""
    from syncscan.rules._compile import EFFECTS

    variants = EFFECTS.get(code, ())
    out = []
    for e in variants:
        when = f"{e.when or e.match}: " if e.match else ("Otherwise: " if len(variants) > 1 else "")
        out.append(f"- {when}**{e.kind}**: {e.why}." + (f" CUDA graphs: {e.cudagraphs}." if e.cudagraphs else ""))
        out += [f"  - {o}" for o in e.options]
    return out


def compile_table() -> str:
    """docs/compile.md's table of effects, one row per rule variant (kept in sync by a test)."""
    from syncscan.rules._compile import EFFECTS

    out = [COMPILE_START, "| rule | where | effect | captured by | CUDA graphs |", "| --- | --- | --- | --- | --- |"]
    for code, variants in EFFECTS.items():
        for e in variants:
            where = (e.when or f"`{e.match}`") if e.match else ("otherwise" if len(variants) > 1 else "")
            flag = f"`{e.captured_by}`" if e.captured_by else ""
            out.append(f"| [{code}](rules.md#{code.lower()}) | {_cell(where)} | {e.kind} | {flag} | "
                       f"{_cell(e.cudagraphs or '')} |")
    return "\n".join(out + [COMPILE_END])


COMPILE_START, COMPILE_END = "<!-- compile-table:start -->", "<!-- compile-table:end -->"


def explain(r) -> str:
    """`syncscan rules SYN301`: markdown, readable as plain text."""
    return "\n".join([f"# {r.code} ({r.name})", "", *sections(r, 2)])


def render(rules) -> str:
    out = ["# Rule reference", "",
           "Generated from `rules/` by `syncscan rules --format markdown > docs/rules.md`; "
           "`tests/test_rule_docs.py` fails when it is out of date.", "",
           "Fix: *safe* fixes are applied by `syncscan lint --fix`; *unsafe* ones need "
           "`--unsafe-fixes` as well (each rule says what its fix assumes).", "",
           "| code | name | fix | what it flags |", "| --- | --- | --- | --- |"]
    for r in rules:
        out.append(f"| [{r.code}](#{r.code.lower()}) | `{r.name}` | {r.fix_safety} | {_cell(r.summary)} |")
    group = None
    for r in rules:
        g = r.code[:4]
        if g != group:
            group = g
            out += ["", f"## {GROUPS.get(g, g)}"]
        out += ["", f"### {r.code}", "", f"`{r.name}`", ""]
        out += sections(r, 4)
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


README_START, README_END = "<!-- rules-table:start -->", "<!-- rules-table:end -->"


def readme_table(rules) -> str:
    """The README's rule table (between README_START and README_END), linking into docs/rules.md."""
    out = [README_START, "| code | name | fix | what it flags |", "| --- | --- | --- | --- |"]
    for r in rules:
        out.append(f"| [{r.code}](docs/rules.md#{r.code.lower()}) | `{r.name}` | {r.fix_safety} | {_cell(r.summary)} |")
    return "\n".join(out + [README_END])


def regenerate(root) -> list[str]:
    """Rewrite what is generated from rules/ in the repository at `root`: docs/rules.md, the README's
    rule table and docs/compile.md's table. Returns the files that changed."""
    from pathlib import Path

    from syncscan.lint.registry import all_rules

    root = Path(root)
    changed = []

    def put(path: Path, text: str) -> None:
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(str(path.relative_to(root)))

    def between(text: str, start: str, end: str, new: str) -> str:
        a, b = text.index(start), text.index(end) + len(end)
        return text[:a] + new + text[b:]

    rules = list(all_rules())
    put(root / "docs" / "rules.md", render(rules))
    readme = root / "README.md"
    put(readme, between(readme.read_text(encoding="utf-8"), README_START, README_END, readme_table(rules)))
    compile_md = root / "docs" / "compile.md"
    put(compile_md, between(compile_md.read_text(encoding="utf-8"), COMPILE_START, COMPILE_END, compile_table()))
    return changed


if __name__ == "__main__":  # python -m syncscan.lint.docs: regenerate the generated docs of this checkout
    import sys
    from pathlib import Path

    done = regenerate(Path(__file__).resolve().parents[2])
    print("\n".join(done) or "up to date", file=sys.stderr)
