"""The masked-loss fixtures under torch.compile: step time eager / default / reduce-overhead, naive
and fixed, with the graph breaks and CUDA-graph skips torch reported; then `syncscan profile` of
the naive fixture compiled with reduce-overhead, naming its breaks and the CUDA-graph skip.

Issue 17's method: model and loss compiled together (the fixtures' `--compile MODE`), ms/step the
mean of 30 steps after 10 warm-up steps (which include compiling), each cell timed twice (two
windows of 30 steps, back to back), at batch 16 64x64 and batch 32 256x256. Each cell starts from
`torch._dynamo.reset()` with a fresh model, so its compile counts are its own.

    python benchmarks/compile_bench.py [--json PATH] [--out DIR] [--max-seconds S]   # a CUDA GPU
    python benchmarks/compile_bench.py --configs 32x256 --no-profile   # one size, no profile run
    python benchmarks/compile_bench.py --cpu-smoke [--json PATH]   # no GPU: tiny sizes, dynamo only

On a CPU (--cpu-smoke) the compiled cells use the "eager" backend (dynamo alone: the same graph
breaks, no inductor), and nothing is timed worth reading. Cells not started within --max-seconds
are listed as not measured. Prints the table last.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(REPO / "fixtures")]

import torch  # noqa: E402

from syncscan.runtime.compile_events import CompileEvents  # noqa: E402
from syncscan.trace.graph_breaks import summarize  # noqa: E402

MODES = ("eager", "default", "reduce-overhead")
VARIANTS = ("naive", "fixed")
GPU = dict(configs=((16, 64), (32, 256)), warmup=10, steps=30, repeats=2, backend="inductor")
SMOKE = dict(configs=((2, 16),), warmup=2, steps=2, repeats=2, backend="eager")


def time_cell(variant: str, mode: str, batch: int, size: int, device: torch.device, plan: dict) -> dict:
    """One cell: build the fixture's step (compiled unless eager), warm up, time `repeats` windows."""
    module = importlib.import_module(f"masked_loss_{variant}")
    torch._dynamo.reset()
    skips_before = torch._dynamo.utils.counters["inductor"]["cudagraph_skips"]
    with CompileEvents() as events:
        step = module.make_step(device, batch, size,
                                compile_kw=None if mode == "eager" else dict(mode=mode, backend=plan["backend"]))
        t0 = time.perf_counter()
        for _ in range(plan["warmup"]):
            loss = step()
        sync(device)
        warmup_s = time.perf_counter() - t0
        windows = []
        for _ in range(plan["repeats"]):
            sync(device)
            t0 = time.perf_counter()
            for _ in range(plan["steps"]):
                loss = step()
            sync(device)
            windows.append(1000.0 * (time.perf_counter() - t0) / plan["steps"])
    summary = summarize(events.records)
    out = {"variant": variant, "mode": mode, "batch": batch, "size": size, "device": device.type,
           "ms_per_step": [round(w, 3) for w in windows],
           "warmup_s": round(warmup_s, 2), "final_loss": round(float(loss), 4),
           "compilations": summary["compilations"],
           "graph_breaks": sum(b["count"] for b in summary["graph_breaks"]),
           "graph_break_lines": sorted({b["line"] for b in summary["graph_breaks"]}),
           "graph_break_detail": summary["graph_breaks"], "recompilations": summary["recompilations"],
           "cudagraph_skips": summary["cudagraph_skips"],
           "cudagraph_skip_counter": torch._dynamo.utils.counters["inductor"]["cudagraph_skips"] - skips_before}
    del step
    torch._dynamo.reset()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return out


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def profile_naive(device: torch.device, plan: dict, out_dir: Path, timeout: int) -> dict:
    """`syncscan profile` of the naive fixture compiled with reduce-overhead (batch 16, 64x64 on a GPU)."""
    batch, size = plan["configs"][0]
    report = out_dir / "profile_naive_reduce_overhead.json"
    cmd = [sys.executable, "-m", "syncscan", "profile", "--wait", "4", "--warmup", "1", "--steps", "3",
           "--output", str(report), "--logdir", tempfile.mkdtemp(prefix="compile-bench-run-"),  # traces: not kept
           "--html", str(out_dir / "profile.html"),
           str(REPO / "fixtures" / "masked_loss_naive.py"), "--device", device.type, "--batch", str(batch),
           "--size", str(size), "--steps", "100", "--compile", "reduce-overhead", "--compile-backend", plan["backend"]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    (out_dir / "profile_naive_reduce_overhead.txt").write_text(p.stdout + "\n--- stderr ---\n" + p.stderr[-20000:])
    if p.returncode != 0 or not report.is_file():
        return {"error": f"exit {p.returncode}: {(p.stderr.strip().splitlines() or [''])[-1]}"}
    r = json.loads(report.read_text())
    keep = ("compilations", "graph_breaks", "recompilations", "cudagraph_skips", "compiled_in_measured_steps")
    return {"command": cmd[1:], **{k: r.get(k) for k in keep},
            "syncs_per_step": (r.get("sync_summary") or {}).get("per_step")}


def environment(device: torch.device) -> dict:
    env = dict(date=datetime.date.today().isoformat(), torch=torch.__version__, python=sys.version.split()[0],
               cpu_count=os.cpu_count(), device=str(device))
    if device.type == "cuda":
        env.update(gpu=torch.cuda.get_device_name(device), cuda=torch.version.cuda)
    return env


def _ms(c: dict | None) -> str:
    if c is None:
        return "not measured"
    if "ms_per_step" not in c:
        return c.get("error", "?")
    w = c["ms_per_step"]
    return f"{min(w):.2f}-{max(w):.2f}" if len(w) > 1 else f"{w[0]:.2f}"


def _breaks(c: dict) -> str:
    if "graph_breaks" not in c:
        return "-"
    return f"{c['graph_breaks']} at lines {', '.join(map(str, c['graph_break_lines']))}" if c["graph_breaks"] else "0"


def _cudagraphs(c: dict) -> str:
    skips = c.get("cudagraph_skips")
    if skips is None:
        return "-"
    if c.get("device") == "cpu":
        return "n/a (CPU)"
    if skips:
        return "; ".join(f"skipped: {s['reason']}" + (f" (line {s['line']})" if s.get("line") else "") for s in skips)
    return "skipped (counter)" if c.get("cudagraph_skip_counter") else "on"


def table(cells: list[dict]) -> str:
    """One row per (config, variant): ms/step per mode (both windows), breaks, CUDA graphs."""
    rows = ["| batch, size | variant | eager ms/step | default ms/step | reduce-overhead ms/step | graph breaks "
            "(default) | CUDA graphs (reduce-overhead) |", "|---|---|---:|---:|---:|---|---|"]
    keys = sorted({(c["batch"], c["size"], c["variant"]) for c in cells}, key=lambda k: (k[0], k[1], -ord(k[2][0])))
    for batch, size, variant in keys:
        by_mode = {c["mode"]: c for c in cells if (c["batch"], c["size"], c["variant"]) == (batch, size, variant)}
        times = " | ".join(_ms(by_mode.get(m)) for m in MODES)
        rows.append(f"| {batch}, {size}x{size} | {variant} | {times} | {_breaks(by_mode.get('default', {}))} "
                    f"| {_cudagraphs(by_mode.get('reduce-overhead', {}))} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="write the results here")
    ap.add_argument("--out", metavar="DIR", default="compile-bench-out", help="profile report, HTML and text")
    ap.add_argument("--max-seconds", type=float, default=150.0,
                    help="start no timing cell after this many seconds (default 150), then run the profile")
    ap.add_argument("--configs", metavar="BxS,...", help="batch x size to run (default 16x64,32x256)")
    ap.add_argument("--no-profile", action="store_true", help="time the cells only, no syncscan profile run")
    ap.add_argument("--cpu-smoke", action="store_true", help="no GPU: tiny sizes, dynamo only, checks the plumbing")
    args = ap.parse_args(argv)
    if not args.cpu_smoke and not torch.cuda.is_available():
        print("compile_bench: no CUDA GPU (use --cpu-smoke to check the plumbing)", file=sys.stderr)
        return 2
    device = torch.device("cpu" if args.cpu_smoke else "cuda")
    plan = dict(SMOKE if args.cpu_smoke else GPU)
    if args.configs:
        try:
            plan["configs"] = tuple(tuple(int(v) for v in c.lower().split("x")) for c in args.configs.split(","))
        except ValueError:
            ap.error(f"--configs {args.configs}: expected BxS,... (e.g. 16x64,32x256)")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    cells = []
    for batch, size in plan["configs"]:
        for variant in VARIANTS:
            for mode in MODES:
                if time.perf_counter() - start > args.max_seconds:
                    print(f"skipped (over --max-seconds): {variant} {mode} batch {batch} {size}x{size}", flush=True)
                    continue
                try:
                    c = time_cell(variant, mode, batch, size, device, plan)
                except Exception as e:  # noqa: BLE001 - one failing cell is reported, the others still run
                    c = {"variant": variant, "mode": mode, "batch": batch, "size": size,
                         "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}
                cells.append(c)
                print(json.dumps({k: v for k, v in c.items() if not k.endswith("detail") and k != "recompilations"}),
                      flush=True)
    profile = {} if args.no_profile else profile_naive(device, plan, out_dir, timeout=240 if args.cpu_smoke else 120)
    data = {"environment": environment(device), "cpu_smoke": args.cpu_smoke, "plan": plan, "cells": cells,
            "profile_naive_reduce_overhead": profile, "seconds": round(time.perf_counter() - start, 1)}
    text = json.dumps(data, indent=1, default=str)
    (out_dir / "compile_bench.json").write_text(text + "\n")
    if args.json:
        Path(args.json).write_text(text + "\n")
    if profile:
        print_profile(profile, out_dir, args.cpu_smoke)
    print(f"\n{data['environment'].get('gpu', 'CPU')}, torch {torch.__version__}, {data['seconds']} s; "
          f"ms/step: mean of {plan['steps']} steps after {plan['warmup']} warm-up, {plan['repeats']} windows (min-max)")
    print(table(cells))
    return 0


def print_profile(profile: dict, out_dir: Path, cpu: bool) -> None:
    where = out_dir / "profile_naive_reduce_overhead.txt"
    print(f"\nprofile of the naive fixture, compiled with reduce-overhead ({where}):")
    if profile.get("error"):
        print(f"  failed: {profile['error']}")
    for b in profile.get("graph_breaks") or []:
        print(f"  graph break {b['count']}x  {Path(b['file']).name}:{b['line']}  {b['reason']}")
    for s in profile.get("cudagraph_skips") or []:
        where = f"{Path(s['file']).name}:{s['line']}" if s.get("file") else "(no user line)"
        print(f"  CUDA graphs skipped {s['count']}x  {where}  {s['reason']}")
    if profile.get("compilations") is not None and not profile.get("cudagraph_skips"):
        print("  no CUDA-graph skip reported" + (" (none are, on a CPU)" if cpu else ""))


if __name__ == "__main__":
    sys.exit(main())
