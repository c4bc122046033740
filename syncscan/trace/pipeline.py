"""The analysis of one loaded trace, run once: `analyze(trace) -> Analysis`.

The steps, in order (each a pure function of the trace and what came before):

    windows            ProfilerStep#N, or the whole trace           steps.windows
    sync_events        find, place in windows, attribute, cost, exact lines
    would_sync         CPU-only traces: ops that would sync on a GPU  would_sync.find_would_sync
    streams, copies    stream busy time, overlap, memcpy groups     streams
    sites              events grouped by site, with op costs        this module
    data_loading       DataLoader fetches, copies to the GPU        loader.data_loading
    replay             what removing the syncs would save           estimate
    timeline           per-step drawing data for the HTML report    this module

`Analysis` holds the report (schema.AnalyzeReport, what report.json says) and what the
renderers need beside it (the timeline), so nothing downstream reloads the trace or runs a step
again. The events themselves stay in `Analysis.events` for `syncscan profile`, which carries the
detailed pass's source lines over to the timing pass (syncscan.runtime.report).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence

from syncscan import catalog
from syncscan.schema import (
    SCHEMA_VERSION,
    AnalysisFields,
    Device,
    EstimatedSaving,
    Replay,
    ReplaySkipped,
    SourceSite,
    StepRecord,
    StreamBars,
    SyncSite,
    TimelineStep,
    TimelineSync,
    WouldSyncSite,
    check,
)
from syncscan.trace.attribution import Attribution, Attributor
from syncscan.trace.carry import SourcePattern
from syncscan.trace.estimate import estimate
from syncscan.trace.loader import LoaderModel, data_loading, model_from_trace
from syncscan.trace.model import KERNEL, MEMCPY, Trace
from syncscan.trace.opcost import instance_key, measure
from syncscan.trace.steps import WHOLE_TRACE, StepWindow, windows
from syncscan.trace.streams import memcpy_report, streams_report
from syncscan.trace.syncs import HostSync, attribute, cost, find_syncs, match_source_sites, place_in_windows
from syncscan.trace.would_sync import WouldSync, find_would_sync
from syncscan.units import US_PER_MS, ms_from_us

# share of the step wall time the GPU computes above which a run is called GPU-bound
GPU_BOUND_UTILIZATION = 0.8
# the HTML report draws the first steps only
TIMELINE_STEPS = 6
TIMELINE_WIDTH_PX = 980

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


@dataclass
class SyncEvents:
    """The host syncs of a trace's windows: attributed, costed, given exact lines where known."""

    events: list[HostSync]
    ignored: int            # outside the windows, or the profiler's own
    unmatched_sites: int    # source sites no event took


@dataclass
class Analysis:
    """One trace's analysis: the report and what the renderers draw beside it."""

    report: AnalysisFields
    timeline: list[TimelineStep] = field(default_factory=list)
    events: list[HostSync] = field(default_factory=list, repr=False, compare=False)
    would_sync: list[WouldSync] = field(default_factory=list, repr=False, compare=False)
    # site index in report["syncs"] / ["would_sync"] of each event / would-sync item
    event_site: list[int] = field(default_factory=list, repr=False, compare=False)
    would_site: list[int] = field(default_factory=list, repr=False, compare=False)

    def source_pattern(self) -> SourcePattern:
        """Where this analysis's syncs (or would-sync ops) come from, by kind and position in the
        step: to carry its source lines to another pass of the same run."""
        if self.events:
            return SourcePattern.learn(self.events, self.event_site, self.report["syncs"])
        return SourcePattern.learn(self.would_sync, self.would_site, self.report["would_sync"])


def sync_events(trace: Trace, wins: list[StepWindow], attributor: Attributor,
                source_sites: Optional[Sequence[SourceSite]] = None) -> SyncEvents:
    """Every host sync in the windows: found, placed, attributed, costed, and matched to the
    exact call sites the profiler's hooks recorded (syncscan.trace.syncs)."""
    events, ignored = place_in_windows(trace, find_syncs(trace), wins, attributor)
    attribute(events, attributor)
    cost(trace, events, wins)
    unmatched = match_source_sites(events, wins, source_sites) if source_sites else 0
    return SyncEvents(events, ignored, unmatched)


# ------------------------------------------------------------------------------------------ sites

