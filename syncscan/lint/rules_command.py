"""`syncscan rules [CODE]`: list the rules, or explain one in full."""

from __future__ import annotations

import textwrap

from syncscan.errors import UserError
from syncscan.lint.registry import all_rules


def add_arguments(p):
    p.add_argument("code", nargs="?", help="a rule code (SYN301) or name (nonzero); omit to list all")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")


def explain(r) -> str:
    out = [f"{r.code} {r.name}", "", "What it does", textwrap.fill(r.summary), "", "Why is this bad?",
           textwrap.fill(r.why), "", "Use instead", textwrap.fill(r.rewrite), "", "Fix safety"]
    if r.fix_safety == "none":
        out.append("No automatic fix.")
    else:
        out.append(f"{r.fix_safety.capitalize()} fix." + (f" Assumes {r.fix_assumption}." if r.fix_assumption else ""))
    if r.bad:
        out += ["", "Example (syncs)", textwrap.indent(r.bad[0].code.strip("\n"), "    ")]
    if r.good:
        out += ["", "Sync-free", textwrap.indent(r.good[0].code.strip("\n"), "    ")]
    return "\n".join(out)


def run(args) -> int:
    rules = all_rules()
    if args.code:
        key = args.code.strip()
        match = [r for r in rules if r.code == key.upper() or r.name == key.lower()]
        if not match:
            raise UserError(f"unknown rule {args.code!r} (syncscan rules lists them)")
        rules = tuple(match)
    if args.format == "json":
        import json

        print(json.dumps([{"code": r.code, "name": r.name, "summary": r.summary, "why": r.why,
                           "rewrite": r.rewrite, "fix_safety": r.fix_safety,
                           "fix_assumption": r.fix_assumption} for r in rules], indent=2))
    elif args.format == "markdown":
        from syncscan.lint.docs import render

        print(render(rules), end="")
    elif args.code:
        print(explain(rules[0]))
    else:
        for r in rules:
            fix = {"none": "   ", "safe": "[*]", "unsafe": "[~]"}[r.fix_safety]
            print(f"{r.code}  {fix}  {r.name:<40} {r.summary}")
        print("\n[*] safe fix (syncscan lint --fix)   [~] unsafe fix (--fix --unsafe-fixes)")
    return 0
