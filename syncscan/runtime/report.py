"""The profile report: the passes' analyses merged into one, plus how the run went.

- per-step timing, GPU busy, idle gaps, streams, overlap and copies: the light pass (the least
  perturbed trace); the detailed pass when there is no light pass;
- which source line each sync comes from (file, line, function): the detailed pass, whose
  Python stacks and run-time hooks give exact lines; its sites are matched to the light pass's
  by what the trace says about them (rule, op, outer op, scope) and their order in the step;
- when the light pass recorded CUDA activity only (`--light-pass cuda`, the default), its ops and
  scopes: the detailed pass's, copied onto the light trace through the runtime calls of each
  step (syncscan.trace.graft), before the light trace is analysed;
- bare step time: the bare pass; `perturbation` compares it with the profiled passes.

Each pass's trace is loaded and analysed once (`analyze_passes`); `build` assembles the report
(schema.ProfileReport) in one go from the parts, and the renderers (syncscan.present) read it.
"""

from __future__ import annotations

import os
import platform
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, cast

from syncscan import __version__
from syncscan.errors import UserError
from syncscan.schema import Comparison, CompileFields, JoinReport, ProfileReport, TimelineStep, check
from syncscan.trace.graph_breaks import summarize as summarize_compile
from syncscan.units import round_ms

ATTRIBUTION_FIELDS = ("file", "line", "function", "line_kind", "stack", "frames")
# what both passes' analyses say about a site without Python stacks: the key to pair them
SITE_KEY = ("rule", "op", "outer_op", "forward_op", "phase", "scope")
MAX_SOURCE_SITES = 2000


@dataclass
class MergedAnalysis:
    """The timing pass's analysis with the detailed pass's source lines, and its timeline."""

    report: dict[str, Any]  # schema.AnalysisFields' keys
    timeline: list[TimelineStep] = field(default_factory=list)
    timing_from: Optional[str] = None
    attribution_from: Optional[str] = None
    passes: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # each pass's own analysis
    light_ops: Optional[dict[str, Any]] = None  # schema.LightOps


def input_window(session, results):
    """What the measured steps took from their DataLoaders (syncscan.runtime.input_pipeline
    .BareWindow): the bare pass's steps, else the first profiled pass's; None when nothing was
    watched or measured."""
    from syncscan.runtime.input_pipeline import bare_window

    if getattr(session, "loader", None) is None:
        return None
    measured = [r for r in results if r.steps_measured and r.state in ("complete", "partial")]
    r = next((r for r in measured if r.name == "bare"), measured[0] if measured else None)
    if r is None:
        return None
    last = r.window.start + r.steps_measured
    timing = next((t for t in results if t.name == "light" and t.steps_measured),
                  next((t for t in results if t.name == "detail" and t.steps_measured), None))
    traced = (timing.window.start, timing.window.start + timing.steps_measured) if timing else None
    return bare_window(session.loader.observations(), r.window.start, last, r.span, traced)


@dataclass
class PassAnalyses:
    """Each profiled pass's Analysis, and how the light trace got its ops when it recorded none."""

    by_pass: dict[str, Any] = field(default_factory=dict)  # pass name -> syncscan.trace.pipeline.Analysis
    light_ops: Optional[dict[str, Any]] = None  # schema.LightOps