# what is known about where a sync comes from: from the trace, replaced by the exact call line
# when a recorded source site (or the detailed pass, in `syncscan profile`) gives one
def _site_fields(att: Attribution, site: Optional[dict]) -> dict[str, Any]:
    fr = att.frame
    out: dict[str, Any] = {
        "op": att.op, "outer_op": att.outer_op, "forward_op": att.forward_op, "phase": att.phase,
        "scope": att.scope,
        "file": fr.file if fr else None, "line": fr.line if fr else None,
        "function": fr.function if fr else None,
        # the trace only knows the line where the function is defined; the profiler's hooks give
        # the exact line of the call
        "line_kind": "def" if fr else None,
        "stack": [str(f) for f in att.frames],
    }
    if site:
        out.update(file=site.get("file"), line=site.get("line"),
                   function=site.get("function", out["function"]), line_kind=site.get("line_kind", "call"))
        if site.get("stack") is not None:
            out["stack"] = site["stack"]
        if site.get("frames"):
            out["frames"] = site["frames"]
        if site.get("carried"):  # from the other pass (syncscan.trace.carry)
            out["attributed_by"] = "detail"
    return out


def _rule_fields(code: Optional[str]) -> dict[str, Any]:
    return {"rule": code, "rule_name": catalog.RULE_NAMES.get(code) if code else None,
            "rewrite": catalog.rewrite_for(code)}


def _group(items: Sequence[Any], n_windows: int, key_fields: Callable[[Any], dict]) -> tuple[list[dict], list[int]]:
    """Items grouped into sites by their key fields (all but the stack and call chain). Returns
    the sites, in first-seen order, and each item's site index."""
    sites: list[dict] = []
    index: dict[tuple, int] = {}
    of_item: list[int] = []
    for it in items:
        fields = key_fields(it)
        key = tuple((k, str(v)) for k, v in fields.items() if k not in ("stack", "frames"))
        i = index.get(key)
        if i is None:
            i = index[key] = len(sites)
            sites.append({**fields, "count": 0, "per_step": [0] * n_windows})
        s = sites[i]
        s["count"] += 1
        if 0 <= it.window < n_windows:
            s["per_step"][it.window] += 1
        of_item.append(i)
    return sites, of_item


def _sync_sites(trace: Trace, events: list[HostSync],
                n_windows: int) -> tuple[list[dict], list[list[HostSync]], list[int]]:
    """(sites ranked by GPU idle, each site's events, each event's site index)."""
    def key_fields(ev: HostSync) -> dict:
        f = _site_fields(ev.att, ev.site) if ev.att is not None else {}
        f["calls"] = " + ".join(ev.calls)
        f["copy"] = f"{ev.kind.direction} ({ev.kind.src} -> {ev.kind.dst})" if ev.kind else None
        f.update(_rule_fields(ev.rule))
        return f

    sites, of_event = _group(events, n_windows, key_fields)
    groups: list[list[HostSync]] = [[] for _ in sites]
    for ev, i in zip(events, of_event):
        groups[i].append(ev)
    op_costs = measure(trace, [{instance_key(ev) for ev in g} for g in groups])
    for s, g, (op_host, op_gpu) in zip(sites, groups, op_costs):
        idle = [ev.gpu_idle for ev in g if ev.gpu_idle is not None]
        s["cpu_blocked_ms"] = ms_from_us(sum(ev.cpu_blocked for ev in g))
        s["outer_op_host_ms"] = ms_from_us(op_host)
        s["outer_op_gpu_ms"] = ms_from_us(op_gpu)
        s["gpu_idle_ms"] = ms_from_us(sum(idle)) if idle else None
        busy = sum(ev.gpu_busy_during or 0.0 for ev in g if ev.gpu_idle is not None)
        s["gpu_busy_during_sync_ms"] = ms_from_us(busy) if idle else None
    order = sorted(range(len(sites)), key=lambda i: (-(sites[i]["gpu_idle_ms"] or 0.0), -sites[i]["cpu_blocked_ms"],
                                                     -sites[i]["count"]))
    rank = {old: new for new, old in enumerate(order)}
    return [sites[i] for i in order], [groups[i] for i in order], [rank[i] for i in of_event]


