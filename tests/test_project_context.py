"""Hot context from the whole project, whatever files are named (issue 12): a helper linted alone is
hot when the project's training loop, in a file not named, calls it every step; `lint a.py`,
`lint b.py a.py` and `lint .` give a.py the same findings, with or without the cache, and after
the files around it change."""

from __future__ import annotations

import json
import os

import pytest

from syncscan.cli import main
from syncscan.lint import cache as cache_mod
from syncscan.lint import runner
from syncscan.lint.config import Config
from syncscan.lint.engine import lint_source
from syncscan.lint.registry import all_rules

HELPER = """\
def scale_by_norm(x):
    n = x.norm().item()
    return x / n


def unused(x):
    return x.sum().item()
"""

TRAIN = """\
import torch
from helpers import scale_by_norm


def train(model, loader, opt):
    for x, y in loader:
        loss = model(scale_by_norm(x)).sum()
        loss.backward()
        opt.step()
"""

SETUP = """\
import torch
from helpers import scale_by_norm


def setup(x):
    return scale_by_norm(x)
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    d = tmp_path / "proj"
    (d / "pkg").mkdir(parents=True)
    (d / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (d / "pkg" / "helpers.py").write_text(HELPER)
    (d / "train.py").write_text(TRAIN)
    monkeypatch.chdir(d)
    return d


def lint(capsys, *argv):
    rc = main(["lint", "--all", "--format", "json", *argv])
    out = capsys.readouterr()
    return rc, [(os.path.basename(f["path"]), f["line"], f["code"], f["context"]) for f in json.loads(out.out)]


def helper_findings(found):
    return sorted(f for f in found if f[0] == "helpers.py")


HOT_HELPER = [("helpers.py", 2, "SYN101", "hot"), ("helpers.py", 7, "SYN101", "cold")]


@pytest.mark.parametrize("cache", [True, False])
def test_a_helper_linted_alone_is_hot_when_the_projects_loop_calls_it(capsys, project, cache):
    flags = [] if cache else ["--no-cache"]
    alone = lint(capsys, *flags, "pkg/helpers.py")[1]
    assert helper_findings(alone) == HOT_HELPER
    both = lint(capsys, *flags, "train.py", "pkg/helpers.py")[1]
    everything = lint(capsys, *flags, ".")[1]
    assert helper_findings(both) == helper_findings(everything) == HOT_HELPER
    # by absolute path and from another folder: the same
    os.chdir(project / "pkg")
    assert helper_findings(lint(capsys, *flags, str(project / "pkg" / "helpers.py"))[1]) == HOT_HELPER


EPOCH_TRAIN = """\
import torch
from helpers import scale_by_norm


