"""The rule codes the runtime half uses (syncscan/catalog.py) and the rule files agree: every
code in RULE_NAMES is a rule with that name, and every rule is in RULE_NAMES."""

from __future__ import annotations

from syncscan.catalog import OP_TO_RULE, RULE_NAMES
from syncscan.lint.registry import all_rules


def test_every_catalog_code_is_a_rule():
    rules = {r.code for r in all_rules()}
    missing = sorted(set(RULE_NAMES) - rules)
    assert not missing, f"in syncscan/catalog.py but no rule file defines them: {missing}"


def test_every_rule_is_in_the_catalog_with_its_name():
    wrong = {r.code: (r.name, RULE_NAMES.get(r.code)) for r in all_rules() if RULE_NAMES.get(r.code) != r.name}
    assert not wrong, f"rule code -> (rule's name, catalog's name) that disagree: {wrong}"


def test_ops_map_to_catalog_codes():
    assert set(OP_TO_RULE.values()) <= set(RULE_NAMES)
