"""How `syncscan analyze DIR` grows with the number of ranks: time and memory per rank trace, on
synthetic data-parallel traces (benchmarks/dist_traces.py) of 64 and 1,024 ranks.

For each rank count, in a fresh process: the folder scan (each trace's header), each rank's load +
analysis + timeline (one trace in memory at a time), the cross-rank merge, and the report; its
peak RSS; then checks the result against the known truth (the straggler, every rank's wait). One
rank's analysis alone gives the baseline the per-rank memory is measured from.

    python benchmarks/dist_scale.py                          # 64 and 1,024 ranks
    python benchmarks/dist_scale.py --ranks 8 --smoke        # seconds (the CPU test runs this)

Writes --out (default docs/dist-scale.json) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from dist_traces import Shape, rank_trace, truth, write_ranks  # noqa: E402

MEASURE = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from syncscan.commands.analyze import analyze_ranks
from syncscan.trace.ranks import find_rank_traces
import syncscan.multirank as multirank
t_import = time.perf_counter()
by_rank = find_rank_traces(sys.argv[1])
t_scan = time.perf_counter()
merge_s = [0.0]
real_merge = multirank.merge
def timed_merge(*a, **k):
    t = time.perf_counter()
    try:
        return real_merge(*a, **k)
    finally:
        merge_s[0] = time.perf_counter() - t
multirank.merge = timed_merge
report, _ = analyze_ranks(by_rank, lint=False)
t_ranks = time.perf_counter()
text = json.dumps(report)
t_json = time.perf_counter()
cr = report["cross_rank"]
print(json.dumps({
    "ranks": len(by_rank), "import_s": t_import - t0, "scan_s": t_scan - t_import,
    "analysis_s": t_ranks - t_scan - merge_s[0], "merge_s": merge_s[0], "json_s": t_json - t_ranks,
    "total_s": t_json - t0, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "report_mib": len(text) / 2**20,
    "straggler": (cr["straggler"] or {}).get("rank"), "wait_ms_per_step": cr["wait_ms_per_step"],
    "rank_only": [s["ranks"] for s in cr["rank_only_syncs"]]}))
"""


