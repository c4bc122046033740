"""Check what `syncscan profile` says about the input pipeline against steady-state A/B timing.

Cases (on a CUDA GPU, about 4 minutes on an H100):

- **augmentation**: `syncscan profile` on fixtures/augment_cpu.py (8 workers augment each image
  on the CPU) predicts what moving the augmentation to the GPU saves (its `gpu_augmentation`
  remedy); measured: augment_cpu against augment_gpu and augment_gpu_stream.
- **data-bound sync**: augment_cpu with `loss.item()` every step (a wrapper written next to the
  runs): the sync is there, but the loader sets the pace, so the predicted saving of removing it
  is bounded by the loader; measured: that script against augment_cpu.
- **sync-bound**: classic loop (batch 256) and masked loss (64x64, batch 32), naive against
  fixed: the prediction with the loader in the model.
- **ImageNet** (`--imagenet PATH`: pytorch/examples' imagenet/main.py, `-a resnet18 --dummy -b 256
  -j 8`): the issue's public script; profiled as is, and timed against a copy with `loss.detach()`
  for `loss.item()` (bare passes in alternating processes, syncscan profile --compare's method).

Fixture A/B timing is in one process, interleaved, each repeat after untimed drain steps (the
method of benchmarks/workloads.py): the steady state, not what the workers prefetched. Each
verdict: within +-25% of the measured saving, or, for a saving near zero, both inside the
spread of the timing (the interquartile ranges of the two medians, added).

    python benchmarks/input_pipeline.py [--json PATH] [--runs DIR] [--imagenet .bench/imagenet/main.py]
                                        [--max-seconds 270]
    python benchmarks/input_pipeline.py --cpu-smoke   # no GPU: tiny sizes, checks the plumbing
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

import estimate  # noqa: E402
import workloads  # noqa: E402

TOLERANCE = 0.25
AUGMENT_ARGS = dict(batch=32, size=256)
# the wrapper: augment_cpu's step, and a sync each step (its loss read on the host)
ITEM_SCRIPT = '''
"""augment_cpu.py with `loss.item()` each step: a host sync in a loop the loader paces."""
import sys
sys.path.insert(0, {fixtures!r})
import _common
import augment_cpu


def make_step(device, batch, size, crop=None, workers=4, seed=0, **_):
    step = augment_cpu.make_step(device, batch, size, crop, workers, seed)
    return lambda: step().item()


if __name__ == "__main__":
    args = _common.parse_args(__doc__.splitlines()[0], augment_cpu.DEFAULTS, augment_cpu.add_arguments)
    step = make_step(args.device, args.batch, args.size, args.crop, args.workers, args.seed)
    for _ in range(args.warmup + args.steps):
        step()
'''


def verdict(predicted: float | None, measured: float, spread: float) -> tuple[float | None, str]:
    """(error, verdict) of a predicted saving against a measured one (ms/step)."""
    if predicted is None:
        return None, "no prediction"
    if abs(measured) <= spread:
        ok = abs(predicted - measured) <= spread
        return None, "near zero: " + ("within the spread" if ok else "OUTSIDE the spread")
    error = (predicted - measured) / measured
    return round(error, 3), ("within +-25%" if abs(error) <= TOLERANCE else "OUTSIDE +-25%")


def spread(timing: dict, a: str, b: str) -> float:
    return sum(timing[k]["q3_ms"] - timing[k]["q1_ms"] for k in (a, b))


def interleaved(variants: list, params: dict, steps: int, repeats: int, drain: int, device) -> dict:
    """Medians of the variants timed in one process, interleaved (workloads.run_case)."""
    case = workloads.Case("input", "", params, variants, steps=steps, repeats=repeats, warmup=3 if drain else 5,
                          drain=drain)
    res = workloads.run_case(case, device)
    workloads.release_memory()
    return {k: {"median_ms": v["median_ms"], "q1_ms": v["q1_ms"], "q3_ms": v["q3_ms"]} for k, v in res.items()}


def summary(report: dict) -> dict:
    """What the profile said: the pace, the loader, the prediction."""
    rec = report.get("input_pipeline") or {}
    pred = report.get("prediction") or {}
    return {"bare_ms": (report.get("perturbation") or {}).get("bare_ms_per_step"),
            "pace": rec.get("pace"), "steady_state": rec.get("steady_state"), "workers": rec.get("workers"),
            "remedies": rec.get("remedies"), "regime": pred.get("regime"),
            "predicted_ms": pred.get("saving_ms_per_step"), "predicted_syncs_ms": pred.get("saving_syncs_ms_per_step"),
            "basis": pred.get("basis"), "replay": {k: (report.get("replay") or {}).get(k) for k in
                                                   ("compute_ms", "loader_period_ms", "input_bound",
                                                    "unbounded_saving_rewrites_ms", "step_ms")},
            "run_dir": report.get("run_dir")}


def row(case: str, kind: str, predicted, measured: float, spread_ms: float, timing: dict, profile: dict) -> dict:
    error, said = verdict(predicted, measured, spread_ms)
    return {"case": case, "kind": kind, "predicted_ms": predicted, "measured_ms": round(measured, 3),
            "spread_ms": round(spread_ms, 3), "error": error, "verdict": said, "timing": timing, "profile": profile}


def augmentation_cases(runs: Path, device, smoke: bool) -> list[dict]:
    """Moving augmentation to the GPU, and a sync the loader absorbs (one timing process for both)."""
    (runs / "item").mkdir(parents=True, exist_ok=True)
    item = runs / "item" / "augment_cpu_item.py"
    item.write_text(textwrap.dedent(ITEM_SCRIPT).format(fixtures=str(REPO / "fixtures")))
    sys.path.insert(0, str(item.parent))
    if smoke:
        params, cpu_workers, gpu_workers, script = dict(batch=2, size=32), 1, 0, ["--batch", "2", "--size", "32"]
    else:
        # the same loader on both sides (8 workers): the A/B changes where the augmentation runs, and
        # nothing else, as the remedy predicts (augment_gpu's own default is 4 workers)
        params, cpu_workers, gpu_workers, script = AUGMENT_ARGS, 8, 8, ["--batch", "32", "--size", "256"]
    cpu_args = [*script, "--workers", str(cpu_workers)]
    synced = summary(estimate.profile("augment_cpu_item", cpu_args, device.type, runs / "augment_cpu_item", smoke,
                                      script=item))
    # the CPU smoke profiles once (the wrapper's loader is augment_cpu's)
    aug = synced if smoke else summary(estimate.profile("augment_cpu", cpu_args, device.type,
                                                        runs / "augment_cpu", smoke))
    targets = ("gpu",) if smoke else ("gpu", "gpu_stream")
    variants = [("cpu", "augment_cpu", {"workers": cpu_workers}),
                ("cpu_item", "augment_cpu_item", {"workers": cpu_workers}),
                ("gpu", "augment_gpu", {"workers": gpu_workers}),
                ("gpu_stream", "augment_gpu_stream", {"workers": gpu_workers})]
    timing = interleaved([v for v in variants if v[0] in ("cpu", "cpu_item", *targets)], params,
                         steps=1 if smoke else 25, repeats=1 if smoke else 5, drain=0 if smoke else 18, device=device)
    remedy = next((r for r in aug["remedies"] or [] if r["remedy"] == "gpu_augmentation"), None)
    predicted = remedy["saving_ms"] if remedy else None
    out = []
    for target in targets:
        measured = timing["cpu"]["median_ms"] - timing[target]["median_ms"]
        out.append(row(f"augmentation: augment_cpu -> augment_{target}", "augmentation", predicted, measured,
                       spread(timing, "cpu", target), timing, aug))
    measured = timing["cpu_item"]["median_ms"] - timing["cpu"]["median_ms"]
    out.append(row("data-bound: augment_cpu + loss.item() -> augment_cpu", "data-bound", synced["predicted_ms"],
                   measured, spread(timing, "cpu_item", "cpu"), timing, synced))
    return out


SYNC_BOUND = [
    ("sync-bound: classic loop 32x32, batch 256", "classic_loop_naive", "classic_loop_fixed",
     dict(batch=256, size=32, workers=4), ["--batch", "256", "--size", "32", "--workers", "4"], 50, 11),
    ("sync-bound: masked loss 64x64, batch 32", "masked_loss_naive", "masked_loss_fixed",
     dict(batch=32, size=64), ["--batch", "32", "--size", "64"], 50, 15),
]


def sync_bound_cases(runs: Path, device) -> list[dict]:
    out = []
    for label, naive, fixed, params, script, steps, repeats in SYNC_BOUND:
        prof = summary(estimate.profile(naive, script, device.type, runs / naive, False))
        timing = interleaved([("naive", naive, {}), ("fixed", fixed, {})], params, steps, repeats,
                             drain=10 if params.get("workers") else 0, device=device)
        measured = timing["naive"]["median_ms"] - timing["fixed"]["median_ms"]
        out.append(row(label, "sync-bound", prof["predicted_ms"], measured, spread(timing, "naive", "fixed"),
                       timing, prof))
    return out


IMAGENET_ARGS = ["-a", "resnet18", "--dummy", "-b", "256", "-j", "8", "--epochs", "1"]


def imagenet_case(main_py: Path, runs: Path, runs_each: int) -> dict:
    """The issue's script: profiled as is; timed against `loss.detach()` for `loss.item()`."""
    from syncscan.runtime import compare

    folder = runs / "imagenet"
    folder.mkdir(parents=True, exist_ok=True)
    source = main_py.read_text()
    marker = "losses.update(loss.item(), images.size(0))"
    if marker not in source:
        raise SystemExit(f"input_pipeline: {main_py}: no `{marker}` to rewrite (another version of main.py?)")
    detached = folder / "main_detach.py"
    detached.write_text(source.replace(marker, "losses.update(loss.detach(), images.size(0))", 1))
    prof = summary(estimate.profile("imagenet", IMAGENET_ARGS, "cuda", folder / "profile", False, script=main_py,
                                    device_flag=False))
    schedule = ["--wait", "1", "--warmup", "2", "--steps", "16"]
    measured = compare.measure([str(main_py), *IMAGENET_ARGS], [str(detached), *IMAGENET_ARGS], schedule, runs_each)
    saving = measured["measured_saving_ms_per_step"]
    r = row("data-bound: ImageNet resnet18 --dummy -b 256 -j 8, loss.item() -> loss.detach()", "data-bound",
            prof["predicted_ms"], saving, measured["spread_ms"], measured, prof)
    return r


