"""The multi-rank benchmarks' plumbing on the CPU at tiny sizes: the GPU check (benchmarks/dist_gpu.py),
the scale projection (dist_scale.py) and the comparison with HolisticTraceAnalysis (dist_hta.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(script: str, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_gpu_check_runs_two_ranks_and_checks_the_report(tmp_path):
    pytest.importorskip("torch")
    p = _run("dist_gpu.py", "--smoke", "--out", str(tmp_path))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    result = json.loads((tmp_path / "smoke.json").read_text())
    assert result["checks"] and all(c["ok"] for c in result["checks"])
    (run,) = result["runs"]
    assert run["ranks"] == [0, 1] and run["straggler"] == 1 and run["rank0_item"]["ranks"] == [0]
    assert p.stdout.rstrip().splitlines()[-1].endswith("yes")  # the table comes last


def test_scale_benchmark_finds_the_built_straggler_and_waits(tmp_path):
    out = tmp_path / "s.json"
    p = _run("dist_scale.py", "--ranks", "4", "--smoke", "--out", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    (row,) = json.loads(out.read_text())["rows"]
    assert row["correct"] and row["ranks"] == 4
    assert row["analysis_ms_per_rank"] > 0 and row["peak_rss_mib"] > 0


def test_hta_comparison_runs_syncscans_side_and_says_what_hta_did(tmp_path):
    out = tmp_path / "h.json"
    p = _run("dist_hta.py", "--ranks", "2", "--smoke", "--out", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert [r["name"].split(",")[0] for r in rows] == ["synthetic", "synthetic"]
    for r in rows:
        assert r["syncscan"]["straggler"] == r["truth"]["straggler"] == 1
        assert r["syncscan"]["rank_only_syncs"][0]["ranks"] == [0]
        assert "total_s" in r["hta"] or "error" in r["hta"]  # HTA's numbers, or why there are none
