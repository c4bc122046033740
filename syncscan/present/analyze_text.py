"""`render_text(report) -> str`: the terminal form of one trace's analysis (schema.AnalysisFields)."""

from __future__ import annotations

from typing import Any, Mapping

from syncscan.present.input_text import render_data_loading
from syncscan.trace.pipeline import BLOCKED_CAVEAT
from syncscan.units import format_ms as _ms

OVERLAP_SHOWN_MIN_MS = 0.0005  # below what a report prints (3 decimals): "0.000 ms" says nothing
OVERLAP_SHOWN_MAX = 10


def overlap_worth_showing(overlap: list, limit: int = OVERLAP_SHOWN_MAX) -> tuple[list, int]:
    """(the pairs of streams a report lists, how many it leaves out): the pairs that ran at the
    same time, most overlap first, at most `limit` (text and HTML; report.json keeps them all).
    An LSTM's cuDNN streams give dozens of pairs that never overlap; a line of "0.000 ms" for
    each buried the ones that do."""
    ran_together = sorted((o for o in overlap if (o.get("overlap_ms") or 0.0) >= OVERLAP_SHOWN_MIN_MS),
                          key=lambda o: -o["overlap_ms"])
    shown = ran_together[:limit]
    return shown, len(overlap) - len(shown)


def saves(ms: float) -> str:
    """A predicted saving in words: a rewrite that adds more work than it removes costs time."""
    return f"saves {ms:.3f} ms" if ms >= 0 else f"costs {-ms:.3f} ms more"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1%}"


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _where(s: Mapping[str, Any]) -> str:
    parts = []
    op, outer = s.get("op"), s.get("outer_op")
    if op is None:
        parts.append(f"{s.get('calls') or 'sync'} (outside any op)")
    elif outer and outer != op:
        parts.append(f"{op} in {outer}")
    else:
        parts.append(op)
    if s.get("forward_op"):
        parts.append(f"backward of {s['forward_op']}")
    if s.get("scope"):
        parts.append(f"scope {s['scope']}")
    return " · ".join(parts)


def _source(s: Mapping[str, Any]) -> str | None:
    if not s.get("file"):
        return None
    line = f"{s['file']}:{s['line']}" if s.get("line") is not None else s["file"]
    func = f" {s['function']}" if s.get("function") else ""
    kind = " (def line)" if s.get("line_kind") == "def" else ""
    return f"{line}{func}{kind}"


def _op_cost(s: Mapping[str, Any]) -> str | None:
    """Host and GPU time of the site's syncing ops (all steps together)."""
    if s.get("outer_op_host_ms") is None:
        return None
    gpu = f", GPU {_ms(s['outer_op_gpu_ms'])}" if s.get("outer_op_gpu_ms") is not None else ""
    return f"time in the {s.get('outer_op') or 'sync'} calls that synced: host {_ms(s['outer_op_host_ms'])}{gpu}"


def _per_step(s: Mapping[str, Any], n_steps: int) -> str:
    ps = s.get("per_step") or []
    if n_steps > 1 and ps and len(set(ps)) == 1:
        return f"{s['count']} ({ps[0]}/step)"
    return str(s["count"])


def _ops_per_step(report: Mapping[str, Any], key: str, n: int) -> float | None:
    """A per-site figure of the syncing ops (outer_op_host_ms, outer_op_gpu_ms) per step."""
    sites = [s for s in report.get("syncs") or [] if s.get("only_in") != "detail"]
    if not sites or n < 1 or any(s.get(key) is None for s in sites):
        return None
    return sum(s[key] for s in sites) / n


