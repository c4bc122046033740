"""`analyze(trace) -> dict`: the stable JSON report, and `render_text(report)` for the terminal."""

from __future__ import annotations

from syncscan import catalog
from syncscan.trace.attribution import Attribution, Attributor
from syncscan.trace.estimate import estimate
from syncscan.trace.model import Trace
from syncscan.trace.opcost import instance_key, measure
from syncscan.trace.rewrites import rewrite_for
from syncscan.trace.steps import WHOLE_TRACE, windows
from syncscan.trace.streams import memcpy_report, streams_report
from syncscan.trace.syncs import (
    SyncEvent, attribute, cost, find_syncs, match_source_sites, place_in_windows,
)
from syncscan.trace.would_sync import WouldSync, find_would_sync

SCHEMA_VERSION = 1
# share of the step wall time the GPU computes above which a run is called GPU-bound
GPU_BOUND_UTILIZATION = 0.8
US_PER_MS = 1000.0

BLOCKED_CAVEAT = ("CPU blocked time is not what a sync costs: when the GPU has work queued, the host "
                  "mostly waits for that work to finish, which it had to do anyway. The cost is the GPU "
                  "idle time the sync causes, from the moment the GPU's queue drains until the host "
                  "launches new work (gpu_idle_ms).")
# estimated_saving.basis: what the GPU idle from syncs means for the speed-up, by regime
SAVING_BASIS_GPU_BOUND = ("GPU idle caused by syncs per step: on a GPU-bound step, the time removing them "
                          "gives back directly; a rewrite that also drops the GPU work of the syncing ops "
                          "(outer_op_gpu_ms) saves more")
SAVING_BASIS_HOST_BOUND = ("GPU idle caused by syncs per step: the host sets the pace, so this understates "
                           "the saving; what can go is the host time of the ops that sync, waits included "
                           "(outer_op_host_ms)")


def _ms(us: float | None) -> float | None:
    return None if us is None else round(us / US_PER_MS, 6)


def _site_fields(att: Attribution, site: dict | None) -> dict:
    fr = att.frame
    out = {
        "op": att.op, "outer_op": att.outer_op, "forward_op": att.forward_op, "phase": att.phase,
        "scope": att.scope,
        "file": fr.file if fr else None, "line": fr.line if fr else None,
        "function": fr.function if fr else None,
        # the trace only knows the line where the function is defined; the profiler's
        # sync-debug hook gives the exact line of the call
        "line_kind": "def" if fr else None,
        "stack": [str(f) for f in att.frames],
    }
    if site:
        out.update(file=site.get("file"), line=site.get("line"),
                   function=site.get("function", out["function"]), line_kind="call")
    return out


def _aggregate(items, n_windows: int, key_fields, per_item) -> list[dict]:
    sites: dict[tuple, dict] = {}
    for it in items:
        fields = key_fields(it)
        key = tuple((k, str(v)) for k, v in fields.items() if k != "stack")
        s = sites.get(key)
        if s is None:
            s = sites[key] = {**fields, "count": 0, "per_step": [0] * n_windows}
        s["count"] += 1
        if 0 <= it.window < n_windows:
            s["per_step"][it.window] += 1
        per_item(s, it)
    return list(sites.values())


def _sync_sites(trace: Trace, events: list[SyncEvent], n_windows: int) -> list[dict]:
    def key_fields(ev: SyncEvent) -> dict:
        f = _site_fields(ev.att, ev.site)
        f["calls"] = " + ".join(ev.calls)
        f["copy"] = (f"{ev.kind.direction} ({ev.kind.src} -> {ev.kind.dst})" if ev.kind else None)
        f["rule"] = ev.rule
        return f

    def per_item(s: dict, ev: SyncEvent) -> None:
        s.setdefault("_events", []).append(ev)
        s["_blocked"] = s.get("_blocked", 0.0) + ev.cpu_blocked
        s.setdefault("_instances", set()).add(instance_key(ev))
        if ev.gpu_idle is not None:
            s["_idle"] = s.get("_idle", 0.0) + ev.gpu_idle
            s["_busy"] = s.get("_busy", 0.0) + (ev.gpu_busy_during or 0.0)

    sites = _aggregate(events, n_windows, key_fields, per_item)
    op_costs = measure(trace, [s.pop("_instances") for s in sites])
    for s, (op_host, op_gpu) in zip(sites, op_costs):
        s["cpu_blocked_ms"] = _ms(s.pop("_blocked", 0.0))
        s["outer_op_host_ms"] = _ms(op_host)
        s["outer_op_gpu_ms"] = _ms(op_gpu)
        s["gpu_idle_ms"] = _ms(s.pop("_idle", None))
        s["gpu_busy_during_sync_ms"] = _ms(s.pop("_busy", None))
        s["rule_name"] = catalog.RULE_NAMES.get(s["rule"]) if s["rule"] else None
        s["rewrite"] = rewrite_for(s["rule"])
    sites.sort(key=lambda s: (-(s["gpu_idle_ms"] or 0.0), -s["cpu_blocked_ms"], -s["count"]))
    return sites


