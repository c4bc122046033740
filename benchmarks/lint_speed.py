"""How fast `syncscan lint` is, against TorchFix (a LibCST linter for PyTorch), with ruff as a
reference point.

It fetches the torchvision 0.26.0 and transformers 5.17.0 wheels (`pip download --no-deps`),
unpacks their .py sources under .bench/lint/src/, installs TorchFix 0.7.0 and ruff into a venv
of their own (.bench/lint/venv-torchfix), and times, each as a fresh process tree on the same
files with the same number of processes:

- syncscan cold: `syncscan lint --all --format json --no-cache -j N` (this interpreter);
- syncscan warm: the same without --no-cache, the cache already filled by an earlier run over the
  same, unchanged files (its own cache folder under .bench/lint/);
- TorchFix: `torchfix --select ALL -j N`;
- ruff (reference only: it has no sync rules; what a Rust linter costs on the same files):
  `ruff check --select ALL --no-cache --isolated --exit-zero` (ruff picks its own threads).

Two file sets: "subset" (torchvision models/detection + ops, transformers generation, loss and
models/{llama,mixtral,detr,wav2vec2,bert,gpt2}: 96 files, 46k lines) and "full" (every .py file
of both packages: 2,863 files, 1.19M lines). Wall time is the median of the runs; memory is the
peak over the run of the summed RSS of the whole process tree (sampled every 20 ms; an upper
bound, as forked workers share pages) and of the summed PSS (shared pages split fairly).

Targets (the issue): cold at least 10x faster than TorchFix, warm at least 100x, peak memory
under 1 GB.

Usage:
    python benchmarks/lint_speed.py --quick         # the subset; TorchFix once
    python benchmarks/lint_speed.py                 # both sets; TorchFix once on the full set
                                                    # (it takes tens of minutes there)
    python benchmarks/lint_speed.py --rules         # + seconds spent in each rule (subset, 1 process)
    python benchmarks/lint_speed.py --json out.json # also write the numbers
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / ".bench" / "lint"
PACKAGES = {"torchvision": "0.26.0", "transformers": "5.17.0"}
TORCHFIX = "0.7.0"
SUBSET = {
    "torchvision": ["models/detection", "ops"],
    "transformers": ["generation", "loss", "models/llama", "models/mixtral", "models/detr", "models/wav2vec2",
                     "models/bert", "models/gpt2"],
}
TARGET_COLD, TARGET_WARM, TARGET_MIB = 10, 100, 1024


# -- setup -----------------------------------------------------------------------------------------

def _pip(python: Path | str, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "-q", "--disable-pip-version-check", *args], check=True)


def fetch_sources() -> dict[str, Path]:
    """Package name -> its unpacked source folder (e.g. .bench/lint/src/transformers-5.17.0/transformers)."""
    wheels, out = BENCH / "wheels", {}
    for name, version in PACKAGES.items():
        dest = BENCH / "src" / f"{name}-{version}"
        if not (dest / name).is_dir():
            found = sorted(wheels.glob(f"{name}-{version}-*.whl"))
            if not found:
                wheels.mkdir(parents=True, exist_ok=True)
                _pip(sys.executable, "download", "--no-deps", "--only-binary", ":all:", "-d", str(wheels),
                     f"{name}=={version}")
                found = sorted(wheels.glob(f"{name}-{version}-*.whl"))
            with zipfile.ZipFile(found[0]) as z:
                z.extractall(dest, [m for m in z.namelist() if m.endswith(".py")])
        out[name] = dest / name
    return out


def torchfix_venv() -> Path:
    venv = BENCH / "venv-torchfix"
    bin_ = venv / "bin"
    if not (bin_ / "torchfix").exists() or not (bin_ / "ruff").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        _pip(bin_ / "python", "install", f"torchfix=={TORCHFIX}", "ruff")
    return bin_


def file_sets(src: dict[str, Path]) -> dict[str, list[str]]:
    subset = [str(src[pkg] / d) for pkg, dirs in SUBSET.items() for d in dirs]
    return {"subset": subset, "full": [str(p) for p in src.values()]}


def count(paths: list[str]) -> tuple[int, int]:
    files = lines = 0
    for p in paths:
        for f in Path(p).rglob("*.py"):
            files += 1
            with open(f, "rb") as fh:
                lines += fh.read().count(b"\n")
    return files, lines


# -- measuring ----------------------------------------------------------------------------------------

def _tree(root: int) -> list[int]:
    """The pids of `root` and its descendants (from /proc: ppid links)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, ()))
    return out


