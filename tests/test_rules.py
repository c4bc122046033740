"""Every rule's examples are its tests: each bad example gives exactly its findings, each good
example none. The examples are also what `syncscan rules CODE` and docs/rules.md show."""

from __future__ import annotations

import textwrap

import pytest

from syncscan.lint.engine import lint_source
from syncscan.lint.registry import all_rules

RULES = all_rules()
BAD = [(r, i, ex) for r in RULES for i, ex in enumerate(r.bad)]
GOOD = [(r, i, ex) for r in RULES for i, ex in enumerate(r.good)]


def _lint(rule, code):
    # a rule that judges the others' findings (SYN901) is tested with all of them running
    rules = [r() for r in RULES] if getattr(rule, "checks_other_rules", False) else [rule()]
    res = lint_source("example.py", textwrap.dedent(code), rules)
    assert res.error is None, res.error
    return [f for f in res.findings if f.code == rule.code]


@pytest.mark.parametrize("rule,i,ex", BAD, ids=[f"{r.code}-bad{i}" for r, i, _ in BAD])
def test_bad_example_fires(rule, i, ex):
    found = _lint(rule, ex.code)
    assert len(found) == ex.count, f"{rule.code} bad example {i}: expected {ex.count}, got {[(f.line, f.message) for f in found]}"
    if ex.line is not None:
        assert found[0].line == ex.line, f"{rule.code} bad example {i}: at line {found[0].line}, expected {ex.line}"
    if ex.suggests is not None:
        assert ex.suggests in found[0].suggestion, \
            f"{rule.code} bad example {i}: suggestion {found[0].suggestion!r} lacks {ex.suggests!r}"
    assert all(f.name == rule.name and f.message for f in found)


@pytest.mark.parametrize("rule,i,ex", GOOD, ids=[f"{r.code}-good{i}" for r, i, _ in GOOD])
def test_good_example_is_silent(rule, i, ex):
    found = _lint(rule, ex.code)
    assert not found, f"{rule.code} good example {i} flagged: {[(f.line, f.message) for f in found]}"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_is_documented(rule):
    assert rule.code.startswith("SYN") and len(rule.code) == 6
    assert rule.name == rule.name.lower() and " " not in rule.name
    for attr in ("summary", "why", "rewrite"):
        assert getattr(rule, attr).strip(), f"{rule.code} has no {attr}"
    assert rule.bad and rule.good, f"{rule.code} needs bad and good examples"
    if rule.fix_safety == "unsafe":
        assert rule.fix_assumption, f"{rule.code}: an unsafe fix must state its assumption"


def test_a_list_of_attributes_moved_once_is_not_a_copy_per_call():
    from syncscan.lint.registry import all_rules

    src = textwrap.dedent("""
        import torch
        class Anchors(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.cells = [torch.zeros(4, 4) for _ in range(3)]
            def forward(self, x):
                self.cells = [c.to(device=x.device) for c in self.cells]
                return [c.to(device=x.device) for c in self.other]
    """)
    found = lint_source("m.py", src, [r() for r in all_rules()]).findings
    assert all(f.line != 8 for f in found)
