"""Sweep torch's own operator database (OpInfo, `torch.testing._internal.common_methods_invocations.op_db`:
about 700 ops with the sample inputs torch tests them with) for ops that read the GPU on the host.

Each op's CUDA samples (float32, else its first CUDA dtype; at most --samples per op) run once to warm up,
then again under `torch.cuda.set_sync_debug_mode("error")`: a sample that synchronises raises. The result
is a catalogue independent of any code the linter is measured on, so rule coverage can be checked against
torch itself rather than against the sets (docs/accuracy.md, "Session 10"). Writes JSON:
{op: {"samples": n, "synced": k, "sync_examples": [...], "quiet_examples": [...]}}.

    python benchmarks/opinfo_sync.py --out DIR [--samples 6]    # on a CUDA machine (needs expecttest)
    python benchmarks/opinfo_sync.py --report FILE.json          # here: the syncing ops no rule maps
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path


def _describe(s) -> str:
    def one(a):
        import torch
        if isinstance(a, torch.Tensor):
            return f"T{tuple(a.shape)}{'' if a.is_cuda else ' cpu'}{' bool' if a.dtype == torch.bool else ''}"
        if isinstance(a, (list, tuple)):
            return "[" + ", ".join(one(x) for x in a[:4]) + (", ..." if len(a) > 4 else "") + "]"
        return repr(a)[:30]
    parts = [one(s.input)] + [one(a) for a in s.args] + [f"{k}={one(v)}" for k, v in s.kwargs.items()]
    return ", ".join(parts)[:200]


class _Slow(Exception):
    pass


def _alarm(*_):
    raise _Slow()


def sweep(max_samples: int) -> dict:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    signal.signal(signal.SIGALRM, _alarm)
    out = {}
    for op in op_db:
        name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        dtypes = op.supported_dtypes("cuda")
        dtype = next((d for d in (torch.float32, torch.int64, torch.bool) if d in dtypes), None)
        if dtype is None:
            dtype = next(iter(dtypes), None)
        if dtype is None:
            continue
        rec = {"samples": 0, "synced": 0, "sync_examples": [], "quiet_examples": [], "errors": 0}
        signal.alarm(20)
        try:
            for i, s in enumerate(op.sample_inputs("cuda", dtype, requires_grad=False)):
                if i >= max_samples:
                    break
                try:
                    op(s.input, *s.args, **s.kwargs)
                    torch.cuda.synchronize()
                except Exception:  # noqa: BLE001 - a sample this build rejects
                    rec["errors"] += 1
                    continue
                torch.cuda.set_sync_debug_mode("error")
                try:
                    op(s.input, *s.args, **s.kwargs)
                    synced = False
                except RuntimeError as e:
                    synced = "synchroniz" in str(e)
                    if not synced:
                        rec["errors"] += 1
                        continue
                finally:
                    torch.cuda.set_sync_debug_mode(0)
                rec["samples"] += 1
                rec["synced"] += synced
                ex = rec["sync_examples" if synced else "quiet_examples"]
                if len(ex) < 3:
                    ex.append(_describe(s))
        except _Slow:
            rec["errors"] += 1
        except Exception as e:  # noqa: BLE001 - sample generation failed
            rec["error"] = f"{type(e).__name__}: {str(e)[:100]}"
        finally:
            signal.alarm(0)
            torch.cuda.set_sync_debug_mode(0)
        out[name] = rec
    return out


def report(path: Path) -> str:
    """The syncing ops, and whether a rule's profiler ops name them (syncscan.catalog_data)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from syncscan import catalog_data

    data = json.loads(path.read_text())
    mapped = {k.split("::", 1)[-1].lstrip("_") for k in catalog_data.OP_TO_RULE}
    lines = []
    for name, r in sorted(data.items()):
        if not r.get("synced"):
            continue
        base = name.split(".")[0].replace("linalg_", "").lstrip("_")
        flag = "rule" if any(base == m or base in m.split("_") for m in mapped) else "NO RULE"
        lines.append(f"{name:40} {r['synced']}/{r['samples']} {flag:8} sync: {r['sync_examples'][:1]}"
                     f" quiet: {r['quiet_examples'][:1]}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--samples", type=int, default=6)
    ap.add_argument("--report")
    a = ap.parse_args()
    if a.report:
        print(report(Path(a.report)))
        return
    t = time.time()
    res = sweep(a.samples)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    Path(a.out, "opinfo_sync.json").write_text(json.dumps(res, indent=1))
    n = sum(1 for r in res.values() if r["synced"])
    print(f"{len(res)} ops, {n} synced on some sample, {time.time() - t:.0f} s")


if __name__ == "__main__":
    main()
