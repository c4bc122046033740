"""Proof on real code: fix real projects with `syncscan lint --fix --unsafe-fixes --all` and run each
project's own test suite on the CPU before and after the fixes. The same tests must pass.

For each project: its source (a PyPI sdist that ships its tests, or a git checkout) is unpacked
twice, `before/` and `after/`; syncscan fixes `after/<package>` (hot and cold findings, safe and
unsafe fixes); then the same pytest selection runs in both trees (the tree first on the path, so
`import <package>` is the copy), outcomes read per test from JUnit XML. The selection is every
test file that names something the fixes touched (a top-level function or class of a changed
module, or the module itself) plus a fixed broad sample. Nothing is committed: the sources live
under --work (default .bench/fix_proof, gitignored).

    python benchmarks/fix_proof.py [--projects timm,gpytorch,kornia] [--json docs/fix-proof.json]
        [--deps .bench/deps] [--kornia-git DIR] [--timeout 1500]
    python benchmarks/fix_proof.py --smoke --json out.json    # a tiny made-up project: the plumbing

Third-party test dependencies come from --deps (a `pip install --target` folder, see
docs/fix-proof.md). Prints a table last.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


@dataclass
class Project:
    name: str
    package: str  # the import package fixed, a folder at the source root
    tests: str  # the tests folder at the source root
    sdist: str = ""  # "name==version": downloaded from PyPI with pip
    git: str = ""  # or a git dir / checkout to take HEAD from (--git NAME=PATH)
    broad: tuple[str, ...] = ()  # test files run whatever the fixes touch
    skip: tuple[str, ...] = ()  # test files never run (network, hours of runtime)
    deselect: str = ""  # a pytest -k expression to leave out (slow parametrisations)


PROJECTS = {
    "timm": Project("timm", "timm", "tests", sdist="timm==1.0.31",
                    broad=("tests/test_layers.py", "tests/test_optim.py", "tests/test_scheduler.py",
                           "tests/test_utils.py"),
                    skip=("tests/test_hub.py", "tests/test_checkpoint_loading.py", "tests/test_reader_wds.py",
                          "tests/test_sweep.py", "tests/test_sweep_fuzz.py", "tests/test_train_resume.py"),
                    # test_models.py runs hundreds of architectures: only the fixed ones' families
                    deselect="not test_models or beit or csatv2"),
    "gpytorch": Project("gpytorch", "gpytorch", "test", sdist="gpytorch==1.15.2",
                        broad=("test/kernels/test_rbf_kernel.py", "test/likelihoods/test_gaussian_likelihood.py",
                               "test/distributions/test_multivariate_normal.py", "test/lazy/test_lazy_evaluated_kernel_tensor.py")),
    "kornia": Project("kornia", "kornia", "tests", git="kornia",
                      broad=("tests/losses/test_focal_loss.py", "tests/geometry/test_conversions.py",
                             "tests/filters/test_filters.py", "tests/color/test_hsv.py")),
    # pyro's sdist ships no distribution tests: a git checkout (its tests are in the repository)
    "pyro": Project("pyro", "pyro", "tests", git="pyro",
                    broad=("tests/distributions/test_mixture.py", "tests/ops/test_stats.py"),
                    # examples and notebooks take hours; the hmc/nuts integration tests run minutes each
                    skip=("tests/test_examples.py", "tests/infer/mcmc/test_hmc.py", "tests/infer/mcmc/test_nuts.py")),
    # pytorch-minimize (fresh3's torchmin): SYN109's `alpha=` rewrites in its BFGS, proven by its own tests
    "torchmin": Project("torchmin", "torchmin", "tests", git="torchmin",
                        broad=("tests/torchmin/test_minimize.py", "tests/torchmin/test_bounds.py")),
}


# -- sources ---------------------------------------------------------------------------------------

def obtain(p: Project, work: Path, gits: dict[str, str]) -> Path:
    """The project's source tree (package and tests), unpacked once under `work`."""
    src = work / p.name / "src"
    if (src / p.package).is_dir():
        return src
    src.parent.mkdir(parents=True, exist_ok=True)
    if p.sdist:
        dl = work / "sdists"
        dl.mkdir(parents=True, exist_ok=True)
        name, version = p.sdist.split("==")
        found = [f for f in dl.glob("*.tar.gz") if f.name.lower().startswith(f"{name}-{version}".lower())]
        if not found:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                            "-d", str(dl), p.sdist], check=True)
            found = [f for f in dl.glob("*.tar.gz") if f.name.lower().startswith(f"{name}-{version}".lower())]
        with tarfile.open(found[0]) as tf:
            top = tf.getnames()[0].split("/")[0]
            tf.extractall(src.parent, filter="data")
        shutil.move(str(src.parent / top), str(src))
    else:
        git = gits.get(p.name) or os.environ.get(f"SYNCSCAN_{p.name.upper()}_GIT")
        if not git:
            raise FileNotFoundError(f"{p.name}: give its git checkout with --git {p.name}=PATH")
        src.mkdir()
        archive = subprocess.run(["git", f"--git-dir={git}" if not (Path(git) / ".git").exists()
                                  else f"--git-dir={Path(git) / '.git'}", "archive", "HEAD"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "x", "-C", str(src)], input=archive, check=True)
    return src


