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


def test_rule_for_op():
    from syncscan.catalog import rule_for_op

    # boolean-mask assignment: in place, functional (torch.index_put) and the kernel behind both
    assert [rule_for_op(op) for op in ("aten::index_put", "aten::index_put_", "aten::_index_put_impl_")] \
        == ["SYN303"] * 3
    assert rule_for_op("aten::index") == "SYN302" and rule_for_op("aten::nonzero_numpy") == "SYN301"
    # backward nodes of indexing go to the boolean-mask read
    assert rule_for_op("IndexBackward0") == rule_for_op("IndexPutBackward0") == "SYN302"
    # copies: by direction; an op unknown to the catalog has no rule
    assert rule_for_op("aten::_to_copy", "DtoH") == "SYN201"
    assert rule_for_op("aten::copy_", "HtoD") == "SYN204"
    assert rule_for_op("aten::copy_", "DtoD") is None and rule_for_op("aten::add") is None
    # runtime calls count only outside any op
    assert rule_for_op(None, runtime_call="cudaDeviceSynchronize") == "SYN501"
    assert rule_for_op("aten::add", runtime_call="cudaDeviceSynchronize") is None
    assert rule_for_op(None) is None
