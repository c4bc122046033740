"""How fast `syncscan analyze` reads a large trace, against HolisticTraceAnalysis (HTA).

Builds a big trace by replicating a recorded one (each copy shifted in time after the previous,
with its correlation ids, op ids, Python ids and step numbers offset so they stay unique), then
times, each in a fresh process:
- syncscan: load_trace + analyze + render_text, with its peak RSS (and that of the helper
  process that reads the second half of a large file);
- HTA: TraceAnalysis(trace_dir) (the load), get_temporal_breakdown() and
  get_idle_time_breakdown(), with its peak RSS.

HTA pins its own pandas/numpy: install it in a separate venv, not in the project's:
    python -m venv .bench/hta-venv && .bench/hta-venv/bin/pip install holistictraceanalysis

Usage:
    python benchmarks/analyze_speed.py                 # ~100 MB trace, quick
    python benchmarks/analyze_speed.py --size-mb 1024  # the 1 GB target: < 60 s, < 2 GB
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = (REPO.parent / "shared" / "traces" / "masked_loss_v0_b16_64px")
DEFAULT_HTA_PYTHON = REPO / ".bench" / "hta-venv" / "bin" / "python"

ID_ARGS = ("correlation", "External id", "Python id", "Python parent id", "Sequence number",
           "Record function id")

OURS = r"""
import json, sys, time
t0 = time.perf_counter()
from syncscan.present.analyze_text import render_text
from syncscan.trace import load_trace, analyze
tr = load_trace(sys.argv[1])
t1 = time.perf_counter()
report = analyze(tr).report
text = render_text(report)
t2 = time.perf_counter()
import resource
print(json.dumps({"load_s": t1 - t0, "analyze_s": t2 - t1, "total_s": t2 - t0,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  # the helper process that reads the second half of a large file
                  "helper_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "steps": len(report["steps"]), "syncs": report["total_syncs"]}))
"""

HTA = r"""
import json, logging, sys, time, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
ta = TraceAnalysis(trace_dir=sys.argv[1])
t1 = time.perf_counter()
tb = ta.get_temporal_breakdown(visualize=False)
idle = ta.get_idle_time_breakdown(visualize=False)
t2 = time.perf_counter()
import resource
print(json.dumps({"load_s": t1 - t0, "analyze_s": t2 - t1, "total_s": t2 - t0,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _open(path: Path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gz else open(path, encoding="utf-8")


def _source_file(src: Path) -> Path:
    if not src.exists():
        sys.exit(f"{src}: not found (the recorded traces live in ../shared/traces; pass --source)")
    if src.is_dir():
        files = sorted(src.glob("*.json*"))
        if not files:
            sys.exit(f"no trace in {src}")
        return files[0]
    return src


def build_trace(source: Path, out: Path, target_bytes: int) -> dict:
    """Write `out` (plain JSON) by replicating `source` until it reaches target_bytes."""
    with _open(source) as f:
        doc = json.load(f)
    events = doc.pop("traceEvents")
    timed = [e for e in events if "ts" in e and e.get("ph") != "M"]
    t_lo = min(e["ts"] for e in timed)
    t_hi = max(e["ts"] + e.get("dur", 0) for e in timed)
    span = (t_hi - t_lo) + 100.0
    max_id = {k: 0 for k in ID_ARGS}
    max_flow = 0
    for e in events:
        args = e.get("args") or {}
        for k in ID_ARGS:
            v = args.get(k)
            if isinstance(v, int) and v > max_id[k]:
                max_id[k] = v
        if isinstance(e.get("id"), int):
            max_flow = max(max_flow, e["id"])
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    n_steps = len(steps)
    once = [e for e in events if e.get("ph") == "M" or e.get("cat") == "Trace" or "ts" not in e]
    body = [e for e in events if not (e.get("ph") == "M" or e.get("cat") == "Trace" or "ts" not in e)]

    header = json.dumps(doc)[:-1]  # the header keys, object left open
    written = 0
    replicas = 0
    with open(out, "w", encoding="utf-8") as f:
        f.write(header + (', ' if doc else '') + '"traceEvents": [\n')
        first = True
        for e in once:
            f.write(("" if first else ",\n") + json.dumps(e))
            first = False
        while written < target_bytes:
            k = replicas
            chunk = []
            for e in body:
                c = dict(e)
                c["ts"] = e["ts"] + k * span
                if "args" in e:
                    a = dict(e["args"])
                    for key in ID_ARGS:
                        v = a.get(key)
                        if isinstance(v, int) and v >= 0:
                            a[key] = v + k * (max_id[key] + 1)
                    c["args"] = a
                if isinstance(e.get("id"), int):
                    c["id"] = e["id"] + k * (max_flow + 1)
                name = c.get("name", "")
                if isinstance(name, str) and name.startswith("ProfilerStep#"):
                    c["name"] = f"ProfilerStep#{int(name[13:]) + k * n_steps}"
                chunk.append(c)
            text = ",\n".join(json.dumps(c) for c in chunk)
            f.write(("" if first else ",\n") + text)
            first = False
            written += len(text)
            replicas += 1
        f.write("\n]}\n")
    return {"replicas": replicas, "events": len(once) + replicas * len(body), "bytes": out.stat().st_size,
            "steps": replicas * n_steps}


def timed_run(cmd: list[str], timeout: float | None, env: dict | None = None) -> dict:
    """Run cmd, return its JSON line (times, its own peak RSS in MiB) plus the wall time."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"error": f"timed out after {timeout:.0f} s", "wall_s": time.perf_counter() - t0}
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-3:]
        return {"error": f"exit {proc.returncode}: " + " | ".join(tail), "wall_s": wall}
    res = json.loads(out.decode().strip().splitlines()[-1])
    res.update(wall_s=wall)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=100, help="size of the built trace (default 100; 1024 for the target)")
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="recorded trace (or run folder) to replicate")
    ap.add_argument("--workdir", type=Path, default=None, help="where to build the trace (default: a temp folder)")
    ap.add_argument("--hta-python", default=str(DEFAULT_HTA_PYTHON), help="python of the venv holding HTA")
    ap.add_argument("--skip-hta", action="store_true")
    ap.add_argument("--hta-timeout", type=float, default=1800)
    ap.add_argument("--keep", action="store_true", help="keep the built trace")
    args = ap.parse_args(argv)

    work = args.workdir or Path(tempfile.mkdtemp(prefix="syncscan-bench-"))
    tdir = work / "trace"
    tdir.mkdir(parents=True, exist_ok=True)
    big = tdir / "bench.pt.trace.json"
    t = time.perf_counter()
    info = build_trace(_source_file(args.source), big, int(args.size_mb * 1e6))
    print(f"built {big}: {info['bytes'] / 1e6:.0f} MB, {info['events']:,} events, {info['steps']} steps "
          f"({info['replicas']} copies of {_source_file(args.source).name}) in {time.perf_counter() - t:.0f} s")
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    ours = timed_run([sys.executable, "-c", OURS, str(big)], None, env)
    print(f"syncscan: {_fmt(ours)}")
    hta = None
    if not args.skip_hta:
        if not Path(args.hta_python).exists():
            print(f"HTA: skipped ({args.hta_python} not found; see the docstring to install it)")
        else:
            hta = timed_run([args.hta_python, "-c", HTA, str(tdir)], args.hta_timeout)
            print(f"HTA:      {_fmt(hta)}")
            if "error" not in hta and "error" not in ours:
                print(f"ratio: syncscan is {hta['total_s'] / ours['total_s']:.1f}x faster than HTA "
                      f"(wall {hta['wall_s'] / ours['wall_s']:.1f}x)")
    if not args.keep and args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if "error" not in ours else 1


def _fmt(r: dict) -> str:
    if "error" in r:
        return f"FAILED ({r['error']}) after {r['wall_s']:.1f} s"
    extra = f" (+{r['helper_rss_mib']:.0f} MiB helper)" if r.get("helper_rss_mib") else ""
    extra += f", {r['steps']} steps, {r['syncs']} syncs" if "steps" in r else ""
    return (f"load {r['load_s']:.1f} s + analysis {r['analyze_s']:.1f} s = {r['total_s']:.1f} s "
            f"(process wall {r['wall_s']:.1f} s), peak RSS {r['peak_rss_mib']:.0f} MiB{extra}")


if __name__ == "__main__":
    sys.exit(main())
