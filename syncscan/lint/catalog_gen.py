"""Generate syncscan/catalog_data.py from the rule files: what the runtime half needs to know
about each rule (its name, the profiler ops, copies and CUDA calls it explains, its one-line
rewrite, its rewrite's footprint for the replay) without loading the rules.

    python -m syncscan.lint.catalog_gen > syncscan/catalog_data.py

tests/test_catalog.py fails when the file is out of date, or when a rule leaves one of these
declarations out (as tests/test_rule_docs.py does for docs/rules.md).
"""

from __future__ import annotations

import sys

from syncscan.lint.registry import all_rules

HEADER = '''"""Generated from rules/ by `python -m syncscan.lint.catalog_gen > syncscan/catalog_data.py`: do not edit.

Each rule file declares these (syncscan.lint.rule.Rule: ops, copy_directions, runtime_calls,
host_functions, rewrite_hint, footprint); tests/test_catalog.py fails when this file is out of date.
"""

'''


def _dict(name: str, items: list[tuple[str, object]], comment: str) -> list[str]:
    out = [f"# {comment}", f"{name} = {{"]
    out += [f"    {k!r}: {v!r}," for k, v in items]
    return out + ["}", ""]


def render(rules) -> str:
    ops, copies, calls, functions = [], [], [], []
    for r in rules:
        ops += [(op, r.code) for op in r.ops or ()]
        copies += [(d, r.code) for d in r.copy_directions]
        calls += [(c, r.code) for c in r.runtime_calls]
        functions += [(f, r.code) for f in r.host_functions]
    lines = HEADER.splitlines()
    lines += _dict("RULE_NAMES", [(r.code, r.name) for r in rules], "rule code -> kebab-case name")
    lines += _dict("OP_TO_RULE", ops, "profiler op -> the rule whose pattern it runs")
    lines += _dict("COPY_RULE", copies, "copy direction -> rule, for a sync inside a copy op (catalog.COPY_OPS)")
    lines += _dict("RUNTIME_TO_RULE", calls, "CUDA call made outside any op -> rule")
    lines += _dict("HOST_FUNCTION_RULE", functions, "torch function that holds the host for other ranks -> rule")
    lines += _dict("REWRITES", [(r.code, r.rewrite_hint) for r in rules], "rule -> its rewrite in one line")
    lines += _dict("FOOTPRINTS", [(r.code, (r.footprint.ops, r.footprint.backward_nodes, r.footprint.keeps_gpu_work,
                                            r.footprint.keeps_host_time)) for r in rules if r.footprint],
                   "rule -> (ops, backward nodes, keeps GPU work, keeps host time) of its rewrite")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render(all_rules()))
