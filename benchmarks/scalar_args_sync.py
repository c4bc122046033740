"""Which torch arguments read a device tensor on the host: the `Scalar` ones (rule SYN109).

    python benchmarks/scalar_args_sync.py [--json PATH]              # on a CUDA machine
    python benchmarks/scalar_args_sync.py --smoke [--json PATH]      # on the CPU (a test)

torch's signatures (`torch._C._jit_get_schemas_for_operator`) type some arguments `Scalar` in every
overload (`alpha=` of `add`, `beta=`/`alpha=` of `addmm`, `value=` of `addcmul` ...) and others
`Scalar` in one overload and `Tensor` in another (`weight` of `lerp`, `min` of `clamp`, `value` of
`fill_`). Python's argument parser turns a 0-dim tensor handed to a `Scalar`-only argument into a
number with `.item()`; where a `Tensor` overload exists it picks that one instead. Each case below
is one call with a 0-dim device tensor `t` in such an argument. On CUDA each runs once (after a
warm-up) under `torch.cuda.set_sync_debug_mode("error")`: a sync raises, so "synced" is yes or no.
On the CPU nothing syncs, so `--smoke` counts the host reads instead (`aten::_local_scalar_dense`,
which `.item()` runs, in the profiler's op list): the reads that sync on CUDA. Also listed: each
argument's types in the local torch's schemas, so the table says where a `Tensor` is accepted.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import torch.nn.functional as F


def cases(t: torch.Tensor, v: torch.Tensor, m: torch.Tensor, b: torch.Tensor) -> dict:
    """name -> (the call, the rule that flags it or "-", "sync" or "none" expected on CUDA).
    `t` is a 0-dim device tensor, `v` a vector, `m` a square matrix, `b` a batch of them."""
    d = v.clone()
    mask, idx = v > 0, torch.zeros(2, dtype=torch.long, device=v.device)
    return {
        # Scalar in every overload: converted with .item()
        "d.add_(v, alpha=t)": (lambda: d.add_(v, alpha=t), "SYN109", "sync"),
        "torch.add(v, v, alpha=t)": (lambda: torch.add(v, v, alpha=t), "SYN109", "sync"),
        "v.sub(v, alpha=t)": (lambda: v.sub(v, alpha=t), "SYN109", "sync"),
        "torch.rsub(v, v, alpha=t)": (lambda: torch.rsub(v, v, alpha=t), "SYN109", "sync"),
        "torch.addr(m, v, v, alpha=t)": (lambda: torch.addr(m, v, v, alpha=t), "SYN109", "sync"),
        "torch.addr(m, v, v, beta=t)": (lambda: torch.addr(m, v, v, beta=t), "SYN109", "sync"),
        "torch.addmm(m, m, m, alpha=t)": (lambda: torch.addmm(m, m, m, alpha=t), "SYN109", "sync"),
        "m.addmm(m, m, beta=t)": (lambda: m.addmm(m, m, beta=t), "SYN109", "sync"),
        "torch.addmv(v, m, v, alpha=t)": (lambda: torch.addmv(v, m, v, alpha=t), "SYN109", "sync"),
        "torch.addbmm(m, b, b, beta=t)": (lambda: torch.addbmm(m, b, b, beta=t), "SYN109", "sync"),
        "torch.baddbmm(b, b, b, alpha=t)": (lambda: torch.baddbmm(b, b, b, alpha=t), "SYN109", "sync"),
        "torch.addcmul(v, v, v, value=t)": (lambda: torch.addcmul(v, v, v, value=t), "SYN109", "sync"),
        "d.addcdiv_(v, v.abs() + 1, value=t)": (lambda: d.addcdiv_(v, v.abs() + 1, value=t), "SYN109", "sync"),
        "d.index_add_(0, idx, v[:2], alpha=t)": (lambda: d.index_add_(0, idx, v[:2], alpha=t), "SYN109", "sync"),
        "F.leaky_relu(v, t)": (lambda: F.leaky_relu(v, t), "SYN109", "sync"),
        "F.elu(v, alpha=t)": (lambda: F.elu(v, alpha=t), "SYN109", "sync"),
        "F.softplus(v, beta=t)": (lambda: F.softplus(v, beta=t), "SYN109", "sync"),
        "F.hardtanh(v, -t, t)": (lambda: F.hardtanh(v, -t, t), "SYN109", "sync"),
        "F.threshold(v, t, 0.0)": (lambda: F.threshold(v, t, 0.0), "SYN109", "sync"),
        "v.renorm(2, 0, maxnorm=t)": (lambda: v.view(4, -1).renorm(2, 0, maxnorm=t), "SYN109", "sync"),
        "torch.full_like(v, t)": (lambda: torch.full_like(v, t), "SYN108", "sync"),
        # a Tensor overload exists: no conversion
        "torch.lerp(v, d, t)": (lambda: torch.lerp(v, d, t), "-", "none"),
        "d.lerp_(v, weight=t)": (lambda: d.lerp_(v, weight=t), "-", "none"),
        "torch.clamp(v, min=-t, max=t)": (lambda: torch.clamp(v, min=-t, max=t), "-", "none"),
        "d.fill_(t)": (lambda: d.fill_(t), "-", "none"),
        "torch.add(v, t)": (lambda: torch.add(v, t), "-", "none"),
        "v.pow(t)": (lambda: v.pow(t), "-", "none"),
        "torch.where(mask, v, t)": (lambda: torch.where(mask, v, t), "-", "none"),
        # a Tensor overload that reads the value itself (ATen calls value.item()): no rule yet
        "d.index_fill_(0, idx, t)": (lambda: d.index_fill_(0, idx, t), "-", "sync"),
        # the rewrites: the math stays on the device
        "rewrite: d.add_(v * -t)": (lambda: d.add_(v * -t), "-", "none"),
        "rewrite: m - t * torch.outer(v, v)": (lambda: m - t * torch.outer(v, v), "-", "none"),
        "rewrite: m + t * (m @ m)": (lambda: m + t * (m @ m), "-", "none"),
        "rewrite: v + t * (v * v)": (lambda: v + t * (v * v), "-", "none"),
    }


# the (function, argument) pairs the cases exercise, checked against the local schemas
SCHEMA_ARGS = (("add", "alpha"), ("sub", "alpha"), ("rsub", "alpha"), ("addr", "alpha"), ("addr", "beta"),
               ("addmm", "beta"), ("addmv", "alpha"), ("addbmm", "beta"), ("baddbmm", "alpha"),
               ("addcmul", "value"), ("addcdiv", "value"), ("index_add", "alpha"), ("leaky_relu", "negative_slope"),
               ("elu", "alpha"), ("softplus", "beta"), ("hardtanh", "min_val"), ("threshold", "threshold"),
               ("renorm", "maxnorm"), ("full_like", "fill_value"), ("lerp", "weight"), ("clamp", "min"),
               ("fill", "value"), ("add", "other"), ("pow", "exponent"), ("where", "other"), ("index_fill", "value"))


def schema_types(op: str, arg: str) -> list[str]:
    """The types `arg` has across the overloads of `aten::op` (`number` is torch's `Scalar`)."""
    seen = set()
    for s in torch._C._jit_get_schemas_for_operator("aten::" + op):
        if not any(str(a.type) == "Tensor" for a in s.arguments[:1]):
            continue  # TorchScript's overloads of Python numbers (add.int ...) are not Python bindings
        seen.update(str(a.type) for a in s.arguments if a.name == arg)
    return sorted(seen)


def cuda_synced(fn) -> bool:
    fn()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        fn()
    except RuntimeError as e:
        if "synchroniz" not in str(e):
            raise
        return True
    finally:
        torch.cuda.set_sync_debug_mode("default")
        torch.cuda.synchronize()
    return False


def host_reads(fn) -> int:
    fn()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    return sum(e.count for e in prof.key_averages() if e.key == "aten::_local_scalar_dense")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="CPU: count host reads (the syncs of a CUDA run)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    if not args.smoke and not torch.cuda.is_available():
        print("scalar_args_sync.py: no CUDA device (use --smoke on the CPU)", file=sys.stderr)
        return 2
    device = "cpu" if args.smoke else "cuda"
    torch.manual_seed(0)
    t = torch.tensor(0.5, device=device)
    v, m, b = torch.randn(16, device=device), torch.randn(16, 16, device=device), torch.randn(2, 16, 16, device=device)
    rows = []
    with torch.no_grad():
        for name, (fn, rule, want) in cases(t, v, m, b).items():
            row = {"case": name, "rule": rule, "expected": want}
            if args.smoke:
                row["host_reads"] = host_reads(fn)
                got = row["host_reads"] > 0
            else:
                row["synced"] = cuda_synced(fn)
                got = row["synced"]
            row["as_expected"] = got == (want == "sync")
            rows.append(row)
    schemas = [{"op": op, "arg": arg, "types": schema_types(op, arg)} for op, arg in SCHEMA_ARGS]
    meta = {"device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "torch": torch.__version__,
            "mode": "host reads (CPU profiler)" if args.smoke else 'set_sync_debug_mode("error")'}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "cases": rows, "schemas": schemas}, f, indent=1)
    print("| aten op | argument | types in its overloads |")
    print("| --- | --- | --- |")
    for s in schemas:
        print(f"| {s['op']} | {s['arg']} | {', '.join(s['types']).replace('number', 'Scalar')} |")
    key = "host_reads" if args.smoke else "synced"
    print(f"\n{meta['device']}, torch {meta['torch']}: {meta['mode']}, t a 0-dim {device} tensor")
    print(f"| case | rule | {key} | expected |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['case']} | {r['rule']} | {r[key]} | {r['expected']}{'' if r['as_expected'] else ' (NOT)'} |")
    return 0 if all(r["as_expected"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
