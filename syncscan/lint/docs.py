"""The rule reference (docs/rules.md), generated from the rule files; a test keeps it in sync."""

from __future__ import annotations

GROUPS = {"SYN1": "Values read on the host", "SYN2": "Transfers between host and device",
          "SYN3": "Data-dependent shapes", "SYN4": "Missing arguments that would make the call sync-free",
          "SYN5": "Explicit waits"}


def render(rules) -> str:
    out = ["# Rule reference", "",
           "Generated from `rules/` by `syncscan rules --format markdown > docs/rules.md`; "
           "`tests/test_rule_docs.py` fails when it is out of date.", "",
           "| code | name | fix | what it flags |", "| --- | --- | --- | --- |"]
    for r in rules:
        out.append(f"| [{r.code}](#{r.code.lower()}) | `{r.name}` | {r.fix_safety} | {r.summary} |")
    group = None
    for r in rules:
        g = r.code[:4]
        if g != group:
            group = g
            out += ["", f"## {GROUPS.get(g, g)}"]
        out += ["", f"### {r.code}", "", f"`{r.name}`", "", "**What it does.** " + r.summary, "",
                "**Why is this bad?** " + r.why, "", "**Use instead.** " + r.rewrite, ""]
        if r.fix_safety == "none":
            out.append("**Fix safety.** No automatic fix.")
        else:
            out.append(f"**Fix safety.** {r.fix_safety.capitalize()}." +
                       (f" Assumes {r.fix_assumption}." if r.fix_assumption else ""))
        if r.bad:
            out += ["", "Example (syncs):", "", "```python", r.bad[0].code.strip("\n"), "```"]
        if r.good:
            out += ["", "Sync-free:", "", "```python", r.good[0].code.strip("\n"), "```"]
    return "\n".join(out) + "\n"