SYNCSCAN_SRC: str | None = None  # --syncscan-src: a checkout to run syncscan from (a frozen copy)


def fix_copy(src: Path, dest: Path, package: str) -> dict:
    """Copy `src` to `dest` and fix `dest/package` with syncscan; what it reported."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, symlinks=True)
    t0 = time.perf_counter()
    env = dict(os.environ)
    if SYNCSCAN_SRC:
        env["PYTHONPATH"] = os.pathsep.join([SYNCSCAN_SRC, env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "syncscan", "lint", "--fix", "--unsafe-fixes", "--all", "--no-cache",
                        "--exit-zero", "--quiet", "--no-show-source", package], cwd=dest, capture_output=True,
                       text=True, env=env, check=False)
    m = re.search(r"Fixed (\d+) syncs? in (\d+) files?", r.stdout)
    return {"fixed_syncs": int(m.group(1)) if m else 0, "fixed_files": int(m.group(2)) if m else 0,
            "seconds": round(time.perf_counter() - t0, 1), "exit": r.returncode,
            "errors": [ln for ln in r.stderr.splitlines() if ln.startswith("syncscan: error")]}


def rule_counts(tree: Path, package: str) -> dict[str, int]:
    """Findings per rule in `tree/package` (hot and cold)."""
    env = dict(os.environ)
    if SYNCSCAN_SRC:
        env["PYTHONPATH"] = os.pathsep.join([SYNCSCAN_SRC, env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "syncscan", "lint", "--all", "--no-cache", "--exit-zero", "--format",
                        "json", package], cwd=tree, capture_output=True, text=True, env=env, check=False)
    out: dict[str, int] = {}
    for f in json.loads(r.stdout or "[]"):
        out[f["code"]] = out.get(f["code"], 0) + 1
    return out


def fixed_by_rule(before: Path, after: Path, package: str) -> dict[str, int]:
    """How many findings of each rule the fixes removed."""
    b, a = rule_counts(before, package), rule_counts(after, package)
    return {c: b[c] - a.get(c, 0) for c in sorted(b) if b[c] > a.get(c, 0)}


def changed_modules(before: Path, after: Path, package: str) -> list[str]:
    out = []
    for f in sorted((after / package).rglob("*.py")):
        rel = f.relative_to(after)
        if (before / rel).read_bytes() != f.read_bytes():
            out.append(rel.as_posix())
    return out


# -- the tests to run --------------------------------------------------------------------------

def touched_names(tree: Path, modules: list[str]) -> dict[str, set[str]]:
    """module path -> its dotted name and the public top-level functions and classes."""
    out = {}
    for m in modules:
        names = {m[:-3].replace("/", ".").removesuffix(".__init__")}
        try:
            mod = ast.parse((tree / m).read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            mod = ast.Module([], [])
        for n in mod.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_"):
                names.add(n.name)
        out[m] = names
    return out


def select_tests(p: Project, tree: Path, modules: list[str], limit: int,
                 per_module: int = 1) -> tuple[list[str], dict[str, list[str]]]:
    """For each changed module, the test files naming what it defines (the one named after it
    first, then the smallest; `per_module` of them), at most `limit` in all; then the broad sample.
    Also which changed modules each chosen file covers."""
    names = touched_names(tree, modules)
    files = sorted((tree / p.tests).rglob("test_*.py"))
    covers: dict[str, list[str]] = {}
    texts = {f: f.read_text(encoding="utf-8", errors="replace") for f in files}
    for m, ns in names.items():
        pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(ns, key=len, reverse=True)) + r")\b")
        hits = [f for f in files if pattern.search(texts[f])]
        # the file named after the module first (test_hausdorff.py for hausdorff.py)
        stem = Path(m).stem
        hits.sort(key=lambda f: (stem not in f.stem, len(texts[f])))
        hits = [f for f in hits if f.relative_to(tree).as_posix() not in p.skip]
        for f in hits[:per_module]:
            covers.setdefault(f.relative_to(tree).as_posix(), []).append(m)
    chosen = list(covers)[:limit]
    covers = {f: covers[f] for f in chosen}
    for b in p.broad:
        if b not in chosen and (tree / b).is_file():
            chosen.append(b)
    return chosen, covers


def run_tests(tree: Path, tests: list[str], deps: str | None, timeout: int, deselect: str) -> dict:
    """Outcome per test id, each test file in a pytest run of its own in `tree` (a file that runs past
    `timeout` seconds loses only its own outcomes, and is named)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree)] + ([deps] if deps else []) + [env.get("PYTHONPATH", "")])
    env.setdefault("HF_HUB_OFFLINE", "1")
    outcomes: dict[str, str] = {}
    timed_out: list[str] = []
    t0 = time.perf_counter()
    for i, test in enumerate(tests):
        xml = tree / f"junit-syncscan-{i}.xml"
        xml.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir",
               str(tree), "--junitxml", str(xml), test]
        if deselect:
            cmd += ["-k", deselect]
        try:
            subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            timed_out.append(test)
            continue
        outcomes.update(read_junit(xml, tree))
    return {"outcomes": outcomes, "seconds": round(time.perf_counter() - t0, 1), "timed_out": timed_out}