def _memory_kib(pids: list[int]) -> tuple[int, int]:
    """(summed RSS, summed PSS) of these processes, in KiB."""
    rss = pss = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith(b"Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return rss, pss


def measure(cmd: list[str], cwd: Path | None = None, env: dict | None = None, stdout=None) -> dict:
    """Run `cmd` once: wall seconds, peak tree RSS / PSS (MiB), exit code. Its output goes to
    `stdout` (an open file) or nowhere."""
    peak = [0, 0]
    err_file = tempfile.TemporaryFile()  # not a pipe: a chatty tool must not block on it
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=stdout or subprocess.DEVNULL, stderr=err_file)
    done = threading.Event()

    def sample():
        linux = os.path.isdir("/proc")
        while not done.wait(0.02):
            if linux:
                rss, pss = _memory_kib(_tree(proc.pid))
                peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err_file.seek(0)
    err = err_file.read().decode(errors="replace")
    err_file.close()
    # ru_maxrss (KiB on Linux): the largest single process of the tree, a floor for short runs
    rss = max(peak[0], usage.ru_maxrss)
    # CPU seconds of the tree (the process and the workers it waited for): steadier than wall time
    # on a machine that other jobs load
    cpu = usage.ru_utime + usage.ru_stime
    return {"s": wall, "cpu_s": cpu, "rss_mib": rss / 1024, "pss_mib": max(peak[1], 0) / 1024, "rc": proc.returncode,
            "stderr": err[-2000:]}


def median_of(cmd, runs: int, cwd=None, env=None, ok=(0, 1)) -> dict:
    results = [measure(cmd, cwd, env) for _ in range(runs)]
    for r in results:
        if r["rc"] not in ok:
            raise SystemExit(f"{' '.join(cmd[:4])}... exited {r['rc']}:\n{r['stderr']}")
    return {"s": statistics.median(r["s"] for r in results), "runs": [round(r["s"], 3) for r in results],
            "rss_mib": max(r["rss_mib"] for r in results), "pss_mib": max(r["pss_mib"] for r in results)}


def syncscan_cmd(paths, jobs, cache_config: Path | None) -> list[str]:
    cmd = [sys.executable, "-m", "syncscan", "lint", "--all", "--format", "json", "-j", str(jobs), "-q"]
    cmd += ["--config", str(cache_config)] if cache_config else ["--no-cache"]
    return cmd + list(paths)


# Every tool runs with its modules' bytecode cached, as after `pip install` (TorchFix's and
# ruff's venv has it from the install; syncscan's is written by the untimed warm-up run).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def bench_set(name: str, paths: list[str], jobs: int, bin_: Path, runs: int, torchfix_runs: int,
              with_ruff: bool) -> dict:
    files, lines = count(paths)
    print(f"\n== {name}: {files} files, {lines:,} lines, {jobs} processes", flush=True)
    row: dict = {"files": files, "lines": lines, "jobs": jobs}
    measure(syncscan_cmd([str(REPO / "syncscan" / "__init__.py")], 1, None), env=ENV)  # writes bytecode
    row["syncscan_cold"] = median_of(syncscan_cmd(paths, jobs, None), runs, env=ENV)
    print(f"  syncscan cold  {row['syncscan_cold']['s']:8.2f} s  {row['syncscan_cold']['runs']}", flush=True)
    # the warm runs' cache: a folder of their own, filled by one untimed run over the same files
    cache_dir = BENCH / f"cache-{name}"
    config = BENCH / f"pyproject-{name}.toml"
    config.write_text(f'[tool.syncscan]\ncache-dir = "{cache_dir.as_posix()}"\n')
    fill = measure(syncscan_cmd(paths, jobs, config), env=ENV)
    if fill["rc"] not in (0, 1):
        raise SystemExit(f"syncscan exited {fill['rc']}:\n{fill['stderr']}")
    row["syncscan_warm"] = median_of(syncscan_cmd(paths, jobs, config), max(runs, 3), env=ENV)
    print(f"  syncscan warm  {row['syncscan_warm']['s']:8.2f} s  {row['syncscan_warm']['runs']}", flush=True)
    if torchfix_runs:
        row["torchfix"] = median_of([str(bin_ / "torchfix"), "--select", "ALL", "-j", str(jobs), *paths],
                                    torchfix_runs, ok=(0, 1))
        print(f"  TorchFix       {row['torchfix']['s']:8.2f} s  {row['torchfix']['runs']}", flush=True)
    if with_ruff:
        row["ruff"] = median_of([str(bin_ / "ruff"), "check", "--select", "ALL", "--no-cache", "--isolated",
                                 "--exit-zero", "-q", *paths], runs)
        print(f"  ruff           {row['ruff']['s']:8.2f} s  {row['ruff']['runs']}", flush=True)
    return row


