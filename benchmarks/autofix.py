"""Step time of the masked-loss fixture before and after `syncscan lint --fix --unsafe-fixes`.

Copies fixtures/masked_loss_naive.py to a scratch folder, lets syncscan rewrite it (the
automatic fix, not the hand-written fixtures/masked_loss_fixed.py), checks that no hot finding
is left, then times naive, auto-fixed and hand-fixed interleaved in one process (A B C A B C ...,
medians; benchmarks/workloads.py's method) at batch 32 / 256x256 and batch 16 / 64x64.

    python benchmarks/autofix.py [--json PATH]      # on a CUDA GPU
    python benchmarks/autofix.py --cpu-smoke        # no GPU: tiny sizes, checks the plumbing
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

import workloads  # noqa: E402


def autofixed_module(scratch: Path) -> str:
    """Write the auto-fixed copy of the naive loss fixture into `scratch`; return its module name."""
    name = "masked_loss_autofixed"
    shutil.copy(REPO / "fixtures" / "_common.py", scratch / "_common.py")
    target = scratch / f"{name}.py"
    shutil.copy(REPO / "fixtures" / "masked_loss_naive.py", target)
    fix = subprocess.run([sys.executable, "-m", "syncscan", "lint", "--fix", "--unsafe-fixes", "--exit-zero",
                          "--no-cache", str(target)], capture_output=True, text=True)
    if fix.returncode != 0:
        raise SystemExit(f"autofix: syncscan lint --fix failed: {fix.stderr.strip()}")
    left = subprocess.run([sys.executable, "-m", "syncscan", "lint", "--format", "json", "--no-cache", str(target)],
                          capture_output=True, text=True)
    hot = [f for f in json.loads(left.stdout or "[]") if f["context"] == "hot"]
    if hot:
        raise SystemExit(f"autofix: hot findings left after --fix: {[(f['line'], f['code']) for f in hot]}")
    sys.path.insert(0, str(scratch))
    return name


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--cpu-smoke", action="store_true")
    args = ap.parse_args(argv)
    if not args.cpu_smoke and not torch.cuda.is_available():
        print("autofix: no CUDA GPU (use --cpu-smoke to check the plumbing)", file=sys.stderr)
        return 2
    device = torch.device("cpu" if args.cpu_smoke else "cuda")
    scratch = Path(tempfile.mkdtemp(prefix="syncscan-autofix-"))
    auto = autofixed_module(scratch)
    variants = [("naive", "masked_loss_naive", {}), ("autofixed", auto, {}), ("fixed", "masked_loss_fixed", {})]
    if args.cpu_smoke:
        cases = [workloads.Case("masked_loss", "batch 2, 32x32", dict(batch=2, size=32), variants,
                                steps=1, repeats=2, warmup=1)]
    else:
        cases = [workloads.Case("masked_loss", "batch 32, 256x256", dict(batch=32, size=256), variants,
                                steps=10, repeats=9, warmup=3),
                 workloads.Case("masked_loss", "batch 16, 64x64", dict(batch=16, size=64), variants,
                                steps=50, repeats=21, warmup=10)]
    results = []
    print("| config | naive ms/step | auto-fixed ms/step | hand-fixed ms/step | auto-fixed speed-up |")
    print("|---|---:|---:|---:|---:|")
    for case in cases:
        res = workloads.run_case(case, device)
        workloads.release_memory()
        n, a, f = (res[k]["median_ms"] for k in ("naive", "autofixed", "fixed"))
        print(f"| {case.config} | {n:.2f} | {a:.2f} | {f:.2f} | {n / a:.2f}x |", flush=True)
        results.append(dict(config=case.config, variants=res))
    if args.json:
        Path(args.json).write_text(json.dumps({"environment": workloads.environment(device), "results": results},
                                              indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