def read_junit(xml: Path, tree: Path) -> dict[str, str]:
    """Outcome per test id in a JUnit file; ids without the tree's own path (pytest may name tests
    from a rootdir above the tree: `.bench.fix_proof.x.before.test.test_a.TestA`), so that both
    trees name a test alike."""
    out: dict[str, str] = {}
    if not xml.exists():
        return out
    mark = f".{tree.name}."
    for case in ET.parse(xml).getroot().iter("testcase"):
        cls = case.get("classname") or ""
        if mark in f".{cls}":
            cls = f".{cls}".split(mark, 1)[1]
        kinds = {c.tag for c in case}
        out[f"{cls}::{case.get('name')}"] = "failed" if kinds & {"failure", "error"} else \
            "skipped" if "skipped" in kinds else "passed"
    return out


def counts(outcomes: dict[str, str]) -> dict[str, int]:
    c = {"passed": 0, "failed": 0, "skipped": 0}
    for v in outcomes.values():
        c[v] += 1
    return c


# -- one project ---------------------------------------------------------------------------------

@dataclass
class Result:
    project: str
    source: str
    fix: dict
    changed_modules: list[str]
    tests: list[str]
    covers: dict[str, list[str]]
    before: dict
    after: dict
    broke: list[str] = field(default_factory=list)  # passed before, not after
    mended: list[str] = field(default_factory=list)  # failed before, passed after
    seconds: dict = field(default_factory=dict)
    timed_out: list[str] = field(default_factory=list)  # test files cut off (before or after): not compared


