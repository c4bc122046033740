"""A profiled run (schema.ProfileReport) as text: the run, the timing pass's analysis with the
join, the prediction, `--compare`'s measurement and what the profiler cost."""

from __future__ import annotations

import shlex
from typing import Any, Mapping

from syncscan.present.analyze_text import render_text
from syncscan.present.compile_text import render_compile
from syncscan.present.input_text import render_input_pipeline
from syncscan.present.join_text import render_join
from syncscan.present.ranks_text import render_ranks


def render_profile(report: Mapping[str, Any]) -> str:
    """The terminal report of a profiled run."""
    lines = [" ".join(shlex.quote(a) for a in report["command"])]
    env = report["environment"]
    lines.append(f"device: {env.get('device', 'CPU only')}, torch {env['torch']}")
    sched = report["schedule"]
    lines.append(f"schedule: {_describe(sched)}; steps end at {sched['step_boundary']}")
    if not report["gpu_activity"] and report["timing_from"] is not None:
        lines.append("no GPU activity was recorded (no CUDA GPU in use): the syncs below are the ops "
                     "that would make the host wait on a GPU, found by name")
    lines.append("")
    errors = [f"{name}: {info['analysis_error']}" for name, info in report["passes"].items()
              if info.get("analysis_error")]
    for e in errors:
        lines.append(f"trace not analysed ({e})")
    profiled = [w["first"] for name, w in sched["windows"].items() if name != "bare"]
    if report["timing_from"] is None and not errors and not profiled:
        lines.append("bare pass only (--passes bare): step time without the profiler, nothing traced")
    elif report["timing_from"] is None and not errors:
        first = min(profiled)
        lines.append(f"nothing was traced: the {'script' if report['command'][0] == 'syncscan' else 'block'} "
                     f"ended after {report['outcome']['steps']} steps, before the first profiled step "
                     f"(step {first}); --wait, --warmup and --steps set the schedule")
    elif report["timing_from"] is not None:
        body = render_text(report).rstrip()
        if body.startswith("syncscan analyze"):  # its header names one trace; ours is above
            body = body.split("\n", 1)[1] if "\n" in body else ""
        lines.append(body)
        if report.get("join"):
            lines += ["", *render_join(report["join"])]
        ranks = render_ranks(report)
        if ranks:
            lines += ["", *ranks]
    compiled = render_compile(report, bool(report.get("gpu_activity")))
    if compiled:
        lines += ["", *compiled]
    if report.get("input_pipeline"):
        lines += ["", *render_input_pipeline(report["input_pipeline"], report.get("data_loading"))]
    lines.append("")
    pred = report.get("prediction")
    if pred and report["sync_summary"]["any"]:
        lines.append(_render_prediction(pred))
    if report.get("comparison"):
        lines.append(render_comparison(report["comparison"]))
    lines.append(_render_perturbation(report))
    lines.append("")
    lines.append(f"run folder: {report['run_dir']}  (report.json, traces)")
    if report.get("html"):
        lines.append(f"HTML report: {report['html']}")
    tb = report["tensorboard"]
    lines.append(f"open in TensorBoard: {tb['command']}   (or: {tb['syncscan_tb']})")
    if not tb["compatible_copy"]:
        lines.append("  (--no-tensorboard-copy: TensorBoard's plugin shows 0 device time for these traces)")
    lines.append("")
    lines.append(f"syncscan: {report['outcome']['message']}")
    return "\n".join(lines)


def _render_prediction(pred: Mapping[str, Any]) -> str:
    if pred.get("method") != "replay":
        return (f"predicted saving from removing the syncs: {pred['saving_ms_per_step']:.3f} ms/step "
                f"({pred['regime']}: {pred['basis']})")
    step = pred.get("step_ms")
    share = f", {pred['saving_ms_per_step'] / step:.0%} of {step:.3f} ms" if step else ""
    if pred.get("speedup"):
        share += f": {pred['speedup']:.2f}x"
    speed = "at the bare pass's speed" if pred.get("calibrated") else "at the light trace's speed"
    line = (f"predicted saving ({pred['regime']}; replay of the light trace {speed}): "
            f"{pred['saving_syncs_ms_per_step']:.3f} ms/step from the syncs alone, "
            f"{pred['saving_ms_per_step']:.3f} ms/step with the rewrites{share}")
    if pred["regime"] == "input-bound":
        line += ("\n  the input pipeline sets the pace: what removing the syncs saves in host and GPU time is "
                 "absorbed by waiting for data (see Input pipeline)")
    return line


def _describe(sched: Mapping[str, Any]) -> str:
    parts = [f"wait {sched['wait']}"] if sched["wait"] else []
    for name in sched["passes"]:
        w = sched["windows"][name]
        parts.append(f"{name} steps {w['first']}-{w['last']}")
    return ", ".join(parts) + f" (warm-up {sched['warmup']} before each)"


def _render_perturbation(report: Mapping[str, Any]) -> str:
    p = report["perturbation"]
    passes = report["passes"]
    parts = []
    for name in ("bare", "light", "detail"):
        if name not in passes:
            continue
        ms = p.get(f"{name}_ms_per_step")
        info = passes[name]
        if ms is None:
            parts.append(f"{name} not measured ({info['state']})")
            continue
        ratio = p.get(f"{name}_vs_bare")
        notes = [f"{ratio:.2f}x bare"] if ratio else []
        if name == "light" and p.get("light_activities") == ["CUDA"]:
            notes.append("CUDA activity only")
        extra = f" ({'; '.join(notes)})" if notes else ""
        partial = f" over {info['steps']} steps" if info["state"] != "complete" else ""
        parts.append(f"{name} {ms:.2f} ms/step{extra}{partial}")
    clock = {"cuda_events": " (CUDA events)", "host": " (host clock)"}.get(p.get("clock"), "")
    return f"step time by pass{clock}: " + ", ".join(parts) if parts else "step time: no pass measured"


def render_comparison(c: Mapping[str, Any]) -> str:
    """`--compare`: the measured saving, and the prediction's error when the saving is resolved."""
    line = (f"measured against {c['rewritten']} (bare pass, {c['runs']} alternating run{'s' if c['runs'] != 1 else ''} "
            f"each, medians): {c['original_ms_per_step']:.3f} -> {c['rewritten_ms_per_step']:.3f} ms/step, "
            f"saving {c['measured_saving_ms_per_step']:.3f} ms/step")
    if not c.get("resolved", True):
        line += (f"; within the run-to-run spread ({c['spread_ms']:.3f} ms{', one run' if c['runs'] == 1 else ''}): "
                 f"not resolved, raise --compare-runs")
    elif c.get("prediction_error") is not None:
        line += f" (predicted {c['predicted_saving_ms_per_step']:.3f}: {100 * c['prediction_error']:+.0f}%)"
    return line
