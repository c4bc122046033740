"""Check `syncscan profile`'s predicted saving against the saving measured by A/B timing.

For each fixture pair (naive -> fixed) and size: run `syncscan profile --format json` on the
unmodified naive script (its `prediction` block: the replay of the light trace at the bare
pass's speed, with the syncs removed and with the rewrites), then time naive and fixed without
any profiler, interleaved in one process (A B A B ..., medians; benchmarks/workloads.py's
method), and print predicted vs measured saving and the error. `--repeat N` does it N times
(fresh profile processes each time) and the table gives the medians. The cases marked
held-out were not looked at while the estimator was built.

    python benchmarks/estimate.py [--json PATH] [--runs DIR] [--repeat N] [--held-out]
                                  [--export-tests DIR]          # on a CUDA GPU
    python benchmarks/estimate.py --cpu-smoke                   # no GPU: tiny sizes, checks plumbing

`--export-tests DIR` copies each run's light trace and what was measured with it into DIR
(tests/data/estimate: tests/test_trace_replay.py checks the prediction on them without a GPU);
a light trace of CUDA activity only (`--light-pass cuda`, the default) goes with the CPU ops and
runtime calls of its run's detailed trace (`ops_trace`), which the tests graft onto it as
`syncscan profile` does (syncscan.trace.graft).
`--replay DIR` needs no GPU: it predicts again from such a folder with the current code and
prints, per case, the medians at the profile's bare speed and at the A/B's naive speed.

    python benchmarks/estimate.py --replay tests/data/estimate
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import re
import statistics
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
# not used while the estimator was developed: the check that it generalises. The first three
# were measured once before the last change to the model (SYN305's rewrite keeps unique's sort);
# the last three were added after it, and first run after it.
HELD_OUT_CASES = [
    ("held-out: masked loss 128x128, batch 16", "masked_loss_naive", "masked_loss_fixed",
     dict(batch=16, size=128), ["--batch", "16", "--size", "128"], 30, 11),
    ("held-out: masked loss 256x256, batch 8", "masked_loss_naive", "masked_loss_fixed",
     dict(batch=8, size=256), ["--batch", "8", "--size", "256"], 20, 9),
    ("held-out: classic loop 32x32, batch 64", "classic_loop_naive", "classic_loop_fixed",
     dict(batch=64, size=32, workers=4), ["--batch", "64", "--size", "32", "--workers", "4"], 50, 11),
    ("held-out: masked loss 96x96, batch 32", "masked_loss_naive", "masked_loss_fixed",
     dict(batch=32, size=96), ["--batch", "32", "--size", "96"], 30, 11),
    ("held-out: masked loss 192x192, batch 16", "masked_loss_naive", "masked_loss_fixed",
     dict(batch=16, size=192), ["--batch", "16", "--size", "192"], 20, 9),
    ("held-out: classic loop 32x32, batch 128", "classic_loop_naive", "classic_loop_fixed",
     dict(batch=128, size=32, workers=4), ["--batch", "128", "--size", "32", "--workers", "4"], 50, 11),
]
CPU_CASES = [
    ("masked loss 32x32, batch 2 (CPU smoke)", "masked_loss_naive", "masked_loss_fixed",
     dict(batch=2, size=32), ["--batch", "2", "--size", "32"], 2, 2),
]


def profile(fixture: str, args: list[str], device: str, runs: Path, quick: bool, script: Path | None = None,
            device_flag: bool = True) -> dict:
    """`syncscan profile --format json` on a fixture (or `script`, named `fixture`); with
    `device_flag`, the fixtures' own --device and --steps (enough steps for the schedule)."""
    out = runs / f"{fixture}.json"
    cmd = [sys.executable, "-m", "syncscan", "profile", "--format", "json", "--output", str(out),
           "--logdir", str(runs / fixture)]
    if quick:
        cmd += ["--wait", "0", "--warmup", "1", "--steps", "2"]
    own = (["--device", device], ["--steps", "1000"]) if device_flag else ([], [])
    cmd += [str(script or REPO / "fixtures" / f"{fixture}.py"), *own[0], *args, *own[1]]
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


def _error(p, m):
    return None if p is None or not m else round(100 * (p - m) / m, 1)