def analyze_passes(results, sites, loader=None, on_trace=None) -> PassAnalyses:
    """Each profiled pass's Analysis (syncscan.trace.pipeline), its trace loaded once. The timing
    pass's replay (light, else detail) is calibrated to the bare pass's step time: what the syncs
    cost without the profiler, with the input pipeline as `loader` (syncscan.trace.loader
    .LoaderModel) measured it. A light trace of CUDA activity only first gets the detailed
    pass's ops and scopes (syncscan.trace.graft). A trace that cannot be read is noted in its
    pass's result. `on_trace(pass name, trace, analysis)`: called for each pass while its trace is loaded."""
    from syncscan.trace import analyze, load_trace
    from syncscan.trace.graft import graft, has_cpu_ops

    out = PassAnalyses()
    names = {r.name for r in results if r.trace}
    timing = "light" if "light" in names else "detail"
    bare = next((r.ms_per_step for r in results if r.name == "bare" and r.steps_measured), None)
    pattern = None
    detail_trace = None
    # the detailed pass first: its ops go to a light trace without any, its source lines to the
    # light pass's syncs
    for r in sorted(results, key=lambda r: r.name != "detail"):
        if r.name == "bare" or not r.trace:
            continue
        try:
            trace = load_trace(r.trace)
        except UserError as exc:  # e.g. a pass cut short before the profiler recorded anything
            r.analysis_error = str(exc)
            continue
        if r.name == "light" and detail_trace is not None and not has_cpu_ops(trace):
            stats = graft(trace, detail_trace)
            if stats.steps:
                out.light_ops = {"source": "detail", **stats.as_dict()}
        out.by_pass[r.name] = analyze(trace, source_sites=sites if r.name == "detail" else None,
                                      step_ms=bare if r.name == timing else None, replay=r.name == timing,
                                      sources=pattern if r.name != "detail" else None,
                                      loader=loader if r.name == timing else None)
        if r.name == "detail":
            pattern = out.by_pass[r.name].source_pattern()
            if "light" in names:
                detail_trace = trace
        if on_trace is not None:
            on_trace(r.name, trace, out.by_pass[r.name])
    return out


def _mean_per_step(site: dict) -> float:
    per = site.get("per_step")
    if isinstance(per, list):
        return sum(per) / len(per) if per else 0.0
    return float(per or 0)


def merge_sites(light: list[dict], detail: list[dict]) -> list[dict]:
    """Light-pass sites (their counts and costs) with the detailed pass's source lines.

    Light sites whose lines were carried over from the detailed pass by their position in the
    step (syncscan.trace.carry; `attributed_by: "detail"`) pair with the detailed site at that
    line. Otherwise the detailed pass may split one light site over several lines (the same op
    in the same scope called from two places): the site then lists them all under `sources`,
    and takes the file and line of the most frequent. Detailed sites the light pass did not see
    are added with `only_in: "detail"`."""
    groups: dict[tuple, list[dict]] = {}
    for d in detail:
        groups.setdefault(tuple(d.get(k) for k in SITE_KEY), []).append(d)
    merged = []
    for s in light:
        m = dict(s)
        if s.get("attributed_by") == "detail":
            # its line was carried from the detailed pass (syncscan.trace.carry): that pass's
            # site at the same line is this one
            key = tuple(s.get(k) for k in SITE_KEY)
            groups[key] = [d for d in groups.get(key, []) if (d.get("file"), d.get("line")) !=
                           (s.get("file"), s.get("line"))]
            merged.append(m)
            continue
        partners = groups.pop(tuple(s.get(k) for k in SITE_KEY), None)
        if partners:
            best = max(partners, key=_mean_per_step)
            for f in ATTRIBUTION_FIELDS:
                if best.get(f) is not None:
                    m[f] = best[f]
            m["attributed_by"] = "detail"
            if len(partners) > 1:
                m["sources"] = [{"file": d.get("file"), "line": d.get("line"), "function": d.get("function"),
                                 "per_step": round(_mean_per_step(d), 3)} for d in partners]
        merged.append(m)
    for rest in groups.values():
        for d in rest:
            merged.append({**d, "only_in": "detail"})
    return merged