def _would_sync_sites(items: list[WouldSync], n_windows: int) -> list[dict]:
    def key_fields(w: WouldSync) -> dict:
        f = _site_fields(w.att, None)
        f["rule"] = w.rule
        return f

    sites = _aggregate(items, n_windows, key_fields, lambda s, w: None)
    for s in sites:
        s["rule_name"] = catalog.RULE_NAMES.get(s["rule"]) if s["rule"] else None
        s["rewrite"] = rewrite_for(s["rule"])
    sites.sort(key=lambda s: -s["count"])
    return sites


def _idle_per_window(events: list[SyncEvent], n: int) -> list[float]:
    """GPU idle caused by syncs per window (the events' spans do not overlap, see syncs.cost)."""
    per = [0.0] * n
    for ev in events:
        if ev.gpu_idle is not None and 0 <= ev.window < n:
            per[ev.window] += ev.gpu_idle
    return per


def _device_name(trace: Trace, dev) -> str | None:
    for p in trace.meta.get("deviceProperties") or []:
        if isinstance(p, dict) and p.get("id") == dev:
            return p.get("name")
    return None


def _replay(trace: Trace, wins, events: list[SyncEvent], sites: list[dict], step_ms: float | None,
            wanted: bool = True) -> dict | None:
    """The replay's estimate (syncscan.trace.estimate): totals in the report, per site in each site."""
    groups = [s.pop("_events") for s in sites]
    if not wanted or not trace.has_gpu_activity:
        for s in sites:
            s["saving_syncs_ms"] = s["saving_rewrite_ms"] = None
        return None
    est = estimate(trace, wins, events, groups, target_ms=step_ms)
    per_site = (est or {}).pop("sites", None)
    for s, e in zip(sites, per_site or [{}] * len(sites)):
        s["saving_syncs_ms"] = e.get("saving_syncs_ms")
        s["saving_rewrite_ms"] = e.get("saving_rewrite_ms")
    return est