def prove(p: Project, work: Path, deps: str | None, timeout: int, limit: int, gits: dict[str, str]) -> Result:
    src = obtain(p, work, gits)
    before, after = work / p.name / "before", work / p.name / "after"
    if before.exists():
        shutil.rmtree(before)
    shutil.copytree(src, before, symlinks=True)
    fix = fix_copy(src, after, p.package)
    modules = changed_modules(before, after, p.package)
    fix["by_rule"] = fixed_by_rule(before, after, p.package)
    tests, covers = select_tests(p, before, modules, limit)
    # both trees at once (two processes): the same load on each, half the wall time
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        f0 = pool.submit(run_tests, before, tests, deps, timeout, p.deselect)
        f1 = pool.submit(run_tests, after, tests, deps, timeout, p.deselect)
        r0, r1 = f0.result(), f1.result()
    cut = sorted(set(r0["timed_out"]) | set(r1["timed_out"]))
    c0, c1, broke, mended = compare(r0["outcomes"], r1["outcomes"], cut)
    return Result(p.name, p.sdist or f"git HEAD of {gits.get(p.name) or p.git}", fix, modules, tests, covers, c0, c1,
                  broke, mended, {"before": r0["seconds"], "after": r1["seconds"]}, cut)


def compare(o0: dict[str, str], o1: dict[str, str], cut: list[str]) -> tuple[dict, dict, list[str], list[str]]:
    """Counts on both sides and the tests whose outcome changed; a test file cut off on either side
    is left out of both, so the counts compare the same tests."""
    o0 = {t: v for t, v in o0.items() if not any(_in_file(t, c) for c in cut)}
    o1 = {t: v for t, v in o1.items() if not any(_in_file(t, c) for c in cut)}
    broke = sorted(t for t, v in o0.items() if v == "passed" and o1.get(t) != "passed")
    mended = sorted(t for t, v in o0.items() if v == "failed" and o1.get(t) == "passed")
    return counts(o0), counts(o1), broke, mended


def rescore(path: str, work: Path) -> None:
    """Recompute the comparison of a results file from the JUnit files its runs left under `work`."""
    data = json.loads(Path(path).read_text())
    for r in data["results"]:
        base = work / r["project"]
        sides = []
        for side in ("before", "after"):
            out: dict[str, str] = {}
            for i in range(len(r["tests"])):
                out.update(read_junit(base / side / f"junit-syncscan-{i}.xml", base / side))
            sides.append(out)
        r["before"], r["after"], r["broke"], r["mended"] = compare(sides[0], sides[1], r["timed_out"])
    Path(path).write_text(json.dumps(data, indent=2) + "\n")


def _in_file(test_id: str, path: str) -> bool:
    """JUnit's classname is the dotted test module (and class): `tests.losses.test_hd.TestHD`."""
    mod = path[:-3].replace("/", ".")
    return test_id.startswith((mod + ".", mod + "::"))


def smoke_project(work: Path) -> Project:
    """A made-up project: a masked loss the fixer rewrites, and its own tests."""
    src = work / "smokeproj" / "src"
    if src.exists():
        shutil.rmtree(src)
    (src / "smokeproj").mkdir(parents=True)
    (src / "tests").mkdir()
    (src / "smokeproj" / "__init__.py").write_text("")
    (src / "smokeproj" / "losses.py").write_text(
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "def masked_loss(logits, target):\n    keep = target != -1\n    picked = logits[keep]\n"
        "    tgt = target[keep]\n    return F.cross_entropy(picked.reshape(-1, logits.shape[-1]), tgt)\n")
    (src / "tests" / "test_losses.py").write_text(
        "import torch\nfrom smokeproj.losses import masked_loss\n\n\n"
        "def test_matches_the_manual_loss():\n    torch.manual_seed(0)\n    x = torch.randn(2, 3, 5)\n"
        "    t = torch.randint(-1, 5, (2, 3))\n    t[0, 0] = 1\n    m = t != -1\n"
        "    want = torch.nn.functional.cross_entropy(x[m], t[m])\n"
        "    torch.testing.assert_close(masked_loss(x, t), want)\n\n\n"
        "def test_everything_masked_is_nan():\n    assert masked_loss(torch.randn(1, 2, 5), torch.full((1, 2), -1)).isnan()\n")
    return Project("smokeproj", "smokeproj", "tests", sdist="", git="(made up by --smoke)")


