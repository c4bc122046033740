"""Check `syncscan profile`'s predicted saving against the saving measured by A/B timing.

For each fixture pair (naive -> fixed) and size: run `syncscan profile --format json` on the
unmodified naive script (its `prediction` block: what removing the syncs should save per step,
with the regime that decides it), then time naive and fixed without any profiler, interleaved
in one process (A B A B ..., medians; benchmarks/workloads.py's method), and print predicted vs
measured saving and the error.

    python benchmarks/estimate.py [--json PATH] [--runs DIR]     # on a CUDA GPU
    python benchmarks/estimate.py --cpu-smoke                   # no GPU: tiny sizes, checks plumbing
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

import workloads  # noqa: E402

# (label, naive fixture, fixed fixture, make_step params, script arguments, timed steps, repeats)
GPU_CASES = [
    ("masked loss 64x64, batch 32", "masked_loss_naive", "masked_loss_fixed",
     dict(batch=32, size=64), ["--batch", "32", "--size", "64"], 50, 15),
    ("masked loss 256x256, batch 32", "masked_loss_naive", "masked_loss_fixed",
     dict(batch=32, size=256), ["--batch", "32", "--size", "256"], 10, 9),
    ("classic loop 32x32, batch 256", "classic_loop_naive", "classic_loop_fixed",
     dict(batch=256, size=32, workers=4), ["--batch", "256", "--size", "32", "--workers", "4"], 50, 11),
]
CPU_CASES = [
    ("masked loss 32x32, batch 2 (CPU smoke)", "masked_loss_naive", "masked_loss_fixed",
     dict(batch=2, size=32), ["--batch", "2", "--size", "32"], 2, 2),
]


def profile(fixture: str, args: list[str], device: str, runs: Path, quick: bool) -> dict:
    out = runs / f"{fixture}.json"
    cmd = [sys.executable, "-m", "syncscan", "profile", "--format", "json", "--output", str(out),
           "--logdir", str(runs / fixture)]
    if quick:
        cmd += ["--wait", "0", "--warmup", "1", "--steps", "2"]
    cmd += [str(REPO / "fixtures" / f"{fixture}.py"), "--device", device, *args, "--steps", "1000"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if not out.is_file():
        raise SystemExit(f"estimate: syncscan profile failed on {fixture} (exit {proc.returncode}): "
                         f"{proc.stderr.strip().splitlines()[-1:] }")
    return json.loads(out.read_text())


def ab(naive: str, fixed: str, params: dict, steps: int, repeats: int, device: torch.device) -> dict:
    case = workloads.Case("estimate", "", params, [("naive", naive, {}), ("fixed", fixed, {})],
                          steps=steps, repeats=repeats, warmup=5, drain=10 if params.get("workers") else 0)
    res = workloads.run_case(case, device)
    workloads.release_memory()
    return {k: {"median_ms": v["median_ms"], "q1_ms": v["q1_ms"], "q3_ms": v["q3_ms"]} for k, v in res.items()}


def row(label: str, report: dict, timing: dict) -> dict:
    pred = report.get("prediction") or {}
    naive, fixed = timing["naive"]["median_ms"], timing["fixed"]["median_ms"]
    measured = naive - fixed
    p = pred.get("saving_ms_per_step")
    lo_hi = pred.get("saving_ms_per_step_range")
    return dict(case=label, regime=pred.get("regime"), predicted_ms=p, predicted_range_ms=lo_hi,
                basis=pred.get("basis"), measured_ms=round(measured, 4), naive_ms=round(naive, 4),
                fixed_ms=round(fixed, 4),
                error_pct=None if p is None or not measured else round(100 * (p - measured) / measured, 1),
                within_range=None if not lo_hi else lo_hi[0] <= measured <= lo_hi[1],
                syncs_per_step=(report.get("sync_summary") or {}).get("syncs_per_step"),
                prediction=pred, perturbation=report.get("perturbation"))


def table(rows: list[dict]) -> str:
    out = ["| case | regime | predicted saving (ms/step) | range | measured saving (naive → fixed) | error |",
           "|---|---|---:|---|---|---:|"]
    for r in rows:
        rng = "–".join(f"{x:.2f}" for x in r["predicted_range_ms"]) if r["predicted_range_ms"] else ""
        p = "" if r["predicted_ms"] is None else f"{r['predicted_ms']:.2f}"
        e = "" if r["error_pct"] is None else f"{r['error_pct']:+.0f}%"
        out.append(f"| {r['case']} | {r['regime']} | {p} | {rng} | {r['measured_ms']:.2f} "
                   f"({r['naive_ms']:.2f} → {r['fixed_ms']:.2f}) | {e} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    ap.add_argument("--runs", metavar="DIR", help="where the profile runs go (default: a temp folder)")
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny CPU run: checks the plumbing only")
    args = ap.parse_args(argv)
    if not args.cpu_smoke and not torch.cuda.is_available():
        print("estimate: no CUDA GPU (use --cpu-smoke to check the plumbing)", file=sys.stderr)
        return 2
    device = torch.device("cpu" if args.cpu_smoke else "cuda")
    runs = Path(args.runs or tempfile.mkdtemp(prefix="syncscan-estimate-"))
    runs.mkdir(parents=True, exist_ok=True)
    rows = []
    for label, naive, fixed, params, script_args, steps, repeats in (CPU_CASES if args.cpu_smoke else GPU_CASES):
        report = profile(naive, script_args, device.type, runs / label.split(",")[0].replace(" ", "_"),
                         args.cpu_smoke)
        rows.append(row(label, report, ab(naive, fixed, params, steps, repeats, device)))
        print(json.dumps({k: rows[-1][k] for k in ("case", "regime", "predicted_ms", "predicted_range_ms",
                                                    "measured_ms", "error_pct")}), flush=True)
    print()
    print(table(rows))
    if args.json:
        env = workloads.environment(device)
        env["date"] = datetime.date.today().isoformat()
        Path(args.json).write_text(json.dumps({"environment": env, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
