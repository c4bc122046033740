"""syncscan against HolisticTraceAnalysis (HTA) on the same per-rank traces: speed, memory and what
each finds.

The traces are synthetic data-parallel ranks (benchmarks/dist_traces.py) with a known straggler,
known collective waits and a `.item()` on rank 0 only, written twice: with today's NCCL kernel
names (ncclDevKernel_*, torch 2.11) and with the older ncclKernel_* names. Optionally, --real DIR
adds a folder of real per-rank traces (e.g. a `syncscan profile --nproc-per-node` run's light/).

Each tool runs in a fresh process, timed, with its peak RSS:
- syncscan: `syncscan analyze DIR --format json --no-lint` (one process, -j 1);
- HTA: TraceAnalysis(trace_dir) (the load, its own worker processes), get_temporal_breakdown(),
  get_comm_comp_overlap(), get_idle_time_breakdown(), get_potential_stragglers(num_candidates=1).

HTA pins its own pandas/numpy; it is taken from --hta-python (default: this interpreter when it
can import hta, else .bench/hta-venv/bin/python as in benchmarks/analyze_speed.py).

    python benchmarks/dist_hta.py                    # 8 ranks, 8 steps
    python benchmarks/dist_hta.py --ranks 2 --smoke  # seconds: syncscan's side only when HTA is absent

Writes --out (default docs/dist-hta.json) and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from dist_traces import Shape, truth, write_ranks  # noqa: E402

DEFAULT_HTA_PYTHON = REPO / ".bench" / "hta-venv" / "bin" / "python"

OURS = r"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
out = subprocess.run([sys.executable, "-m", "syncscan", "analyze", sys.argv[1], "--format", "json", "--no-lint",
                      "-j", "1"], capture_output=True, text=True, check=True).stdout
t1 = time.perf_counter()
r = json.loads(out)
cr = r["cross_rank"]
print(json.dumps({
    "total_s": t1 - t0, "peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    "ranks": [x["rank"] for x in r["ranks"]],
    "straggler": (cr["straggler"] or {}).get("rank"),
    "wait_ms_per_step": cr["wait_ms_per_step"],
    "gpu_idle_ms_per_step": [x["gpu_idle_ms_per_step"] for x in r["ranks"]],
    "collective_ms_per_step": [sum(s["collective_ms"] for s in x["steps"]) / max(len(x["steps"]), 1)
                               for x in r["ranks"]],
    "rank_only_syncs": [{"op": s["outer_op"], "ranks": s["ranks"], "cost_to_others_ms_per_step":
                         s["cost_to_others_ms_per_step"]} for s in cr["rank_only_syncs"]],
    "steps": len(r["steps"])}))
"""

HTA = r"""
import json, logging, resource, sys, time, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
out = {}
try:
    ta = TraceAnalysis(trace_dir=sys.argv[1])
except Exception as e:
    print(json.dumps({"error": f"load: {type(e).__name__}: {e}"[:300]}))
    sys.exit(0)
t1 = time.perf_counter()
def attempt(name, f):
    try:
        return f()
    except Exception as e:
        out.setdefault("errors", {})[name] = f"{type(e).__name__}: {e}"[:200]
steps = max(len(ta.get_profiler_steps()), 1)  # the steps HTA kept (it leaves the last one out)
tb = attempt("temporal_breakdown", lambda: ta.get_temporal_breakdown(visualize=False))
ov = attempt("comm_comp_overlap", lambda: ta.get_comm_comp_overlap(visualize=False))
idle = attempt("idle_time_breakdown", lambda: ta.get_idle_time_breakdown(visualize=False))
st = attempt("potential_stragglers", lambda: ta.get_potential_stragglers(num_candidates=1))
t2 = time.perf_counter()
if tb is not None:
    tb = tb.sort_values("rank")
    out["ranks"] = [int(r) for r in tb["rank"]]
    out["idle_ms_per_step"] = [round(v / 1000 / steps, 4) for v in tb["idle_time(us)"]]
    out["non_compute_ms_per_step"] = [round(v / 1000 / steps, 4) for v in tb["non_compute_time(us)"]]
if ov is not None:
    out["comm_comp_overlap_pctg"] = [float(v) for v in ov.sort_values("rank")["comp_comm_overlap_pctg"]]
if st is not None:
    out["stragglers"] = [int(r) for r in st]
out.update(load_s=t1 - t0, analyze_s=t2 - t1, total_s=t2 - t0, steps_used=steps,
           peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           workers_peak_rss_mib=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
print(json.dumps(out))
"""