def merge_passes(passes: PassAnalyses) -> MergedAnalysis:
    """The timing pass's analysis (light, else detail) with the detailed pass's source lines."""
    from syncscan.trace.pipeline import empty_analysis

    analyses = passes.by_pass
    timing = "light" if "light" in analyses else ("detail" if "detail" in analyses else None)
    if timing is None:
        return MergedAnalysis(dict(empty_analysis()))
    base = analyses[timing]
    merged: dict[str, Any] = dict(base.report)
    notes = list(merged.get("notes") or [])
    if "light" in analyses and "detail" in analyses:
        detail = analyses["detail"].report
        for key in ("syncs", "would_sync"):
            merged[key] = merge_sites(merged.get(key) or [], detail.get(key) or [])
        merged["with_stack"] = detail.get("with_stack")
        merged["unmatched_source_sites"] = detail.get("unmatched_source_sites")
        # the light trace's own caveats about missing stacks and def lines no longer apply
        notes = [n for n in notes if "with_stack" not in n] + [
            n for n in detail.get("notes") or [] if "source site" in n]
    ops = passes.light_ops
    if ops is not None and ops["exact_steps"] < ops["steps"]:
        notes.append(f"The light pass recorded CUDA activity only; its ops come from the detailed pass, "
                     f"matched by each step's CUDA calls: {ops['steps'] - ops['exact_steps']} of {ops['steps']} "
                     f"steps made other calls in the two passes ({ops['anchored_calls']} of {ops['calls']} calls "
                     "paired), so op times there are less exact.")
    elif timing == "light" and ops is None and base.events and not _has_ops(base):
        notes.append("The light pass recorded CUDA activity only (--light-pass cuda) and no detailed pass "
                      "gave it ops: syncs are not attributed to ops, and the rewrites are not modelled.")
    merged["notes"] = notes
    return MergedAnalysis(merged, base.timeline, timing, "detail" if "detail" in analyses else timing,
                          {k: a.report for k, a in analyses.items()}, ops)


def _has_ops(analysis) -> bool:
    return any(ev.att is not None and ev.att.chain for ev in analysis.events)


