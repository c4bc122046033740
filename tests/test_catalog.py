"""One source of truth for the rules: each rule file declares what the runtime half needs (ops,
rewrite hint, replay footprint) and the lint prefilter's trigger words; syncscan/catalog_data.py
is generated from them and must be up to date, as docs/rules.md must."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from syncscan import catalog
from syncscan.lint import catalog_gen
from syncscan.lint.registry import all_rules, trigger_words
from syncscan.lint.rule import Footprint, Rule
from syncscan.lint.runner import may_find

REPO = Path(__file__).resolve().parents[1]
GENERATED = REPO / "syncscan" / "catalog_data.py"


def test_catalog_data_is_generated_from_the_rules():
    assert GENERATED.read_text(encoding="utf-8") == catalog_gen.render(all_rules()), \
        "syncscan/catalog_data.py is out of date: python -m syncscan.lint.catalog_gen > syncscan/catalog_data.py"


def missing_declarations(rule: type[Rule]) -> list[str]:
    """What a rule leaves out of its runtime and prefilter declarations."""
    out = []
    if "ops" not in rule.__dict__ or rule.ops is None:
        out.append("ops (the profiler ops it explains; () when its syncs show under another rule's ops)")
    if not rule.rewrite_hint.strip():
        out.append("rewrite_hint")
    if not isinstance(rule.footprint, Footprint):
        out.append("footprint")
    if not rule.triggers:
        out.append("triggers")
    return out


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_every_rule_declares_ops_rewrite_footprint_and_triggers(rule):
    assert not missing_declarations(rule), f"{rule.code} does not declare: {missing_declarations(rule)}"


def test_the_completeness_check_fails_for_a_rule_that_declares_nothing():
    class Bare(Rule):
        code = "SYN999"
        name = "bare"

    assert len(missing_declarations(Bare)) == 4


def test_each_op_belongs_to_one_rule():
    seen: dict[str, str] = {}
    for r in all_rules():
        for op in r.ops or ():
            assert op not in seen, f"{op} is declared by {seen[op]} and {r.code}"
            seen[op] = r.code
    assert catalog.OP_TO_RULE == seen


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_every_bad_example_passes_the_prefilter_through_its_own_rules_words(rule):
    """The prefilter skips files with no rule's trigger words: a rule's words must be in every
    file it flags (checked on its examples), or its findings would be lost unparsed."""
    for bad in rule.bad:
        code = textwrap.dedent(bad.code)
        assert any(w in code for w in rule.triggers), f"{rule.code}: no trigger word in\n{code}"
        assert may_find(code)


def test_prefilter_words_are_the_rules_words():
    assert set(trigger_words()) == {w for r in all_rules() for w in r.triggers}
    assert trigger_words()[0] == "torch"  # the most frequent first
    assert not may_find("import numpy as np\nprint(np.ones(3).sum())\n")


def test_rewrite_and_footprint_lookups():
    assert catalog.rewrite_for("SYN208") and catalog.rewrite_for("SYN309") and catalog.rewrite_for("SYN407")
    for code in ("SYN205", "SYN208", "SYN309", "SYN407"):
        assert catalog.footprint_for(code) is not None
    assert catalog.footprint_for("SYN305") == (6, 2, True, True)
    assert catalog.rewrite_for(None) is None and catalog.footprint_for("SYN000") is None


def test_every_rule_is_in_the_catalog_with_its_name():
    assert catalog.RULE_NAMES == {r.code: r.name for r in all_rules()}


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
    # ops the catalog once lacked a rewrite for
    assert rule_for_op("aten::_ctc_loss") == "SYN208" and rule_for_op("torchvision::nms") == "SYN309"
