"""`syncscan profile --compare FIXED.py`: measure the saving instead of only predicting it.

The prediction can only price the syncs and the ops that sync; a rewrite also adds or drops work
around them (docs/profile-gpu.md). So, on request, the profiled script and the rewritten one are
timed the same way: each in its own process, bare pass only (no profiler, CUDA-synchronised
step times), alternating A B A B so that drift hits both, and the medians are compared.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from syncscan.errors import UserError


def _bare_ms(label: str, script_argv: list[str], schedule: list[str], workdir: Path, i: int) -> float:
    out = workdir / f"{i}.json"
    cmd = [sys.executable, "-m", "syncscan", "profile", "--passes", "bare", *schedule, "--format", "json",
           "--output", str(out), "--logdir", str(workdir / f"run{i}"), "--no-lint", "--no-fail-on-sync",
           "--no-tensorboard-copy", *script_argv]
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ms = json.loads(out.read_text())["perturbation"]["bare_ms_per_step"]
    except (OSError, ValueError, KeyError, TypeError):
        ms = None
    if not ms:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"--compare: timing {label} failed (exit {proc.returncode}): {last}")
    return float(ms)


def measure(original: list[str], rewritten: list[str], schedule: list[str], runs: int) -> dict:
    """Median bare ms/step of both command lines (`script.py args...` or `-m mod args...`),
    `runs` alternating runs each."""
    times: dict[str, list[float]] = {"original": [], "rewritten": []}
    with tempfile.TemporaryDirectory(prefix="syncscan-compare-") as tmp:
        n = 0
        for _ in range(runs):
            for label, argv in (("original", original), ("rewritten", rewritten)):
                times[label].append(_bare_ms(label, argv, schedule, Path(tmp), n))
                n += 1
    a, b = statistics.median(times["original"]), statistics.median(times["rewritten"])
    # run-to-run spread (host-bound steps wander between processes): a saving inside it is noise
    spread = max(max(t) - min(t) for t in times.values())
    return {"original_ms_per_step": round(a, 4), "rewritten_ms_per_step": round(b, 4),
            "measured_saving_ms_per_step": round(a - b, 4), "runs": runs, "spread_ms": round(spread, 4),
            "resolved": runs > 1 and abs(a - b) > spread,
            "original_runs_ms": [round(t, 4) for t in times["original"]],
            "rewritten_runs_ms": [round(t, 4) for t in times["rewritten"]]}