def row(label: str, report: dict, timing: dict) -> dict:
    pred = report.get("prediction") or {}
    naive, fixed = timing["naive"]["median_ms"], timing["fixed"]["median_ms"]
    measured = naive - fixed
    p = pred.get("saving_ms_per_step")
    return dict(case=label, regime=pred.get("regime"), method=pred.get("method"), predicted_ms=p,
                predicted_syncs_ms=pred.get("saving_syncs_ms_per_step"), basis=pred.get("basis"),
                measured_ms=round(measured, 4), naive_ms=round(naive, 4), fixed_ms=round(fixed, 4),
                error_pct=_error(p, measured), bare_ms=(report.get("perturbation") or {}).get("bare_ms_per_step"),
                replay=report.get("replay"), run_dir=report.get("run_dir"),
                syncs_per_step=(report.get("sync_summary") or {}).get("syncs_per_step"),
                prediction=pred, perturbation=report.get("perturbation"), light_ops=report.get("light_ops"))


def medians(rows: list[dict]) -> list[dict]:
    """One row per case: the medians over its repeats."""
    by_case: dict[str, list[dict]] = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    out = []
    for case, rs in by_case.items():
        def med(key):
            vals = [r[key] for r in rs if r.get(key) is not None]
            return statistics.median(vals) if vals else None
        p, m = med("predicted_ms"), med("measured_ms")
        out.append(dict(case=case, regime=rs[0]["regime"], runs=len(rs), predicted_ms=p,
                        predicted_syncs_ms=med("predicted_syncs_ms"), measured_ms=m, naive_ms=med("naive_ms"),
                        fixed_ms=med("fixed_ms"), error_pct=_error(p, m),
                        predicted_runs=[r["predicted_ms"] for r in rs], measured_runs=[r["measured_ms"] for r in rs]))
    return out


def table(rows: list[dict]) -> str:
    out = ["| case | regime | runs | predicted: syncs alone | predicted: with the rewrites "
           "| measured saving (naive → fixed) | error |", "|---|---|---:|---:|---:|---|---:|"]
    f = lambda x: "" if x is None else f"{x:.2f}"  # noqa: E731
    for r in rows:
        e = "" if r["error_pct"] is None else f"{r['error_pct']:+.0f}%"
        out.append(f"| {r['case']} | {r['regime']} | {r['runs']} | {f(r['predicted_syncs_ms'])} "
                   f"| {f(r['predicted_ms'])} | {f(r['measured_ms'])} ({f(r['naive_ms'])} → {f(r['fixed_ms'])}) "
                   f"| {e} |")
    return "\n".join(out)


# what a test copy of a trace leaves out: flow events and kernel launch details, which the
# analysis does not read (slim() checks that the copy analyses the same)
DROP_CATEGORIES = {"ac2g", "fwdbwd"}
KERNEL_ARGS = ("External id", "device", "stream", "correlation")


def slim(src: Path, dst: Path, bare_ms: float) -> None:
    from syncscan.trace import analyze, load_trace

    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    events = [e for e in doc["traceEvents"] if e.get("cat") not in DROP_CATEGORIES]
    for e in events:
        if e.get("cat") == "kernel" and isinstance(e.get("args"), dict):
            e["args"] = {k: e["args"][k] for k in KERNEL_ARGS if k in e["args"]}
    doc["traceEvents"] = events
    with gzip.open(dst, "wt", compresslevel=9) as f:
        json.dump(doc, f, separators=(",", ":"))
    before = analyze(load_trace(str(src)), step_ms=bare_ms).report
    after = analyze(load_trace(str(dst)), step_ms=bare_ms).report
    if before["replay"] != after["replay"] or before["syncs"] != after["syncs"]:
        raise SystemExit(f"estimate: the slim copy of {src} does not analyse the same")


# what the copy of a detailed trace keeps for grafting its ops onto the light trace
OPS_CATEGORIES = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}


def slim_ops(src: Path, dst: Path) -> None:
    """The detailed trace's CPU ops, annotations and runtime calls (and its step marks)."""
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") in OPS_CATEGORIES]
    with gzip.open(dst, "wt", compresslevel=9) as f:
        json.dump(doc, f, separators=(",", ":"))


def load_exported(folder: Path, case: dict):
    """An exported light trace, with its detailed pass's ops grafted when it has none of its own."""
    from syncscan.trace import load_trace
    from syncscan.trace.graft import graft

    trace = load_trace(str(folder / case["trace"]))
    if case.get("ops_trace"):
        graft(trace, load_trace(str(folder / case["ops_trace"])))
    return trace