def perturbation(results, light_pass: str = "cuda") -> dict[str, Any]:
    """Each pass's ms/step and its ratio to the bare pass's; `light_pass`: the recipe the light
    pass ran (session.LIGHT_PASSES), and what its profiler recorded."""
    by_name = {r.name: r for r in results}
    bare = by_name.get("bare")
    base = bare.ms_per_step if bare and bare.steps_measured else None
    light = by_name.get("light")
    out: dict[str, Any] = {"clock": next((r.clock for r in by_name.values() if r.steps_measured), None),
                           "light_pass": light_pass,
                           "light_activities": list(getattr(light, "activities", None) or [])}
    for name in ("bare", "light", "detail"):
        r = by_name.get(name)
        ms = r.ms_per_step if r and r.steps_measured else None
        out[f"{name}_ms_per_step"] = round_ms(ms)
        if name != "bare":
            out[f"{name}_vs_bare"] = round(ms / base, 3) if ms and base else None
    return out  # schema.Perturbation


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def prediction(merged: Mapping[str, Any], perturb: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """What removing the syncs should save per step, at the bare pass's speed.

    From the light trace's replay (syncscan.trace.replay, .estimate), calibrated to the bare
    step time: `saving_syncs_ms_per_step` with the syncs' waits removed (what the syncs cost,
    whichever side sets the pace), `saving_ms_per_step` with each site's rewrite modelled as
    well (the syncing ops replaced by their rewrite's footprint); the range spans the two. Per
    site, the same two figures (`per_site`, in the order of `syncs`; not additive: two syncs in
    a row share one drain). `speedup` / `speedup_syncs`: the step time over the step time with
    that saving. Without a replay (no GPU activity, a trace too large), the GPU idle the syncs
    cause. The replay cannot see what a rewrite changes elsewhere (another kernel choice for a
    later op): `--compare` measures that.
    """
    steps = merged.get("steps") or []
    if not merged.get("gpu_activity") or not steps:
        return None
    n = len(steps)
    idle = _mean(s.get("gpu_idle_from_syncs_ms") for s in steps) or 0.0
    blocked = _mean(s.get("cpu_blocked_in_syncs_ms") for s in steps) or 0.0
    syncs = [s for s in merged.get("syncs") or [] if s.get("only_in") != "detail"]

    def per_step(key):
        if syncs and all(s.get(key) is not None for s in syncs):
            return sum(s[key] for s in syncs) / n
        return None

    op_host, op_gpu = per_step("outer_op_host_ms"), per_step("outer_op_gpu_ms")
    bare, light = perturb.get("bare_ms_per_step"), perturb.get("light_ms_per_step")
    scale = bare / light if bare and light else None
    replay: Mapping[str, Any] = merged.get("replay") or {}
    out: dict[str, Any] = {
        "regime": ("input-bound" if replay.get("input_bound") else
                   "GPU-bound" if merged.get("gpu_bound") else "host-bound"),
        "gpu_idle_from_syncs_ms_per_step": round(idle, 4),
        "cpu_blocked_in_syncs_ms_per_step": round(blocked, 4),
        "host_ms_in_syncing_ops_per_step": None if op_host is None else round(op_host, 4),
        "gpu_ms_in_syncing_ops_per_step": None if op_gpu is None else round(op_gpu, 4),
        "host_speed_bare_over_light": None if scale is None else round(scale, 3)}
    if replay.get("saving_rewrites_ms") is None:
        out.update(method="gpu idle", saving_ms_per_step=round(idle, 4), saving_syncs_ms_per_step=round(idle, 4),
                   saving_ms_per_step_range=[round(idle, 4), round(idle, 4)],
                   basis="GPU idle caused by the syncs (the trace could not be replayed: "
                         f"{replay.get('skipped') or 'no syncs in it'})")
        return out  # schema.Prediction
    sync_only, rewrite = replay["saving_syncs_ms"], replay["saving_rewrites_ms"]
    speed = "the bare pass's" if replay.get("calibrated") else "the light trace's"
    step = replay.get("step_ms")

    def speedup(saving):
        return round(step / (step - saving), 3) if step and step > saving else None

    basis = (f"replay of the light trace at {speed} host speed: the syncs' waits removed "
             f"({sync_only:.3f} ms), and each syncing op replaced by its rewrite")
    if replay.get("input_bound"):
        basis += (f"; the input pipeline sets the pace (a batch every {replay['loader_period_ms']:.3f} ms, "
                  f"host and GPU need {replay['compute_ms']:.3f} ms): without it they would save "
                  f"{replay['unbounded_saving_syncs_ms']:.3f} ms from the syncs alone and "
                  f"{replay['unbounded_saving_rewrites_ms']:.3f} ms with the rewrites, which the loader absorbs")
    out.update(method="replay", saving_ms_per_step=rewrite, saving_syncs_ms_per_step=sync_only,
               speedup=speedup(rewrite), speedup_syncs=speedup(sync_only),
               saving_ms_per_step_range=sorted([sync_only, rewrite]),
               step_ms=step, host_scale=replay.get("host_scale"),
               calibrated=replay.get("calibrated"),
               basis=basis,
               per_site=[{k: s.get(k) for k in ("rule", "op", "file", "line", "saving_syncs_ms",
                                                "saving_rewrite_ms")} for s in syncs])
    return out  # schema.PredictionReplay


def _outcome_message(outcome, session, plan, step_on, step_on_boundary, what) -> str:
    n = session.steps_done
    steps = f"{n} step{'s' if n != 1 else ''}"
    if outcome.kind == "stopped":
        return f"stopped the script after {steps}, when the last pass ended (--run-to-end lets it finish)"
    if outcome.kind == "interrupted":
        return f"interrupted after {steps}"
    if outcome.kind == "exception":
        name = outcome.exc_name or "an exception"
        return f"the {what} raised {name} after {steps} (its traceback is above)"
    short = "" if session.complete else f", fewer than the {plan.total} the schedule needs"
    if outcome.kind == "exit":
        return f"the {what} called sys.exit({outcome.exit_code}) after {steps}{short}"
    if outcome.kind == "os_exit":
        return (f"the {what} called os._exit({outcome.exit_code}) after {steps}{short}: syncscan reports what "
                "it measured, then ends the process as os._exit does (no cleanup)")
    if n == 0 and step_on:
        calls = getattr(step_on_boundary, "calls", 0)
        return (f"the {what} finished without ending a step: {step_on} was never called"
                if not calls else f"the {what} finished after {steps}")
    if n == 0:
        return (f"the {what} finished without ending a step (no optimizer.step() call; "
                "use --step-on FUNC or syncscan.step())")
    return f"the {what} finished after {steps}{short}"


def _sync_summary(merged: MergedAnalysis, gpu: bool) -> dict[str, Any]:
    """What --fail-on-sync looks at: any sync in a profiled step (either pass); without a GPU,
    any op that would sync on one."""
    key = "syncs" if gpu else "would_sync"
    sites = merged.report.get(key) or []
    any_sync = any((a.get("total_syncs") or 0) > 0 if gpu else bool(a.get("would_sync"))
                   for a in merged.passes.values())
    saving = merged.report.get("estimated_saving") or {}
    return {
        "measured": gpu,  # False: ops that would sync on a GPU, found by name on the CPU
        "sites": len(sites),
        "per_step": round(sum(_mean_per_step(s) for s in sites), 3),
        "gpu_idle_ms_per_step": saving.get("per_step_ms") if gpu else None,
        "any": any_sync,
    }


def with_prediction(rewritten: str, measured: Mapping[str, Any], predicted: Optional[Mapping[str, Any]]) -> Comparison:
    """The --compare measurement (syncscan.runtime.compare.measure) beside the prediction."""
    p = (predicted or {}).get("saving_ms_per_step")
    m = measured["measured_saving_ms_per_step"]
    resolved = measured.get("resolved", True)
    return cast(Comparison, {
        "rewritten": rewritten, **measured, "predicted_saving_ms_per_step": p,
        "prediction_error": round((p - m) / m, 3) if p is not None and m and resolved else None})


def build(*, target, plan, outcome, session, results, merged: MergedAnalysis, run_dir, started,
          step_on=None, step_on_boundary=None, tensorboard_copy=True, fail_on_sync=False, what="script",
          command: Optional[list[str]] = None, join: Optional[JoinReport] = None,
          compared: Optional[tuple[str, dict]] = None, html: Optional[str] = None,
          compiled: Optional[CompileFields] = None, inputs=None) -> ProfileReport:
    """The whole report, from its parts. `what`: "script" (syncscan profile) or "block"
    (syncscan.profile()); `compared`: (rewritten script, compare.measure's result); `compiled`:
    what torch.compile did meanwhile (syncscan.trace.graph_breaks.summarize); `inputs`: what the measured
    steps took from their DataLoaders (input_window)."""
    from syncscan.runtime.input_pipeline import input_pipeline

    gpu = bool(merged.report.get("gpu_activity"))
    run_dir = Path(run_dir)
    perturb = perturbation(results, getattr(session, "light_pass", "cuda"))
    predicted = prediction(merged.report, perturb)
    plan = getattr(session, "plan", plan)  # the plan as run: the bare pass may have been lengthened
    report = cast(ProfileReport, {
        "syncscan": __version__,
        "command": command or ["syncscan", "profile",
                               *(["-m", target.module] if target.module else [target.script]), *target.args],
        "script": target.label,
        "argv": list(target.args),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        "environment": _environment(session),
        "schedule": {**plan.as_dict(), "step_boundary": step_on or "optimizer.step()",
                     "boundaries_seen": dict(session.boundary_sources)},
        "outcome": {"status": outcome.kind, "exit_code": outcome.exit_code, "steps": session.steps_done,
                    "complete": session.complete,
                    "message": _outcome_message(outcome, session, plan, step_on, step_on_boundary, what)},
        "passes": {r.name: r.as_dict() for r in results},
        "perturbation": perturb,
        "timing_from": merged.timing_from,
        "attribution_from": merged.attribution_from,
        "source_sites": session.sites[:MAX_SOURCE_SITES],
        "light_ops": merged.light_ops,
        **merged.report,
        "gpu_activity": gpu,
        "sync_summary": _sync_summary(merged, gpu),
        "prediction": predicted,
        "fail_on_sync": fail_on_sync,
        "run_dir": str(run_dir),
        "report_json": str(run_dir / "report.json"),
        "tensorboard": {
            "logdir": str(run_dir), "compatible_copy": tensorboard_copy,
            "command": f"tensorboard --logdir {shlex.quote(str(run_dir))}",
            "syncscan_tb": f"syncscan tb {shlex.quote(str(run_dir))}",
        },
        "join": join,
        "input_pipeline": input_pipeline(inputs, getattr(session, "drain_checks", []), plan,
                                         perturb.get("bare_ms_per_step"), merged.report),
        "comparison": with_prediction(compared[0], compared[1], predicted) if compared else None,
        "html": html,
        **(compiled or summarize_compile([])),
    })
    check(report)
    return report


def _environment(session) -> dict:
    torch = session.torch
    env = {"python": platform.python_version(), "torch": torch.__version__,
           "cuda_available": session.cuda, "host": platform.node(), "pid": os.getpid()}
    if session.cuda:
        env["device"] = torch.cuda.get_device_name()
    return env
