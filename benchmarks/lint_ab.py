"""Cold lint speed and peak memory of two versions of syncscan, side by side in one run.

The baseline (a git revision, default `main`) is exported with `git archive` into
.bench/lint/ab/<sha>/ (gitignored); the candidate is this working tree, or another revision
exported the same way (`--candidate REV`: the tree can then change while it runs). Both run as
`python -m syncscan lint --all --format json --no-cache -j N` with PYTHONPATH set to their own
checkout. An exported revision's rules go inside its package copy (`syncscan/rules`, as an install
maps them), so the editable install of this tree cannot hand its rules to the old engine. Runs alternate baseline, candidate, baseline,
... so that load from other processes on the machine hits both alike. Reported per side: the median
wall time, the median CPU time of the process tree (user + system of the lint and its workers:
steadier than wall time when other jobs load the machine), and the median of each run's peak summed
RSS / PSS of the process tree (see lint_speed.measure).
Each side's findings are counted too, so a speed-up that comes from linting less shows.

Files: the corpus of lint_speed.py (`--set full`: torchvision 0.26 + transformers 5.17, 2,863
files; `--set subset`: 96 files), or any paths given with `--paths`.

Usage:
    python benchmarks/lint_ab.py --baseline 706269d --set full --rounds 3 --json out.json
    python benchmarks/lint_ab.py --smoke          # a tiny run on the fixtures (what the test runs)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lint_speed

REPO = lint_speed.REPO
AB = lint_speed.BENCH / "ab"


def export(rev: str) -> tuple[str, Path]:
    """(full sha, folder) of `rev` exported from this repository's git history (cached by sha)."""
    sha = subprocess.run(["git", "rev-parse", "--verify", rev + "^{commit}"], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout.strip()
    dest = AB / sha
    if not (dest / "syncscan" / "rules" / "__init__.py").is_file():
        import shutil

        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", "--format=tar", sha, "syncscan", "rules"], cwd=REPO,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        (dest / "rules").rename(dest / "syncscan" / "rules")
    return sha, dest


def lint_cmd(paths: list[str], jobs: int) -> list[str]:
    return [sys.executable, "-m", "syncscan", "lint", "--all", "--format", "json", "--no-cache",
            "-j", str(jobs), "-q", "--exit-zero", *paths]


def _env(checkout: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env["PYTHONPATH"] = str(checkout)
    return env


def run_side(checkout: Path, paths: list[str], jobs: int) -> dict:
    """One cold lint by the syncscan in `checkout`: wall, memory, and how many findings it gave."""
    with tempfile.TemporaryFile("w+") as out:
        r = lint_speed.measure(lint_cmd(paths, jobs), cwd=checkout, env=_env(checkout), stdout=out)
        out.seek(0)
        text = out.read()
    if r["rc"] not in (0, 1):
        raise SystemExit(f"lint from {checkout} exited {r['rc']}:\n{r['stderr']}")
    findings = json.loads(text or "[]")
    r["findings"] = len(findings)
    r["hot"] = sum(f.get("context") == "hot" for f in findings)
    return r


def compare(base: Path, cand: Path, paths: list[str], jobs: int, rounds: int) -> dict:
    # one untimed run each writes the bytecode (as after an install)
    for side in (base, cand):
        run_side(side, [str(REPO / "fixtures")], 1)
    runs: dict[str, list[dict]] = {"baseline": [], "candidate": []}
    for i in range(rounds):
        order = (("baseline", base), ("candidate", cand)) if i % 2 == 0 else (("candidate", cand), ("baseline", base))
        for name, side in order:
            r = run_side(side, paths, jobs)
            runs[name].append(r)
            print(f"  round {i + 1} {name:9s} {r['s']:7.2f} s  {r['cpu_s']:7.2f} s CPU  {r['rss_mib']:6.0f} MiB RSS  "
                  f"{r['pss_mib']:6.0f} MiB PSS  {r['findings']} findings", flush=True)
    out = {}
    for name, rs in runs.items():
        out[name] = {"s": statistics.median(r["s"] for r in rs), "runs": [round(r["s"], 3) for r in rs],
                     "cpu_s": statistics.median(r["cpu_s"] for r in rs), "cpu_runs": [round(r["cpu_s"], 3) for r in rs],
                     "rss_mib": statistics.median(r["rss_mib"] for r in rs),
                     "pss_mib": statistics.median(r["pss_mib"] for r in rs),
                     "peak_rss_mib": max(r["rss_mib"] for r in rs), "findings": rs[-1]["findings"],
                     "hot": rs[-1]["hot"]}
    b, c = out["baseline"], out["candidate"]
    out["ratio"] = {"time": c["s"] / b["s"], "cpu": c["cpu_s"] / b["cpu_s"], "rss": c["rss_mib"] / b["rss_mib"],
                    "pss": c["pss_mib"] / b["pss_mib"]}
    return out


def table(res: dict, label: str, cand_label: str = "(this tree)") -> str:
    b, c, r = res["baseline"], res["candidate"], res["ratio"]
    rows = ["| side | wall, median (s) | CPU, median (s) | CPU runs (s) | RSS, median (MiB) | PSS, median (MiB) "
            "| findings (hot) |",
            "|---|---:|---:|---|---:|---:|---:|"]
    for name, x in (("baseline " + label, b), ("candidate " + cand_label, c)):
        rows.append(f"| {name} | {x['s']:.2f} | {x['cpu_s']:.2f} | {', '.join(f'{s:.2f}' for s in x['cpu_runs'])} | "
                    f"{x['rss_mib']:.0f} | {x['pss_mib']:.0f} | {x['findings']} ({x['hot']}) |")
    rows.append(f"| candidate / baseline | {r['time']:.3f} | {r['cpu']:.3f} | | {r['rss']:.3f} | {r['pss']:.3f} | |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="main", help="git revision to compare against (default: main)")
    ap.add_argument("--candidate", default=None, help="git revision to measure (default: this working tree)")
    ap.add_argument("--set", choices=("full", "subset"), default="full")
    ap.add_argument("--paths", nargs="+", help="lint these paths instead of the corpus")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each side (median)")
    ap.add_argument("--jobs", "-j", type=int, default=None)
    ap.add_argument("--smoke", action="store_true", help="the fixtures, one round, one process")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    if args.smoke:
        paths, rounds, jobs = [str(REPO / "fixtures")], 1, 1
    else:
        paths = args.paths or lint_speed.file_sets(lint_speed.fetch_sources())[args.set]
        rounds, jobs = args.rounds, args.jobs or os.cpu_count() or 1
    sha, base = export(args.baseline)
    cand = export(args.candidate)[1] if args.candidate else REPO
    files, lines = lint_speed.count(paths)
    load = os.getloadavg()[0]
    print(f"baseline {args.baseline} ({sha[:10]}) vs this tree: {files} files, {lines:,} lines, {jobs} processes, "
          f"{rounds} rounds; load average before: {load:.2f}", flush=True)
    res = compare(base, cand, paths, jobs, rounds)
    res["meta"] = {"date": time.strftime("%Y-%m-%d %H:%M"), "baseline": sha, "candidate": args.candidate or "tree",
                   "files": files, "lines": lines,
                   "jobs": jobs, "rounds": rounds, "load_before": round(load, 2), "python": sys.version.split()[0]}
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    print()
    print(table(res, sha[:10], args.candidate or "(this tree)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
