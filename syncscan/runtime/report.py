"""The profile report: the passes' analyses merged into one, plus how the run went.

- per-step timing, GPU busy, idle gaps, streams, overlap and copies: the light pass (the least
  perturbed trace); the detailed pass when there is no light pass;
- which source line each sync comes from (file, line, function): the detailed pass, whose
  Python stacks and sync-debug hook give exact lines; its sites are matched to the light pass's
  by what the trace says about them (rule, op, outer op, scope) and their order in the step;
- bare step time: the bare pass; `perturbation` compares it with the profiled passes.

The trace analysis itself is syncscan.trace's (`analyze`, `render_text`).
"""

from __future__ import annotations

import os
import platform
import shlex
import time
from pathlib import Path

from syncscan import __version__
from syncscan.errors import UserError

ATTRIBUTION_FIELDS = ("file", "line", "function", "line_kind", "stack")
# what both passes' analyses say about a site without Python stacks: the key to pair them
SITE_KEY = ("rule", "op", "outer_op", "forward_op", "phase", "scope")
MAX_SOURCE_SITES = 2000


def _analyze(results, sites) -> dict:
    """Each profiled pass's analysis. The timing pass's replay (light, else detail) is
    calibrated to the bare pass's step time: what the syncs cost without the profiler."""
    from syncscan.trace import analyze, load_trace

    out = {}
    names = {r.name for r in results if r.trace}
    timing = "light" if "light" in names else "detail"
    bare = next((r.ms_per_step for r in results if r.name == "bare" and r.steps_measured), None)
    for r in results:
        if r.name == "bare" or not r.trace:
            continue
        try:
            trace = load_trace(r.trace)
        except UserError as exc:  # e.g. a pass cut short before the profiler recorded anything
            r.analysis_error = str(exc)
            continue
        out[r.name] = analyze(trace, source_sites=sites if r.name == "detail" else None,
                              step_ms=bare if r.name == timing else None, replay=r.name == timing)
    return out


def _mean_per_step(site: dict) -> float:
    per = site.get("per_step")
    if isinstance(per, list):
        return sum(per) / len(per) if per else 0.0
    return float(per or 0)


def merge_sites(light: list[dict], detail: list[dict]) -> list[dict]:
    """Light-pass sites (their counts and costs) with the detailed pass's source lines.

    The detailed pass may split one light site over several lines (the same op in the same
    scope called from two places): the site then lists them all under `sources`, and takes the
    file and line of the most frequent. Detailed sites the light pass did not see are added
    with `only_in: "detail"`."""
    groups: dict[tuple, list[dict]] = {}
    for d in detail:
        groups.setdefault(tuple(d.get(k) for k in SITE_KEY), []).append(d)
    merged = []
    for s in light:
        m = dict(s)
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


def _ms(x):
    return None if x is None else round(x, 3)