def train_one_epoch(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
    scale_by_norm(loss)
"""


def test_a_helper_linted_alone_is_epoch_when_only_per_epoch_code_calls_it(capsys, project):
    """The frequencies travel in the project's summaries: a helper that `train_one_epoch` calls after
    its step loop is epoch, linted alone as with the whole project, warm or not; and hot again once
    the loop calls it every step."""
    (project / "train.py").write_text(EPOCH_TRAIN)
    want = [("helpers.py", 2, "SYN101", "epoch"), ("helpers.py", 7, "SYN101", "cold")]
    assert helper_findings(lint(capsys, "--no-cache", "pkg/helpers.py")[1]) == want
    assert helper_findings(lint(capsys, "pkg/helpers.py")[1]) == want
    assert helper_findings(lint(capsys, ".")[1]) == want
    assert helper_findings(lint(capsys, "pkg/helpers.py")[1]) == want
    (project / "train.py").write_text(TRAIN)
    assert helper_findings(lint(capsys, "--no-cache", "pkg/helpers.py")[1]) == HOT_HELPER


def test_without_a_project_only_the_named_files_count(capsys, tmp_path, monkeypatch):
    """No pyproject.toml or .git above: nothing but the named files is known (as before)."""
    (tmp_path / "helpers.py").write_text(HELPER)
    (tmp_path / "train.py").write_text(TRAIN)
    monkeypatch.chdir(tmp_path)
    assert [f[3] for f in helper_findings(lint(capsys, "--no-cache", "helpers.py")[1])] == ["cold", "cold"]
    assert helper_findings(lint(capsys, "--no-cache", "helpers.py", "train.py")[1]) == HOT_HELPER


@pytest.fixture
def settled(monkeypatch):
    """Every stat counts as settled at once (else the stat shortcut waits 2 s before trusting one)."""
    monkeypatch.setattr(cache_mod, "SETTLE_NS", -10**18)


def test_the_context_follows_the_files_around(capsys, project, settled):
    """Warm and cached, the files not named still count as they are now: a loop that stops calling the
    helper, a new file that calls it, a removed one."""
    assert helper_findings(lint(capsys, "pkg/helpers.py")[1]) == HOT_HELPER
    assert helper_findings(lint(capsys, "pkg/helpers.py")[1]) == HOT_HELPER
    # the loop no longer calls it (same size, same mtime: only ctime tells)
    p = project / "train.py"
    st = p.stat()
    p.write_text(TRAIN.replace("scale_by_norm(x)", "scale_by_nrm_(x)"))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert [f[3] for f in helper_findings(lint(capsys, "pkg/helpers.py")[1])] == ["cold", "cold"]
    # a new file in a new folder calls it from its loop
    (project / "scripts").mkdir()
    (project / "scripts" / "loop.py").write_text(TRAIN.replace("def train", "def run"))
    assert helper_findings(lint(capsys, "pkg/helpers.py")[1]) == HOT_HELPER
    # removed again
    (project / "scripts" / "loop.py").unlink()
    assert [f[3] for f in helper_findings(lint(capsys, "pkg/helpers.py")[1])] == ["cold", "cold"]
    # excluded by the config: not part of the project
    (project / "scripts" / "loop.py").write_text(TRAIN.replace("def train", "def run"))
    assert helper_findings(lint(capsys, "pkg/helpers.py")[1]) == HOT_HELPER
    (project / "pyproject.toml").write_text("[tool.syncscan]\nexclude = ['scripts']\n")
    assert [f[3] for f in helper_findings(lint(capsys, "pkg/helpers.py")[1])] == ["cold", "cold"]


def test_a_nested_project_is_a_project_of_its_own(capsys, project):
    """A folder with its own pyproject.toml: its files are not the outer project's, and its helper
    only learns of its own loops."""
    sub = project / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[project]\nname = 's'\n")
    (sub / "helpers.py").write_text(HELPER)
    assert [f[3] for f in helper_findings(lint(capsys, "sub/helpers.py")[1])] == ["cold", "cold"]
    (sub / "train.py").write_text(TRAIN)
    assert helper_findings(lint(capsys, "sub/helpers.py")[1]) == HOT_HELPER
    # and the outer project's helper does not see the nested loop: remove the outer one
    (project / "train.py").write_text(SETUP)
    assert [f[3] for f in helper_findings(lint(capsys, "pkg/helpers.py")[1])] == ["cold", "cold"]


def test_stdin_stands_for_the_named_file(capsys, project, monkeypatch):
    """Editor integrations pipe the unsaved text with --stdin-filename: the project around that name
    counts, with the piped text in place of the file's."""
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(HELPER.encode())))
    rc = main(["lint", "--all", "--format", "json", "--stdin-filename", "pkg/helpers.py", "-"])
    found = [(f["line"], f["context"]) for f in json.loads(capsys.readouterr().out)]
    assert rc == 1 and found == [(2, "hot"), (7, "cold")]


def test_a_one_file_lint_reads_one_shard(capsys, project, monkeypatch, settled):
    """Warm: the named file's shard and the project index, not the cache of every other file."""
    for i in range(20):
        (project / f"m{i}.py").write_text(f"import torch\n\ndef f{i}(x):\n    return x.sum().item()\n")
    lint(capsys, ".")
    loaded = []
    real = cache_mod.Store.load
    monkeypatch.setattr(cache_mod.Store, "load", lambda self, key: loaded.append(os.path.basename(key))
                        or real(self, key))
    assert helper_findings(lint(capsys, "pkg/helpers.py")[1]) == HOT_HELPER
    assert loaded == ["helpers.py"]