def _save(path: str | None, results: list[Result]) -> None:
    """Write the results, keeping other projects' results already in the file."""
    if not path:
        return
    old = json.loads(Path(path).read_text()) if Path(path).exists() else {}
    keep = [r for r in old.get("results", []) if r["project"] not in {x.project for x in results}]
    data = {"tool": "syncscan lint --fix --unsafe-fixes --all", "python": sys.version.split()[0],
            "results": keep + [asdict(r) for r in results]}
    Path(path).write_text(json.dumps(data, indent=2) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--projects", default="timm,gpytorch,kornia")
    ap.add_argument("--work", default=str(REPO / ".bench" / "fix_proof"))
    ap.add_argument("--deps", default=str(REPO / ".bench" / "deps"), help="extra PYTHONPATH for the projects' tests")
    ap.add_argument("--git", action="append", default=[], metavar="NAME=PATH",
                    help="a project's git dir or checkout (HEAD is used), for the projects taken from git")
    ap.add_argument("--kornia-git", default=None, help="the same as --git kornia=PATH")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per test file's pytest run")
    ap.add_argument("--limit", type=int, default=40, help="test files chosen for what the fixes touched")
    ap.add_argument("--json", default=None)
    ap.add_argument("--smoke", action="store_true", help="a tiny made-up project instead: checks the plumbing")
    ap.add_argument("--syncscan-src", default=None, help="run syncscan from this source checkout (default: installed)")
    ap.add_argument("--rescore", action="store_true", help="recompute --json's comparison from the JUnit files in --work")
    a = ap.parse_args(argv)
    global SYNCSCAN_SRC
    SYNCSCAN_SRC = a.syncscan_src
    work = Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if a.rescore:
        rescore(a.json, work)
        results = [Result(**r) for r in json.loads(Path(a.json).read_text())["results"]]
        _table(results)
        return 1 if any(r.broke for r in results) else 0
    gits = dict(g.split("=", 1) for g in a.git if "=" in g)
    if a.kornia_git:
        gits.setdefault("kornia", a.kornia_git)
    results = []
    if a.smoke:
        results.append(prove(smoke_project(work), work, None, a.timeout, a.limit, {}))
    else:
        for name in a.projects.split(","):
            p = PROJECTS[name.strip()]
            deps = a.deps if Path(a.deps).is_dir() else None
            results.append(prove(p, work, deps, a.timeout, a.limit, gits))
            _save(a.json, results)  # after each project: a long run keeps what it has
    _save(a.json, results)
    _table(results)
    return 1 if any(r.broke for r in results) else 0


def _table(results: list[Result]) -> None:
    print("| project | fixes applied (files) | test files | passed / failed / skipped before | after | broke |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in results:
        b, f = r.before, r.after
        print(f"| {r.project} | {r.fix['fixed_syncs']} ({r.fix['fixed_files']}) | {len(r.tests)} | "
              f"{b['passed']} / {b['failed']} / {b['skipped']} | {f['passed']} / {f['failed']} / {f['skipped']} | "
              f"{len(r.broke)}{f' ({len(r.timed_out)} files cut off)' if r.timed_out else ''} |")


if __name__ == "__main__":
    sys.exit(main())