def _saving_lines(report: Mapping[str, Any], n: int, stepped: bool) -> list[str]:
    """What removing the syncs would save: the replay's answer, else what the GPU idle means."""
    unit = "per step" if stepped else "over the trace"
    rp = report.get("replay") or {}
    if rp.get("saving_rewrites_ms") is not None:
        speed = (f"host at {rp['target_ms_per_step']:.3f} ms/step" if rp.get("calibrated")
                 else "the trace's own speed")
        return [f"replayed ({speed}): removing the syncs {saves(rp['saving_syncs_ms'])} {unit}; "
                f"with the rewrites, {saves(rp['saving_rewrites_ms'])} (of {_ms(rp['step_ms'])})"]
    if report.get("gpu_bound"):
        gpu = _ops_per_step(report, "outer_op_gpu_ms", n)
        out = ["GPU-bound: this idle is what removing the syncs gives back directly;"]
        if gpu:
            out.append(f"a rewrite that also drops the syncing ops' GPU work saves up to {_ms(gpu)} more {unit}")
        return out
    host = _ops_per_step(report, "outer_op_host_ms", n)
    out = ["the host sets the pace: GPU idle understates the saving; what can go is the host time"]
    out.append(f"of the ops that sync, waits included: {_ms(host)} {unit}" if host is not None
               else "of the ops that sync (not measured here)")
    return out


