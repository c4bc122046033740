"""Where the light pass's cost goes: the host time CUPTI adds per kernel launch, by what it records.

    python benchmarks/cupti_cost.py [--rounds 3] [--json PATH]     # on a CUDA machine
    python benchmarks/cupti_cost.py --cpu-smoke [--json PATH]       # the plumbing, on the CPU (a test)

A host-bound step (600 launches of a one-element `add_`, about 7 us of host time each) is timed
with CUDA events, each variant in a process of its own, the variants alternating round by round:
`bare` (no profiler); `cuda` (torch.profiler with CUDA activity only: syncscan's light pass);
then the same with one CUPTI activity kind switched off after the profiler started, through the
process's own libcupti (ctypes): `cuda-noruntime` (no runtime or driver API records: kernels,
copies and memsets only), `cuda-nokernel` (no kernel, copy or memset records: runtime calls only),
`cuda-nolaunchrec` (no records of `cudaLaunchKernel` itself, other runtime calls kept),
`cuda-nodriver` (no driver API records); and `lean` (CPU ops too, no external correlation).
The table gives each variant's median ms/step, its ratio to bare, and the host time it adds per
launch. (The CUPTI switches are an experiment, not a recipe: the light pass needs the runtime
calls for its step marks and its pairing with the detailed pass.)
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time

VARIANTS = ("bare", "cuda", "cuda-noruntime", "cuda-nokernel", "cuda-nolaunchrec", "cuda-nodriver", "lean")
SMOKE_VARIANTS = ("bare", "lean")
# CUpti_ActivityKind values and runtime callback ids (cupti_activity.h, cupti_runtime_cbid.h)
_KIND = {"memcpy": 1, "memset": 2, "driver": 4, "runtime": 5, "concurrent_kernel": 10}
_CBID_LAUNCH_KERNEL = (211, 214)  # cudaLaunchKernel_v7000, cudaLaunchKernel_ptsz_v7000
_SWITCHES = {
    "cuda-noruntime": [("cuptiActivityDisable", _KIND["runtime"]), ("cuptiActivityDisable", _KIND["driver"])],
    "cuda-nodriver": [("cuptiActivityDisable", _KIND["driver"])],
    "cuda-nokernel": [("cuptiActivityDisable", _KIND["concurrent_kernel"]), ("cuptiActivityDisable", _KIND["memcpy"]),
                      ("cuptiActivityDisable", _KIND["memset"])],
    "cuda-nolaunchrec": [("cuptiActivityEnableRuntimeApi", c, 0) for c in _CBID_LAUNCH_KERNEL],
}


def _libcupti():
    """The libcupti this process loaded (torch's Kineto links it), or None."""
    with open("/proc/self/maps") as f:
        for line in f:
            if "libcupti" in line:
                return ctypes.CDLL(line.split()[-1])
    return None


def child(variant: str, launches: int, steps: int, device: str) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    cuda = device == "cuda"
    x = torch.zeros(64, device=device)

    def step():
        for _ in range(launches):
            x.add_(1.0)

    for _ in range(20):
        step()
    if cuda:
        torch.cuda.synchronize()
    prof, notes = None, []
    if variant != "bare":
        acts = [ProfilerActivity.CUDA] if variant.startswith("cuda") else [ProfilerActivity.CPU]
        if variant == "lean" and cuda:
            acts.append(ProfilerActivity.CUDA)
        kw = {}
        if variant == "lean":
            kw["experimental_config"] = torch.profiler._ExperimentalConfig(disable_external_correlation=True)
        prof = profile(activities=acts, **kw)
        prof.start()
        lib = _libcupti() if variant in _SWITCHES else None
        for name, *args in _SWITCHES.get(variant, []):
            fn = getattr(lib, name, None) if lib is not None else None
            notes.append(f"{name}{tuple(args)}={'missing' if fn is None else fn(*args)}")
    host, gpu = [], []
    if cuda:
        evs = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
        evs[0].record()
    for i in range(steps):
        t = time.perf_counter()
        step()
        host.append(1000 * (time.perf_counter() - t))
        if cuda:
            evs[i + 1].record()
    if cuda:
        torch.cuda.synchronize()
        gpu = [evs[i].elapsed_time(evs[i + 1]) for i in range(steps)]
    events = None
    if prof is not None:
        prof.stop()
        events = len(prof.events())
    return {"variant": variant, "ms": statistics.median(gpu or host), "host_ms": statistics.median(host),
            "events": events, "notes": notes, "torch": torch.__version__}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--launches", type=int, default=600)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--cpu-smoke", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    device, variants = ("cpu", SMOKE_VARIANTS) if args.cpu_smoke else ("cuda", VARIANTS)
    launches, steps, rounds = (20, 5, 1) if args.cpu_smoke else (args.launches, args.steps, args.rounds)
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for v in order:
            p = subprocess.run([sys.executable, __file__, "--child", v, str(launches), str(steps), device],
                               capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"})
            lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
            if p.returncode != 0 or not lines:
                print(f"{v}: failed: {(p.stderr.strip().splitlines() or ['no output'])[-1]}")
                continue
            runs[v].append(json.loads(lines[-1]))
    if not runs["bare"]:
        print("the bare variant failed: no table")
        return 1
    bare = statistics.median(d["ms"] for d in runs["bare"])
    rows = []
    for v in variants:
        if runs[v]:
            m = statistics.median(d["ms"] for d in runs[v])
            rows.append({"variant": v, "ms_per_step": m, "vs_bare": m / bare, "us_per_launch": 1000 * (m - bare) / launches,
                         "events": runs[v][-1]["events"], "notes": runs[v][-1]["notes"], "runs": [d["ms"] for d in runs[v]]})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "launches": launches, "steps": steps, "rounds": rounds,
                       "torch": runs["bare"][0]["torch"], "rows": rows}, f, indent=1)
    print(f"{'variant':18} {'ms/step':>8} {'x bare':>7} {'us/launch':>9}  events")
    for row in rows:
        print(f"{row['variant']:18} {row['ms_per_step']:8.3f} {row['vs_bare']:7.2f} {row['us_per_launch']:9.2f}  {row['events']}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])))
    else:
        sys.exit(main())