def analyze(trace: Trace, *, source_sites: list[dict] | None = None, step_ms: float | None = None,
            replay: bool = True) -> dict:
    """The report for a loaded trace (see the package docstring for its keys). `step_ms`: the
    step time measured without the profiler, when known: the replay's estimate is calibrated
    to it (else it answers at the trace's own speed). `replay=False` skips the estimate (a pass
    whose timing is not used)."""
    wins = windows(trace)
    n = len(wins)
    attributor = Attributor(trace)
    gpu = trace.has_gpu_activity
    primary = trace.primary_device()

    events, ignored = place_in_windows(trace, find_syncs(trace), wins, attributor)
    attribute(events, attributor)
    cost(trace, events, wins)
    unmatched = match_source_sites(events, wins, source_sites) if source_sites else 0

    streams, overlap, unions = streams_report(trace)
    memcpy = memcpy_report(trace, attributor, events, unions)
    would = find_would_sync(trace, wins, attributor) if not gpu else []

    idle_per_window = _idle_per_window(events, n)
    kernel_union = unions.get(primary)
    steps = []
    t0 = wins[0].start if wins else 0.0
    by_window: list[list[SyncEvent]] = [[] for _ in wins]
    for ev in events:
        by_window[ev.window].append(ev)
    would_per_window = [0] * n
    for x in would:
        if 0 <= x.window < n:
            would_per_window[x.window] += 1
    for i, w in enumerate(wins):
        in_w = by_window[i]
        busy = kernel_union.covered(w.start, w.end) if kernel_union is not None else 0.0
        step = {
            "name": w.name, "number": w.number,
            "start_ms": _ms(w.start - t0), "duration_ms": _ms(w.duration),
            "gpu_busy_ms": _ms(busy) if gpu else None,
            "gpu_utilization": (busy / w.duration if w.duration > 0 else 0.0) if gpu else None,
            "syncs": len(in_w),
            "gpu_idle_from_syncs_ms": _ms(idle_per_window[i]) if gpu else None,
            "cpu_blocked_in_syncs_ms": _ms(sum(ev.cpu_blocked for ev in in_w)),
        }
        if not gpu:
            step["would_sync"] = would_per_window[i]
        steps.append(step)

    total_wall = sum(w.duration for w in wins)
    total_busy = sum(kernel_union.covered(w.start, w.end) for w in wins) if kernel_union is not None else 0.0
    utilization = (total_busy / total_wall) if (gpu and total_wall > 0) else None
    gpu_bound = bool(utilization is not None and utilization >= GPU_BOUND_UTILIZATION)
    total_idle = sum(idle_per_window)
    per_step_idle = total_idle / n if n else 0.0
    mean_step = total_wall / n if n else 0.0

    notes: list[str] = []
    if not gpu:
        notes.append("No GPU activity was recorded in this trace (a CPU-only run, or CUDA activity "
                     "not profiled): nothing could be measured. `would_sync` lists the ops in the "
                     "steps that would sync on a GPU.")
    if not trace.steps:
        notes.append("No ProfilerStep#N markers: the whole trace is analysed as one window.")
    if events:
        notes.append(BLOCKED_CAVEAT)
    if gpu and utilization is not None:
        if gpu_bound:
            notes.append(f"GPU-bound: the GPU computes {utilization:.0%} of the step time. Syncs cost "
                         "little idle here; the rewrites help mostly by dropping the GPU work the "
                         "synced ops do (e.g. masked copies).")
        else:
            notes.append(f"The GPU computes {utilization:.0%} of the step time: the host (Python and "
                         "kernel launches) sets the pace, and each sync leaves the GPU idle until the "
                         "host launches again.")
    if not trace.with_stack and (events or would):
        notes.append("Recorded without with_stack=True: no Python file or function for the syncs.")
    if trace.with_stack and events and not source_sites:
        notes.append("`line` is the line where the Python function is defined (the trace records "
                     "no call lines); `syncscan profile` fills in the exact call line.")
    if ignored:
        notes.append(f"{ignored} sync(s) outside the steps or issued by the profiler itself were ignored.")
    if unmatched:
        notes.append(f"{unmatched} source site(s) from the sync-debug hook matched no sync in the trace.")
    if len([d for d in trace.devices.values() if len(d)]) > 1:
        notes.append(f"Several GPUs in one trace: step utilisation is for device {primary}.")

    sync_sites = _sync_sites(trace, events, n)
    estimate_ = _replay(trace, wins, events, sync_sites, step_ms, replay)
    notes += (estimate_ or {}).get("notes", [])
    return {
        "schema_version": SCHEMA_VERSION,
        "trace": trace.path,
        "device": {"id": primary, "name": _device_name(trace, primary),
                   "count": len([d for d in trace.devices.values() if len(d)])} if gpu else None,
        "gpu_activity": gpu,
        "with_stack": trace.with_stack,
        "cuda_sync_events": bool(trace.cuda_syncs),
        "windows": "ProfilerStep" if trace.steps else WHOLE_TRACE,
        "steps": steps,
        "gpu_utilization": utilization,
        "gpu_bound": gpu_bound,
        "gpu_bound_threshold": GPU_BOUND_UTILIZATION,
        "total_syncs": len(events),
        "total_gpu_idle_from_syncs_ms": _ms(total_idle) if gpu else None,
        "total_cpu_blocked_ms": _ms(sum(ev.cpu_blocked for ev in events)),
        "estimated_saving": {
            "per_step_ms": _ms(per_step_idle),
            "share_of_step": (per_step_idle / mean_step) if mean_step > 0 else 0.0,
            "basis": SAVING_BASIS_GPU_BOUND if gpu_bound else SAVING_BASIS_HOST_BOUND,
        } if gpu else None,
        "syncs": sync_sites,
        "replay": estimate_,
        "would_sync": _would_sync_sites(would, n),
        "streams": streams,
        "overlap": overlap,
        "memcpy": memcpy,
        "ignored_syncs": ignored,
        "unmatched_source_sites": unmatched,
        "notes": notes,
    }