def _perturbation(by_name: dict) -> dict:
    bare = by_name.get("bare")
    base = bare.ms_per_step if bare and bare.steps_measured else None
    out = {"clock": next((r.clock for r in by_name.values() if r.steps_measured), None)}
    for name in ("bare", "light", "detail"):
        r = by_name.get(name)
        ms = r.ms_per_step if r and r.steps_measured else None
        out[f"{name}_ms_per_step"] = _ms(ms)
        if name != "bare":
            out[f"{name}_vs_bare"] = round(ms / base, 3) if ms and base else None
    return out


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _prediction(merged: dict, perturbation: dict) -> dict | None:
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
    bare, light = perturbation.get("bare_ms_per_step"), perturbation.get("light_ms_per_step")
    scale = bare / light if bare and light else None
    out = {"regime": "GPU-bound" if merged.get("gpu_bound") else "host-bound",
           "gpu_idle_from_syncs_ms_per_step": round(idle, 4),
           "cpu_blocked_in_syncs_ms_per_step": round(blocked, 4),
           "host_ms_in_syncing_ops_per_step": None if op_host is None else round(op_host, 4),
           "gpu_ms_in_syncing_ops_per_step": None if op_gpu is None else round(op_gpu, 4),
           "host_speed_bare_over_light": None if scale is None else round(scale, 3)}
    replay = merged.get("replay") or {}
    if replay.get("saving_rewrites_ms") is None:
        out.update(method="gpu idle", saving_ms_per_step=round(idle, 4), saving_syncs_ms_per_step=round(idle, 4),
                   saving_ms_per_step_range=[round(idle, 4), round(idle, 4)],
                   basis="GPU idle caused by the syncs (the trace could not be replayed: "
                         f"{replay.get('skipped') or 'no syncs in it'})")
        return out
    sync_only, rewrite = replay["saving_syncs_ms"], replay["saving_rewrites_ms"]
    speed = "the bare pass's" if replay.get("calibrated") else "the light trace's"
    step = replay.get("step_ms")

    def speedup(saving):
        return round(step / (step - saving), 3) if step and step > saving else None

    out.update(method="replay", saving_ms_per_step=rewrite, saving_syncs_ms_per_step=sync_only,
               speedup=speedup(rewrite), speedup_syncs=speedup(sync_only),
               saving_ms_per_step_range=sorted([sync_only, rewrite]),
               step_ms=step, host_scale=replay.get("host_scale"),
               calibrated=replay.get("calibrated"),
               basis=f"replay of the light trace at {speed} host speed: the syncs' waits removed "
                     f"({sync_only:.3f} ms), and each syncing op replaced by its rewrite",
               per_site=[{k: s.get(k) for k in ("rule", "op", "file", "line", "saving_syncs_ms",
                                                "saving_rewrite_ms")} for s in syncs])
    return out


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
    if n == 0 and step_on:
        calls = getattr(step_on_boundary, "calls", 0)
        return (f"the {what} finished without ending a step: {step_on} was never called"
                if not calls else f"the {what} finished after {steps}")
    if n == 0:
        return (f"the {what} finished without ending a step (no optimizer.step() call; "
                "use --step-on FUNC or syncscan.step())")
    return f"the {what} finished after {steps}{short}"


def _sync_summary(analyses: dict, merged: dict, gpu: bool) -> dict:
    """What --fail-on-sync looks at: any sync in a profiled step (either pass); without a GPU,
    any op that would sync on one."""
    key = "syncs" if gpu else "would_sync"
    sites = merged.get(key) or []
    any_sync = any((a.get("total_syncs") or 0) > 0 if gpu else bool(a.get("would_sync"))
                   for a in analyses.values())
    saving = merged.get("estimated_saving") or {}
    return {
        "measured": gpu,  # False: ops that would sync on a GPU, found by name on the CPU
        "sites": len(sites),
        "per_step": round(sum(_mean_per_step(s) for s in sites), 3),
        "gpu_idle_ms_per_step": saving.get("per_step_ms") if gpu else None,
        "any": any_sync,
    }


def build(*, target, plan, outcome, session, results, run_dir, started, step_on=None,
          step_on_boundary=None, tensorboard_copy=True, fail_on_sync=False, what="script") -> dict:
    """`what`: "script" (syncscan profile) or "block" (syncscan.profile())."""
    by_name = {r.name: r for r in results}
    analyses = _analyze(results, session.sites)
    timing_pass = "light" if "light" in analyses else ("detail" if "detail" in analyses else None)
    merged = dict(analyses.get(timing_pass, {})) if timing_pass else {}
    if "light" in analyses and "detail" in analyses:
        detail = analyses["detail"]
        for key in ("syncs", "would_sync"):
            merged[key] = merge_sites(analyses["light"].get(key) or [], detail.get(key) or [])
        merged["with_stack"] = detail.get("with_stack")
        merged["unmatched_source_sites"] = detail.get("unmatched_source_sites")
        # the light trace's own caveat about missing stacks no longer applies
        merged["notes"] = [n for n in merged.get("notes") or [] if "with_stack" not in n] + [
            n for n in detail.get("notes") or [] if "source site" in n]
    gpu = bool(merged.get("gpu_activity"))
    run_dir = Path(run_dir)
    report = {
        "syncscan": __version__,
        "command": ["syncscan", "profile", *(["-m", target.module] if target.module else [target.script]),
                    *target.args],
        "script": target.label,
        "argv": list(target.args),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        "environment": _environment(session),
        "gpu_activity": gpu,
        "schedule": {**plan.as_dict(), "step_boundary": step_on or "optimizer.step()",
                     "boundaries_seen": dict(session.boundary_sources)},
        "outcome": {"status": outcome.kind, "exit_code": outcome.exit_code, "steps": session.steps_done,
                    "complete": session.complete,
                    "message": _outcome_message(outcome, session, plan, step_on, step_on_boundary, what)},
        "passes": {r.name: r.as_dict() for r in results},
        "perturbation": _perturbation(by_name),
        "timing_from": timing_pass,
        "attribution_from": "detail" if "detail" in analyses else timing_pass,
        "source_sites": session.sites[:MAX_SOURCE_SITES],
        **merged,
    }
    report["sync_summary"] = _sync_summary(analyses, merged, gpu)
    report["prediction"] = _prediction(merged, report["perturbation"])
    report["fail_on_sync"] = fail_on_sync
    report["run_dir"] = str(run_dir)
    report["report_json"] = str(run_dir / "report.json")
    report["tensorboard"] = {
        "logdir": str(run_dir), "compatible_copy": tensorboard_copy,
        "command": f"tensorboard --logdir {shlex.quote(str(run_dir))}",
        "syncscan_tb": f"syncscan tb {shlex.quote(str(run_dir))}",
    }
    return report