def measure(folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", MEASURE, str(folder)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(ranks: int, ops: int, steps: int, work: Path) -> dict:
    shape = Shape(ranks=ranks, steps=steps, ops=ops, collectives=4, straggler=ranks // 3, item_rank=0)
    folder = work / f"ranks{ranks}"
    t = time.perf_counter()
    paths = write_ranks(folder, shape)
    made_s = time.perf_counter() - t
    single = work / f"single{ranks}"
    single.mkdir()
    shutil.copy(paths[1], single / paths[1].name)  # one rank alone: `analyze` of one trace
    one = measure_single(single)
    got = measure(folder)
    want = truth(shape)
    ok = (got["straggler"] == want["straggler"] and got["rank_only"] == [[0]]
          and all(abs(a - b) < 1e-3 for a, b in zip(got["wait_ms_per_step"], want["wait_ms_per_step"])))
    trace_mib = sum(p.stat().st_size for p in paths) / 2**20
    raw_mib = len(json.dumps(rank_trace(shape, 0), separators=(",", ": "))) / 2**20
    shutil.rmtree(folder)
    shutil.rmtree(single)
    per_rank_s = got["analysis_s"] / ranks
    return {
        "ranks": ranks, "steps": steps, "ops_per_step": ops, "events_per_rank": steps * (3 * ops + 13),
        "trace_mib_per_rank": round(raw_mib, 3), "trace_gz_mib_per_rank": round(trace_mib / ranks, 3),
        "generate_s": round(made_s, 2),
        "scan_s": round(got["scan_s"], 3), "analysis_s": round(got["analysis_s"], 3),
        "analysis_ms_per_rank": round(1e3 * per_rank_s, 2), "merge_s": round(got["merge_s"], 3),
        "total_s": round(got["total_s"], 2), "peak_rss_mib": round(got["peak_rss_mib"], 1),
        "one_rank_rss_mib": round(one["peak_rss_mib"], 1),
        "rss_per_rank_kib": round(1024 * max(got["peak_rss_mib"] - one["peak_rss_mib"], 0.0) / ranks, 1),
        "report_mib": round(got["report_mib"], 2), "correct": ok,
    }


MERGE_ONLY = r"""
import json, resource, sys, time, tracemalloc
from array import array
from syncscan.trace.cross_rank import cross_rank
n, steps, per_step = map(int, sys.argv[1:4])
def tl(rank):
    keys = [sys.intern(f"0/allreduce#{i}") for i in range(per_step)]
    col = {"step": array("i"), "t_ms": array("d"), "key": [], "ms": array("d")}  # as syncscan.trace.ranks keeps them
    for s in range(steps):
        for i, k in enumerate(keys):
            col["step"].append(s); col["t_ms"].append(s * 100.0 + i * 0.1); col["key"].append(k)
            col["ms"].append(0.05 + (0.02 if rank != 1 and i == 0 else 0.0))
    return {"info": {"rank": rank, "world_size": n, "backend": "nccl"},
            "steps": [{"number": s + 1, "duration_ms": 100.0} for s in range(steps)], "collectives_on": "gpu",
            "collectives": col, "collectives_left_out": 0, "syncs_measured": True,
            "syncs": {"step": [], "t_ms": [], "site": []}, "calls": []}
tracemalloc.start()
ranks = [(r, tl(r)) for r in range(n)]
held = tracemalloc.get_traced_memory()[0]
t = time.perf_counter()
cr = cross_rank(ranks, [[] for _ in range(n)], n)
dt = time.perf_counter() - t
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"merge_s": dt, "timelines_mib": held / 2**20, "merge_extra_mib": (peak - held) / 2**20,
                  "wait_rank0": cr["wait_ms_per_step"][0]}))
"""


def merge_only(ranks: int, steps: int, per_step: int) -> dict:
    """The cross-rank merge alone on timelines of many collectives (an FSDP-like run): what grows
    with ranks x collectives, without the traces."""
    out = subprocess.run([sys.executable, "-c", MERGE_ONLY, str(ranks), str(steps), str(per_step)],
                         capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return {"ranks": ranks, "steps": steps, "collectives_per_step": per_step,
            "merge_s": round(got["merge_s"], 3), "timelines_mib": round(got["timelines_mib"], 1),
            "timeline_kib_per_rank": round(1024 * got["timelines_mib"] / ranks, 1),
            "merge_extra_mib": round(got["merge_extra_mib"], 1),
            "correct": abs(got["wait_rank0"] - 0.02) < 1e-6}  # rank 0 waits 0.02 ms in each step


MEASURE_ONE = r"""
import json, resource, sys
from syncscan.trace import analyze, load_trace, resolve_traces
from syncscan.trace.ranks import timeline
t = load_trace(resolve_traces(sys.argv[1])[0]); a = analyze(t); timeline(t, a)
print(json.dumps({"peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure_single(folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", MEASURE_ONE, str(folder)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[64, 1024])
    ap.add_argument("--ops", type=int, default=100, help="ops per step and rank (3 events each)")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--merge-collectives", type=int, default=200,
                    help="collectives per step and rank for the merge-only rows (an FSDP-like run)")
    ap.add_argument("--smoke", action="store_true", help="tiny traces, for the CPU test")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "dist-scale.json")
    a = ap.parse_args()
    if a.smoke:
        a.ops, a.steps = 10, 3
    rows = []
    with tempfile.TemporaryDirectory(prefix="syncscan-dist-scale-") as tmp:
        for n in a.ranks:
            rows.append(run(n, a.ops, a.steps, Path(tmp)))
    merges = [merge_only(n, a.steps, 20 if a.smoke else a.merge_collectives) for n in a.ranks]
    a.out.write_text(json.dumps({"python": sys.version.split()[0], "rows": rows, "merge_only": merges},
                                indent=2) + "\n")
    print(f"{'ranks':>6} {'events/rank':>11} {'ms/rank':>8} {'merge s':>8} {'total s':>8} {'peak MiB':>9} "
          f"{'KiB/rank':>9} {'report MiB':>10} {'correct':>8}")
    for r in rows:
        print(f"{r['ranks']:>6} {r['events_per_rank']:>11} {r['analysis_ms_per_rank']:>8.1f} {r['merge_s']:>8.3f} "
              f"{r['total_s']:>8.2f} {r['peak_rss_mib']:>9.1f} {r['rss_per_rank_kib']:>9.1f} {r['report_mib']:>10.2f} "
              f"{str(r['correct']):>8}")
    print(f"\n{'ranks':>6} {'collectives/step':>16} {'merge s':>8} {'timelines MiB':>13} {'KiB/rank':>9} "
          f"{'merge extra MiB':>15} {'correct':>8}")
    for m in merges:
        print(f"{m['ranks']:>6} {m['collectives_per_step']:>16} {m['merge_s']:>8.3f} {m['timelines_mib']:>13.1f} "
              f"{m['timeline_kib_per_rank']:>9.1f} {m['merge_extra_mib']:>15.1f} {str(m['correct']):>8}")
    if not all(r["correct"] for r in rows + merges):
        sys.exit("the analysis did not find the straggler and the waits the traces were built with")


if __name__ == "__main__":
    main()
