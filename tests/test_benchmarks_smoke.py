"""The GPU benchmarks' plumbing, on the CPU at tiny sizes (their figures need a GPU)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_benchmark

pytest.importorskip("torch")
pytest.importorskip("torchvision")
REPO = Path(__file__).resolve().parents[1]


def test_autofix_benchmark_times_the_auto_fixed_loss(tmp_path):
    out = tmp_path / "a.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "autofix.py"), "--cpu-smoke", "--json", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    variants = json.loads(out.read_text())["results"][0]["variants"]
    assert set(variants) == {"naive", "autofixed", "fixed"}
    assert all(v["median_ms"] > 0 for v in variants.values())


def test_estimate_benchmark_pairs_a_profile_with_ab_timing(tmp_path):
    out = tmp_path / "e.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "estimate.py"), "--cpu-smoke", "--json", str(out),
                        "--runs", str(tmp_path / "runs")], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    row = json.loads(out.read_text())["rows"][0]
    assert row["naive_ms"] > 0 and row["fixed_ms"] > 0
    assert row["measured_ms"] == pytest.approx(row["naive_ms"] - row["fixed_ms"], abs=1e-3)
    assert list((tmp_path / "runs").rglob("report.json"))  # the profile run was written


def test_estimate_benchmark_replays_the_recorded_runs_without_a_gpu():
    """`--replay`: the table of docs/profile-gpu.md from the exported H100 runs, recomputed."""
    data = REPO / "tests" / "data" / "estimate"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "estimate.py"), "--replay", str(data)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    rows = [line for line in p.stdout.splitlines() if line.startswith("| ") and "batch" in line]
    cases = {c["case"] for c in json.loads((data / "measured.json").read_text())["cases"]}
    assert len(rows) == len(cases) == 9
    assert all(line.count("%") == 2 for line in rows)


def test_perturbation_benchmark_reports_light_over_bare_per_recipe(tmp_path):
    out = tmp_path / "p.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "perturbation.py"), "--cpu-smoke",
                        "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert {r["recipe"] for r in rows} == {"cuda", "lean", "full"}
    assert all(r["median_ratio"] > 0 and r["median_bare_ms"] > 0 for r in rows)
    assert p.stdout.splitlines()[-1].startswith("| masked_loss_naive |")


def test_perturbation_check_table_puts_the_two_recipes_side_by_side():
    bench = load_benchmark("perturbation")
    site = {"op": "aten::nonzero", "outer_op": "aten::index", "scope": "loss", "line": 60, "per_step": 2.0,
            "gpu_idle_ms": 0.2, "saving_rewrite_ms": 0.1}
    ops = {"source": "detail", "steps": 20, "exact_steps": 19, "calls": 15800, "anchored_calls": 15790, "ops": 1,
           "scopes": 1}
    row = {"light_vs_bare": 1.1, "syncs_per_step": 6.0, "gpu_idle_ms_per_step": 1.2, "saving_syncs_ms_per_step": 0.3,
           "saving_ms_per_step": 0.6, "replay_fit": 0.01, "sites": [site]}
    text = bench.check_table({"script": "masked_loss_naive", "cuda": {**row, "light_ops": ops},
                              "lean": {**row, "light_ops": None}})
    assert "| cuda | 1.1 | 19/20 steps same calls, 15790/15800 calls paired | 6.0 |" in text
    assert text.splitlines()[-1].endswith("the same in both: yes")
    other = {**row, "light_ops": None, "sites": [{**site, "per_step": 1.0}]}
    text = bench.check_table({"script": "x", "cuda": {"error": "exit 1: boom"}, "lean": other})
    assert "| cuda | failed: exit 1: boom |" in text and "the same in both" not in text
    text = bench.check_table({"script": "x", "cuda": {**row, "light_ops": ops}, "lean": other})
    assert text.splitlines()[-1].endswith("the same in both: NO")


def test_light_graft_benchmark_compares_grafted_and_recorded_analyses():
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / "light_graft.py"), "--cases", "1"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    (row,) = [line for line in out.stdout.splitlines() if line.startswith("| classic loop")]
    assert "| 12 | 12/12 | 0.0000 ms |" in row  # 4 runs, each given the ops of the 3 others
