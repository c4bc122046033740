"""Does a light trace of CUDA activity only, given the detailed pass's ops, analyse as one that
recorded its own CPU ops? Measured on the CPU, on light traces recorded on an H100.

`syncscan profile --light-pass cuda` (the default) records no CPU ops in the light pass; its
steps come from syncscan's own step marks and its ops from the detailed pass
(syncscan.trace.marks, syncscan.trace.graft). This takes the lean light traces recorded by
benchmarks/estimate.py (tests/data/estimate: syncscan profile's light traces, four runs of each
of three cases and two to four of six held-out ones, with their A/B measurements) and, for each
one:

- strips what the cuda recipe does not record (cpu_op, user_annotation with ProfilerStep#N,
  gpu_user_annotation, python_function, fwdbwd flows, External ids) and writes the step marks
  the session writes (the host clock around each step-timing `cudaEventRecordWithFlags`, at an
  arbitrary clock offset);
- grafts the ops of every OTHER run of the same case (another process: a stand-in for the
  detailed pass, which runs the same steps in the same process);
- analyses it at the bare pass's ms/step, and compares with the analysis of the trace as
  recorded: the sync sites (op, outer op, scope, rule, count), the GPU idle per site, the replay's
  fit, its saving without the syncs and with the rewrites, the op cost; and the prediction at the
  A/B's naive step time against the saving the A/B measured, as tests/test_trace_replay.py does.

The run-to-run spread of the recorded traces' own predictions is printed beside it: that is the
noise the grafted analysis must stay within. `--with-stack` adds the one recorded pair of a
detailed trace (Python stacks, sync events) and a light trace of the same fixture in ../shared.

    python benchmarks/light_graft.py [--json PATH] [--cases N] [--with-stack]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from syncscan.trace import analyze, load_trace  # noqa: E402
from syncscan.trace.graft import graft  # noqa: E402
from syncscan.trace.marks import MARK_CALL, META_KEY  # noqa: E402

DATA = REPO / "tests" / "data" / "estimate"
SHARED = next((p for p in (REPO.parent / "shared", REPO / "shared") if (p / "traces").is_dir()), None)
# what a trace of CUDA activity only does not have
CPU_CATEGORIES = {"cpu_op", "user_annotation", "gpu_user_annotation", "python_function", "fwdbwd",
                  "cpu_instant_event"}
# the session's clock (perf_counter, µs) against the trace's, in these files: any value will do
CLOCK_OFFSET_US = -4.7e12 + 1234.5
SITE_KEY = ("op", "outer_op", "scope", "rule", "count")


def strip_cpu(src: Path, dst: Path, keep_steps: bool = False) -> Path:
    """`src` as the cuda recipe would have recorded it, with the session's step marks (from the
    step-timing event records of the ProfilerStep thread) in its metadata. `keep_steps`: keep the
    ProfilerStep#N annotations instead (traces recorded without syncscan's marks)."""
    data = json.load(gzip.open(src) if src.suffix == ".gz" else open(src))
    events = data["traceEvents"]
    steps = sorted((e for e in events if e.get("cat") == "user_annotation"
                    and str(e.get("name", "")).startswith("ProfilerStep#")), key=lambda e: e["ts"])
    kept, step_ids = [], {id(e) for e in steps}
    for e in events:
        if e.get("cat") in CPU_CATEGORIES and not (keep_steps and id(e) in step_ids):
            continue
        (e.get("args") or {}).pop("External id", None)
        kept.append(e)
    data["traceEvents"] = kept
    if not keep_steps:
        data[META_KEY] = session_marks(events, steps)
    dst.write_text(json.dumps(data))
    return dst


def with_marks(src: Path, dst: Path) -> Path:
    """`src` (a trace with CPU ops: the stand-in for the detailed pass) with the step marks the
    session writes into every profiled pass's trace."""
    data = json.load(gzip.open(src) if src.suffix == ".gz" else open(src))
    events = data["traceEvents"]
    steps = sorted((e for e in events if e.get("cat") == "user_annotation"
                    and str(e.get("name", "")).startswith("ProfilerStep#")), key=lambda e: e["ts"])
    data[META_KEY] = session_marks(events, steps)
    dst.write_text(json.dumps(data))
    return dst


