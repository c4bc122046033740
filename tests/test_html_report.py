"""The HTML report: self-contained, with a timeline per step and the ranked sites, and it really
renders in a headless browser (Debian's chromium; skipped where it is not installed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from syncscan.commands._output import write_html
from syncscan.present.html import render_html
from syncscan.trace import analyze, load_trace


def _trace(traces_dir, run):
    return load_trace(next((traces_dir / run).glob("*.pt.trace.json.gz")))


def test_naive_loss_timeline_marks_every_sync(traces_dir):
    trace = _trace(traces_dir, "masked_loss_v0_b16_64px")
    analysis = analyze(trace)
    report, steps = analysis.report, analysis.timeline
    assert [s["name"] for s in steps] == [s["name"] for s in report["steps"]]
    # every sync of every step is on its timeline, with the idle gap it caused inside the step
    assert [len(s["syncs"]) for s in steps] == [s["syncs"] for s in report["steps"]]
    for st in steps:
        assert st["streams"], "GPU work drawn"
        for sy in st["syncs"]:
            assert 0 <= sy["start"] <= sy["end"] <= st["duration_ms"] + 1e-6
    page = render_html(report, steps)
    assert page.count('class="sync"') == report["total_syncs"]
    assert page.count('class="kernel"') > 100
    # one table row per site, ranked
    assert page.count("<tr><td class=\"num\">") == len(report["syncs"])
    assert "aten::nonzero" in page and "SYN301" in page
    # each row with the replay's saving for its site: syncs alone · with the rewrite
    for s in report["syncs"]:
        assert f'{s["saving_syncs_ms"]:.3f} · {s["saving_rewrite_ms"]:.3f} ms' in page
    assert f'<b>{report["replay"]["saving_rewrites_ms"]:.3f} ms</b>' in page


def test_report_is_self_contained(traces_dir, tmp_path):
    trace = _trace(traces_dir, "encdec_piped_b16")
    analysis = analyze(trace)
    out = tmp_path / "r.html"
    write_html(str(out), analysis.report, analysis.timeline)
    page = out.read_text()
    assert "<script" not in page and "<link" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", page)
    # two streams drawn, and the overlap table
    assert page.count("stream ") >= 2 and 'class="overlap"' in page
    assert "No host syncs" in page


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_renders_in_headless_chromium(traces_dir, tmp_path):
    Image = pytest.importorskip("PIL.Image")
    trace = _trace(traces_dir, "masked_loss_v0_b16_64px")
    out = tmp_path / "r.html"
    analysis = analyze(trace)
    write_html(str(out), analysis.report, analysis.timeline)
    png = tmp_path / "shot.png"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1300,900",
                    f"--screenshot={png}", out.as_uri()], check=True, timeout=120, capture_output=True)
    img = Image.open(png).convert("RGB")
    pixels = list(img.getdata())
    # the kernel bars (#4C78A8) and the sync markers (#D62728) were drawn
    blue = sum(1 for p in pixels if p == (0x4C, 0x78, 0xA8))
    red = sum(1 for p in pixels if p == (0xD6, 0x27, 0x28))
    assert blue > 500 and red > 50, (blue, red)


def test_analyze_html_option_writes_the_report_with_the_join(traces_dir, tmp_path, capsys):
    from syncscan.cli import main
    from test_join import naive_sites

    run = traces_dir / "masked_loss_v0_b16_64px"
    out = tmp_path / "r.html"
    assert main(["analyze", str(run), "--source-sites", str(naive_sites(tmp_path)), "--html", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert stdout.rstrip().endswith(f"HTML report: {out}")
    page = out.read_text()
    assert page.count('class="sync"') == analyze(_trace(traces_dir, "masked_loss_v0_b16_64px")).report["total_syncs"]
    # every ranked site says which lint finding it is, with lint's rewrite; the source line is shown
    assert page.count("confirmed by lint: SYN") == 5 and "rewrite: `target.masked_fill_(" in page
    assert "Lint and runtime together" in page and "torch.nonzero(target ==" in page
    # with --format json the note goes to stderr, so stdout stays one JSON object
    assert main(["analyze", str(run), "--format", "json", "--html", str(out)]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert f"HTML report: {out}" in captured.err


@pytest.mark.parametrize("where", ["folder", "missing-folder"])
def test_analyze_html_bad_path_is_a_one_line_error(traces_dir, tmp_path, capsys, where):
    from syncscan.cli import main

    bad = tmp_path if where == "folder" else tmp_path / "no" / "r.html"
    rc = main(["analyze", str(traces_dir / "masked_loss_v0_b16_64px"), "--html", str(bad)])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and err.count("\n") == 1 and err.startswith("syncscan: error: --html")


def test_analyze_html_needs_one_trace(traces_dir, tmp_path, capsys):
    from syncscan.cli import main

    folder = tmp_path / "runs"
    folder.mkdir()
    for run in ("masked_loss_v0_b16_64px", "masked_loss_v3_b16_64px"):
        src = next((traces_dir / run).glob("*.pt.trace.json.gz"))
        shutil.copy(src, folder / f"{run}.pt.trace.json.gz")
    rc = main(["analyze", str(folder), "--all", "--html", str(tmp_path / "r.html")])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and "one trace" in err and not (tmp_path / "r.html").exists()