def test_project_context_api_for_one_file(project):
    """What the language server calls: the text being edited, linted on its own, settled in the project."""
    cfg = Config()
    path = str(project / "pkg" / "helpers.py")
    rules = [r() for r in all_rules()]
    result = lint_source(path, HELPER, rules)
    runner.settle_in_project([result], cfg)
    assert [f.context for f in result.findings] == ["hot", "cold"]
    ctx = runner.project_context(path, cfg)
    assert ctx is runner.project_context(path, cfg)  # memoised per project
    # an unsaved edit that makes `unused` called from the loop: hot at once, nothing written
    edited = lint_source(path, HELPER.replace("return x / n", "return x / n\n\n\ndef train_step(x):\n"
                                                              "    return unused(x)\n"), rules)
    runner.settle_in_project([edited], cfg)
    assert [f.context for f in edited.findings] == ["hot", "hot"]
    assert (project / "pkg" / "helpers.py").read_text() == HELPER
    assert runner.project_context(str(project.parent / "elsewhere.py"), cfg) is None


def test_an_edited_buffer_follows_the_files_around(project, settled, monkeypatch):
    """The rounds kept for the file being edited (each change costs only what its calls reach) are
    dropped when another file of the project changes."""
    monkeypatch.setattr(runner, "REFRESH_SECONDS", 0.0)
    cfg = Config()
    path = str(project / "pkg" / "helpers.py")
    rules = [r() for r in all_rules()]
    for n in range(2):  # (the second edit is answered from the kept rounds)
        edited = lint_source(path, HELPER + f"\n\ndef extra{n}(x):\n    return unused(x)\n", rules)
        runner.settle_in_project([edited], cfg)
        assert [f.context for f in edited.findings] == ["hot", "cold"]
    (project / "train.py").write_text(TRAIN.replace("model(scale_by_norm(x))", "model(x)"))
    runner.settle_in_project([edited], cfg)
    assert [f.context for f in edited.findings] == ["cold", "cold"]
    # settled in the project, not alone: the file is still listed once the listing comes from the index
    assert runner.project_context(path, cfg) is not None


def test_findings_hot_where_they_stand_need_no_project(capsys, project, monkeypatch):
    """A file whose findings are all hot or cold by where they stand (a `forward`, a loss) does not
    need the files around it: the project is not walked nor its index read."""
    from syncscan.lint import project as project_mod

    (project / "model.py").write_text("import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                                      "        return x.sum().item()\n")
    looked = []
    real = project_mod.ProjectContext.listing
    monkeypatch.setattr(project_mod.ProjectContext, "listing", lambda self: looked.append(1) or real(self))
    assert lint(capsys, "model.py")[1] == [("model.py", 6, "SYN101", "hot")]
    assert looked == [] and not list(project.glob(".syncscan_cache/*/projects/*"))
    assert helper_findings(lint(capsys, "pkg/helpers.py")[1]) == HOT_HELPER and looked


def test_a_config_change_reaches_the_files_around(capsys, project, settled):
    """The project's files are summarised with their own config's hot-functions: changing them in a
    pyproject.toml reaches a file not named (its summary is made again)."""
    (project / "runner.py").write_text("import torch\nfrom pkg.helpers import scale_by_norm\n\n\ndef run_batch(x):\n"
                                       "    return scale_by_norm(x)\n")
    (project / "train.py").write_text(SETUP)  # no loop calls the helper now
    (project / "pyproject.toml").write_text("[tool.syncscan]\nhot-functions = []\n")
    assert [f[3] for f in helper_findings(lint(capsys, "pkg/helpers.py")[1])] == ["cold", "cold"]
    (project / "pyproject.toml").write_text("[tool.syncscan]\nhot-functions = ['run_batch']\n")
    assert helper_findings(lint(capsys, "pkg/helpers.py")[1]) == HOT_HELPER


def test_a_named_file_the_project_ignores_is_settled_alone(capsys, project, monkeypatch):
    """A file git ignores (generated code) named on the command line is linted, but it is not the
    project's: settled with the named files only, and the project is not scanned for it."""
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("gen/\n")
    (project / "gen").mkdir()
    (project / "gen" / "helpers.py").write_text(HELPER)
    modes = []
    real = runner._Linter.process
    monkeypatch.setattr(runner._Linter, "process",
                        lambda self, paths, mode: modes.append(mode) or real(self, paths, mode))
    assert [f[3] for f in helper_findings(lint(capsys, "gen/helpers.py")[1])] == ["cold", "cold"]
    assert modes == ["lint"]
    # the same whatever else is named (the project's loop does not make a file it ignores hot)
    assert [f[3] for f in helper_findings(lint(capsys, "gen/helpers.py", "train.py")[1])] == ["cold", "cold"]
