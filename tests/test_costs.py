"""`syncscan lint --costs REPORT.json PATH...`: findings annotated and ranked by what their syncs
cost in a saved profile/analyze report; a missing or broken report is a one-line error."""

from __future__ import annotations

import json
import re

import pytest

from syncscan.cli import main

from conftest import FIXTURES
from test_join import NAIVE, _line, analyze_json, naive_sites

LINE = re.compile(r"^(?P<path>\S+):(?P<line>\d+):\d+: (?P<code>SYN\d+) \[(?P<label>[^\]]*)\]")


@pytest.fixture
def measured_report(traces_dir, tmp_path):
    """The recorded naive-loss trace analysed with the fixture's lines, saved as JSON."""
    report = analyze_json(traces_dir, tmp_path, "--source-sites", naive_sites(tmp_path))
    return tmp_path / "an.json", report


def lint(capsys, *args):
    rc = main(["lint", "--no-cache", *map(str, args)])
    out, err = capsys.readouterr()
    return rc, out, err


def test_text_shows_the_cost_per_finding_and_ranks_by_the_predicted_saving(measured_report, capsys):
    path, report = measured_report
    other = FIXTURES / "classic_loop_naive.py"  # not in the profile: listed after, unannotated
    rc, out, _ = lint(capsys, "--costs", path, "--no-show-source", NAIVE, other)
    assert rc == 1
    rows = [m.groupdict() for m in map(LINE.match, out.splitlines()) if m]
    naive = [r for r in rows if r["path"].endswith("masked_loss_naive.py")]
    assert naive and all("ms/step GPU idle" in r["label"] for r in naive)
    assert rows[:len(naive)] == naive  # the profiled findings first
    assert all(r["label"] == "hot" for r in rows[len(naive):])
    costs = [float(r["label"].split(", ")[1].split(" ms")[0]) for r in naive]
    # ranked by what the replay says each rewrite saves (the report has a replay)
    savings = [float(re.search(r"rewrite (saves|costs) (-?[\d.]+)", r["label"]).group(2))
               * (1 if "saves" in r["label"] else -1) for r in naive]
    assert savings == sorted(savings, reverse=True)
    # the masked cross-entropy pays for both masks and their backward: the sum of those sites
    n = len(report["steps"])
    mask_sites = [s for s in report["syncs"] if "aten::index" in (s["outer_op"], s.get("forward_op"))]
    top = naive[0]
    assert top["code"] == "SYN306" and int(top["line"]) == _line(NAIVE, "pred[mask]")
    assert costs[0] == pytest.approx(sum(s["gpu_idle_ms"] for s in mask_sites) / n, abs=1.5e-3)
    assert f"Costs from {path}: {len(naive)} synced in the profile" in out


def test_json_carries_a_cost_object(measured_report, capsys):
    path, _ = measured_report
    rc, out, _ = lint(capsys, "--costs", path, "--format", "json", NAIVE)
    findings = json.loads(out)
    assert rc == 1 and findings
    for f in findings:
        c = f["cost"]
        assert c["status"] == "confirmed" and c["measured"] is True
        assert c["gpu_idle_ms_per_step"] > 0 and c["syncs_per_step"] >= 1 and c["match"] in ("statement", "forward")
        assert c["saving_rewrite_ms_per_step"] is not None and c["saving_syncs_ms_per_step"] is not None
    assert [f["cost"]["saving_rewrite_ms_per_step"] for f in findings] == sorted(
        (f["cost"]["saving_rewrite_ms_per_step"] for f in findings), reverse=True)


def test_report_of_a_run_without_gpu(tmp_path, capsys):
    """A CPU profile lists the ops that would sync, by name: counts, no costs."""
    src = tmp_path / "train.py"
    src.write_text("import torch\n\ndef loss_fn(x, m):\n    a = torch.nonzero(m)\n"
                   "    b = torch.unique(x)\n    return a, b\n\nfor _ in range(3):\n    loss_fn(1, 2)\n")
    would = [{"file": "train.py", "line": 3, "line_kind": "def", "op": "aten::nonzero",
              "outer_op": "aten::nonzero_numpy", "rule": "SYN301", "count": 4, "phase": "forward"}]
    report = tmp_path / "cpu.json"
    report.write_text(json.dumps({"gpu_activity": False, "steps": [{}, {}], "syncs": [], "would_sync": would}))
    rc, out, _ = lint(capsys, "--costs", report, "--all", "--no-show-source", src)
    rows = [m.groupdict() for m in map(LINE.match, out.splitlines()) if m]
    assert [(r["code"], r["label"].split(", ", 1)[1]) for r in rows] == [
        ("SYN301", "would sync 2/step"), ("SYN305", "not among the ops that would sync")]


@pytest.mark.parametrize("content, why", [
    (None, "no such file"),
    ("{not json", "not a syncscan JSON report"),
    ('{"steps": []}', "no 'syncs' list"),
    ("[1, 2]", "no 'syncs' list"),
])
def test_missing_or_broken_report_is_a_one_line_error(tmp_path, capsys, content, why):
    report = tmp_path / "r.json"
    if content is not None:
        report.write_text(content)
    rc, out, err = lint(capsys, "--costs", report, NAIVE)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("syncscan: error: ") and why in err


def test_a_folder_is_not_a_report(tmp_path, capsys):
    rc, out, err = lint(capsys, "--costs", tmp_path, NAIVE)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "is a folder" in err