def session_marks(events: list, steps: list) -> dict:
    """The marks syncscan.runtime.session writes, read back off the trace: the host clock just
    before and after each step-timing event record of the step thread, on a clock CLOCK_OFFSET_US
    away from the trace's."""
    tid = steps[0]["tid"]
    records = sorted((e for e in events if e.get("tid") == tid and MARK_CALL.match(str(e.get("name", "")))),
                     key=lambda e: e["ts"])
    return {"version": 1, "tid": tid, "first_step": int(steps[0]["name"].split("#")[1]),
            "before_us": [e["ts"] - CLOCK_OFFSET_US - 2.0 for e in records],
            "after_us": [e["ts"] + e["dur"] - CLOCK_OFFSET_US + 1.0 for e in records],
            "realtime_minus_perf_us": None}


def compare(full: dict, grafted: dict) -> dict:
    """What differs between the two analyses (recorded, grafted)."""
    fr, gr = full["replay"] or {}, grafted["replay"] or {}
    same_sites = [[s.get(k) for k in SITE_KEY] for s in full["syncs"]] == \
                 [[s.get(k) for k in SITE_KEY] for s in grafted["syncs"]]
    idle = max((abs((a["gpu_idle_ms"] or 0) - (b["gpu_idle_ms"] or 0))
                for a, b in zip(full["syncs"], grafted["syncs"])), default=0.0)

    def rel(key):
        a, b = fr.get(key), gr.get(key)
        return None if not a or b is None else round(b / a - 1, 4)

    return {"same_sites": same_sites, "sites": len(full["syncs"]), "max_idle_diff_ms": round(idle, 6),
            "fit_error": [fr.get("fit_error"), gr.get("fit_error")],
            "saving_syncs_ms": [fr.get("saving_syncs_ms"), gr.get("saving_syncs_ms")],
            "saving_rewrites_ms": [fr.get("saving_rewrites_ms"), gr.get("saving_rewrites_ms")],
            "op_host_us": [fr.get("op_host_us"), gr.get("op_host_us")],
            "rel_saving_syncs": rel("saving_syncs_ms"), "rel_saving_rewrites": rel("saving_rewrites_ms"),
            "rel_op_host": rel("op_host_us")}


def cases(limit: int | None = None) -> dict[str, list[dict]]:
    by_case: dict[str, list[dict]] = {}
    for c in json.loads((DATA / "measured.json").read_text())["cases"]:
        by_case.setdefault(c["case"], []).append(c)
    names = sorted(k for k, v in by_case.items() if len(v) > 1)
    return {k: by_case[k] for k in names[:limit]}


def run_case(runs: list[dict], tmp: Path) -> dict:
    stripped = {r["name"]: strip_cpu(DATA / r["trace"], tmp / f"{r['name']}.light.json") for r in runs}
    detail = {r["name"]: with_marks(DATA / r["trace"], tmp / f"{r['name']}.detail.json") for r in runs}
    pairs, own_predicted, grafted_predicted, measured = [], [], [], []
    for x in runs:
        recorded = load_trace(DATA / x["trace"])
        full = analyze(recorded, step_ms=x["bare_ms_per_step"]).report
        own_predicted.append(analyze(recorded, step_ms=x["naive_ms"]).report["replay"]["saving_rewrites_ms"])
        measured.append(x["measured_saving_ms"])
        at_ab = []
        for y in runs:
            if y is x:
                continue
            light = load_trace(stripped[x["name"]])
            stats = graft(light, load_trace(detail[y["name"]]))
            pairs.append({"light": x["name"], "ops_from": y["name"], **stats.as_dict(),
                          **compare(full, analyze(light, step_ms=x["bare_ms_per_step"]).report)})
            at_ab.append(analyze(light, step_ms=x["naive_ms"]).report["replay"]["saving_rewrites_ms"])
        grafted_predicted.append(statistics.median(at_ab))
    rel = [p["rel_saving_rewrites"] for p in pairs if p["rel_saving_rewrites"] is not None]
    med_measured = statistics.median(measured)
    return {
        "runs": len(runs), "pairs": pairs,
        "same_sites": sum(p["same_sites"] for p in pairs),
        "max_idle_diff_ms": max(p["max_idle_diff_ms"] for p in pairs),
        "median_abs_rel_rewrites": round(statistics.median(abs(r) for r in rel), 4),
        "max_abs_rel_rewrites": round(max(abs(r) for r in rel), 4),
        "max_abs_rel_syncs": round(max(abs(p["rel_saving_syncs"] or 0) for p in pairs), 4),
        # the noise: how much the recorded traces' own predictions differ from run to run
        "own_spread": round((max(own_predicted) - min(own_predicted)) / statistics.median(own_predicted), 4),
        "prediction_error_recorded": round(statistics.median(own_predicted) / med_measured - 1, 4),
        "prediction_error_grafted": round(statistics.median(grafted_predicted) / med_measured - 1, 4),
    }