def _hta_python(asked: str | None) -> str | None:
    if asked:
        return asked
    probe = subprocess.run([sys.executable, "-c", "import hta"], capture_output=True)
    if probe.returncode == 0:
        return sys.executable
    return str(DEFAULT_HTA_PYTHON) if DEFAULT_HTA_PYTHON.exists() else None


def _run(python: str, code: str, folder: Path) -> dict:
    p = subprocess.run([python, "-c", code, str(folder)], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1][:300]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def compare(folder: Path, hta_python: str | None, known: dict | None) -> dict:
    row = {"traces": str(folder), "truth": known, "syncscan": _run(sys.executable, OURS, folder)}
    row["hta"] = _run(hta_python, HTA, folder) if hta_python else {"error": "HTA not installed"}
    return row


def _fmt(values) -> str:
    if not isinstance(values, list):
        return "-"
    return "[" + ", ".join("-" if v is None else f"{v:.2f}" for v in values) + "]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--ops", type=int, default=400)
    ap.add_argument("--real", type=Path, action="append", default=[], help="a folder of real per-rank traces")
    ap.add_argument("--hta-python", help="the Python that has HolisticTraceAnalysis")
    ap.add_argument("--smoke", action="store_true", help="tiny traces, for the CPU test")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "dist-hta.json")
    a = ap.parse_args()
    if a.smoke:
        a.ops, a.steps = 10, 3
    hta_python = _hta_python(a.hta_python)
    rows = []
    with tempfile.TemporaryDirectory(prefix="syncscan-dist-hta-") as tmp:
        for names in ("dev", "legacy"):
            shape = Shape(ranks=a.ranks, steps=a.steps, ops=a.ops, straggler=a.ranks - 1, nccl_names=names)
            folder = Path(tmp) / names
            write_ranks(folder, shape)
            size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
            row = compare(folder, hta_python, truth(shape))
            row.update(name=f"synthetic, {names} NCCL kernel names", ranks=a.ranks, steps=a.steps,
                       trace_gz_mib=round(size, 2))
            rows.append(row)
        for real in a.real:
            row = compare(real, hta_python, None)
            row.update(name=f"real: {real}")
            rows.append(row)
    a.out.write_text(json.dumps({"hta_python": hta_python, "rows": rows}, indent=2) + "\n")
    for r in rows:
        ours, hta, want = r["syncscan"], r["hta"], r.get("truth") or {}
        print(f"\n{r['name']}")
        print(f"  {'':24} {'time s':>7} {'peak MiB':>9}  straggler  per rank (ms/step)")
        print(f"  {'truth':24} {'':>7} {'':>9}  {str(want.get('straggler', '-')):>9}  "
              f"wait {_fmt(want.get('wait_ms_per_step'))}")
        if "error" in ours:
            print(f"  syncscan: {ours['error']}")
        else:
            print(f"  {'syncscan analyze':24} {ours['total_s']:>7.2f} {ours['peak_rss_mib']:>9.1f}  "
                  f"{str(ours['straggler']):>9}  wait {_fmt(ours['wait_ms_per_step'])}  "
                  f"GPU idle {_fmt(ours['gpu_idle_ms_per_step'])}")
            for s in ours["rank_only_syncs"]:
                print(f"  {'':24} {'':>7} {'':>9}  {'':>9}  {s['op']} on rank {s['ranks']} only: costs the others "
                      f"{s['cost_to_others_ms_per_step']} ms/step")
        if "error" in hta:
            print(f"  HTA: {hta['error']}")
        else:
            stragglers = hta.get("stragglers", (hta.get("errors") or {}).get("potential_stragglers", "-"))
            print(f"  {'HTA':24} {hta['total_s']:>7.2f} {hta['peak_rss_mib']:>9.1f}  {str(stragglers)[:40]:>9}  "
                  f"idle {_fmt(hta.get('idle_ms_per_step'))}  non-compute {_fmt(hta.get('non_compute_ms_per_step'))}")


if __name__ == "__main__":
    main()