def export_tests(rows: list[dict], dest: Path) -> None:
    """Each run's light trace (slimmed) and what was measured with it, added to DEST's
    measured.json, for tests/test_trace_replay.py."""
    dest.mkdir(parents=True, exist_ok=True)
    index = dest / "measured.json"
    cases = json.loads(index.read_text())["cases"] if index.is_file() else []
    session = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    for i, r in enumerate(rows):
        src = Path(r["run_dir"]) / "traces" / "light.trace.json.gz"
        if not src.is_file() or r["bare_ms"] is None:
            continue
        name = re.sub(r"[^A-Za-z0-9]+", "_", r["case"]).strip("_") + f"_{session}_{i}"
        slim(src, dest / f"{name}.trace.json.gz", r["bare_ms"])
        ops = {}
        detail = Path(r["run_dir"]) / "traces" / "detail.trace.json.gz"
        if r.get("light_ops") is not None and detail.is_file():
            slim_ops(detail, dest / f"{name}.ops.trace.json.gz")
            ops = {"ops_trace": f"{name}.ops.trace.json.gz"}
        cases.append(dict(name=name, case=r["case"], session=session, trace=f"{name}.trace.json.gz", **ops,
                          bare_ms_per_step=r["bare_ms"], naive_ms=r["naive_ms"], fixed_ms=r["fixed_ms"],
                          measured_saving_ms=r["measured_ms"], predicted_when_recorded_ms=r["predicted_ms"]))
    index.write_text(json.dumps({"source": "benchmarks/estimate.py --export-tests", "cases": cases}, indent=1))


def replay_table(folder: Path) -> str:
    """The prediction again, from exported traces: medians per case at both host speeds."""
    from syncscan.trace import analyze

    runs: dict[str, list[tuple]] = {}
    for c in json.loads((folder / "measured.json").read_text())["cases"]:
        trace = load_exported(folder, c)
        at_bare = analyze(trace, step_ms=c["bare_ms_per_step"]).report["replay"]
        at_ab = analyze(trace, step_ms=c["naive_ms"]).report["replay"]
        runs.setdefault(c["case"], []).append((at_bare["saving_syncs_ms"], at_bare["saving_rewrites_ms"],
                                               at_ab["saving_rewrites_ms"], c["measured_saving_ms"]))
    f = lambda x: f"{x:.2f}"  # noqa: E731
    out = ["| case | runs | syncs alone | with the rewrites (profile's bare speed) | error | with the rewrites "
           "(A/B's speed) | error | measured, median (runs) |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for case, rs in runs.items():
        syncs, bare, ab, meas = (statistics.median(r[k] for r in rs) for k in range(4))
        out.append(f"| {case} | {len(rs)} | {f(syncs)} | {f(bare)} | {_error(bare, meas):+.0f}% | {f(ab)} | "
                   f"{_error(ab, meas):+.0f}% | {f(meas)} ({', '.join(f(r[3]) for r in rs)}) |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    ap.add_argument("--runs", metavar="DIR", help="where the profile runs go (default: a temp folder)")
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny CPU run: checks the plumbing only")
    ap.add_argument("--repeat", type=int, default=1, help="profile + A/B this many times per case (medians)")
    ap.add_argument("--held-out", action="store_true", help="also the cases not used to build the estimator")
    ap.add_argument("--export-tests", metavar="DIR", help="copy the light traces and measurements here")
    ap.add_argument("--replay", metavar="DIR", help="no GPU: predict again from an --export-tests folder")
    args = ap.parse_args(argv)
    if args.replay:
        print(replay_table(Path(args.replay)))
        return 0
    if not args.cpu_smoke and not torch.cuda.is_available():
        print("estimate: no CUDA GPU (use --cpu-smoke to check the plumbing)", file=sys.stderr)
        return 2
    device = torch.device("cpu" if args.cpu_smoke else "cuda")
    runs = Path(args.runs or tempfile.mkdtemp(prefix="syncscan-estimate-"))
    runs.mkdir(parents=True, exist_ok=True)
    cases = CPU_CASES if args.cpu_smoke else GPU_CASES + (HELD_OUT_CASES if args.held_out else [])
    rows = []
    for k in range(args.repeat):
        for label, naive, fixed, params, script_args, steps, repeats in cases:
            folder = label.split(",")[0].replace(":", "").replace(" ", "_") + f"_b{params['batch']}_r{k}"
            report = profile(naive, script_args, device.type, runs / folder, args.cpu_smoke)
            rows.append(row(label, report, ab(naive, fixed, params, steps, repeats, device)))
            print(json.dumps({key: rows[-1][key] for key in ("case", "regime", "predicted_syncs_ms", "predicted_ms",
                                                            "measured_ms", "error_pct")}), flush=True)
    summary = medians(rows)
    print()
    print(table(summary))
    if args.json:
        env = workloads.environment(device)
        env["date"] = datetime.date.today().isoformat()
        Path(args.json).write_text(json.dumps({"environment": env, "summary": summary, "rows": rows}, indent=1))
    if args.export_tests:
        export_tests(rows, Path(args.export_tests))
    return 0


if __name__ == "__main__":
    sys.exit(main())