def with_stack_case(tmp: Path) -> dict | None:
    """The detailed trace (stacks, sync events) and the light trace of the same fixture in ../shared,
    recorded by plain torch.profiler (no syncscan marks: the light trace keeps its ProfilerStep#N)."""
    if SHARED is None:
        return None
    light_src = next((SHARED / "traces" / "masked_loss_v0_b16_64px_light").glob("*.json.gz"))
    detail_src = next((SHARED / "traces" / "masked_loss_v0_b16_64px").glob("*.json.gz"))
    bare = 4.6  # ../shared/traces/README.md
    full = analyze(load_trace(light_src), step_ms=bare).report
    light = load_trace(strip_cpu(light_src, tmp / "shared.light.json", keep_steps=True))
    stats = graft(light, load_trace(detail_src))
    return {"light": light_src.parent.name, "ops_from": detail_src.parent.name, **stats.as_dict(),
            **compare(full, analyze(light, step_ms=bare).report)}


def table(results: dict, stack: dict | None) -> str:
    lines = ["| case | pairs | same sites | max GPU idle diff | saving w/o syncs, max diff | "
             "saving with rewrites, median / max diff | recorded run-to-run spread | "
             "prediction vs A/B: recorded / grafted |",
             "|" + " --- |" * 8]
    for name, r in results.items():
        lines.append(f"| {name} | {len(r['pairs'])} | {r['same_sites']}/{len(r['pairs'])} | "
                     f"{r['max_idle_diff_ms']:.4f} ms | {r['max_abs_rel_syncs']:.1%} | "
                     f"{r['median_abs_rel_rewrites']:.1%} / {r['max_abs_rel_rewrites']:.1%} | {r['own_spread']:.0%} | "
                     f"{r['prediction_error_recorded']:+.0%} / {r['prediction_error_grafted']:+.0%} |")
    if stack is not None:
        lines.append(f"| with stacks: {stack['light']} <- {stack['ops_from']} | 1 | {int(stack['same_sites'])}/1 | "
                     f"{stack['max_idle_diff_ms']:.4f} ms | {abs(stack['rel_saving_syncs'] or 0):.1%} | "
                     f"{abs(stack['rel_saving_rewrites'] or 0):.1%} | - | - |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="write the results here")
    ap.add_argument("--cases", type=int, help="only the first N cases (by name)")
    ap.add_argument("--with-stack", action="store_true", help="add the recorded detailed/light pair of ../shared")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="syncscan-graft-") as tmp:
        results = {name: run_case(runs, Path(tmp)) for name, runs in cases(args.cases).items()}
        stack = with_stack_case(Path(tmp)) if args.with_stack else None
    if args.json:
        Path(args.json).write_text(json.dumps({"cases": results, "with_stack": stack}, indent=2) + "\n")
    print("light traces with their CPU ops stripped and another run's grafted, against the traces as recorded")
    print(table(results, stack))
    return 0


if __name__ == "__main__":
    sys.exit(main())
