"""`syncscan rules [CODE]`: list the rules, or explain one in full (ruff's layout)."""

from __future__ import annotations

from syncscan.errors import UserError
from syncscan.lint.registry import all_rules


def add_arguments(p):
    p.add_argument("code", nargs="?",
                   help="a rule code (SYN301), a prefix (SYN3) or a name (nonzero); omit to list all")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")


def _select(rules, key: str):
    key = key.strip()
    exact = [r for r in rules if r.code == key.upper() or r.name == key.lower()]
    if exact:
        return exact, True
    prefix = [r for r in rules if r.code.startswith(key.upper())] if key.upper().startswith("SYN") else []
    if prefix:
        return prefix, False
    raise UserError(f"unknown rule {key!r} (syncscan rules lists them)")


def run(args) -> int:
    from syncscan.lint import docs

    rules = all_rules()
    one = False
    if args.code:
        rules, one = _select(rules, args.code)
    if args.format == "json":
        import json

        print(json.dumps([{"code": r.code, "name": r.name, "summary": r.summary, "why": r.why,
                           "rewrite": r.rewrite, "fix_safety": r.fix_safety,
                           "fix_assumption": r.fix_assumption} for r in rules], indent=2))
    elif args.format == "markdown":
        print(docs.explain(rules[0]) if one else docs.render(rules), end="\n" if one else "")
    elif one:
        print(docs.explain(rules[0]))
    else:
        width = max((len(r.name) for r in rules), default=0)
        for r in rules:
            fix = {"none": "   ", "safe": "[*]", "unsafe": "[~]"}[r.fix_safety]
            print(f"{r.code}  {fix}  {r.name:<{width}}  {' '.join(r.summary.split())}")
        print("\n[*] safe fix (syncscan lint --fix)   [~] unsafe fix (--fix --unsafe-fixes)\n"
              "syncscan rules CODE explains one.")
    return 0
