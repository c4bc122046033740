"""The pre-commit hooks (.pre-commit-hooks.yaml) under the real `pre-commit try-repo`.

try-repo installs the hooks from a git repository's HEAD into a fresh virtualenv (pip install
of this package: libcst, no torch), so the test copies what the package needs from the working
tree into a scratch repository and commits it there. The three cases (no files, a file with a
hot sync, a clean file) run at once: each builds its own environment, which takes pip time.
Both hooks (syncscan, syncscan-fix) run in each case (try-repo without a hook id runs all).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# what `pip install .` needs, and the hooks manifest
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml")
PACKAGE_DIRS = ("syncscan", "rules")

HOT = textwrap.dedent("""\
    import torch

    def train(model, loader, opt):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
            print(loss.item())
    """)
CLEAN = "import torch\n\nx = torch.zeros(3)\n"

pytestmark = pytest.mark.slow


def _git(*args, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)
    return env


def _hook_repo(dest: Path) -> None:
    dest.mkdir()
    for name in PACKAGE_FILES:
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, dest / name)
    for d in PACKAGE_DIRS:
        shutil.copytree(REPO / d, dest / d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git("init", "-q", cwd=dest)
    _git("add", "-A", cwd=dest)
    _git("commit", "-q", "-m", "hooks", cwd=dest)


@pytest.fixture(scope="module")
def try_repo(tmp_path_factory):
    """{case: (exit code, output)} for `pre-commit try-repo HOOKREPO --files ...` per case."""
    if importlib.util.find_spec("pre_commit") is None:
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    base = tmp_path_factory.mktemp("precommit")
    hooks = base / "hookrepo"
    _hook_repo(hooks)
    cases = {"no-files": ["README.md"], "hot-sync": ["train.py"], "clean": ["clean.py"]}
    procs = {}
    for case, files in cases.items():
        work = base / case
        work.mkdir()
        (work / "README.md").write_text("# not Python\n")
        (work / "train.py").write_text(HOT)
        (work / "clean.py").write_text(CLEAN)
        env = _git("init", "-q", cwd=work)
        _git("add", "-A", cwd=work)
        env.pop("PRE_COMMIT_HOME", None)
        procs[case] = subprocess.Popen(
            [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "--color", "never", "--files", *files],
            cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    results = {}
    for case, p in procs.items():
        try:
            out, _ = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            pytest.fail(f"pre-commit try-repo ({case}) took over 5 minutes:\n{out[-3000:]}")
        results[case] = (p.returncode, out)
    return base, results


def _status(out: str, hook_name: str) -> str:
    line = next(ln for ln in out.splitlines() if ln.startswith(hook_name + "."))
    return line.rsplit(".", 1)[-1].strip()


def test_no_files_passes(try_repo):
    _, results = try_repo
    rc, out = results["no-files"]
    assert rc == 0, out
    assert "(no files to check)Skipped" in out


def test_hot_sync_fails_with_the_code(try_repo):
    base, results = try_repo
    rc, out = results["hot-sync"]
    assert rc == 1, out
    assert _status(out, "syncscan (host-device syncs)") == "Failed"
    assert _status(out, "syncscan --fix (host-device syncs)") == "Failed"
    assert "train.py:8:15: SYN101 [hot]" in out
    assert "Traceback" not in out
    assert (base / "hot-sync" / "train.py").read_text() == HOT  # nothing to fix safely: untouched


def test_clean_file_passes(try_repo):
    _, results = try_repo
    rc, out = results["clean"]
    assert rc == 0, out
    assert _status(out, "syncscan (host-device syncs)") == "Passed"
    assert _status(out, "syncscan --fix (host-device syncs)") == "Passed"


def test_manifest():
    """The manifest pre-commit reads: both hooks, for Python files and notebooks, light env."""
    clientlib = pytest.importorskip("pre_commit.clientlib", reason="pre-commit is not installed")
    hooks = {h["id"]: h for h in clientlib.load_manifest(str(REPO / ".pre-commit-hooks.yaml"))}  # validates
    assert set(hooks) == {"syncscan", "syncscan-fix"}
    for h in hooks.values():
        assert h["language"] == "python" and h["types_or"] == ["python", "jupyter"]
        assert h["entry"].startswith("syncscan lint ") and "--explicit-paths" in h["entry"]
        assert not h["additional_dependencies"]
    assert "--fix" in hooks["syncscan-fix"]["entry"] and "--fix" not in hooks["syncscan"]["entry"]


def test_readme_snippet_works_as_written(tmp_path):
    """The README's pre-commit snippet (a `repo: local` hook: the README's old `rev: v0.1.0`
    did not resolve) runs under the real pre-commit: a staged file with a hot sync fails with
    the finding, a clean one passes."""
    if importlib.util.find_spec("pre_commit") is None:
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- precommit-snippet:start -->", "<!-- precommit-snippet:end -->"
    block = readme[readme.index(start) + len(start):readme.index(end)].strip()
    assert block.startswith("```yaml\n") and block.endswith("\n```")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".pre-commit-config.yaml").write_text(block[len("```yaml\n"):-len("\n```")] + "\n")
    (work / "train.py").write_text(HOT)
    (work / "clean.py").write_text(CLEAN)
    env = _git("init", "-q", cwd=work)
    _git("add", "-A", cwd=work)
    # `language: system`: syncscan from the environment pre-commit runs in (this one)
    env.update(PRE_COMMIT_HOME=str(tmp_path / "cache"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))

    def run(*files):
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--color", "never", "--files", *files],
                              cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False)

    failed = run("train.py")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert _status(failed.stdout, "syncscan (host-device syncs)") == "Failed"
    assert "train.py:8:15: SYN101 [hot]" in failed.stdout
    passed = run("clean.py")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert _status(passed.stdout, "syncscan (host-device syncs)") == "Passed"
