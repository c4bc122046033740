"""The input pipeline as text: a profiled run's `input_pipeline` record (schema.InputPipeline) and
a trace's `data_loading` record (schema.DataLoading). Renderers only read the records."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from syncscan.units import format_ms as _ms


def _settings(lo: Mapping[str, Any]) -> str:
    if lo["kind"] == "single process":
        parts = ["loading in the main process (num_workers=0)"]
    else:
        parts = [f"{lo['workers']} worker{'s' if lo['workers'] != 1 else ''}",
                 f"prefetch_factor {lo['prefetch_factor']}",
                 "persistent" if lo["persistent_workers"] else "not persistent"]
    parts.append("pin_memory" if lo["pin_memory"] else "no pin_memory")
    if lo.get("batch_size"):
        parts.append(f"batch {lo['batch_size']}")
    data = lo["dataset"] + (f", transform {lo['transform']}" if lo.get("transform") else "")
    return ", ".join(parts) + f"; {data}"


def _pace_lines(p: Mapping[str, Any], workers: Optional[Mapping[str, Any]], main: Mapping[str, Any]) -> list[str]:
    step = f"{p['step_ms']:.1f} ms"
    if p["resource"] == "input pipeline" and p["load_ms"] and not p["wait_ms"]:
        head = (f"the input pipeline sets the pace: the main process spends {p['load_ms']:.1f} ms of each "
                f"{step} step loading data")
    elif p["resource"] == "input pipeline":
        head = f"the input pipeline sets the pace: the step waits {p['wait_ms']:.1f} ms for data on average (of {step})"
    else:
        head = (f"the {p['resource']} sets the pace: the step waits {p['wait_ms']:.2f} ms for data on average "
                f"(of {step})")
    lines = [head]
    if workers:
        plural = workers["where"] == "workers" and main["workers"] != 1
        who = (f"{main['workers']} worker{'s' if plural else ''}" if workers["where"] == "workers"
               else "the main process")
        inside = []
        if workers.get("transform_ms") is not None:
            inside.append(f"{workers['transform_ms']:.1f} in the dataset's transform")
        if workers.get("collate_ms"):
            inside.append(f"{workers['collate_ms']:.1f} in collate")
        detail = f" ({', '.join(inside)})" if inside else ""
        pin = f"; the pin-memory thread takes {workers['pin_ms']:.1f} ms per batch" if workers.get("pin_ms") else ""
        busy = f"; busy {workers['busy_share']:.0%} of the time" if workers.get("busy_share") is not None else ""
        lines.append(f"{who} deliver{'' if plural else 's'} a batch every {workers['capacity_ms']:.1f} ms at best: "
                     f"{workers['batch_ms']:.1f} ms per batch{detail}{pin}{busy}")
    if p.get("compute_ms") is not None:
        gpu = f" (the GPU needs {p['gpu_ms']:.1f} ms)" if p.get("gpu_ms") is not None else ""
        lines.append(f"with data at hand, host and GPU would need {p['compute_ms']:.1f} ms per step{gpu}")
    if p.get("saving_bound_ms") is not None and p.get("loader_period_ms") is not None:
        lines.append(f"a batch comes every {p['loader_period_ms']:.1f} ms: a saving in host or GPU time (syncs "
                     f"included) takes at most {p['saving_bound_ms']:.2f} ms off the step; the loader absorbs the rest")
    return lines


def input_title(rec: Mapping[str, Any]) -> str:
    main = rec["loaders"][rec["main"]] if rec.get("main") is not None else None
    return f"Input pipeline ({_settings(main)})" if main else "Input pipeline"


def input_summary(rec: Mapping[str, Any], loading: Optional[Mapping[str, Any]]) -> list[str]:
    """What sets the pace and the numbers behind it, one statement a line."""
    main = rec["loaders"][rec["main"]] if rec.get("main") is not None else {}
    out = []
    p = rec.get("pace")
    if p:
        out += _pace_lines(p, rec.get("workers"), main)
    out.append(f"next(loader): {rec['fetch_ms_per_step']:.3f} ms per step, {rec['wait_ms_per_step']:.3f} ms of it "
               f"waiting for a batch ({rec['fetches_per_step']:g} batch{'es' if rec['fetches_per_step'] != 1 else ''} "
               "per step)")
    st = rec["steady_state"]
    out.append(f"steady state: {st['status']} ({st['reason']})")
    h2d = (loading or {}).get("h2d")
    if h2d:
        how = "blocking the host" if h2d["blocking_per_step"] else "non-blocking"
        where = "on a stream of their own" if h2d["own_stream"] else "on the compute stream"
        out.append(f"copies to the GPU: {h2d['copies_per_step']:g} per step, {h2d['mb_per_step']:.1f} MB, "
                   f"{_ms(h2d['ms_per_step'])}, {h2d['pinned_share']:.0%} pinned, {how}, "
                   f"{h2d['hidden_share']:.0%} hidden behind kernels, {where}")
    out += [f"note: {n}" for n in rec.get("notes") or []]
    return out


def render_input_pipeline(rec: Mapping[str, Any], loading: Optional[Mapping[str, Any]]) -> list[str]:
    """The profile report's input-pipeline section."""
    out = [input_title(rec)] + [f"  {x}" for x in input_summary(rec, loading)]
    if rec.get("remedies"):
        out.append("  remedies (predicted bare step time):")
        for r in rec["remedies"]:
            figure = (f"{r['step_ms']:.1f} ms/step (saves {r['saving_ms']:.1f} ms)" if r.get("step_ms") is not None
                      else "-")
            out.append(f"    {r['change']}: {figure}")
            out.append(f"      {r['basis']}")
    return out


def render_data_loading(loading: Mapping[str, Any]) -> list[str]:
    """A trace's data-loading facts (syncscan analyze)."""
    out = []
    lo = loading.get("loader")
    if lo:
        wait = (f", {lo['wait_ms_per_step']:.3f} ms of it beyond the fastest fetch ({_ms(lo['receive_ms'])}): "
                "waiting for data" if lo.get("wait_ms_per_step") is not None else "")
        out.append(f"DataLoader ({lo['kind']}): {lo['fetches']} batches, {lo['fetch_ms_per_step']:.3f} ms per step "
                   f"in next(loader){wait}, of {lo['step_ms']:.3f} ms per step")
    h2d = loading.get("h2d")
    if h2d:
        out.append(f"Copies to the GPU: {h2d['copies_per_step']:g} per step, {h2d['mb_per_step']:.1f} MB, "
                   f"{_ms(h2d['ms_per_step'])}, {h2d['pinned_share']:.0%} pinned, "
                   f"{h2d['blocking_per_step']:g} per step blocking the host, {h2d['hidden_share']:.0%} hidden "
                   f"behind kernels, {'own stream' if h2d['own_stream'] else 'compute stream'}")
    return out