def table(rows: list[dict]) -> str:
    out = ["| case | regime / pace | predicted saving | measured (A -> B) | spread | verdict |",
           "|---|---|---:|---|---:|---|"]
    f = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    for r in rows:
        p, t = r["profile"], r["timing"]
        pace = (p.get("pace") or {}).get("resource") or "-"
        if r["kind"] == "augmentation":
            ab = f"{t['cpu']['median_ms']:.2f} -> {t[r['case'].split('augment_')[-1]]['median_ms']:.2f}"
        elif "original_ms_per_step" in t:
            ab = f"{t['original_ms_per_step']:.2f} -> {t['rewritten_ms_per_step']:.2f}"
        else:
            a, b = ("cpu_item", "cpu") if "cpu_item" in t else ("naive", "fixed")
            ab = f"{t[a]['median_ms']:.2f} -> {t[b]['median_ms']:.2f}"
        err = f" ({r['error']:+.0%})" if r["error"] is not None else ""
        out.append(f"| {r['case']} | {p.get('regime') or '-'} / {pace} | {f(r['predicted_ms'])} | "
                   f"{f(r['measured_ms'])} ({ab}) | {f(r['spread_ms'])} | {r['verdict']}{err} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--runs", metavar="DIR", help="where the profile runs go (default: a temp folder)")
    ap.add_argument("--imagenet", metavar="MAIN_PY", help="pytorch/examples' imagenet/main.py")
    ap.add_argument("--imagenet-runs", type=int, default=2, help="A/B runs of each ImageNet script (default 2)")
    ap.add_argument("--max-seconds", type=float, default=270.0,
                    help="skip the cases not started after this many seconds (default 270)")
    ap.add_argument("--cases", default="augmentation,sync-bound,imagenet",
                    help="which cases to run, of augmentation,sync-bound,imagenet (default: all; imagenet needs "
                         "--imagenet)")
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny CPU run: checks the plumbing only")
    args = ap.parse_args(argv)
    cases = set(args.cases.split(","))
    unknown = cases - {"augmentation", "sync-bound", "imagenet"}
    if unknown:
        print(f"input_pipeline: --cases: unknown {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if not args.cpu_smoke and not torch.cuda.is_available():
        print("input_pipeline: no CUDA GPU (use --cpu-smoke to check the plumbing)", file=sys.stderr)
        return 2
    if args.imagenet and not Path(args.imagenet).is_file():
        print(f"input_pipeline: --imagenet {args.imagenet}: no such file", file=sys.stderr)
        return 2
    device = torch.device("cpu" if args.cpu_smoke else "cuda")
    runs = Path(args.runs or tempfile.mkdtemp(prefix="syncscan-input-"))
    runs.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    rows: list[dict] = []
    skipped: list[str] = []
    steps = []
    if "augmentation" in cases:
        steps.append(("augmentation", lambda: augmentation_cases(runs, device, args.cpu_smoke)))
    if "sync-bound" in cases and not args.cpu_smoke:
        steps.append(("sync-bound", lambda: sync_bound_cases(runs, device)))
    if "imagenet" in cases and args.imagenet:
        steps.append(("imagenet", lambda: [imagenet_case(Path(args.imagenet).resolve(), runs, args.imagenet_runs)]))
    env = workloads.environment(device)
    env["date"] = datetime.date.today().isoformat()

    def save() -> None:
        if args.json:
            env["seconds"] = round(time.monotonic() - start, 1)
            Path(args.json).write_text(json.dumps({"environment": env, "rows": rows, "skipped": skipped}, indent=1))

    for name, run in steps:
        if time.monotonic() - start > args.max_seconds:
            skipped.append(name)
            continue
        new = run()
        rows += new
        for r in new:
            print(json.dumps({k: r[k] for k in ("case", "predicted_ms", "measured_ms", "verdict")}), flush=True)
        save()  # after each case: a run stopped later keeps what it measured
    save()
    print()
    print(table(rows))
    if skipped:
        print(f"not run (over --max-seconds): {', '.join(skipped)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
