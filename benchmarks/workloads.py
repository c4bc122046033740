"""Time every variant of every fixture workload (fixtures/*.py) on a CUDA GPU.

For each configuration, every variant is built once (its `make_step`), warmed up, then timed in
interleaved repeats (A B A B ...): each repeat runs N steps between two CUDA synchronisations
and records the wall-clock ms/step. Reported: median ms/step over the repeats, its min/max and
interquartile range, steps/s, the speed-up over the first variant, and the host syncs of one
step as counted by `torch.cuda.set_sync_debug_mode("warn")` (which misses some: see
shared/reference/sync-ops.md).

Workloads fed by DataLoader workers first run a few untimed "drain" steps in every repeat, so
batches the workers prefetched while another variant was being timed do not flatter the next
timing: what is timed is the steady state.

    python benchmarks/workloads.py [--quick] [--json PATH] [--only masked_loss,encdec,...]
    python benchmarks/workloads.py --cpu-smoke     # no GPU: one step of every variant on the CPU
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib
import json
import os
import statistics
import sys
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WORKLOADS = ("masked_loss", "encdec", "augment", "classic_loop")


@dataclass
class Case:
    workload: str
    config: str
    params: dict  # passed to every variant's make_step
    variants: list  # (label, fixture module, extra make_step kwargs)
    steps: int  # timed steps per repeat
    repeats: int
    warmup: int = 5  # untimed steps per variant before the first repeat
    drain: int = 0  # untimed steps at the start of every repeat (DataLoader prefetch)
    note: str = ""


MASKED = [("naive", "masked_loss_naive", {}), ("fixed", "masked_loss_fixed", {})]
ENCDEC = [("serial", "encdec_serial", {}), ("piped", "encdec_piped", {})]
# the CPU variant gets more workers: augmentation is its bottleneck, not collation
AUGMENT = [("cpu", "augment_cpu", {"workers": 8}), ("gpu", "augment_gpu", {"workers": 4}),
           ("gpu_stream", "augment_gpu_stream", {"workers": 4})]
CLASSIC = [("naive", "classic_loop_naive", {}), ("fixed", "classic_loop_fixed", {})]


def gpu_cases(quick: bool) -> list[Case]:
    """Configurations in priority order (a --max-seconds cut drops the last ones)."""
    r = (lambda full, q=3: q) if quick else (lambda full, q=3: full)
    s = (lambda full: max(2, full // 3)) if quick else (lambda full: full)
    cases = [
        Case("masked_loss", "batch 32, 256x256", dict(batch=32, size=256), MASKED,
             steps=s(10), repeats=r(9), warmup=3),
        Case("masked_loss", "batch 16, 64x64", dict(batch=16, size=64), MASKED,
             steps=s(50), repeats=r(21), warmup=10, note="launch-bound: more repeats"),
    ]
    for batch in (8, 16, 32) if not quick else (16,):
        cases.append(Case("encdec", f"batch {batch}, 256x256, 3->4096 ch",
                          dict(batch=batch, size=256, width=32, depth=8), ENCDEC,
                          steps=s(30), repeats=r(11), warmup=10))
    cases.append(Case("augment", "batch 32, 256->224", dict(batch=32, size=256), AUGMENT,
                      steps=s(25), repeats=r(5), warmup=10, drain=18))
    if not quick:
        cases.append(Case("masked_loss", "batch 256, 256x256", dict(batch=256, size=256),
                          MASKED, steps=3, repeats=5, warmup=2, note="GPU-bound"))
    cases.append(Case("classic_loop", "batch 256, 32x32", dict(batch=256, size=32, workers=4),
                      CLASSIC, steps=s(50), repeats=r(11), warmup=10, drain=10))
    if not quick:
        cases.append(Case("augment", "batch 64, 256->224", dict(batch=64, size=256), AUGMENT,
                          steps=25, repeats=5, warmup=10, drain=18))
    return cases


def cpu_smoke_cases() -> list[Case]:
    one = dict(steps=1, repeats=1, warmup=0)
    return [
        Case("masked_loss", "batch 2, 32x32", dict(batch=2, size=32), MASKED, **one),
        Case("encdec", "batch 2, 32x32", dict(batch=2, size=32, width=4, depth=5), ENCDEC, **one),
        Case("augment", "batch 2, 32->28", dict(batch=2, size=32),
             [(label, module, {"workers": 0}) for label, module, _ in AUGMENT], **one),
        Case("classic_loop", "batch 8, 32x32", dict(batch=8, size=32, workers=0), CLASSIC, **one),
    ]


def load_fixture(name: str):
    if str(FIXTURES) not in sys.path:
        sys.path.insert(0, str(FIXTURES))
    return importlib.import_module(name)


# ---------------------------------------------------------------------------- measuring

def wait(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_steps(step, steps: int, device: torch.device) -> float:
    """ms/step of `steps` consecutive steps, wall clock between two device synchronisations."""
    wait(device)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    wait(device)
    return 1000.0 * (time.perf_counter() - start) / steps


def count_syncs(step, device: torch.device) -> int | None:
    """Host syncs of one step that the CUDA sync debug mode reports (a lower bound)."""
    if device.type != "cuda":
        return None
    wait(device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            step()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    wait(device)
    return sum("synchroniz" in str(w.message) for w in caught)


def summarize(times_ms: list[float]) -> dict:
    ordered = sorted(times_ms)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    median = statistics.median(ordered)
    return dict(median_ms=median, min_ms=ordered[0], max_ms=ordered[-1], q1_ms=q1, q3_ms=q3,
                steps_per_s=1000.0 / median, repeats_ms=times_ms)


def run_case(case: Case, device: torch.device) -> dict:
    steps = {}
    for label, module, kwargs in case.variants:
        steps[label] = load_fixture(module).make_step(device, **case.params, **kwargs)
    for step in steps.values():
        for _ in range(case.warmup):
            step()
    wait(device)
    times = {label: [] for label in steps}
    for _ in range(case.repeats):
        for label, step in steps.items():  # interleaved: A B A B ...
            for _ in range(case.drain):
                step()
            times[label].append(time_steps(step, case.steps, device))
    syncs = {label: count_syncs(step, device) for label, step in steps.items()}
    variants = {}
    base = None
    for label, _, kwargs in case.variants:
        stats = summarize(times[label])
        base = base or stats["median_ms"]
        stats.update(speedup=base / stats["median_ms"], syncs_per_step=syncs[label],
                     make_step_kwargs=kwargs)
        variants[label] = stats
    return variants


def median_ms(fn, steps: int, repeats: int, device: torch.device, warmup: int = 3) -> dict:
    for _ in range(warmup):
        fn()
    return summarize([time_steps(fn, steps, device) for _ in range(repeats)])


BREAKDOWN = dict(masked=((32, 256, 10), (16, 64, 50), (256, 256, 3)),
                 encoder=dict(width=32, depth=8, size=256, batches=(8, 16, 32), steps=20),
                 augment=dict(size=256, crop=224, batches=(32, 64), steps=20))


def breakdown(device: torch.device, quick: bool, sizes: dict = BREAKDOWN) -> list[dict]:
    """Time the parts a rewrite can change, alone: the masked loss (forward + backward on a
    fixed prediction), the frozen encoder (what pipelining can hide) and the batched GPU
    augmentation (what its stream can hide)."""
    reps = 3 if quick else 7
    rows = []
    for batch, size, steps in sizes["masked"]:
        pred = torch.randn(batch, 10, size, size, device=device, requires_grad=True)
        target = torch.randint(0, 10, (batch, size, size), device=device)
        for label, module, _ in MASKED:
            loss_fn = load_fixture(module).MaskedLoss()

            def loss_step():  # the naive loss edits its target: both get a fresh copy
                loss_fn(pred, target.clone()).backward()
            rows.append(dict(part="masked loss fwd+bwd", config=f"batch {batch}, {size}x{size}",
                             variant=label, **median_ms(loss_step, steps, reps, device)))
        del pred, target
    enc = sizes["encoder"]
    encoder = load_fixture("encdec_serial").Encoder(enc["width"], enc["depth"])
    encoder = encoder.to(device).eval().requires_grad_(False)
    for batch in enc["batches"]:
        images = torch.randn(batch, 3, enc["size"], enc["size"], device=device)

        def encode():
            with torch.no_grad():
                encoder(images)
        rows.append(dict(part="frozen encoder fwd", config=f"batch {batch}, "
                         f"{enc['size']}x{enc['size']}", variant="encoder",
                         **median_ms(encode, enc["steps"], reps, device)))
    aug = sizes["augment"]
    gpu_augment = load_fixture("augment_gpu").gpu_augment
    for batch in aug["batches"]:
        images = torch.randint(0, 256, (batch, 3, aug["size"], aug["size"]), dtype=torch.uint8,
                               device=device)
        rows.append(dict(part="gpu_augment", config=f"batch {batch}, {aug['size']}->"
                         f"{aug['crop']}", variant="augment",
                         **median_ms(lambda: gpu_augment(images, aug["crop"]), aug["steps"],
                                     reps, device)))
    release_memory()
    return rows


def breakdown_table(rows: list[dict]) -> str:
    lines = ["| part | config | variant | ms (median) | min-max |",
             "| --- | --- | --- | ---: | ---: |"]
    lines += [f"| {r['part']} | {r['config']} | {r['variant']} | {r['median_ms']:.2f} "
              f"| {r['min_ms']:.2f}-{r['max_ms']:.2f} |" for r in rows]
    return "\n".join(lines)


def release_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def environment(device: torch.device) -> dict:
    import torchvision
    env = dict(date=datetime.date.today().isoformat(), torch=torch.__version__,
               torchvision=torchvision.__version__, python=sys.version.split()[0],
               cpu_count=os.cpu_count(), device=str(device))
    if device.type == "cuda":
        env.update(gpu=torch.cuda.get_device_name(device), cuda=torch.version.cuda,
                   cudnn=torch.backends.cudnn.version(),
                   cudnn_benchmark=torch.backends.cudnn.benchmark,
                   cudnn_allow_tf32=torch.backends.cudnn.allow_tf32,
                   matmul_allow_tf32=torch.backends.cuda.matmul.allow_tf32)
    return env


# ---------------------------------------------------------------------------- output

def markdown_table(results: list[dict]) -> str:
    lines = ["| workload | config | variant | ms/step (median) | min-max | IQR | steps/s "
             "| vs first | syncs/step |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for res in results:
        if "variants" not in res:
            why = res.get("error") or res.get("skipped")
            lines.append(f"| {res['workload']} | {res['config']} | not measured: {why} "
                         "| | | | | | |")
            continue
        for label, v in res["variants"].items():
            gain = (v["speedup"] - 1) * 100
            syncs = "-" if v["syncs_per_step"] is None else str(v["syncs_per_step"])
            lines.append(
                f"| {res['workload']} | {res['config']} | {label} | {v['median_ms']:.2f} "
                f"| {v['min_ms']:.2f}-{v['max_ms']:.2f} | {v['q1_ms']:.2f}-{v['q3_ms']:.2f} "
                f"| {v['steps_per_s']:.1f} | x{v['speedup']:.2f} ({gain:+.1f}%) | {syncs} |")
    return "\n".join(lines)


def write_json(path: str | None, env: dict, results: list[dict], args) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        data = dict(environment=env, quick=args.quick, cpu_smoke=args.cpu_smoke,
                    results=results)
        Path(path).write_text(json.dumps(data, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer configs, repeats and steps")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--only", default=",".join(WORKLOADS),
                        help=f"comma-separated workloads (default: all of {','.join(WORKLOADS)})")
    parser.add_argument("--cpu-smoke", action="store_true",
                        help="without timing anything, run one step of every variant on the CPU")
    parser.add_argument("--breakdown", action="store_true",
                        help="instead of the workloads, time their parts alone (GPU only)")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="skip the remaining configurations once this much time has passed")
    args = parser.parse_args(argv)
    only = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = sorted(set(only) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(unknown)}")

    if args.cpu_smoke:
        device, cases = torch.device("cpu"), cpu_smoke_cases()
    elif not torch.cuda.is_available():
        print("benchmarks/workloads.py: no CUDA GPU available, nothing timed "
              "(--cpu-smoke runs one step of every variant on the CPU)")
        return 0
    else:
        device, cases = torch.device("cuda"), gpu_cases(args.quick)
    cases = [c for c in cases if c.workload in only]
    env = environment(device)
    print(f"# {env.get('gpu', 'cpu')}, torch {env['torch']}, {env['date']}", flush=True)
    if args.breakdown:
        if device.type != "cuda":
            parser.error("--breakdown needs a CUDA GPU")
        rows = breakdown(device, args.quick)
        if args.json:
            Path(args.json).write_text(json.dumps(dict(environment=env, breakdown=rows),
                                                  indent=2) + "\n")
        print(breakdown_table(rows))
        return 0

    started = time.perf_counter()
    results = []
    for case in cases:
        res = dict(workload=case.workload, config=case.config, params=case.params,
                   steps=case.steps, repeats=case.repeats, warmup=case.warmup,
                   drain=case.drain, note=case.note)
        elapsed = time.perf_counter() - started
        if args.max_seconds is not None and elapsed > args.max_seconds:
            res["skipped"] = f"time budget ({args.max_seconds:.0f} s) used up"
        else:
            t0 = time.perf_counter()
            try:
                res["variants"] = run_case(case, device)
            except Exception as exc:  # one broken case must not lose the others' numbers
                traceback.print_exc()
                res["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            res["seconds"] = round(time.perf_counter() - t0, 1)
            release_memory()
        results.append(res)
        status = ("skipped" if "skipped" in res else "error" if "error" in res
                  else ", ".join(f"{k} {v['median_ms']:.2f} ms" for k, v in
                                 res["variants"].items()))
        print(f"{case.workload} [{case.config}]: {status} ({res.get('seconds', 0)} s)",
              flush=True)
        write_json(args.json, env, results, args)  # after every case: partial runs keep data

    if args.cpu_smoke:
        failed = [r for r in results if "error" in r]
        print(f"cpu smoke: {len(results) - len(failed)}/{len(results)} workloads ran one step "
              "of every variant" + (f"; failed: {[r['workload'] for r in failed]}"
                                    if failed else ""))
        return 1 if failed else 0
    print()
    print(markdown_table(results))
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
