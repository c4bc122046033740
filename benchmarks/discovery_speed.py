"""How long finding the files to lint takes, now that folders are walked as git sees them
(.gitignore files, nested, with negation; each file's nearest pyproject.toml), against the
walk of a baseline commit (os.walk with name patterns only), on the same tree in the same run.

The tree is a synthetic git repository: `--folders` packages of `--files` Python files each,
a root .gitignore of 25 patterns, a .gitignore in every fifth folder, a pyproject.toml with a
[tool.syncscan] table in every tenth, and ignored build/ and generated files among them. Both
walks run as fresh processes (`python -c` with the commit's package first on sys.path), in
alternating order, `--repeat` times each; the table gives the medians and their ratio, and how
many files each walk found (the new one finds fewer: the ignored ones are left out).

Usage:
    python benchmarks/discovery_speed.py                      # 400 folders x 20 files, 7 runs each
    python benchmarks/discovery_speed.py --baseline 706269d --json out.json
    python benchmarks/discovery_speed.py --smoke              # tiny tree, one run (tests/CI)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = "706269d"  # before issue 14: os.walk with name patterns, one config for all files

ROOT_IGNORE = ["build/", "dist/", "*.egg-info/", "__pycache__/", "*_pb2.py", "*_gen.py", "!keep_gen.py",
               "/scratch/", "*.log", ".env", "notebooks/output/", "docs/_build/", "*.so", "*.tmp",
               "**/fixtures/large/", "tmp*/", "!tmp_keep/", "*.bak", "coverage/", ".tox/", "wheels/",
               "local_*.py", "**/snapshots/*.py", "*.orig", "/vendor/"]

TIMER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from syncscan.lint import files
args = ()
if sys.argv[3] == "no-gitignore":
    from syncscan.lint.config import Config
    args = (Config(respect_gitignore=False),)
t = time.perf_counter()
found, errors = files.discover([sys.argv[2]], *args)
print(time.perf_counter() - t, len(found), len(errors))
"""


def make_tree(root: Path, folders: int, per_folder: int) -> None:
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("\n".join(ROOT_IGNORE) + "\n")
    body = "import torch\n\n\ndef forward(self, x):\n    return x + 1\n"
    for i in range(folders):
        d = root / f"pkg{i % 20}" / f"mod{i}"
        d.mkdir(parents=True)
        for j in range(per_folder):
            name = f"f{j}.py" if j % 7 else f"f{j}_gen.py"
            (d / name).write_text(body)
        if i % 5 == 0:
            (d / ".gitignore").write_text("f3.py\n!f0_gen.py\nsub/\n")
            (d / "sub").mkdir()
            (d / "sub" / "x.py").write_text(body)
        if i % 10 == 0:
            (d / "pyproject.toml").write_text("[tool.syncscan]\nexclude = ['f5.py']\n")
        if i % 8 == 0:
            (d / "build").mkdir()
            (d / "build" / "out.py").write_text(body)


def checkout(commit: str, dest: Path) -> Path:
    """The commit's syncscan package and rules, unpacked with `git archive`."""
    data = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit, "syncscan", "rules"],
                          capture_output=True, check=True).stdout
    dest.mkdir(parents=True)
    tar = dest / "src.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as t:
        t.extractall(dest, filter="data") if sys.version_info >= (3, 12) else t.extractall(dest)
    return dest


def time_walk(package_root: Path, tree: Path, mode: str) -> tuple[float, int, int]:
    out = subprocess.run([sys.executable, "-c", TIMER, str(package_root), str(tree), mode], capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONPATH": ""}).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folders", type=int, default=400)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--smoke", action="store_true", help="a tiny tree and one run of each (for the tests)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.folders, args.files, args.repeat = 20, 5, 1
    with tempfile.TemporaryDirectory(prefix="syncscan-discovery-") as tmp:
        tree = Path(tmp) / "tree"
        make_tree(tree, args.folders, args.files)
        base = checkout(args.baseline, Path(tmp) / "base")
        sides = {"baseline": (base, ""), "this commit": (REPO, ""),
                 "no-gitignore": (REPO, "no-gitignore")}  # this commit, --no-respect-gitignore
        times: dict[str, list[float]] = {k: [] for k in sides}
        found: dict[str, int] = {}
        for i in range(args.repeat):
            for name in (list(sides) if i % 2 == 0 else list(sides)[::-1]):
                seconds, n, errors = time_walk(*sides[name][:1], tree, sides[name][1])
                times[name].append(seconds)
                found[name] = n
                if errors:
                    raise SystemExit(f"{name}: {errors} discovery errors on the synthetic tree")
        n_py = sum(1 for _ in tree.rglob("*.py"))
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "date": time.strftime("%Y-%m-%d"), "python": sys.version.split()[0], "baseline": args.baseline,
        "tree": {"folders": args.folders, "files_per_folder": args.files, "py_files": n_py},
        "repeat": args.repeat, "median_s": med, "files_found": found,
        "ratio_this_over_baseline": med["this commit"] / med["baseline"] if med["baseline"] else None,
        "ratio_no_gitignore_over_baseline": med["no-gitignore"] / med["baseline"] if med["baseline"] else None,
        "runs_s": times,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(f"discovery of {n_py} .py files in {args.folders} folders (median of {args.repeat} runs each)")
    print(f"{'':14}{'median':>10}{'files found':>14}")  # no-gitignore: this commit, --no-respect-gitignore
    for k in sides:
        print(f"{k:14}{med[k] * 1000:>8.1f}ms{found[k]:>14}")
    print(f"ratio this/baseline: {result['ratio_this_over_baseline']:.2f}x "
          f"(--no-respect-gitignore: {result['ratio_no_gitignore_over_baseline']:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