def render_text(report: Mapping[str, Any]) -> str:
    """One trace's analysis (schema.AnalysisFields; a ProfileReport holds the same keys)."""
    out: list[str] = []
    add = out.append
    add(f"syncscan analyze  {report.get('trace', '')}")
    steps = report.get("steps") or []
    dev = report.get("device")
    head = []
    if dev:
        head.append(f"GPU: {dev.get('name') or 'device ' + str(dev.get('id'))}"
                    + (f" (+{dev['count'] - 1} more)" if dev.get("count", 1) > 1 else ""))
    else:
        head.append("no GPU activity recorded")
    if report.get("windows") == "ProfilerStep":
        head.append(f"{len(steps)} steps ({steps[0]['name']} .. {steps[-1]['name']})" if steps else "no steps")
    else:
        head.append("no ProfilerStep markers: one window")
    head.append("Python stacks: " + ("yes" if report.get("with_stack") else "no"))
    add(" · ".join(head))
    add("")

    gpu = report.get("gpu_activity")
    # -- steps --------------------------------------------------------------------------------
    add(f"{'Step':<22}{'wall':>11}{'GPU busy':>10}{'host syncs':>12}{'GPU idle from syncs':>21}")
    for s in steps:
        count = s["syncs"] if gpu else f"({s.get('would_sync', 0)} would)"
        add(f"  {s['name']:<20}{_ms(s['duration_ms'], 2):>11}{_pct(s['gpu_utilization']):>10}"
            f"{count:>12}{_ms(s['gpu_idle_from_syncs_ms']):>21}")
    stepped = report.get("windows") == "ProfilerStep"
    if gpu and report.get("gpu_utilization") is not None:
        verdict = ("GPU-bound" if report.get("gpu_bound")
                   else "not GPU-bound (the host sets the pace)")
        over = "of the step time over all steps" if stepped else "of the trace"
        add(f"  GPU busy {_pct(report['gpu_utilization'])} {over}: {verdict}")
        es = report.get("estimated_saving") or {}
        if report.get("total_syncs"):
            per = (f"{_ms(es.get('per_step_ms'))} per step ({_pct(es.get('share_of_step'))} of a step)"
                   if stepped else f"{_ms(es.get('per_step_ms'))} ({_pct(es.get('share_of_step'))} of the trace)")
            add(f"  GPU idle caused by syncs: {per}")
            for line in _saving_lines(report, len(steps), stepped):
                add(f"    {line}")
    add("")

    # -- syncs --------------------------------------------------------------------------------
    syncs = report.get("syncs") or []
    n = len(steps)
    if syncs:
        total = report.get("total_syncs", sum(s["count"] for s in syncs))
        per = f", {total / n:.3g} per step" if n > 1 else ""
        add(f"Host syncs: {total} in {n} {'steps' if n != 1 else 'window'}{per}; "
            f"{len(syncs)} site{'s' if len(syncs) != 1 else ''}, ranked by GPU idle caused")
        add(f"  {'#':>2}  {'GPU idle':>11}  {'CPU blocked':>12}  {'count':<12} where")
        for i, s in enumerate(syncs, 1):
            add(f"  {i:>2}  {_ms(s['gpu_idle_ms']):>11}  {_ms(s['cpu_blocked_ms']):>12}  "
                f"{_per_step(s, n):<12} {_where(s)}")
            detail = [x for x in (_source(s), s.get("calls"), s.get("copy")) if x]
            add("        " + " · ".join(detail))
            cost = _op_cost(s)
            if cost:
                add(f"        {cost}")
            if s.get("saving_rewrite_ms") is not None:
                add(f"        replayed without it: {saves(s['saving_syncs_ms'])} per step; "
                    f"with its rewrite: {saves(s['saving_rewrite_ms'])}")
            if s.get("rule"):
                add(f"        {s['rule']} {s.get('rule_name') or ''}: {s.get('rewrite') or ''}".rstrip())
        add("  Note: " + BLOCKED_CAVEAT)
    elif gpu:
        add("Host syncs: none in the steps.")
    would = report.get("would_sync") or []
    if not gpu:
        add("No GPU activity was recorded: nothing measured.")
        if would:
            total = sum(s["count"] for s in would)
            add(f"Would sync on a GPU: {total} op call{'s' if total != 1 else ''} at {len(would)} site"
                f"{'s' if len(would) != 1 else ''}")
            for i, s in enumerate(would, 1):
                add(f"  {i:>2}  {_per_step(s, n):<12} {_where(s)}")
                src = _source(s)
                if src:
                    add(f"        {src}")
                if s.get("rule"):
                    add(f"        {s['rule']} {s.get('rule_name') or ''}: {s.get('rewrite') or ''}".rstrip())
        else:
            add("No op in the steps would sync on a GPU.")
    add("")

    # -- streams ------------------------------------------------------------------------------
    streams = report.get("streams") or []
    if streams:
        add("Streams (all GPU activity in the trace)")
        for st in streams:
            add(f"  device {st['device']} stream {st['stream']:<6}{st['kernels']:>7} kernels  "
                f"busy {_ms(st['busy_ms'])}  {st['copies']} copies ({_ms(st['copy_ms'])})  {st['memsets']} memsets")
        overlap = report.get("overlap") or []
        shown, left_out = overlap_worth_showing(overlap)
        for ov in shown:
            a, b = ov["streams"]
            add(f"  overlap device {ov['device']} streams {a} & {b}: {_ms(ov['overlap_ms'])} "
                f"({_pct(ov['share_of_less_busy'])} of the less busy stream)")
        pairs = f"{left_out} pair{'s' if left_out != 1 else ''}"
        if left_out and not shown:
            add(f"  overlap: none (no two streams ran at the same time; {pairs})")
        elif left_out:
            add(f"  overlap of the other {pairs} of streams: less, or none (every pair is in the JSON report)")
        add("")
    copies = report.get("memcpy") or []
    if copies:
        add("Copies")
        for c in copies:
            ops = ", ".join(f"{k} ×{v}" for k, v in list(c["ops"].items())[:3])
            add(f"  {c['direction']} {c['memory']:<9}{c['count']:>6} copies  {_bytes(c['bytes']):>9}  "
                f"{_ms(c['time_ms'])}  {_pct(c['hidden_share'])} hidden behind kernels  "
                f"{c['host_syncs']} host syncs  {ops}")
        add("")
    loading = report.get("data_loading")
    if loading and "input_pipeline" not in report:  # a profile shows its own input-pipeline section
        add("Data loading")
        for line in render_data_loading(loading):
            add(f"  {line}")
        add("")
    notes = [x for x in report.get("notes") or [] if x != BLOCKED_CAVEAT]
    if notes:
        add("Notes")
        for x in notes:
            add(f"  - {x}")
    return "\n".join(out).rstrip() + "\n"
