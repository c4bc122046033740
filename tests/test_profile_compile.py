"""`syncscan profile` of a compiled script: graph breaks, recompilations and CUDA-graph skips from
torch's own logging, at the user's file:line, joined with lint; on the CPU (a graph break needs no
GPU; CUDA-graph skips are logged only for GPU graphs, so their parsing is tested on messages in
the format torch 2.11-2.14 writes)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from syncscan.cli import main  # noqa: E402
from syncscan.present.compile_text import render_compile  # noqa: E402
from syncscan.present.html import _compile_section  # noqa: E402
from syncscan.runtime.compile_events import CUDAGRAPH_LOGGERS, CompileEvents  # noqa: E402
from syncscan.trace.graph_breaks import (  # noqa: E402
    cudagraph_skips,
    graph_breaks,
    parse_break,
    parse_cudagraph_skip,
    recompilations,
    summarize,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DATA = Path(__file__).resolve().parent / "data" / "compile"

# a compiled forward with .item() (line 10) and nonzero (line 11); the uncompiled helper's
# nonzero (line 16) runs every step too
SCRIPT = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
    def forward(self, x):
        y = self.lin(x)
        s = y.abs().max().item()
        idx = torch.nonzero(y > 0)
        return (y / s).sum() + idx.shape[0]

def helper(x):
    # not compiled
    return torch.nonzero(x > 0)

model = Net()
cmodel = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(40):
    loss = cmodel(torch.randn(4, 8))
    loss.backward()
    opt.step()
    opt.zero_grad()
    helper(torch.randn(3))
"""


def test_profile_lists_the_graph_breaks_of_a_compiled_forward(tmp_path, capsys, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.lstrip("\n"))
    monkeypatch.chdir(tmp_path)
    rc = main(["profile", "--wait", "1", "--warmup", "1", "--steps", "2", "--passes", "light,detail",
               "--logdir", str(tmp_path / "run"), "--html", str(tmp_path / "r.html"), str(script)])
    out = capsys.readouterr().out
    assert rc == 0
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    breaks = {(Path(b["file"]).name, b["line"]): b for b in report["graph_breaks"]}
    assert set(breaks) == {("train.py", 10), ("train.py", 11)}  # not the helper's line 16
    item, nonzero = breaks[("train.py", 10)], breaks[("train.py", 11)]
    assert item["count"] >= 1 and item["rule"] == "SYN101" and "item()" in item["reason"]
    assert nonzero["rule"] == "SYN301" and "aten.nonzero" in nonzero["reason"]
    assert item["function"] == "forward" and nonzero["function"] == "forward"
    # joined with lint: the findings of those lines, marked as compiled
    assert [f["code"] for f in item["lint"]] == ["SYN101"] and item["lint"][0]["compile"]["effect"] == "graph-break"
    assert [f["code"] for f in nonzero["lint"]] == ["SYN301"]
    assert report["compilations"] >= 2 and report["cudagraph_skips"] == []
    assert "torch.compile:" in out and "train.py:10 forward: Unsupported Tensor.item()" in out
    assert "lint: SYN301 nonzero at line 11" in out
    html = (tmp_path / "r.html").read_text()
    assert "<h2>torch.compile</h2>" in html and "aten.nonzero.default" in html


def test_profile_of_an_uncompiled_script_has_empty_compile_lists(tmp_path, capsys, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT.replace('torch.compile(model, backend="eager")', "model").lstrip("\n"))
    monkeypatch.chdir(tmp_path)
    assert main(["profile", "--wait", "0", "--warmup", "1", "--steps", "1", "--passes", "light",
                 "--logdir", str(tmp_path / "run"), str(script)]) == 0
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert (report["compilations"], report["graph_breaks"], report["recompilations"], report["cudagraph_skips"]) \
        == (0, [], [], [])
    assert "torch.compile:" not in capsys.readouterr().out