def _would_sync_sites(items: list[WouldSync], n_windows: int) -> tuple[list[dict], list[int]]:
    def key_fields(w: WouldSync) -> dict:
        f = _site_fields(w.att, w.site)
        f.update(_rule_fields(w.rule))
        return f

    sites, of_item = _group(items, n_windows, key_fields)
    order = sorted(range(len(sites)), key=lambda i: -sites[i]["count"])
    rank = {old: new for new, old in enumerate(order)}
    return [sites[i] for i in order], [rank[i] for i in of_item]


def _replay(trace: Trace, wins: list[StepWindow], events: list[HostSync], sites: list[dict],
            groups: list[list[HostSync]], step_ms: Optional[float], wanted: bool,
            loader: Optional[LoaderModel] = None) -> Optional[dict]:
    """The replay's estimate (syncscan.trace.estimate): totals for the report, per site in each site."""
    est = (estimate(trace, wins, events, groups, target_ms=step_ms, loader=loader)
           if wanted and trace.has_gpu_activity else None)
    per_site = (est or {}).pop("sites", None) or [{}] * len(sites)
    for s, e in zip(sites, per_site):
        s["saving_syncs_ms"] = e.get("saving_syncs_ms")
        s["saving_rewrite_ms"] = e.get("saving_rewrite_ms")
    return est


# ------------------------------------------------------------------------------------------ timeline

def _merge(intervals: Iterable[tuple[float, float]], resolution: float) -> list[list[float]]:
    """Sorted union, joining gaps narrower than `resolution` (less than a pixel)."""
    out: list[list[float]] = []
    for s, e in sorted(intervals):
        if out and s - out[-1][1] <= resolution:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def _timeline(trace: Trace, wins: list[StepWindow], events: list[HostSync], event_site: list[int],
              max_steps: int = TIMELINE_STEPS) -> list[TimelineStep]:
    """Per step (the first `max_steps`): busy intervals per stream and the sync events, in ms
    from the step's start, each sync with the index of its site."""
    steps: list[TimelineStep] = []
    by_window: dict[int, list[tuple[HostSync, int]]] = {}
    for ev, i in zip(events, event_site):
        by_window.setdefault(ev.window, []).append((ev, i))
    for wi, w in enumerate(wins[:max_steps]):
        dur = w.end - w.start
        res = dur / TIMELINE_WIDTH_PX if dur > 0 else 0.0
        streams: dict[str, StreamBars] = {}
        for dev, act in sorted(trace.devices.items(), key=lambda kv: str(kv[0])):
            per: dict[int, dict[str, list]] = {}
            for k, s, e, st in zip(act.kind, act.starts, act.ends, act.streams):
                if e < w.start or s > w.end:
                    continue
                slot = per.setdefault(st, {"kernels": [], "copies": []})
                bars = slot["copies" if k == MEMCPY else "kernels"]
                bars.append((max(s, w.start) - w.start, min(e, w.end) - w.start))
            for st, slot in sorted(per.items()):
                streams[f"GPU {dev} stream {st}"] = {
                    "kernels": [[a / US_PER_MS, b / US_PER_MS] for a, b in _merge(slot["kernels"], res)],
                    "copies": [[a / US_PER_MS, b / US_PER_MS] for a, b in _merge(slot["copies"], res)],
                }
        syncs: list[TimelineSync] = []
        for ev, site in by_window.get(wi, []):
            idle = ev.idle_span
            syncs.append({
                "start": (ev.start - w.start) / US_PER_MS, "end": (ev.end - w.start) / US_PER_MS,
                "idle": [(idle[0] - w.start) / US_PER_MS, (idle[1] - w.start) / US_PER_MS] if idle else None,
                "gpu_idle_ms": (ev.gpu_idle or 0.0) / US_PER_MS, "op": ev.att.op if ev.att else None,
                "site": site,
            })
        steps.append({"name": w.name, "duration_ms": dur / US_PER_MS, "streams": streams, "syncs": syncs})
    return steps


assert KERNEL != MEMCPY  # the timeline draws everything that is not a copy as a kernel bar


# ------------------------------------------------------------------------------------------ report

def _device_name(trace: Trace, dev: Any) -> Optional[str]:
    for p in trace.meta.get("deviceProperties") or []:
        if isinstance(p, dict) and p.get("id") == dev:
            return p.get("name")
    return None


