"""Lint every Python file of big real code bases and report what happens: files, lines, time,
crashes (must be zero), unparsable files (expected in the stdlib's test data), findings per
rule, and a sample of the findings of each rule with its source line, so that the team can judge
precision.

The corpus: the installed torch and torchvision (of this interpreter; found without importing
them), transformers 5.17.0 (the wheel, fetched with `pip download --no-deps` and unpacked under
.bench/lint/src/ as benchmarks/lint_speed.py does; not installed), and the standard library.
Each is linted by the CLI as a user would: `syncscan lint --all --format json --no-cache
--exit-zero PATH`.

A crash is a stderr line with "internal error" (a bug of the engine or of one rule on one file:
the CLI names the file and goes on) or a traceback. Any other `syncscan: error:` line is an input
that cannot be read or parsed (one line naming the file, exit 2).

Usage:
    python benchmarks/lint_corpus.py                 # everything, 4 samples per rule and package
    python benchmarks/lint_corpus.py --only torch --samples 10 --rule SYN101
    python benchmarks/lint_corpus.py --json out.json # also write the findings
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import random
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lint_speed import fetch_sources  # noqa: E402 - the same wheels and folders as the speed benchmark


def installed(name: str) -> Path | None:
    """The folder of an installed package, without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def corpus(only: list[str] | None) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name in ("torch", "torchvision"):
        p = installed(name)
        if p is not None:
            out[name] = p
    if not only or "transformers" in only:
        out["transformers"] = fetch_sources()["transformers"]
    out["stdlib"] = Path(sysconfig.get_paths()["stdlib"])
    return {k: v for k, v in out.items() if not only or k in only}


def count(path: Path) -> tuple[int, int]:
    from syncscan.lint.files import discover

    files, _ = discover([str(path)])
    lines = 0
    for f in files:
        try:
            with open(f, "rb") as fh:
                lines += fh.read().count(b"\n")
        except OSError:
            pass
    return len(files), lines


def lint(path: Path, jobs: int | None) -> dict:
    cmd = [sys.executable, "-m", "syncscan", "lint", "--all", "--format", "json", "--no-cache", "--exit-zero"]
    if jobs:
        cmd += ["-j", str(jobs)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd + [str(path)], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    err_lines = proc.stderr.splitlines()
    crashes = [ln for ln in err_lines if "internal error" in ln]
    if "Traceback (most recent call last)" in proc.stderr:
        crashes.append("a traceback reached the user:\n" + proc.stderr[-3000:])
    errors = [ln for ln in err_lines if ln.startswith("syncscan: error:") and "internal error" not in ln]
    other = [ln for ln in err_lines if not ln.startswith("syncscan: error:") and ln.strip()]
    try:
        findings = json.loads(proc.stdout) if proc.stdout.strip() else []
    except ValueError:
        findings = []
        crashes.append(f"stdout is not JSON (exit {proc.returncode}): {proc.stdout[:300]!r}")
    if proc.returncode not in (0, 2):
        crashes.append(f"exit code {proc.returncode}")
    return {"s": wall, "rc": proc.returncode, "crashes": crashes, "errors": errors, "other_stderr": other,
            "findings": findings}


def source_line(path: str, line: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, start=1):
                if i == line:
                    return text.strip()
    except OSError:
        pass
    return ""


def report(name: str, root: Path, res: dict, files: int, lines: int, samples: int, rule: str | None) -> None:
    f = res["findings"]
    print(f"\n=== {name}: {root}")
    print(f"files {files}, lines {lines:,}, time {res['s']:.1f} s, exit {res['rc']}, "
          f"crashes {len(res['crashes'])}, unreadable/unparsable {len(res['errors'])}, findings {len(f)} "
          f"({sum(x['context'] == 'hot' for x in f)} hot)")
    for c in res["crashes"]:
        print(f"  CRASH: {c}")
    for e in res["errors"][:12]:
        print(f"  {e}")
    if len(res["errors"]) > 12:
        print(f"  ... and {len(res['errors']) - 12} more")
    for o in res["other_stderr"][:5]:
        print(f"  stderr: {o}")
    by_rule = collections.defaultdict(list)
    for x in f:
        by_rule[x["code"]].append(x)
    print("  findings per rule (hot):", ", ".join(
        f"{c} {len(v)} ({sum(x['context'] == 'hot' for x in v)})"
        for c, v in sorted(by_rule.items(), key=lambda kv: -len(kv[1]))))
    rnd = random.Random(0)
    for code, items in sorted(by_rule.items(), key=lambda kv: -len(kv[1])):
        if rule and not code.startswith(rule):
            continue
        print(f"  -- {code} {items[0]['name']}: {len(items)}")
        for x in rnd.sample(items, min(samples, len(items))):
            rel = Path(x["path"]).relative_to(root) if Path(x["path"]).is_relative_to(root) else x["path"]
            print(f"     {rel}:{x['line']} [{x['context']}] {source_line(x['path'], x['line'])[:110]}")
            print(f"         {x['message'][:160]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=("torch", "torchvision", "transformers", "stdlib"))
    ap.add_argument("--samples", type=int, default=4, help="findings shown per rule and package")
    ap.add_argument("--rule", help="show samples of this code (prefix) only")
    ap.add_argument("--jobs", "-j", type=int, default=None)
    ap.add_argument("--json", metavar="FILE", help="write every finding and error as JSON")
    args = ap.parse_args(argv)
    totals = collections.Counter()
    out = {}
    for name, root in corpus(args.only).items():
        files, lines = count(root)
        res = lint(root, args.jobs)
        report(name, root, res, files, lines, args.samples, args.rule)
        totals.update({"files": files, "lines": lines, "crashes": len(res["crashes"]),
                       "errors": len(res["errors"]), "findings": len(res["findings"])})
        totals["s"] += res["s"]
        out[name] = {"root": str(root), "files": files, "lines": lines, **res}
    print(f"\nTOTAL: {totals['files']} files, {totals['lines']:,} lines, {totals['s']:.1f} s, "
          f"crashes {totals['crashes']}, unreadable/unparsable {totals['errors']}, findings {totals['findings']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 1 if totals["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