# -- where the time goes --------------------------------------------------------------------------

RULE_TIMES = r"""
import json, sys, time, collections
from syncscan.lint import files as fm
from syncscan.lint.engine import lint_source
from syncscan.lint.registry import all_rules
rules = [r() for r in all_rules()]
spent = collections.Counter()
for r in rules:
    def timed(h, code):
        def run(rule, node, ctx):
            t = time.perf_counter()
            try:
                return h(rule, node, ctx)
            finally:
                spent[code] += time.perf_counter() - t
        return run
    r.handlers = {n: timed(h, r.code) for n, h in r.handlers.items()}
t0 = time.perf_counter()
for p in sys.argv[1:]:
    try:
        src = fm.read(p)
    except fm.ReadError:
        continue
    lint_source(p, src.text, rules)
print(json.dumps({"total": time.perf_counter() - t0, "rules": dict(spent.most_common())}))
"""


def rule_times(paths: list[str]) -> dict:
    files = [str(f) for p in paths for f in sorted(Path(p).rglob("*.py"))]
    out = subprocess.run([sys.executable, "-c", RULE_TIMES, *files], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


STARTUP = r"""
import contextlib, io, json, sys, time
t0 = time.perf_counter()
from syncscan.cli import main
t1 = time.perf_counter()
sys.argv = ["syncscan", "lint", "-q", *sys.argv[1:]]
with contextlib.redirect_stdout(io.StringIO()):
    main()
t2 = time.perf_counter()
print(json.dumps({"import_cli_s": t1 - t0, "lint_s": t2 - t1, "torch": "torch" in sys.modules,
                  "libcst": "libcst" in sys.modules,
                  "rule_modules": sum(m.startswith("syncscan.rules.syn") for m in sys.modules)}))
"""


def startup(paths: list[str], config: Path) -> dict:
    """Where a warm run's time goes: a bare interpreter, then importing and running the CLI
    in-process (cache filled), and whether torch / libcst / the rules were imported."""
    def wall(cmd):
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run(cmd, env=ENV, check=True, capture_output=True)
            ts.append(time.perf_counter() - t)
        return statistics.median(ts)

    out = subprocess.run([sys.executable, "-c", STARTUP, "--config", str(config), *paths], capture_output=True,
                         text=True, env=ENV, check=True)
    info = json.loads(out.stdout.splitlines()[-1])
    info["bare_python_s"] = wall([sys.executable, "-c", "pass"])
    return info


# -- report ---------------------------------------------------------------------------------------

def table(results: dict) -> str:
    lines = ["| files | tool | wall (s) | peak RSS, tree (MiB) | peak PSS, tree (MiB) | TorchFix / tool |",
             "|---|---|---:|---:|---:|---:|"]
    for name, row in results.items():
        tf = row.get("torchfix", {}).get("s")
        label = f"{name} ({row['files']} files, {row['lines'] // 1000}k lines)"
        for key, tool in (("syncscan_cold", "syncscan cold (--no-cache)"), ("syncscan_warm", "syncscan warm"),
                          ("torchfix", f"TorchFix {TORCHFIX}"), ("ruff", "ruff (reference: no sync rules)")):
            if key not in row:
                continue
            r = row[key]
            ratio = f"{tf / r['s']:.0f}x" if tf and key != "torchfix" else ("1x" if tf else "-")
            lines.append(f"| {label} | {tool} | {r['s']:.2f} | {r['rss_mib']:.0f} | {r['pss_mib']:.0f} | {ratio} |")
    return "\n".join(lines)


def verdict(results: dict) -> list[str]:
    out = []
    for name, row in results.items():
        peak = max(row[k]["rss_mib"] for k in ("syncscan_cold", "syncscan_warm"))
        out.append(f"{name}: peak memory {peak:.0f} MiB (target < {TARGET_MIB}): "
                   f"{'ok' if peak < TARGET_MIB else 'MISSED'}")
        if "torchfix" in row:
            tf = row["torchfix"]["s"]
            cold, warm = tf / row["syncscan_cold"]["s"], tf / row["syncscan_warm"]["s"]
            out.append(f"{name}: cold {cold:.1f}x TorchFix (target >= {TARGET_COLD}x): "
                       f"{'ok' if cold >= TARGET_COLD else 'MISSED'}; warm {warm:.0f}x (target >= {TARGET_WARM}x): "
                       f"{'ok' if warm >= TARGET_WARM else 'MISSED'}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the 96-file subset only, TorchFix once")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of syncscan and ruff (median)")
    ap.add_argument("--torchfix-runs", type=int, default=1, help="timed runs of TorchFix per set (0: skip)")
    ap.add_argument("--no-torchfix-full", action="store_true", help="skip TorchFix on the full set")
    ap.add_argument("--no-ruff", action="store_true")
    ap.add_argument("--jobs", "-j", type=int, default=None, help="processes (default: the usable cores)")
    ap.add_argument("--rules", action="store_true", help="also time each rule (subset, one process)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = ap.parse_args(argv)

    from syncscan.lint.runner import default_jobs

    jobs = args.jobs or default_jobs()
    src = fetch_sources()
    bin_ = torchfix_venv()
    sets = file_sets(src)
    if args.quick:
        sets = {"subset": sets["subset"]}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    meta = {"date": time.strftime("%Y-%m-%d"), "python": platform.python_version(), "cpus": jobs,
            "machine": platform.machine(), "load_before": round(load, 2),
            "torchfix": TORCHFIX, "ruff": subprocess.run([str(bin_ / "ruff"), "--version"], capture_output=True,
                                                         text=True).stdout.strip()}
    import syncscan

    meta["syncscan"] = syncscan.__version__
    print(f"{meta}", flush=True)
    if load > 0.5 * jobs:
        print(f"warning: load average {load:.1f} on {jobs} cores before starting: timings will be noisy")
    results = {}
    for name, paths in sets.items():
        tf_runs = 0 if name == "full" and args.no_torchfix_full else args.torchfix_runs
        results[name] = bench_set(name, paths, jobs, bin_, args.runs, tf_runs, not args.no_ruff)
    extra = {}
    extra["warm_startup"] = startup(sets["subset"], BENCH / "pyproject-subset.toml")
    if args.rules:
        extra["rule_seconds"] = rule_times(sets["subset"])
    print("\n" + table(results) + "\n")
    for line in verdict(results):
        print(line)
    w = extra["warm_startup"]
    print(f"\nwarm run on the subset, in-process: bare interpreter {w['bare_python_s'] * 1000:.0f} ms, "
          f"importing the CLI {w['import_cli_s'] * 1000:.0f} ms, linting (cache hits) {w['lint_s'] * 1000:.0f} ms; "
          f"imported torch: {'YES' if w['torch'] else 'no'}, libcst: {'YES' if w['libcst'] else 'no'}, "
          f"rule modules: {w['rule_modules']}")
    if "rule_seconds" in extra:
        rs = extra["rule_seconds"]
        print(f"\nsubset, one process: {rs['total']:.2f} s in all, in the rules' visitors:")
        for code, s in rs["rules"].items():
            print(f"  {code}  {s:6.3f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "results": results, **extra}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
