"""The compile-effect table (rules/_compile.py) against the installed torch: every probe is
compiled with dynamo and must break the graph exactly when its entry says so, and must not once
the config flag its entry names (`captured_by`) is set. Graph breaks are counted through the hook
`syncscan profile` uses (syncscan.runtime.compile_events), so this tests that hook too."""

from __future__ import annotations

import textwrap
import warnings

import pytest

from syncscan.lint.registry import all_rules
from syncscan.rules._compile import (
    BREAKING,
    EFFECTS,
    GRAPH_BREAK,
    KINDS,
    NOT_CODE,
    TRACED,
    UNVERIFIED,
    effect_for,
    rule_for_reason,
)

torch = pytest.importorskip("torch")
dynamo = pytest.importorskip("torch._dynamo")

PROBES = [(code, i, e) for code, variants in EFFECTS.items() for i, e in enumerate(variants) if e.probe]


def _breaks(body: str, config: dict | None = None) -> list[str]:
    """The graph breaks torch reports while compiling and running `def probe(x, i): body`."""
    from syncscan.runtime.compile_events import CompileEvents
    from syncscan.trace.graph_breaks import graph_breaks

    ns: dict = {"torch": torch}
    exec("def probe(x, i):\n" + textwrap.indent(body, "    "), ns)  # noqa: S102 - the table's own probes
    x = torch.randn(64, generator=torch.Generator().manual_seed(0))
    i = torch.randint(0, 5, (64,), generator=torch.Generator().manual_seed(1))
    dynamo.reset()
    with warnings.catch_warnings(), dynamo.config.patch(**(config or {})), CompileEvents() as events:
        warnings.simplefilter("ignore")
        torch.compile(ns["probe"], backend="eager")(x, i)
    return [b["reason"] for b in graph_breaks(events.records)]


def test_every_rule_has_an_entry():
    codes = {r.code for r in all_rules() if not r.code.startswith(NOT_CODE)}
    assert codes == set(EFFECTS), codes ^ set(EFFECTS)
    for code, variants in EFFECTS.items():
        assert variants and all(e.kind in KINDS for e in variants), code
        assert [e.match is None for e in variants].count(True) == 1, f"{code}: one default variant"
        for e in variants:
            assert (e.probe is None) == (e.kind == UNVERIFIED), f"{code}: a checked entry has a probe"
            assert e.captured_by is None or e.kind in BREAKING, code


@pytest.mark.parametrize("code,index,effect", PROBES, ids=[f"{c}-{i}" for c, i, _ in PROBES])
def test_probe_breaks_the_graph_as_the_table_says(code, index, effect):
    if "torchvision" in effect.probe:
        pytest.importorskip("torchvision")
    breaks = _breaks(effect.probe)
    assert bool(breaks) == (effect.kind in BREAKING), (code, effect.kind, breaks)
    if effect.captured_by:
        assert _breaks(effect.probe, {effect.captured_by: True}) == [], (code, effect.captured_by)
    elif effect.kind in BREAKING:  # no flag keeps it in the graph: check the obvious ones do not
        for flag in ("capture_scalar_outputs", "capture_dynamic_output_shape_ops"):
            assert _breaks(effect.probe, {flag: True}), (code, flag)


def test_variants_are_chosen_by_the_findings_text():
    assert effect_for("SYN106", "any(x > 0 for x in xs)").kind == GRAPH_BREAK
    assert effect_for("SYN106", "max(a, t)").kind == TRACED
    assert effect_for("SYN103", "math.sqrt(t)").captured_by is None
    assert effect_for("SYN103", "float(t)").captured_by == "capture_scalar_outputs"
    assert effect_for("SYN206", "x[[1, 2, 3]]").kind == TRACED
    assert effect_for("SYN206", "x[idx_cpu]").cudagraphs
    assert effect_for("SYN999", "x") is None


def test_graph_break_reasons_map_to_rules():
    assert rule_for_reason("Dynamic shape operator: Operator `aten.nonzero.default`'s output shape "
                           "depends on input Tensor data.") == "SYN301"
    assert rule_for_reason("Dynamic shape operator: Operator `aten._unique2.default`'s output shape") == "SYN305"
    assert rule_for_reason("Unsupported Tensor.item() call with capture_scalar_outputs=False") == "SYN101"
    assert rule_for_reason("Data-dependent branching: Detected data-dependent branching") == "SYN104"
    assert rule_for_reason("Something torch has not said before") is None


def test_docs_compile_table_is_up_to_date():
    from pathlib import Path

    from syncscan.lint.docs import COMPILE_END, COMPILE_START, compile_table

    text = (Path(__file__).resolve().parents[1] / "docs" / "compile.md").read_text(encoding="utf-8")
    start, end = text.index(COMPILE_START), text.index(COMPILE_END) + len(COMPILE_END)
    assert text[start:end] == compile_table(), \
        "docs/compile.md's table is out of date: regenerate with `python -m syncscan.lint.docs`"