def test_compare_when_both_scripts_compile(tmp_path):
    out = tmp_path / "r.json"
    args = ["--device", "cpu", "--batch", "2", "--size", "16", "--steps", "12", "--compile", "default",
            "--compile-backend", "eager"]
    p = subprocess.run([sys.executable, "-m", "syncscan", "profile", "--wait", "3", "--warmup", "0", "--steps", "2",
                        "--passes", "bare", "--compare", str(FIXTURES / "masked_loss_fixed.py"),
                        "--compare-runs", "1", "--output", str(out), "--logdir", str(tmp_path / "run"),
                        str(FIXTURES / "masked_loss_naive.py"), *args], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    report = json.loads(out.read_text())
    c = report["comparison"]
    assert c["original_ms_per_step"] > 0 and c["rewritten_ms_per_step"] > 0
    lines = {b["line"] for b in report["graph_breaks"]}
    assert {58, 61, 65} <= lines  # nonzero, unique, the masked cross-entropy
    assert all(Path(b["file"]).name == "masked_loss_naive.py" for b in report["graph_breaks"])
    assert "measured against" in p.stdout and "torch.compile:" in p.stdout


# ------------------------------------------------------------------------------ units

def test_parse_break_of_a_recorded_payload():
    payload = (DATA / "graph_break_nonzero.txt").read_text()
    b = parse_break(payload)
    assert b["file"].endswith("fixtures/masked_loss_naive.py") and b["line"] == 58
    assert b["reason"] == ("Dynamic shape operator: Operator `aten.nonzero.default`'s output shape depends on input "
                           "Tensor data.")
    assert b["library_frame"] is None


def test_a_break_inside_library_code_goes_to_the_user_line():
    payload = textwrap.dedent("""\
        Graph break in user code at /venv/lib/python3.12/site-packages/torch/nn/utils/clip_grad.py:109
        Graph Break Reason: Data-dependent branching
          Explanation: Detected data-dependent branching (e.g. `if my_tensor:`).

        User code traceback:
          File "/home/u/train.py", line 31, in step
            norm = clip(params)
          File "/home/u/train.py", line 12, in clip
            return torch.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
          File "/venv/lib/python3.12/site-packages/torch/nn/utils/clip_grad.py", line 109, in _get_total_norm
            if error_if_nonfinite and torch.logical_or(total_norm.isnan(), total_norm.isinf()):

        Traceback (most recent call last):
          File "/venv/lib/python3.12/site-packages/torch/_dynamo/symbolic_convert.py", line 1, in run
        torch._dynamo.exc.Unsupported: Data-dependent branching
        """)
    b = parse_break(payload)
    assert (b["file"], b["line"], b["function"]) == ("/home/u/train.py", 12, "clip")
    assert b["library_frame"].endswith("clip_grad.py:109")
    assert b["reason"] == "Data-dependent branching: Detected data-dependent branching (e.g. `if my_tensor:`)."


def test_payloads_of_earlier_releases():
    """torch 2.5-2.7 wrote "Reason:" where 2.14 writes "Graph Break Reason:"."""
    payload = ("Graph break in user code at /home/u/m.py:7\nReason: Unsupported: Tensor.item\nUser code traceback:\n"
               '  File "/home/u/m.py", line 7, in forward\n    n = x.sum().item()\n')
    assert parse_break(payload) == {"file": "/home/u/m.py", "line": 7, "function": "forward",
                                    "reason": "Unsupported: Tensor.item", "library_frame": None}


def test_older_payloads_without_the_header_use_the_user_stack():
    payload = ('  File "/home/u/m.py", line 7, in forward\n    n = x.sum().item()\n\n'
               "Traceback (most recent call last):\n  File \"/x/torch/_dynamo/convert_frame.py\", line 1, in f\n"
               "torch._dynamo.exc.Unsupported: Tensor.item\n")
    b = parse_break(payload)
    assert (b["file"], b["line"], b["reason"]) == ("/home/u/m.py", 7, "Tensor.item")


def test_breaks_are_counted_per_line_and_reason():
    payload = (DATA / "graph_break_nonzero.txt").read_text()
    recs = [{"kind": "graph_break", "payload": payload, "frame_id": 0},
            {"kind": "graph_break", "payload": payload, "frame_id": 1},
            {"kind": "graph_break", "payload": "nothing to parse"}]
    (b,) = graph_breaks(recs)
    assert (b["line"], b["count"], b["frames"], b["rule"]) == (58, 2, 2, "SYN301")


def test_recompilations_are_grouped_by_guard_whatever_the_sizes():
    recs = [{"kind": "frame", "co_name": "torch_dynamo_resume_in_forward_at_58", "co_filename": "/u/m.py",
             "co_firstlineno": 58, "recompile_reason": f"2/{i}: tensor '___stack1[0]' size mismatch at index 0. "
                                                        f"expected {50 + i}, actual {40 + i}"} for i in range(3)]
    recs.append({"kind": "frame", "co_name": "forward", "co_filename": "/u/m.py", "co_firstlineno": 5,
                 "recompile_reason": None})
    (r,) = recompilations(recs)
    assert (r["file"], r["line"], r["function"], r["count"], r["resumed_after_break"]) == ("/u/m.py", 58, "forward",
                                                                                            3, True)
    assert r["reason"].startswith("tensor '___stack1[0]' size mismatch") and "graph break" in r["explanation"]
    s = summarize(recs + [{"kind": "frame", "step": 4}, {"kind": "frame", "step": 9}], measured=[(3, 5)])
    assert s["compilations"] == 6 and s["compiled_in_measured_steps"] == [4]


def test_cudagraph_skip_messages():
    mutated = (DATA / "cudagraph_skip_mutated.txt").read_text()
    s = parse_cudagraph_skip(mutated)
    assert s["reason"] == "mutated inputs (1 instances)"
    assert s["file"].endswith("masked_loss_naive.py") and s["line"] == 59 and s["function"] == "forward"
    cpu = parse_cudagraph_skip("skipping cudagraphs due to cpu device (arg3_1)")
    assert cpu == {"reason": "cpu device (arg3_1)", "file": None, "line": None, "function": None}
    incompatible = parse_cudagraph_skip(
        "skipping cudagraphs due to disabling cudagraphs due to incompatible op aten._local_scalar_dense.default "
        'Found from File "/u/m.py", line 9, in forward\n    n = x.item()\n')
    assert incompatible["reason"] == "incompatible op aten._local_scalar_dense.default" and incompatible["line"] == 9
    recs = [{"kind": "cudagraph_skip", "message": mutated}, {"kind": "cudagraph_skip", "message": mutated},
            {"kind": "frame", "cudagraph_skip_reason": mutated}]  # the same skip, in the frame's metrics too
    (skip,) = cudagraph_skips(recs)
    assert skip["count"] == 2


def test_the_collector_reads_torch_loggers():
    """Records reach the collector through the loggers torch writes to, and stop after remove()."""
    mutated = (DATA / "cudagraph_skip_mutated.txt").read_text()
    with CompileEvents(step=lambda: 7) as ev:
        logging.getLogger(CUDAGRAPH_LOGGERS[0]).warning(mutated)
        logging.getLogger(CUDAGRAPH_LOGGERS[0]).warning("enabling cudagraphs due to override_cudagraphs annotation")
        logging.getLogger(CUDAGRAPH_LOGGERS[1]).warning(mutated)  # older torch: the perf_hints logger
        torch._dynamo.reset()
        torch.compile(lambda x: x * x.sum().item(), backend="eager")(torch.ones(3))
    logging.getLogger(CUDAGRAPH_LOGGERS[0]).warning(mutated)
    kinds = [r["kind"] for r in ev.records]
    assert kinds.count("cudagraph_skip") == 2 and "graph_break" in kinds and "frame" in kinds
    assert all(r["step"] == 7 for r in ev.records)
    assert not any(isinstance(h, type(ev)) for h in logging.getLogger("torch.__trace").handlers)


def test_renderers_show_what_the_report_holds():
    report = {"compilations": 3, "compiled_in_measured_steps": [5],
              "graph_breaks": [{"file": "m.py", "line": 7, "function": "forward", "reason": "Dynamic shape operator",
                                "count": 2, "rule": "SYN301", "library_frame": None,
                                "lint": [{"path": "m.py", "line": 7, "code": "SYN301", "name": "nonzero",
                                          "suggestion": "use the mask",
                                          "compile": {"options": ["`torch.nonzero_static(cond, size=k)`"]}}]}],
              "recompilations": [], "cudagraph_skips": [{"file": "m.py", "line": 8, "function": "forward",
                                                         "reason": "mutated inputs (1 instances)", "count": 1,
                                                         "lint": []}]}
    text = "\n".join(render_compile(report, gpu=True))
    assert "3 compilations, 2 graph breaks at 1 line, 0 recompilations, CUDA graphs skipped 1 times" in text
    assert "compiled during measured step 5" in text
    assert "2x  m.py:7 forward: Dynamic shape operator" in text and "lint: SYN301 nonzero at line 7" in text
    assert "compile option: `torch.nonzero_static(cond, size=k)`" in text
    assert "m.py:8 forward: mutated inputs" in text and "lint: no finding on this line" in text
    html = _compile_section(report)
    assert 'class="graph-breaks"' in html and 'class="cudagraph-skips"' in html
    assert render_compile({"compilations": 0, "graph_breaks": []}, gpu=False) == [] and _compile_section({}) == ""


def test_a_break_lint_did_not_know_compiled_gets_its_rules_options(tmp_path):
    """torch.compile given a model lint cannot trace to its class (a factory): the run says the line
    is compiled, so the finding there gets its rule's compile options anyway."""
    from syncscan.lint.config import Config
    from syncscan.lint.runner import lint_paths
    from syncscan.trace.graph_breaks import with_lint

    model = tmp_path / "m.py"
    model.write_text("import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
                     "        return torch.nonzero(x > 0)\n")
    findings = lint_paths([str(model)], Config(root=tmp_path), use_cache=False, jobs=1).findings
    assert [f.compile for f in findings] == [None]
    summary = {"compilations": 1, "compiled_in_measured_steps": [], "recompilations": [], "cudagraph_skips": [],
               "graph_breaks": [{"file": str(model), "line": 5, "function": "forward", "count": 1, "frames": 1,
                                 "reason": "Dynamic shape operator", "rule": "SYN301", "library_frame": None,
                                 "lint": None}]}
    (b,) = with_lint(summary, findings)["graph_breaks"]
    c = b["lint"][0]["compile"]
    assert b["lint"][0]["code"] == "SYN301" and c["effect"] == "dynamic-shape"
    assert c["compiled_by"].startswith("at run time") and any("nonzero_static" in o for o in c["options"])
    assert summary["graph_breaks"][0]["lint"] is None  # a copy: the summary is not changed


def test_the_profile_api_collects_graph_breaks_too(tmp_path, capsys):
    import syncscan

    def forward(x):
        return x * x.sum().item()

    compiled = torch.compile(forward, backend="eager")
    torch._dynamo.reset()
    with syncscan.profile(steps=1, warmup=0, wait=0, passes="light", logdir=tmp_path / "run",
                          print_report=False) as p:
        for _ in range(3):
            compiled(torch.ones(4))
            syncscan.step()
    (b,) = p.report["graph_breaks"]
    assert b["rule"] == "SYN101" and b["function"] == "forward" and Path(b["file"]).name == "test_profile_compile.py"
    assert p.report["compilations"] >= 1