def _notes(trace: Trace, *, gpu: bool, utilization: Optional[float], gpu_bound: bool, se: SyncEvents,
           would: list, source_sites, primary: Any) -> list[str]:
    notes: list[str] = []
    if not gpu:
        notes.append("No GPU activity was recorded in this trace (a CPU-only run, or CUDA activity "
                     "not profiled): nothing could be measured. `would_sync` lists the ops in the "
                     "steps that would sync on a GPU.")
    if not trace.steps:
        notes.append("No ProfilerStep#N markers: the whole trace is analysed as one window.")
    if se.events:
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
    if not trace.with_stack and (se.events or would):
        notes.append("Recorded without with_stack=True: no Python file or function for the syncs.")
    if trace.with_stack and (se.events or would) and not source_sites:
        notes.append("`line` is the line where the Python function is defined (the trace records "
                     "no call lines); `syncscan profile` fills in the exact call line.")
    if se.ignored:
        notes.append(f"{se.ignored} sync(s) outside the steps or issued by the profiler itself were ignored.")
    if se.unmatched_sites:
        notes.append(f"{se.unmatched_sites} source site(s) from the sync-debug hook matched no sync in the trace.")
    malformed = trace.counts.get("_malformed", 0)
    if malformed:
        notes.append(f"{malformed} event(s) with a field of the wrong type (a text \"dur\", a list \"cat\") "
                     "were skipped.")
    if len([d for d in trace.devices.values() if len(d)]) > 1:
        notes.append(f"Several GPUs in one trace: step utilisation is for device {primary}.")
    return notes


