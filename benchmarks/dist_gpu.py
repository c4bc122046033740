"""`syncscan profile --nproc-per-node 2` on GPUs, in one command: does the merged report name the
straggler and the rank-0 sync, and is what it says the sync costs the other rank what removing it
saves?

Modes:
- `one-gpu`: 2 ranks sharing one GPU (cuda:0) through gloo: rank 1 does 30 ms of extra host work
  per step, rank 0 logs the loss with `.item()`. Checks: 2 ranks, GPU activity on both, the
  straggler is rank 1, the `.item()` is a measured sync on rank 0 only (SYN101, joined with its
  `if rank == 0:` line). Also `syncscan analyze` on the run's traces. About a minute.
- `nccl`: 2 ranks on 2 GPUs through NCCL, three runs of the same script: (A) straggler and rank-0
  logging, (B) rank-0 logging only, (C) neither. A must name rank 1 and the sync; B's predicted
  cost of the sync to rank 1 is compared with the step time it measured (bare pass, no profiler)
  against C's. About two minutes.
- `--smoke`: `one-gpu`'s run on the CPU, tiny (the CPU test runs this).

    python benchmarks/dist_gpu.py --mode one-gpu --out dist-gpu-out
    python benchmarks/dist_gpu.py --mode nccl --out dist-gpu-out

Writes OUT/<mode>.json (and each run's folder and report under OUT/runs/) and prints a table last.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKLOAD = REPO / "benchmarks" / "dist_workload.py"
SLOW_MS = 30.0


def profile(out: Path, name: str, schedule: list, workload: list, timeout: int = 300) -> dict:
    """Run `syncscan profile --nproc-per-node 2` on the workload; the merged report and timings."""
    run = out / "runs" / name
    report = out / "runs" / f"{name}.json"
    cmd = [sys.executable, "-m", "syncscan", "profile", "--nproc-per-node", "2", *schedule, "--logdir", str(run),
           "--output", str(report), str(WORKLOAD), *workload]
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"})
    (out / "runs" / f"{name}.log").write_text(p.stdout + "\n--- stderr ---\n" + p.stderr)
    if p.returncode != 0 or not report.exists():
        return {"name": name, "error": f"exit {p.returncode}: " + (p.stderr.strip().splitlines() or [""])[-1][:300]}
    r = json.loads(report.read_text())
    cross = r.get("cross_rank") or {}
    item = next((s for s in cross.get("rank_only_syncs") or [] if s.get("outer_op") == "aten::item"), None)
    confirmed = [c for c in (r.get("join") or {}).get("confirmed", []) if "SYN101" in c["lint_codes"]]
    return {
        "name": name, "wall_s": round(time.perf_counter() - t, 1), "run_dir": str(run),
        "ranks": [x["rank"] for x in r.get("ranks") or []],
        "gpu_activity": [x["gpu_activity"] for x in r.get("ranks") or []],
        "bare_ms_per_step": [x["bare_ms_per_step"] for x in r.get("ranks") or []],
        "collectives_on": cross.get("collectives_on"),
        "wait_ms_per_step": cross.get("wait_ms_per_step"),
        "skew_ms_per_step": cross.get("skew_ms_per_step"),
        "straggler": (cross.get("straggler") or {}).get("rank"),
        "rank0_item": item and {k: item[k] for k in ("ranks", "measured", "rule", "file", "line", "next_collective",
                                                     "others_wait_ms_per_step", "own_gpu_idle_ms_per_step",
                                                     "cost_to_others_ms_per_step", "job_saving_ms_per_step")},
        "joined": [{"ranks": c.get("ranks"), "rank_condition": c["findings"][0].get("rank_condition")}
                   for c in confirmed],
        "device": r.get("environment", {}).get("device"),
    }


def analyze_again(run_dir: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "syncscan", "analyze", run_dir, "--format", "json", "--no-lint"],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-300:]}
    r = json.loads(p.stdout)
    return {"ranks": [x["rank"] for x in r["ranks"]], "straggler": (r["cross_rank"]["straggler"] or {}).get("rank")}


def check(cond: bool, what: str, checks: list) -> None:
    checks.append({"check": what, "ok": bool(cond)})


def one_gpu(out: Path, smoke: bool) -> dict:
    device = "cpu" if smoke else "cuda:0"
    schedule = ["--wait", "1", "--warmup", "1", "--steps", "3" if smoke else "8"]
    size = ["--width", "64", "--depth", "2", "--batch", "16"] if smoke else ["--width", "2048", "--depth", "8"]
    a = profile(out, "one-gpu", schedule, ["--device", device, "--backend", "gloo", "--slow-rank", "1",
                                          "--slow-ms", str(SLOW_MS), *size])
    checks: list = []
    if "error" not in a:
        check(a["ranks"] == [0, 1], "the report has ranks 0 and 1", checks)
        check(smoke or all(a["gpu_activity"]), "GPU activity on both ranks", checks)
        check(a["straggler"] == 1, "the straggler is rank 1", checks)
        item = a["rank0_item"] or {}
        check(item.get("ranks") == [0], "the .item() runs on rank 0 only", checks)
        check(smoke or item.get("measured"), "...measured as a sync", checks)
        check(any(j["ranks"] == [0] and (j["rank_condition"] or {}).get("ranks") == "0" for j in a["joined"]),
              "joined with its `if rank == 0:` line", checks)
        again = analyze_again(a["run_dir"])
        a["analyze"] = again
        check(again.get("ranks") == [0, 1] and again.get("straggler") == 1, "syncscan analyze finds the same", checks)
    else:
        check(False, a["error"], checks)
    return {"mode": "one-gpu" + (" (smoke, CPU)" if smoke else ""), "runs": [a], "checks": checks}


def nccl(out: Path) -> dict:
    schedule = ["--wait", "2", "--warmup", "3", "--steps", "10"]
    base = ["--device", "cuda", "--backend", "nccl", "--width", "4096", "--depth", "6", "--batch", "512",
            "--host-ms", "4"]
    a = profile(out, "nccl-straggler-and-log", schedule, [*base, "--slow-rank", "1", "--slow-ms", str(SLOW_MS)])
    b = profile(out, "nccl-log", schedule, base)
    c = profile(out, "nccl-clean", schedule, [*base, "--no-log"])
    checks: list = []
    result = {"mode": "nccl", "runs": [a, b, c], "checks": checks}
    if any("error" in r for r in (a, b, c)):
        check(False, "; ".join(r["error"] for r in (a, b, c) if "error" in r), checks)
        return result
    check(a["collectives_on"] == "gpu", "collectives are NCCL kernels", checks)
    check(a["straggler"] == 1, "the straggler is rank 1", checks)
    check((a["rank0_item"] or {}).get("ranks") == [0] and (a["rank0_item"] or {}).get("measured"),
          "the .item() is a measured sync on rank 0 only", checks)
    item = b["rank0_item"] or {}
    predicted = item.get("cost_to_others_ms_per_step")
    saving = item.get("job_saving_ms_per_step")
    measured = max(b["bare_ms_per_step"]) - max(c["bare_ms_per_step"])
    result["cost"] = {"predicted_ms_per_step": predicted, "measured_ms_per_step": round(measured, 4),
                      "predicted_job_saving_ms_per_step": saving,
                      "straggler_run_job_saving_ms_per_step": (a["rank0_item"] or {}).get("job_saving_ms_per_step"),
                      "rank1_wait_with_log_ms": (b["wait_ms_per_step"] or [None, None])[1],
                      "rank1_wait_clean_ms": (c["wait_ms_per_step"] or [None, None])[1]}
    check(predicted is not None and predicted > 0, "the sync's cost to rank 1 is measured", checks)
    check(saving is not None and abs(saving - measured) <= 0.25 * measured,
          "predicted job saving within 25% of the A/B saving", checks)
    check((a["rank0_item"] or {}).get("job_saving_ms_per_step") == 0.0,
          "behind a straggler, removing the sync saves nothing", checks)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("one-gpu", "nccl"), default="one-gpu")
    ap.add_argument("--smoke", action="store_true", help="one-gpu's run on the CPU, tiny")
    ap.add_argument("--out", type=Path, default=Path("dist-gpu-out"))
    a = ap.parse_args()
    (a.out / "runs").mkdir(parents=True, exist_ok=True)
    result = nccl(a.out) if a.mode == "nccl" else one_gpu(a.out, a.smoke)
    name = "smoke" if a.smoke else a.mode
    (a.out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    for r in result["runs"]:
        if "error" in r:
            print(f"{r['name']}: {r['error']}")
            continue
        print(f"{r['name']}: {r['device'] or 'CPU'}, {r['wall_s']} s; bare ms/step {r['bare_ms_per_step']}; "
              f"wait ms/step {r['wait_ms_per_step']}; straggler {r['straggler']}; rank-0 .item(): {r['rank0_item']}")
    if "cost" in result:
        c = result["cost"]
        print(f"rank-0 .item(): predicted cost to rank 1 {c['predicted_ms_per_step']} ms/step, measured "
              f"{c['measured_ms_per_step']} ms/step (bare step with the log less without); predicted job saving "
              f"{c['predicted_job_saving_ms_per_step']} ms/step; behind the straggler "
              f"{c['straggler_run_job_saving_ms_per_step']} ms/step")
    print(f"\n{'check':60} ok")
    for c in result["checks"]:
        print(f"{c['check'][:60]:60} {'yes' if c['ok'] else 'NO'}")
    if not all(c["ok"] for c in result["checks"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
