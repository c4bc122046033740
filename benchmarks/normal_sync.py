"""What `torch.normal` and the Normal distributions cost in host syncs (rules SYN409, SYN405).

    python benchmarks/normal_sync.py [--reps 20] [--json PATH]     # on a CUDA machine
    python benchmarks/normal_sync.py --smoke [--json PATH]         # on the CPU (a test)

Each case is a small function of device tensors `m` and `s` (a mean and a positive std, 4096
values each). On CUDA it is run `--reps` times under `torch.cuda.set_sync_debug_mode("warn")` after
one warm-up call, and the warnings it raises are counted per call ("syncs"); the median time per
call (CUDA events around `--reps` calls, `--rounds` rounds) is given too. On the CPU nothing syncs,
so `--smoke` counts the host reads instead (`aten::_local_scalar_dense`, which `item()` and
`is_nonzero()` run, in the profiler's op list), which are the reads that sync on CUDA: the rule's
claims are checked there (a test runs it). The table is printed last; `--json` writes every number.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import warnings

import torch
from torch.distributions import Distribution, Normal, constraints


class Spike(Distribution):
    """A subclass as libraries write them: its parameters set, then `super().__init__`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = loc, scale
        super().__init__(loc.shape, validate_args=validate_args)


def cases(m: torch.Tensor, s: torch.Tensor) -> dict:
    """name -> (the call, what the lint says of it, syncs it should make on CUDA: "0" or ">0")."""
    x = m.detach().clone()
    on, off = Normal(m, s), Normal(m, s, validate_args=False)
    return {
        "torch.normal(m, s)": (lambda: torch.normal(m, s), "SYN409", ">0"),
        "torch.normal(m, 1.0)": (lambda: torch.normal(m, 1.0), "-", "0"),
        "rewrite: m + s * randn_like(m)": (lambda: (m + s * torch.randn_like(m)).detach(), "-", "0"),
        "Normal(m, s, validate_args=False).sample()": (lambda: off.sample(), "SYN409", ">0"),
        "Normal(m, s, validate_args=False).rsample()": (lambda: off.rsample(), "-", "0"),
        "rewrite: .rsample().detach()": (lambda: off.rsample().detach(), "-", "0"),
        "Normal(m, s) (validation on)": (lambda: Normal(m, s), "SYN405", ">0"),
        "Normal(m, s, validate_args=False)": (lambda: Normal(m, s, validate_args=False), "-", "0"),
        "d.log_prob(x) (validation on)": (lambda: on.log_prob(x), "SYN405", ">0"),
        "d.log_prob(x) (validate_args=False)": (lambda: off.log_prob(x), "-", "0"),
        "subclass super().__init__ (validate_args=None)": (lambda: Spike(m, s), "SYN405", ">0"),
        "subclass super().__init__ (validate_args=False)": (lambda: Spike(m, s, validate_args=False), "-", "0"),
    }


def cuda_syncs(fn, reps: int) -> float:
    fn()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            for _ in range(reps):
                fn()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    return sum("synchroniz" in str(w.message) for w in got) / reps


def cuda_us(fn, reps: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / reps)
    return statistics.median(times)


def host_reads(fn, reps: int) -> float:
    fn()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(reps):
            fn()
    counts = {e.key: e.count for e in prof.key_averages()}
    # item() and is_nonzero() both read through _local_scalar_dense: each read counted once
    return counts.get("aten::_local_scalar_dense", 0) / reps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="CPU: count host reads (the syncs of a CUDA run)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    if not args.smoke and not torch.cuda.is_available():
        print("normal_sync.py: no CUDA device (use --smoke on the CPU)", file=sys.stderr)
        return 2
    device = "cpu" if args.smoke else "cuda"
    torch.manual_seed(0)
    m = torch.randn(4096, device=device)
    s = torch.rand(4096, device=device) + 0.1
    rows = []
    for name, (fn, rule, want) in cases(m, s).items():
        row = {"case": name, "rule": rule, "expected": want}
        if args.smoke:
            row["host_reads"] = host_reads(fn, args.reps)
            got = row["host_reads"]
        else:
            row["syncs"] = cuda_syncs(fn, args.reps)
            row["us_per_call"] = round(cuda_us(fn, args.reps, args.rounds), 2)
            got = row["syncs"]
        row["as_expected"] = (got > 0) == (want == ">0")
        rows.append(row)
    meta = {"device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "torch": torch.__version__,
            "reps": args.reps, "mode": "host reads (CPU)" if args.smoke else "sync warnings (CUDA)"}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "cases": rows}, f, indent=1)
    key = "host_reads" if args.smoke else "syncs"
    print(f"{meta['device']}, torch {meta['torch']}: {meta['mode']} per call")
    print(f"| case | rule | {key} | {'' if args.smoke else 'us/call | '}expected |")
    print(f"| --- | --- | --- | {'' if args.smoke else '--- | '}--- |")
    for r in rows:
        us = "" if args.smoke else f"{r['us_per_call']} | "
        print(f"| {r['case']} | {r['rule']} | {r[key]:g} | {us}{r['expected']}{'' if r['as_expected'] else ' (NOT)'} |")
    return 0 if all(r["as_expected"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