def analyze(trace: Trace, *, source_sites: Optional[Sequence[SourceSite]] = None, step_ms: Optional[float] = None,
            replay: bool = True, sources: Optional[SourcePattern] = None,
            loader: Optional[LoaderModel] = None) -> Analysis:
    """The analysis of a loaded trace (the report's keys: syncscan.schema.AnalysisFields).

    `source_sites`: exact call sites recorded by `syncscan profile`'s hooks (syncscan.trace.syncs
    .match_source_sites says how they are matched). `step_ms`: the step time measured without the
    profiler, when known: the replay's estimate is calibrated to it (else it answers at the
    trace's own speed). `replay=False` skips the estimate (a pass whose timing is not used).
    `sources`: source lines learnt from another pass of the same run (syncscan.trace.carry), for
    the syncs no source site names. `loader`: the input pipeline as the run measured it (syncscan
    profile's bare pass); without it, the trace's own DataLoader waits, when they pace its steps
    (syncscan.trace.loader)."""
    wins = windows(trace)
    n = len(wins)
    attributor = Attributor(trace)
    gpu = trace.has_gpu_activity
    primary = trace.primary_device()

    se = sync_events(trace, wins, attributor, source_sites)
    events = se.events
    streams, overlap, unions = streams_report(trace)
    memcpy = memcpy_report(trace, attributor, events, unions)
    would = find_would_sync(trace, wins, attributor) if not gpu else []
    if would and source_sites:  # a CPU run's recorded call sites (syncscan.runtime.oprecorder)
        se.unmatched_sites = match_source_sites(would, wins, source_sites)
    if sources:
        sources.apply(events)
        sources.apply(would)

    idle_per_window = [0.0] * n  # the events' idle spans do not overlap (syncs.cost)
    blocked_per_window = [0.0] * n
    syncs_per_window = [0] * n
    for ev in events:
        syncs_per_window[ev.window] += 1
        blocked_per_window[ev.window] += ev.cpu_blocked
        if ev.gpu_idle is not None:
            idle_per_window[ev.window] += ev.gpu_idle
    would_per_window = [0] * n
    for x in would:
        if 0 <= x.window < n:
            would_per_window[x.window] += 1
    kernel_union = unions.get(primary)
    t0 = wins[0].start if wins else 0.0
    steps: list[StepRecord] = []
    for i, w in enumerate(wins):
        busy = kernel_union.covered(w.start, w.end) if kernel_union is not None else 0.0
        step: dict[str, Any] = {
            "name": w.name, "number": w.number,
            "start_ms": ms_from_us(w.start - t0), "duration_ms": ms_from_us(w.duration),
            "gpu_busy_ms": ms_from_us(busy) if gpu else None,
            "gpu_utilization": (busy / w.duration if w.duration > 0 else 0.0) if gpu else None,
            "syncs": syncs_per_window[i],
            "gpu_idle_from_syncs_ms": ms_from_us(idle_per_window[i]) if gpu else None,
            "cpu_blocked_in_syncs_ms": ms_from_us(blocked_per_window[i]),
        }
        if not gpu:
            step["would_sync"] = would_per_window[i]
        steps.append(step)  # type: ignore[arg-type]

    total_wall = sum(w.duration for w in wins)
    total_busy = sum(kernel_union.covered(w.start, w.end) for w in wins) if kernel_union is not None else 0.0
    utilization = (total_busy / total_wall) if (gpu and total_wall > 0) else None
    gpu_bound = bool(utilization is not None and utilization >= GPU_BOUND_UTILIZATION)
    per_step_idle = sum(idle_per_window) / n if n else 0.0
    mean_step = total_wall / n if n else 0.0

    sites, groups, event_site = _sync_sites(trace, events, n)
    loading = data_loading(trace, wins, events, unions, primary)
    estimate_ = _replay(trace, wins, events, sites, groups, step_ms, replay,
                        loader if loader is not None else model_from_trace(loading))
    would_sites, would_site = _would_sync_sites(would, n)
    notes = _notes(trace, gpu=gpu, utilization=utilization, gpu_bound=gpu_bound, se=se, would=would,
                   source_sites=source_sites or sources, primary=primary)
    notes += (estimate_ or {}).get("notes", [])
    device: Optional[Device] = {"id": primary, "name": _device_name(trace, primary),
                                "count": len([d for d in trace.devices.values() if len(d)])} if gpu else None
    saving: Optional[EstimatedSaving] = {
        "per_step_ms": ms_from_us(per_step_idle),
        "share_of_step": (per_step_idle / mean_step) if mean_step > 0 else 0.0,
        "basis": SAVING_BASIS_GPU_BOUND if gpu_bound else SAVING_BASIS_HOST_BOUND,
    } if gpu else None
    report: AnalysisFields = {
        "schema_version": SCHEMA_VERSION,
        "trace": trace.path,
        "device": device,
        "gpu_activity": gpu,
        "with_stack": trace.with_stack,
        "cuda_sync_events": bool(trace.cuda_syncs),
        "windows": "ProfilerStep" if trace.steps else WHOLE_TRACE,
        "steps": steps,
        "gpu_utilization": utilization,
        "gpu_bound": gpu_bound,
        "gpu_bound_threshold": GPU_BOUND_UTILIZATION,
        "total_syncs": len(events),
        "total_gpu_idle_from_syncs_ms": ms_from_us(sum(idle_per_window)) if gpu else None,
        "total_cpu_blocked_ms": ms_from_us(sum(ev.cpu_blocked for ev in events)) or 0.0,
        "estimated_saving": saving,
        "syncs": sites,  # type: ignore[typeddict-item]
        "replay": estimate_,  # type: ignore[typeddict-item]
        "would_sync": would_sites,  # type: ignore[typeddict-item]
        "streams": streams,  # type: ignore[typeddict-item]
        "overlap": overlap,  # type: ignore[typeddict-item]
        "memcpy": memcpy,  # type: ignore[typeddict-item]
        "data_loading": loading,
        "ignored_syncs": se.ignored,
        "unmatched_source_sites": se.unmatched_sites,
        "notes": notes,
    }
    check(report)
    return Analysis(report, _timeline(trace, wins, events, event_site), events, would, event_site, would_site)


def empty_analysis() -> AnalysisFields:
    """The analysis fields of a run in which no pass was traced: nothing measured."""
    return {
        "schema_version": SCHEMA_VERSION, "trace": None, "device": None, "gpu_activity": False,
        "with_stack": False, "cuda_sync_events": False, "windows": None, "steps": [], "gpu_utilization": None,
        "gpu_bound": False, "gpu_bound_threshold": GPU_BOUND_UTILIZATION, "total_syncs": 0,
        "total_gpu_idle_from_syncs_ms": None, "total_cpu_blocked_ms": 0.0, "estimated_saving": None,
        "syncs": [], "replay": None, "would_sync": [], "streams": [], "overlap": [], "memcpy": [],
        "data_loading": None, "ignored_syncs": 0, "unmatched_source_sites": 0, "notes": [],
    }


__all__ = ["Analysis", "SyncEvents", "analyze", "empty_analysis", "sync_events", "Replay", "ReplaySkipped",
           "SyncSite", "WouldSyncSite"]
