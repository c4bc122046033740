"""The typed report (syncscan.schema): the published JSON Schema is generated from the types and
up to date, every report validates (conftest turns validation on for every report the tests
produce), and no step of the pipeline runs twice for one trace."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

from syncscan import schema
from syncscan.cli import main

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = REPO / "docs" / "report.schema.json"


def test_published_schema_is_generated_from_the_types():
    assert PUBLISHED.read_text(encoding="utf-8") == schema.schema_text(), \
        "docs/report.schema.json is out of date: python -m syncscan.schema > docs/report.schema.json"
    jsonschema.Draft202012Validator.check_schema(json.loads(PUBLISHED.read_text()))


def _analyze_json(path) -> dict:
    from syncscan.trace import analyze_path

    return json.loads(json.dumps(analyze_path(path).report))


def test_a_recorded_report_validates_and_a_broken_one_does_not(traces_dir, monkeypatch):
    published = jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text()))
    report = _analyze_json(traces_dir / "masked_loss_v0_b16_64px")
    published.validate(report)
    assert report["schema_version"] == schema.SCHEMA_VERSION
    broken = [
        {k: v for k, v in report.items() if k != "steps"},             # a key left out
        {**report, "total_syncs": "48"},                                 # a wrong type
        {**report, "surprise": 1},                                       # a key the schema does not know
        {**report, "syncs": [{**report["syncs"][0], "line_kind": "somewhere"}]},  # not one of the values
    ]
    monkeypatch.setenv(schema.CHECK_ENV, "1")
    for bad in broken:
        assert not published.is_valid(bad)
        with pytest.raises(AssertionError, match="report.schema.json"):
            schema.check(bad)
    monkeypatch.delenv(schema.CHECK_ENV)
    schema.check(broken[0])  # validation only when asked: reports are never refused in normal use


def test_lint_findings_in_the_join_may_carry_more_keys():
    """A finding's keys belong to the linter (other helpers add some): open records."""
    defs = schema.json_schema()["$defs"]
    assert defs["LintFinding"]["additionalProperties"] is True
    assert defs["SyncSite"]["additionalProperties"] is False


# ------------------------------------------------------------------------ one pipeline

@pytest.fixture
def counted(monkeypatch):
    """How often each trace file is read and how often the sync pipeline runs."""
    from syncscan.trace import load as load_mod
    from syncscan.trace import pipeline

    calls = {"read": [], "sync_events": 0}
    read, events = load_mod.read_trace, pipeline.sync_events

    def read_trace(path, *a, **kw):
        calls["read"].append(str(path))
        return read(path, *a, **kw)

    def sync_events(*a, **kw):
        calls["sync_events"] += 1
        return events(*a, **kw)

    monkeypatch.setattr(load_mod, "read_trace", read_trace)
    monkeypatch.setattr(pipeline, "sync_events", sync_events)
    return calls


def test_analyze_with_html_reads_and_analyses_the_trace_once(traces_dir, tmp_path, counted, capsys):
    run = traces_dir / "masked_loss_v0_b16_64px"
    assert main(["analyze", str(run), "--format", "json", "--html", str(tmp_path / "r.html"), "--no-lint"]) == 0
    assert len(counted["read"]) == 1 and counted["sync_events"] == 1
    assert (tmp_path / "r.html").read_text().count('class="sync"') == json.loads(capsys.readouterr().out)["total_syncs"]


def test_profile_with_html_reads_and_analyses_each_trace_once(tmp_path, counted, capsys):
    pytest.importorskip("torch")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import torch
        m = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        for _ in range(40):
            loss = m(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
            torch.nonzero(loss > 0)
    """))
    rc = main(["profile", "--wait", "0", "--warmup", "1", "--steps", "2", "--logdir", str(tmp_path / "run"),
               "--html", str(tmp_path / "r.html"), str(script)])
    assert rc == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    traced = [p["trace"] for p in report["passes"].values() if p["trace"]]
    assert len(traced) == 2 and sorted(counted["read"]) == sorted(traced)  # light and detail, once each
    assert counted["sync_events"] == 2
    assert report["html"] == str(tmp_path / "r.html") and (tmp_path / "r.html").is_file()
