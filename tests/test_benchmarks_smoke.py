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


def test_fix_proof_runs_a_projects_tests_before_and_after_its_fixes(tmp_path):
    """benchmarks/fix_proof.py on its made-up project: fixed by the CLI, its own tests run on both trees."""
    out = tmp_path / "p.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "fix_proof.py"), "--smoke", "--work",
                        str(tmp_path / "work"), "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    r = json.loads(out.read_text())["results"][0]
    assert r["fix"]["fixed_syncs"] == 3 and r["changed_modules"] == ["smokeproj/losses.py"]
    assert r["tests"] == ["tests/test_losses.py"] and r["covers"] == {"tests/test_losses.py": ["smokeproj/losses.py"]}
    assert r["before"] == r["after"] == {"passed": 2, "failed": 0, "skipped": 0} and r["broke"] == []
    fixed = (tmp_path / "work" / "smokeproj" / "after" / "smokeproj" / "losses.py").read_text()
    assert "ignore_index=-100" in fixed and "[keep]" not in fixed
    assert "| smokeproj | 3 (1) | 1 | 2 / 0 / 0 | 2 / 0 / 0 | 0 |" in p.stdout


def test_compile_benchmark_times_every_mode_and_profiles_the_naive_fixture(tmp_path):
    out = tmp_path / "c.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "compile_bench.py"), "--cpu-smoke", "--json",
                        str(out), "--out", str(tmp_path / "out"), "--configs", "2x16"],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads(out.read_text())
    cells = {(c["variant"], c["mode"]): c for c in data["cells"]}
    assert set(cells) == {(v, m) for v in ("naive", "fixed") for m in ("eager", "default", "reduce-overhead")}
    assert all(len(c["ms_per_step"]) == 2 and min(c["ms_per_step"]) > 0 for c in cells.values())
    assert cells[("naive", "default")]["graph_break_lines"] == [58, 61, 65]  # nonzero, unique, masked CE
    assert cells[("fixed", "default")]["graph_breaks"] == 0 and cells[("fixed", "default")]["compilations"] == 1
    assert cells[("naive", "eager")]["compilations"] == 0
    prof = data["profile_naive_reduce_overhead"]
    assert {b["line"] for b in prof["graph_breaks"]} == {58, 61, 65}
    assert "| 2, 16x16 | naive |" in p.stdout and "| 2, 16x16 | fixed |" in p.stdout
    assert (tmp_path / "out" / "profile.html").is_file()


def test_compile_benchmark_rejects_a_bad_config_list():
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "compile_bench.py"), "--cpu-smoke",
                        "--configs", "16by64"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "--configs 16by64" in p.stderr and "Traceback" not in p.stderr
def test_input_pipeline_benchmark_pairs_profiles_with_steady_state_timing(tmp_path):
    """benchmarks/input_pipeline.py: the augmentation and data-bound cases at tiny sizes (their
    verdicts need a GPU: on a CPU nothing is predicted)."""
    out = tmp_path / "i.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "input_pipeline.py"), "--cpu-smoke", "--json",
                        str(out), "--runs", str(tmp_path / "runs")], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    rows = json.loads(out.read_text())["rows"]
    assert [r["kind"] for r in rows] == ["augmentation", "data-bound"]
    timing = rows[0]["timing"]
    assert set(timing) == {"cpu", "cpu_item", "gpu"} and all(v["median_ms"] > 0 for v in timing.values())
    assert rows[1]["measured_ms"] == pytest.approx(timing["cpu_item"]["median_ms"] - timing["cpu"]["median_ms"],
                                                   abs=1e-2)
    reports = [json.loads(r.read_text()) for r in (tmp_path / "runs").rglob("report.json")]
    assert reports and all(r["input_pipeline"]["loaders"][0]["workers"] == 1 for r in reports)
    assert "| data-bound: augment_cpu + loss.item() -> augment_cpu |" in p.stdout


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


def test_input_pipeline_benchmark_rejects_an_unknown_case():
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "input_pipeline.py"), "--cpu-smoke",
                        "--cases", "augmentation,bogus"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "--cases: unknown bogus" in p.stderr and "Traceback" not in p.stderr


def test_cupti_cost_benchmark_tables_each_variant_against_bare(tmp_path):
    out = tmp_path / "c.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "cupti_cost.py"), "--cpu-smoke", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = {r["variant"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"bare", "lean"} and rows["bare"]["vs_bare"] == 1.0
    assert rows["lean"]["events"] > 0 and rows["lean"]["ms_per_step"] > 0
    assert "x bare" in p.stdout


def test_normal_sync_benchmark_counts_the_host_reads_the_rules_claim(tmp_path):
    """SYN409/SYN405's claims on the CPU: torch.normal with a tensor std, Normal.sample(), a validating
    construction, log_prob and a subclass's super().__init__ read the host; rsample and the rewrites do not."""
    out = tmp_path / "n.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "normal_sync.py"), "--smoke", "--reps", "3",
                        "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {r["case"]: r for r in json.loads(out.read_text())["cases"]}
    assert rows["torch.normal(m, s)"]["host_reads"] == 2 and rows["torch.normal(m, 1.0)"]["host_reads"] == 0
    assert rows["Normal(m, s, validate_args=False).sample()"]["host_reads"] > 0
    assert rows["Normal(m, s, validate_args=False).rsample()"]["host_reads"] == 0
    assert rows["subclass super().__init__ (validate_args=None)"]["host_reads"] > 0
    assert all(r["as_expected"] for r in rows.values()) and "| case | rule |" in p.stdout


def test_scalar_args_benchmark_counts_the_host_reads_syn109_claims(tmp_path):
    """SYN109's claims on the CPU: a 0-dim tensor in a `Scalar`-only argument (`alpha=`, `value=`, a
    slope) is read on the host; one in an argument with a `Tensor` overload (`lerp`'s weight,
    `clamp`'s bounds) and the rewrites are not; the local schemas type them so."""
    out = tmp_path / "s.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "scalar_args_sync.py"), "--smoke",
                        "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    data = json.loads(out.read_text())
    rows = {r["case"]: r for r in data["cases"]}
    assert rows["d.add_(v, alpha=t)"]["host_reads"] == 1 and rows["torch.addr(m, v, v, alpha=t)"]["host_reads"] == 1
    assert rows["torch.lerp(v, d, t)"]["host_reads"] == 0 and rows["rewrite: d.add_(v * -t)"]["host_reads"] == 0
    assert all(r["as_expected"] for r in rows.values()) and "| case | rule |" in p.stdout
    types = {(s["op"], s["arg"]): s["types"] for s in data["schemas"]}
    assert types[("add", "alpha")] == ["number"] and "Tensor" in types[("lerp", "weight")]
