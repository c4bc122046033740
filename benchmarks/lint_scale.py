"""Lint at scale, this checkout side by side with a baseline commit (issue 14's load figures).

Both trees run as `python -m syncscan` with PYTHONPATH set to their own source (the baseline from
`git archive BASE`, default 706269d, this checkout copied as it is, both under .bench/scale/), with
their bytecode cached, on the same
files and the same number of processes, the two alternating run after run; medians are taken.

1. memory: a cold lint (`--all --format json --no-cache`) of the corpus copied N times (default 8:
   about 9.5 M lines; the corpus is torchvision 0.26 + transformers 5.17, fetched as
   benchmarks/lint_speed.py does; the copies are hard links): peak RSS and PSS summed over the
   process tree (sampled every 20 ms: workers included), wall time. Target: at most 400 MiB.
2. one file: `syncscan lint FILE` warm, in a 3,000-file repository (the corpus plus 137 more files,
   a pyproject.toml at its root, the cache filled by a run over all of it): wall and CPU medians,
   end to end, next to a bare `python -c pass` and `import syncscan.lint.command`. Target: 50 ms.
3. warm corpus: `lint --all --format json .` of the same unchanged repository: no slower than the
   baseline.
4. one big file: cold lint of a generated module (the corpus's model files concatenated) at several
   sizes up to 19 MB: wall, peak RSS, and both per MB (linear when the per-MB figures stay flat).

Usage:
    python benchmarks/lint_scale.py                  # everything (long: the baseline takes minutes
                                                     # on the big file and the 8 copies)
    python benchmarks/lint_scale.py --only onefile,warm --runs 15
    python benchmarks/lint_scale.py --smoke          # small generated files, no download (a test runs it)
    python benchmarks/lint_scale.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / ".bench" / "scale"
BASE = "706269d"
ONE_FILE = "torchvision/models/detection/_utils.py"  # has findings whose context comes from other files
REPO_FILES = 3000
TARGET_MIB, TARGET_ONE_MS = 400, 50
BIG_SIZES = (2.375, 4.75, 9.5, 19.0)  # MB
RUNTIME_DEPS = ("pathspec",)  # what `syncscan lint` imports beyond the standard library (not libcst: --fix only)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lint_speed import _memory_kib, _tree, fetch_sources  # noqa: E402 - the same corpus and process-tree sampling

# every tree runs with its modules' bytecode cached, as after `pip install`
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}


# -- the two trees -------------------------------------------------------------------------------

def baseline_tree(rev: str) -> Path:
    """The baseline's source (`git archive`), once."""
    sha = subprocess.run(["git", "rev-parse", "--short=12", rev], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout.strip()
    dest = BENCH / f"base-{sha}"
    if not (dest / "syncscan" / "__init__.py").exists():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha, "syncscan", "rules"], cwd=REPO, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def current_tree() -> Path:
    """A copy of this checkout's source as it is now (uncommitted edits included), so that editing
    the checkout while the benchmark runs does not change what it measures."""
    dest = BENCH / "current"
    if dest.exists():
        shutil.rmtree(dest)
    for part in ("syncscan", "rules"):
        shutil.copytree(REPO / part, dest / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


_PYTHON: list[str] = []


def python() -> str:
    """The interpreter of a bare virtual environment (no packages, no .pth files) under .bench/scale/:
    a tree given by PYTHONPATH is then all of syncscan it sees (this environment's editable install
    would otherwise hand out its own `syncscan.rules`), and start-up costs what a plain install does."""
    if not _PYTHON:
        venv = BENCH / "venv"
        exe = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        if not exe.exists():
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = Path(subprocess.run([str(exe), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True, check=True).stdout.strip())
        for dep in RUNTIME_DEPS:  # the linter's pure-Python dependencies, copied from this interpreter
            import importlib.util

            spec = importlib.util.find_spec(dep)
            if not (site / dep).exists() and spec is not None and spec.submodule_search_locations:
                shutil.copytree(list(spec.submodule_search_locations)[0], site / dep,
                                ignore=shutil.ignore_patterns("__pycache__"))
        _PYTHON.append(str(exe))
    return _PYTHON[0]


def command(tree: Path, *args: str) -> tuple[list[str], dict]:
    env = dict(ENV, PYTHONPATH=str(tree))
    return [python(), "-m", "syncscan", *args], env


# -- measuring -----------------------------------------------------------------------------------

def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(cmd: list[str], cwd: Path, env: dict, sample: bool = True) -> dict:
    """Run once: wall and CPU seconds, peak RSS / PSS of the whole process tree (MiB), exit code."""
    with tempfile.TemporaryFile() as err:  # (not a pipe: a chatty run must not block on it)
        return _measure(cmd, cwd, env, sample, err)


def _measure(cmd, cwd, env, sample, err) -> dict:
    peak = [0, 0]
    cpu0 = _cpu_children()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    done = threading.Event()

    def sampler():
        while not done.wait(0.02):
            rss, pss = _memory_kib(_tree(proc.pid))
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)

    thread = threading.Thread(target=sampler, daemon=True)
    if sample and os.path.isdir("/proc"):
        thread.start()
    proc.wait()
    wall = time.perf_counter() - t0
    cpu = _cpu_children() - cpu0
    done.set()
    if thread.is_alive():
        thread.join()
    err.seek(0)
    stderr = err.read().decode(errors="replace")
    if proc.returncode not in (0, 1, 2):  # (2: some file did not parse; the others were linted)
        raise SystemExit(f"{' '.join(cmd)} (in {cwd}) exited {proc.returncode}:\n{stderr[-3000:]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if proc.returncode == 2 and "syncscan: error:" not in stderr:
        raise SystemExit(f"{' '.join(cmd)} (in {cwd}) exited 2:\n{stderr[-3000:]}")
    return {"s": wall, "cpu_s": cpu, "rss_mib": max(peak[0] / 1024, 0), "pss_mib": peak[1] / 1024,
            "max_single_rss_mib": usage, "rc": proc.returncode, "stderr": stderr[-500:]}


def alternate(runs: int, variants: dict[str, tuple], cwd: dict[str, Path], sample: bool = False) -> dict:
    """Each variant `runs` times, taking turns; medians of wall and CPU, peaks of memory."""
    got: dict[str, list[dict]] = {k: [] for k in variants}
    for _ in range(runs):
        for name, (cmd, env) in variants.items():
            got[name].append(measure(cmd, cwd[name], env, sample))
    return {name: {"s": statistics.median(r["s"] for r in rs), "cpu_s": statistics.median(r["cpu_s"] for r in rs),
                   "runs": [round(r["s"], 4) for r in rs], "rss_mib": max(r["rss_mib"] for r in rs),
                   "pss_mib": max(r["pss_mib"] for r in rs)} for name, rs in got.items()}


# -- inputs --------------------------------------------------------------------------------------

def corpus_dirs(smoke: bool, given: list[str] | None = None) -> list[Path]:
    if given:  # e.g. the installed torchvision and transformers of a machine without internet
        return [Path(d).resolve() for d in given]
    if smoke:
        d = BENCH / "smoke-corpus"
        if not d.exists():
            synthetic_corpus(d, 24)
        return [d / "pkg"]
    src = fetch_sources()
    return [src["torchvision"], src["transformers"]]


def synthetic_corpus(d: Path, files: int) -> None:
    """Small generated modules (the smoke mode: no download): helpers, models, a training loop."""
    pkg = d / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "helpers.py").write_text("def scale(x):\n    return x / x.norm().item()\n")
    (pkg / "train.py").write_text("import torch\nfrom pkg.helpers import scale\n\n\ndef train(model, loader, opt):\n"
                                  "    for x in loader:\n        model(scale(x)).sum().backward()\n"
                                  "        opt.step()\n")
    for i in range(files):
        body = "".join(f"def f{i}_{j}(x):\n    if x.sum() > {j}:\n        return torch.nonzero(x)\n"
                       f"    return x.max().item()\n\n\n" for j in range(20))
        (pkg / f"m{i}.py").write_text("import torch\n\n\n" + body)


def _project(name: str) -> Path:
    """A new, empty project folder (a pyproject.toml at its root) under .bench/scale/."""
    root = BENCH / name
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n')
    return root


def copies(dirs: list[Path], n: int, name: str) -> Path:
    """`n` copies of the corpus (hard links) under one project folder."""
    root = _project(name)
    for i in range(n):
        for d in dirs:
            shutil.copytree(d, root / f"copy{i}" / d.name, copy_function=os.link)
    return root


def repository(dirs: list[Path], name: str, files: int) -> Path:
    """The corpus as one repository of exactly `files` files (more copied in when it has fewer)."""
    root = _project(name)
    have = []
    for d in dirs:  # copies, not hard links: linking a file anywhere moves its ctime, which the caches watch
        shutil.copytree(d, root / d.name)
        have += sorted((root / d.name).rglob("*.py"))
    extra = root / "extra"
    for i, f in enumerate(have[:max(0, files - len(have))]):
        extra.mkdir(exist_ok=True)
        shutil.copy2(f, extra / f"e{i}_{f.name}")
    for f in sorted(root.rglob("*.py"))[files:]:  # more than wanted (the smoke corpus): drop some
        if f.name not in ("helpers.py", "train.py"):
            f.unlink()
    return root


def count(root: Path) -> tuple[int, int]:
    files = lines = 0
    for f in root.rglob("*.py"):
        if ".syncscan_cache" in f.parts:
            continue
        files += 1
        with open(f, "rb") as fh:
            lines += fh.read().count(b"\n")
    return files, lines


def big_file(dirs: list[Path], mb: float, path: Path) -> Path:
    """A module of about `mb` MB: the corpus's modules concatenated (those that parse alone, with their
    `from __future__` lines dropped, which only the first statement of a module may hold)."""
    if path.exists():
        return path
    target = int(mb * 1_000_000)
    parts, n = [], 0
    files = sorted(f for d in dirs for f in d.rglob("*.py"))
    i = 0
    while n < target:
        f = files[i % len(files)]
        i += 1
        text = re.sub(r"^from __future__ import .*$", "", f.read_text(encoding="utf-8", errors="replace"), flags=re.MULTILINE)
        try:
            compile(text, str(f), "exec", flags=0x400, dont_inherit=True)  # only parse
        except (SyntaxError, ValueError):
            continue
        parts.append(text)
        n += len(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
    return path


def settle_clock() -> None:
    """Let just-written files age past the cache's 2 s settle window (both trees trust only settled stats)."""
    time.sleep(2.5)


# -- the measurements ------------------------------------------------------------------------------

def bench_memory(trees: dict[str, Path], dirs: list[Path], n: int, jobs: int) -> dict:
    root = copies(dirs, n, "copies")
    files, lines = count(root)
    print(f"\n== memory: cold lint of the corpus x{n}: {files} files, {lines:,} lines, {jobs} processes", flush=True)
    out = {"copies": n, "files": files, "lines": lines, "jobs": jobs}
    for name, tree in trees.items():
        cmd, env = command(tree, "lint", "--all", "--format", "json", "--no-cache", "-q", "-j", str(jobs), ".")
        r = measure(cmd, root, env)
        out[name] = r
        print(f"  {name:9s} {r['s']:8.1f} s  peak RSS {r['rss_mib']:7.0f} MiB  PSS {r['pss_mib']:7.0f} MiB", flush=True)
    shutil.rmtree(root)
    return out


def bench_repo(trees: dict[str, Path], dirs: list[Path], runs: int, jobs: int, one_file: str,
               warm_runs: int | None = None) -> dict:
    repos = {name: repository(dirs, f"repo-{name}", REPO_FILES) for name in trees}
    files, lines = count(next(iter(repos.values())))
    print(f"\n== warm repository: {files} files, {lines:,} lines", flush=True)
    settle_clock()
    for name, tree in trees.items():  # fill each cache (cold, untimed), then once more to settle the stats
        cmd, env = command(tree, "lint", "--all", "--format", "json", "-q", "-j", str(jobs), ".")
        measure(cmd, repos[name], env, sample=False)
        measure(cmd, repos[name], env, sample=False)
    out: dict = {"files": files, "lines": lines, "one_file": one_file}
    one = {name: command(tree, "lint", "-q", one_file) for name, tree in trees.items()}
    one["bare python"] = ([python(), "-c", "pass"], ENV)
    for name, tree in trees.items():  # what importing the CLI's lint command costs, in each tree
        one[f"import ({name})"] = ([python(), "-c", "import syncscan.lint.command"], dict(ENV, PYTHONPATH=str(tree)))
    cwd = {name: repos.get(name, repos["current"]) for name in one}
    out["one"] = alternate(runs, one, cwd)
    print(f"  one file ({one_file}), median of {runs}:")
    for name, r in out["one"].items():
        print(f"    {name:15s} wall {r['s'] * 1000:7.1f} ms   cpu {r['cpu_s'] * 1000:7.1f} ms")
    warm = {name: command(tree, "lint", "--all", "--format", "json", "-q", "-j", str(jobs), ".")
            for name, tree in trees.items()}
    warm_runs = max(3, runs // 3) if warm_runs is None else warm_runs
    if warm_runs:
        out["warm"] = alternate(warm_runs, warm, repos, sample=True)
        print("  whole repository, warm:")
        for name, r in out["warm"].items():
            print(f"    {name:15s} wall {r['s']:7.2f} s   cpu {r['cpu_s']:6.2f} s   peak RSS {r['rss_mib']:5.0f} MiB")
    for r in repos.values():
        shutil.rmtree(r)
    return out


def bench_big(trees: dict[str, Path], dirs: list[Path], sizes: list[float], base_max: float) -> dict:
    print("\n== one big file, cold", flush=True)
    out: dict = {}
    for mb in sizes:
        path = big_file(dirs, mb, BENCH / "big" / f"big-{mb:g}MB.py")
        real_mb = path.stat().st_size / 1e6
        row = {"mb": real_mb, "lines": path.read_bytes().count(b"\n")}
        for name, tree in trees.items():
            if name != "current" and mb > base_max:
                continue
            cmd, env = command(tree, "lint", "--all", "--format", "json", "--no-cache", "-q", str(path))
            r = measure(cmd, path.parent, env)
            r["s_per_mb"], r["mib_per_mb"] = r["s"] / real_mb, r["rss_mib"] / real_mb
            row[name] = r
            print(f"  {real_mb:6.2f} MB {name:9s} {r['s']:8.1f} s ({r['s_per_mb']:5.2f} s/MB)  peak RSS "
                  f"{r['rss_mib']:7.0f} MiB ({r['mib_per_mb']:4.0f} MiB/MB)", flush=True)
        out[f"{mb:g}"] = row
    return out


# -- report --------------------------------------------------------------------------------------

def table(res: dict) -> str:
    lines = ["| measure | baseline | current | current / baseline | target |", "|---|---:|---:|---:|---|"]
    if "memory" in res:
        m = res["memory"]
        b, c = m["baseline"], m["current"]
        lines.append(f"| cold lint, corpus x{m['copies']} ({m['lines'] / 1e6:.1f} M lines), peak RSS (tree) | "
                     f"{b['rss_mib']:.0f} MiB | {c['rss_mib']:.0f} MiB | {c['rss_mib'] / b['rss_mib']:.2f} | "
                     f"<= {TARGET_MIB} MiB: {'met' if c['rss_mib'] <= TARGET_MIB else 'MISSED'} |")
        lines.append(f"| same, peak PSS (tree) | {b['pss_mib']:.0f} MiB | {c['pss_mib']:.0f} MiB | "
                     f"{c['pss_mib'] / b['pss_mib']:.2f} | |")
        lines.append(f"| same, wall | {b['s']:.0f} s | {c['s']:.0f} s | {c['s'] / b['s']:.2f} | |")
    if "repo" in res:
        o = res["repo"]["one"]
        b, c = o["baseline"], o["current"]
        lines.append(f"| one-file lint, warm {res['repo']['files']}-file repo, wall (median) | {b['s'] * 1000:.0f} ms | "
                     f"{c['s'] * 1000:.0f} ms | {c['s'] / b['s']:.2f} | <= {TARGET_ONE_MS} ms: "
                     f"{'met' if c['s'] * 1000 <= TARGET_ONE_MS else 'MISSED'} (bare python "
                     f"{o['bare python']['s'] * 1000:.0f} ms) |")
        lines.append(f"| same, CPU (median) | {b['cpu_s'] * 1000:.0f} ms | {c['cpu_s'] * 1000:.0f} ms | "
                     f"{c['cpu_s'] / b['cpu_s']:.2f} | (bare python {o['bare python']['cpu_s'] * 1000:.0f} ms; importing "
                     f"the command {o['import (baseline)']['cpu_s'] * 1000:.0f} / "
                     f"{o['import (current)']['cpu_s'] * 1000:.0f} ms) |")
    if "repo" in res and "warm" in res["repo"]:
        w = res["repo"]["warm"]
        lines.append(f"| warm lint of the unchanged repo, wall (median) | {w['baseline']['s']:.2f} s | "
                     f"{w['current']['s']:.2f} s | {w['current']['s'] / w['baseline']['s']:.2f} | no slower: "
                     f"{'met' if w['current']['s'] <= w['baseline']['s'] * 1.05 else 'MISSED'} |")
    for row in res.get("big", {}).values():
        c = row["current"]
        b = row.get("baseline")
        if b:
            lines.append(f"| one {row['mb']:.1f} MB file, cold: wall / peak RSS | {b['s']:.0f} s / {b['rss_mib']:.0f} MiB | "
                         f"{c['s']:.0f} s / {c['rss_mib']:.0f} MiB | {c['s'] / b['s']:.2f} / "
                         f"{c['rss_mib'] / b['rss_mib']:.2f} | |")
        else:
            lines.append(f"| one {row['mb']:.1f} MB file, cold: wall / peak RSS | - | {c['s']:.0f} s / "
                         f"{c['rss_mib']:.0f} MiB | | |")
    if res.get("big"):
        per = [(row["mb"], row["current"]["s_per_mb"], row["current"]["mib_per_mb"]) for row in res["big"].values()]
        lines.append("| current, per MB by size | | " + ", ".join(f"{mb:.1f} MB: {s:.2f} s, {m:.0f} MiB"
                                                          for mb, s, m in per) + " | | linear |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=BASE, help="the baseline commit (default %(default)s)")
    ap.add_argument("--base-tree", metavar="DIR", help="the baseline's source already extracted (syncscan/ and "
                                                       "rules/, e.g. carried to a machine without git history)")
    ap.add_argument("--only", default="memory,onefile,big", help="which: memory,onefile,big (onefile includes warm)")
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--runs", type=int, default=11, help="one-file runs per tree (median)")
    ap.add_argument("--warm-runs", type=int, default=None,
                    help="runs per tree of the warm lint of the whole repository (default: runs // 3, at least 3; "
                         "0: not measured)")
    ap.add_argument("--big-sizes", default=",".join(f"{s:g}" for s in BIG_SIZES), help="MB, comma-separated")
    ap.add_argument("--base-big-max", type=float, default=19.0, help="largest size the baseline runs (it is slow)")
    ap.add_argument("--jobs", "-j", type=int, default=None)
    ap.add_argument("--smoke", action="store_true", help="generated files at small sizes (no download)")
    ap.add_argument("--corpus", nargs="+", metavar="DIR",
                    help="package folders to use as the corpus instead of the downloaded torchvision 0.26 and "
                         "transformers 5.17 (e.g. the installed ones, on a machine without internet)")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from syncscan.lint.runner import default_jobs

    jobs = args.jobs or default_jobs()
    only = set(args.only.split(","))
    if args.smoke:
        args.copies, args.runs, sizes, one_file = 2, 2, [0.03, 0.06], "pkg/helpers.py"
        global BENCH, REPO_FILES
        BENCH = Path(tempfile.mkdtemp(prefix="lint-scale-smoke-"))
        REPO_FILES = 20
    else:
        sizes, one_file = [float(s) for s in args.big_sizes.split(",")], ONE_FILE
    BENCH.mkdir(parents=True, exist_ok=True)
    trees = {"baseline": Path(args.base_tree).resolve() if args.base_tree else baseline_tree(args.base),
             "current": current_tree()}
    dirs = corpus_dirs(args.smoke, args.corpus)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "jobs": jobs, "base": args.base, "load_before": round(load, 2),
            "head": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                   text=True, check=False).stdout.strip()}
    print(meta, flush=True)
    res: dict = {"meta": meta}
    # bytecode for both trees (an untimed run each)
    for tree in trees.values():
        cmd, env = command(tree, "--version")
        subprocess.run(cmd, env=env, capture_output=True, check=True)
    if "onefile" in only:
        res["repo"] = bench_repo(trees, dirs, args.runs, jobs, one_file, args.warm_runs)
    if "big" in only:
        res["big"] = bench_big(trees, dirs, sizes, args.base_big_max)
    if "memory" in only:
        res["memory"] = bench_memory(trees, dirs, args.copies, jobs)
    res["meta"]["load_after"] = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    if args.smoke:
        shutil.rmtree(BENCH, ignore_errors=True)
    print("\n" + table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
