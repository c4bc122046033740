"""`syncscan profile` with lint joined in, `--html`, and `fail-on-sync` from [tool.syncscan]: a
real CPU run of fixtures/masked_loss_naive.py, in-process through the CLI."""

from __future__ import annotations

import json
import re
import shutil

import pytest

pytest.importorskip("torch")

from syncscan.cli import main  # noqa: E402
from syncscan.commands.profile import EXIT_SYNC_FOUND  # noqa: E402
from syncscan.errors import UserError  # noqa: E402
from syncscan.commands.profile import resolve_fail_on_sync  # noqa: E402
from syncscan.runtime.runner import Target  # noqa: E402

from conftest import FIXTURES  # noqa: E402
from test_join import _line  # noqa: E402

FAST = ["--steps", "2", "--warmup", "1", "--wait", "0"]
# the fixture's own options: a small CPU problem and enough steps for the schedule (9)
SCRIPT_ARGS = ["--device", "cpu", "--steps", "12", "--warmup", "0", "--batch", "2", "--size", "16"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the naive fixture in a project whose pyproject.toml turns on fail-on-sync."""
    proj = tmp_path / "proj"
    proj.mkdir()
    for name in ("masked_loss_naive.py", "_common.py"):
        shutil.copy(FIXTURES / name, proj / name)
    (proj / "pyproject.toml").write_text("[tool.syncscan]\nfail-on-sync = true\n")
    monkeypatch.chdir(tmp_path)  # the config is found from the script's folder, not from here
    return proj


def test_cpu_profile_joins_lint_writes_html_and_fails_on_sync_from_config(project, tmp_path, capsys):
    script = project / "masked_loss_naive.py"
    html = tmp_path / "report.html"
    out = tmp_path / "out.json"
    rc = main(["profile", *FAST, "--logdir", str(tmp_path / "run"), "--output", str(out), "--html", str(html),
               str(script), *SCRIPT_ARGS])
    text = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["outcome"]["status"] in ("stopped", "finished"), report["outcome"]
    # without a GPU, a step "syncs" when it runs an op that would on one: exit EXIT_SYNC_FOUND from the config
    assert report["sync_summary"]["measured"] is False and report["sync_summary"]["any"] is True
    assert report["fail_on_sync"] is True and rc == EXIT_SYNC_FOUND
    # lint of the profiled file joined with the would-sync ops: the detailed pass recorded each
    # op's call line (runtime.oprecorder), so they match by statement (the mask's backward, which
    # runs in loss.backward(), through its forward op)
    j = report["join"]
    assert j["measured"] is False and [p for p in j["linted"]] == [str(script)]
    lines = {f["line"] for c in j["confirmed"] for f in c["findings"]}
    assert {_line(script, "torch.nonzero("), _line(script, "torch.unique("), _line(script, "pred[mask]")} <= lines
    assert {c["match"] for c in j["confirmed"]} == {"statement", "forward"}
    assert {c["line_kind"] for c in j["confirmed"]} == {"call"} and j["stale"] == []
    assert {s["line"] for s in report["would_sync"]} == {_line(script, x) for x in (
        "torch.nonzero(", "torch.unique(", "pred[mask]", "loss.backward()")}
    assert all(c["cost"]["gpu_idle_ms_per_step"] is None for c in j["confirmed"])
    assert len(j["confirmed"]) + len(j["missed_by_lint"]) == len(report["would_sync"])
    # the text report's section and where the HTML went
    assert "Lint and runtime together" in text and f"confirmed by lint: {len(j['confirmed'])}" in text
    assert f"HTML report: {html}" in text and report["html"] == str(html)
    page = html.read_text()
    assert "<script" not in page and not re.search(r"""(src|href)\s*=\s*["']?https?:""", page)
    assert page.count('<tr><td class="num">') == len(report["would_sync"])
    assert "confirmed by lint: SYN" in page and "No GPU activity was recorded" in page


def test_bad_html_path_fails_before_running(project, tmp_path, capsys):
    script = project / "masked_loss_naive.py"
    for bad in (tmp_path, tmp_path / "missing" / "r.html"):
        rc = main(["profile", *FAST, "--logdir", str(tmp_path / "run"), "--html", str(bad), str(script)])
        out, err = capsys.readouterr()
        assert rc == 2 and out == "" and err.count("\n") == 1 and err.startswith("syncscan: error: --html")
    assert not (tmp_path / "run").exists()


def test_fail_on_sync_resolution(tmp_path, monkeypatch):
    proj, other = tmp_path / "proj", tmp_path / "other"
    (proj / "sub").mkdir(parents=True)
    other.mkdir()
    script = proj / "sub" / "train.py"
    script.write_text("pass\n")
    monkeypatch.chdir(other)
    target = Target(str(script), None, [])
    assert resolve_fail_on_sync(None, target) is False  # no config anywhere
    (other / "pyproject.toml").write_text("[tool.syncscan]\nfail-on-sync = true\n")
    assert resolve_fail_on_sync(None, target) is True  # the current folder's, as none is above the script
    (proj / "pyproject.toml").write_text("[tool.syncscan]\nfail-on-sync = false\n")
    assert resolve_fail_on_sync(None, target) is False  # the script's project wins
    assert resolve_fail_on_sync(True, target) is True  # the option wins over both
    (proj / "pyproject.toml").write_text("[tool.syncscan]\nfail-on-sync = true\n")
    assert resolve_fail_on_sync(False, target) is False  # --no-fail-on-sync
    assert resolve_fail_on_sync(None, Target(None, "json", [])) is True  # -m: from the current folder
    (proj / "pyproject.toml").write_text('[tool.syncscan]\nfail-on-sync = "false"\n')
    with pytest.raises(UserError, match="fail-on-sync must be true or false"):
        resolve_fail_on_sync(None, target)