def _environment(session) -> dict:
    torch = session.torch
    env = {"python": platform.python_version(), "torch": torch.__version__,
           "cuda_available": session.cuda, "host": platform.node(), "pid": os.getpid()}
    if session.cuda:
        env["device"] = torch.cuda.get_device_name()
    return env


# ---------------------------------------------------------------------------- text

def render(report: dict) -> str:
    from syncscan.trace import render_text

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
        body = render_text({k: v for k, v in report.items() if k not in ("source_sites",)}).rstrip()
        if body.startswith("syncscan analyze"):  # its header names one trace; ours is above
            body = body.split("\n", 1)[1] if "\n" in body else ""
        lines.append(body)
        if report.get("join"):
            from syncscan.join import render_join

            lines += ["", *render_join(report["join"])]
    lines.append("")
    pred = report.get("prediction")
    if pred and report["sync_summary"]["any"]:
        lines.append(_render_prediction(pred))
    if report.get("comparison"):
        from syncscan.runtime.compare import render as render_comparison

        lines.append(render_comparison(report["comparison"], report["comparison"]["rewritten"]))
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


def _render_prediction(pred: dict) -> str:
    if pred.get("method") != "replay":
        return (f"predicted saving from removing the syncs: {pred['saving_ms_per_step']:.3f} ms/step "
                f"({pred['regime']}: {pred['basis']})")
    step = pred.get("step_ms")
    share = f", {pred['saving_ms_per_step'] / step:.0%} of {step:.3f} ms" if step else ""
    if pred.get("speedup"):
        share += f": {pred['speedup']:.2f}x"
    speed = "at the bare pass's speed" if pred.get("calibrated") else "at the light trace's speed"
    return (f"predicted saving ({pred['regime']}; replay of the light trace {speed}): "
            f"{pred['saving_syncs_ms_per_step']:.3f} ms/step from the syncs alone, "
            f"{pred['saving_ms_per_step']:.3f} ms/step with the rewrites{share}")


def _describe(sched: dict) -> str:
    parts = [f"wait {sched['wait']}"] if sched["wait"] else []
    for name in sched["passes"]:
        w = sched["windows"][name]
        parts.append(f"{name} steps {w['first']}-{w['last']}")
    return ", ".join(parts) + f" (warm-up {sched['warmup']} before each)"


def _render_perturbation(report: dict) -> str:
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
        extra = f" ({ratio:.2f}x bare)" if ratio else ""
        partial = f" over {info['steps']} steps" if info["state"] != "complete" else ""
        parts.append(f"{name} {ms:.2f} ms/step{extra}{partial}")
    clock = {"cuda_events": " (CUDA events)", "host": " (host clock)"}.get(p.get("clock"), "")
    return f"step time by pass{clock}: " + ", ".join(parts) if parts else "step time: no pass measured"
