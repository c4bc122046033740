"""Analysis of torch.profiler (Kineto) traces: host syncs, what they cost, streams and copies.

Pure Python, no torch: usable on a trace recorded elsewhere (`syncscan analyze`) and by
`syncscan profile` right after recording.

API
---
load_trace(path, *, workers=None) -> Trace
    Reads a `.json` or `.json.gz` trace (gzip detected by content) in one streaming pass and
    keeps only what the analysis needs, in compact columns (a 1 GB trace: about 300 MiB). A
    file over 48 MB is read in two halves, the second by a helper Python process (a new
    interpreter, not a fork: safe next to torch's threads); workers=1 keeps it to one process.
    The TensorBoard-compatible copies `syncscan profile` writes (syncscan.runtime.tbcompat:
    `runtime` for `cuda_runtime`/`cuda_driver`, `gpu_annotation`, External id 0 for calls
    outside any op) read the same as torch's own traces. Raises `syncscan.errors.UserError`
    with a one-line message for a missing file, a folder, a file that is not JSON, a truncated
    or corrupt gzip, and JSON that is not a Kineto trace (no `traceEvents`, or no profiler
    events in it).

analyze(trace, *, source_sites=None, step_ms=None, replay=True) -> dict
    The report (below). `step_ms`: the step time measured without the profiler, when known;
    the replay's estimate is calibrated to it (else it answers at the trace's own speed).
    `replay=False` skips the estimate (`replay` and the per-site savings are null).
    `source_sites` is an optional list of exact Python call sites recorded by the profiler's
    sync-debug hook, one dict per sync warning:
        {"op": "aten::nonzero" | None, "file": str, "line": int, "function": str,
         "step": N | None, "order": int}
    `step` is the N of the `ProfilerStep#N` that was running (None when unknown); `order` is a
    counter increasing with each warning. Matching: sites are grouped by step (sites without a
    step, and all sites of a trace without step markers, form one sequence over the whole
    trace) and ordered by `order`; the sync events of that step are taken in host time order; walking both in order, each site takes the next unmatched event whose ops (the
    innermost op, the ops around it, or, in backward, the forward op) include the site's `op`
    (compared without the `aten::` prefix), or, when `op` is None, the next event issued by any
    op; a site whose `op` no event left shows is matched as if it were None. Events the hook
    cannot see (torch.cuda.synchronize(), event syncs, pageable
    non_blocking copies) are skipped over, so sites fill a subsequence of the events. A matched
    event takes the site's file, line and function (`line_kind` "call"); the report counts the
    sites left unmatched in `unmatched_source_sites`. Sites whose step is not in the trace
    (warm-up steps) are unmatched. Distinct call lines become distinct sync sites.

render_text(report) -> str
    The report for a terminal.

analyze_path(path, *, source_sites=None) -> dict
    load_trace + analyze; a folder means its newest `*.pt.trace.json[.gz]`.

The report (`syncscan analyze --format json`; stable: add keys, never rename or remove)
-------------------------------------------------------------------------------------
schema_version     1
trace              the file analysed
device             {"id", "name", "count"} of the GPU with the most activity; null without GPU activity
gpu_activity       false for a CPU-only trace (then see would_sync)
with_stack         Python stacks were recorded (file/function known)
cuda_sync_events   the trace has `cuda_sync` events
windows            "ProfilerStep" or "whole trace" (no step markers: one window)
steps              [{name, number, start_ms, duration_ms, gpu_busy_ms, gpu_utilization, syncs,
                     gpu_idle_from_syncs_ms, cpu_blocked_in_syncs_ms[, would_sync]}]
                   gpu_busy = union of kernel intervals over all streams inside the step;
                   gpu_utilization = gpu_busy / duration (0..1)
gpu_utilization    over all steps; gpu_bound = it is >= gpu_bound_threshold (0.8)
total_syncs, total_gpu_idle_from_syncs_ms, total_cpu_blocked_ms
estimated_saving   {per_step_ms, share_of_step, basis}: GPU idle caused by syncs per step. On a
                   GPU-bound step it is what removing the syncs gives back directly (a rewrite
                   that also drops the syncing ops' GPU work, outer_op_gpu_ms, saves more); when
                   the host sets the pace it understates the saving, which is the host time of
                   the syncing ops (outer_op_host_ms). `basis` says which.
syncs              one entry per distinct site, ranked by GPU idle caused:
                   {op (innermost op that issued the sync), outer_op (outermost op the user's
                    code called; the backward node in backward), forward_op (backward only),
                    phase ("forward"/"backward"), scope (record_function; a backward sync takes
                    its forward op's), file, line, function, line_kind ("def": the function's
                    definition line, all a trace records; "call": exact, from source_sites),
                    stack (user frames, outermost first), calls ("cudaMemcpyAsync +
                    cudaStreamSynchronize"), copy ("DtoH (Device -> Pinned)" or null),
                    count, per_step (counts, one per entry of steps), cpu_blocked_ms,
                    gpu_idle_ms, gpu_busy_during_sync_ms, outer_op_host_ms, outer_op_gpu_ms,
                    rule, rule_name, rewrite, saving_syncs_ms, saving_rewrite_ms}
                   outer_op_host_ms: host time of the outer_op instances that contained the
                    site's syncs, summed over the steps, each instance once however often it
                    synced (sync waits included; a sync outside any op counts its own calls).
                   outer_op_gpu_ms: GPU time of the kernels, copies and memsets launched from
                    inside those instances (runtime calls on the instance's thread within its
                    host interval, joined by correlation id): the length of the UNION of their
                    intervals over all streams, not a sum; null without GPU activity. An op
                    instance whose syncs fall in two sites counts in both.
                   saving_syncs_ms / saving_rewrite_ms: the replay's estimate of the step time
                    saved per step by removing this site's syncs / by applying its rule's rewrite
                    (see `replay`); null without a replay. Not additive over sites.
replay             what removing the syncs would save, from replaying the steps on a model of the
                   host and the GPU (syncscan.trace.replay, .estimate); null without GPU activity
                   or syncs: {method, trace_ms_per_step, replay_ms_per_step (the replay as
                   recorded), fit_error, target_ms_per_step, host_scale (host speed the replay
                   runs at: 1 = as traced; calibrated to target_ms_per_step when given),
                   calibrated, step_ms, without_syncs_ms, with_rewrites_ms, saving_syncs_ms,
                   saving_rewrites_ms, launch_latency_us, op_host_us, node_host_us, items,
                   steps_replayed (the first 64 steps at most), notes}
                   (or {method, skipped} for a trace too large to replay)
would_sync         CPU-only traces: the same site shape (no costs) for ops that would sync on a GPU
                   (item() and the like inside an `Optimizer.step#...` scope are left out: the
                   optimizer reading its step counters, which stay on the CPU)
streams            [{device, stream, kernels, busy_ms, copies, copy_ms, memsets}] over all GPU
                   activity in the trace; busy = union of the stream's kernel intervals
overlap            [{device, streams: [a, b], overlap_ms, share_of_less_busy}] per pair of
                   streams with kernels
memcpy             [{direction, memory (host side: Pageable/Pinned; Device for DtoD), name,
                     count, bytes, time_ms, hidden_ms, hidden_share, host_syncs, ops}]
ignored_syncs      syncs outside the steps or issued by the profiler itself
unmatched_source_sites
notes              sentences for people (caveats, GPU-bound, missing data)

What counts as a host sync and how its cost is measured: see syncscan.trace.syncs.
"""

from __future__ import annotations

from syncscan.trace.load import load_trace
from syncscan.trace.model import Trace
from syncscan.trace.render import render_text
from syncscan.trace.report import analyze


def analyze_path(path, *, source_sites: list[dict] | None = None) -> dict:
    """Load and analyse a trace file, or the newest trace in a run folder."""
    from syncscan.trace.command import resolve

    return analyze(load_trace(resolve(str(path))[0]), source_sites=source_sites)


__all__ = ["Trace", "analyze", "analyze_path", "load_trace", "render_text"]
