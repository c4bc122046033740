"""`syncscan profile` on several ranks, end to end on the CPU with gloo: launched through torchrun
(--nproc-per-node, the wrapped `-- torchrun ...` form, two "nodes" meeting at a c10d rendezvous on
localhost), one merged report, TensorBoard's distributed view; and the launcher's parts as units.

The DDP script: rank 1 does extra host work every step (the straggler), rank 0 logs the loss with
`.item()` under `if rank == 0:` (a sync on rank 0 only), and every rank meets at a barrier."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available():
    pytest.skip("torch.distributed is not available", allow_module_level=True)

from syncscan.cli import build_parser, main  # noqa: E402
from syncscan.commands.profile import forward_options  # noqa: E402
from syncscan.errors import UserError  # noqa: E402
from syncscan.runtime import distributed  # noqa: E402

SCHEDULE = ["--steps", "2", "--warmup", "1", "--wait", "0"]
SLEEP_S = 0.15  # rank 1's extra work per step: far above the noise of a loaded machine
TIMEOUT_S = 300

DDP = f"""
import os, time
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(16, 16))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(60):
        loss = model(torch.randn(8, 16)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 1:
            time.sleep({SLEEP_S})
        if rank == 0:
            print("loss", loss.item())
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _syncscan(*args, cwd: Path, env=None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "syncscan", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT_S, env=full_env)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """`syncscan profile --nproc-per-node 2` on the DDP script: (run folder, report, process)."""
    d = tmp_path_factory.mktemp("two")
    (d / "ddp.py").write_text(textwrap.dedent(DDP))
    proc = _syncscan("profile", "--nproc-per-node", "2", *SCHEDULE, "--logdir", "run", "ddp.py", cwd=d)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return d / "run", json.loads((d / "run" / "report.json").read_text()), proc


def test_one_report_with_every_rank_and_a_rank_0_sync_on_rank_0_only(two_ranks):
    run, report, _ = two_ranks
    assert [r["rank"] for r in report["ranks"]] == [0, 1]
    item = [s for s in report["ranks"][0]["would_sync"] if s["outer_op"] == "aten::item"]
    assert item and item[0]["per_step"] == [1, 1]
    assert not [s for s in report["ranks"][1]["would_sync"] if s["outer_op"] == "aten::item"]
    (only,) = [s for s in report["cross_rank"]["rank_only_syncs"] if s["outer_op"] == "aten::item"]
    assert only["ranks"] == [0] and only["not_on"] == [1] and only["rule"] == "SYN101"
    assert report["distributed"]["world_size"] == 2 and report["distributed"]["backend"] == "gloo"
    assert report["distributed"]["launcher"] == ["torchrun", "--nproc-per-node", "2", "ddp.py"]
    for r in report["ranks"]:
        assert r["status"] == "stopped" and r["exit_code"] == 0
        assert r["bare_ms_per_step"] and len(r["steps"]) == 2
        assert Path(r["report"]).is_file()


def test_the_straggler_and_what_the_others_wait(two_ranks):
    _, report, proc = two_ranks
    cross = report["cross_rank"]
    assert cross["collectives_on"] == "host" and cross["collectives_matched"] >= 2
    assert cross["straggler"]["rank"] == 1
    # rank 0 waits for rank 1's extra work, in the allreduce and the barrier
    assert cross["wait_ms_per_step"][0] > 0.5 * SLEEP_S * 1e3 > cross["wait_ms_per_step"][1]
    assert cross["skew_ms_per_step"] > 0.5 * SLEEP_S * 1e3
    assert "Ranks: 2 of 2, gloo" in proc.stdout
    assert "Straggler: rank 1" in proc.stdout
    assert "on rank 0 (not 1), 1/step" in proc.stdout


def test_the_join_matches_per_rank_sites_and_confirms_the_barrier_by_its_wait(two_ranks):
    _, report, _ = two_ranks
    confirmed = {c["lint_codes"][0]: c for c in report["join"]["confirmed"]}
    item = confirmed["SYN101"]
    assert item["ranks"] == [0]
    line = 1 + textwrap.dedent(DDP).splitlines().index("        if rank == 0:")
    assert item["findings"][0]["rank_condition"] == {"test": "rank == 0", "ranks": "0", "line": line}
    barrier = confirmed["SYN504"]
    assert barrier["ranks"] == [0, 1] and barrier["op"] == "torch.distributed.barrier"
    assert barrier["cost"]["host_wait_ms_per_step"] > 0
    (calls,) = report["ranks"][0]["blocking_calls"]
    assert calls["api"] == "barrier" and calls["function"] == "main" and calls["per_step"] == [1, 1]


def test_per_rank_traces_in_the_tensorboard_layout_with_distributed_info(two_ranks):
    import gzip

    run, _, _ = two_ranks
    for pass_name in ("light", "detail"):
        files = sorted((run / pass_name).glob("*.pt.trace.json.gz"))
        assert [f.name.split("_")[0] for f in files] == ["rank0", "rank1"]
        for rank, f in enumerate(files):
            info = json.loads(gzip.decompress(f.read_bytes()))["distributedInfo"]
            assert info["rank"] == rank and info["world_size"] == 2 and info["backend"] == "gloo"
    assert sorted(p.name for p in (run / "traces").iterdir()) == [
        "detail.rank0.trace.json.gz", "detail.rank1.trace.json.gz",
        "light.rank0.trace.json.gz", "light.rank1.trace.json.gz"]


def test_analyze_merges_the_run_folders_traces_the_same_way(two_ranks, capsys):
    run, report, _ = two_ranks
    assert main(["analyze", str(run), "--format", "json", "--no-lint"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [r["rank"] for r in again["ranks"]] == [0, 1]
    assert again["cross_rank"]["steps"] == report["cross_rank"]["steps"]
    assert again["cross_rank"]["straggler"]["rank"] == 1


def test_tensorboards_distributed_view_shows_the_ranks_waits(two_ranks):
    pytest.importorskip("torch_tb_profiler")
    import time
    import urllib.error

    from test_tensorboard import START_TIMEOUT_S, _get

    run, _, _ = two_ranks
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(run), "--host", "127.0.0.1",
                             "--port", str(port), "--reload_interval", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S * 2
        while True:
            try:
                runs = _get(base, "/runs")
                if "light" in runs.get("runs", []) and not runs.get("loading"):
                    break
            except (OSError, urllib.error.URLError):
                pass
            assert time.monotonic() < deadline, "tensorboard did not load the run"
            time.sleep(0.3)
        # the view appears only when every worker's trace holds collectives the plugin matches
        assert "Distributed" in _get(base, "/views", run="light")
        wait = _get(base, "/distributed/waittime", run="light", worker="All", span="1")["data"]["all"]
        assert sorted(k.split("_")[0] for k in wait) == ["rank0", "rank1"]
        # (its wait figures need NCCL kernels: for gloo's host collectives they are not meaningful)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_four_ranks_through_a_wrapped_torchrun_command(tmp_path):
    (tmp_path / "ddp.py").write_text(textwrap.dedent(DDP.replace(str(SLEEP_S), "0.0")))
    proc = _syncscan("profile", "--steps", "2", "--warmup", "1", "--wait", "0", "--passes", "light",
                     "--format", "json", "--logdir", "run",
                     "--", "torchrun", "--nproc-per-node", "4", "ddp.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)  # standard output holds the merged report alone
    assert [r["rank"] for r in report["ranks"]] == [0, 1, 2, 3]
    assert report["distributed"]["launcher"] == ["torchrun", "--nproc-per-node", "4", "ddp.py"]
    (only,) = [s for s in report["cross_rank"]["rank_only_syncs"] if s["outer_op"] == "aten::item"]
    assert only["ranks"] == [0] and only["not_on"] == [1, 2, 3]
    assert len(report["cross_rank"]["steps"][0]["collective_wait_ms"]) == 4


def test_two_nodes_meet_at_a_c10d_rendezvous(tmp_path):
    """Two launchers (`--nnodes 2`, one rank each) on one machine: the ranks hand their summaries
    to rank 0 through the rendezvous store, whichever node it runs on."""
    (tmp_path / "ddp.py").write_text(textwrap.dedent(DDP))
    port = _free_port()
    args = ["profile", "--nnodes", "2", "--nproc-per-node", "1", "--rdzv-backend", "c10d",
            "--rdzv-endpoint", f"localhost:{port}", "--rdzv-id", "syncscan-test", "--steps", "2", "--warmup", "1",
            "--wait", "0", "--passes", "light", "--logdir", "run", "ddp.py"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    nodes = [subprocess.Popen([sys.executable, "-m", "syncscan", *args], cwd=tmp_path, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [n.communicate(timeout=TIMEOUT_S) for n in nodes]
    assert [n.returncode for n in nodes] == [0, 0], outs[0][1][-2000:] + outs[1][1][-2000:]
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert [r["rank"] for r in report["ranks"]] == [0, 1]
    assert report["cross_rank"]["straggler"]["rank"] == 1
    assert sum("Ranks: 2 of 2" in out for out, _ in outs) == 1  # rank 0's node reports


# ------------------------------------------------------------------------------------ the parts


def test_usage_errors_are_one_line_before_launching(tmp_path, capsys):
    (tmp_path / "t.py").write_text("pass\n")
    cases = [
        (["--nproc-per-node", "2", "--compare", str(tmp_path / "t.py"), str(tmp_path / "t.py")], "--compare"),
        (["--", "torchrun", "--no-python", "ls"], "--no-python"),
        (["--nproc-per-node", "2", "--", "torchrun", "--nproc-per-node", "2", str(tmp_path / "t.py")],
         "inside the wrapped command"),
        (["--nproc-per-node", "2", str(tmp_path / "missing.py")], "no such file"),
    ]
    for args, message in cases:
        assert main(["profile", *args]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


def test_every_option_reaches_the_ranks_as_given(tmp_path):
    """Each option of `syncscan profile` but the launch ones is forwarded to the ranks, and parses
    back to the same value (an option added later is forwarded too, or this test names it)."""
    parser = build_parser("profile")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["profile"]
    given = {"--wait": "3", "--warmup": "0", "--steps": "5", "--passes": "light", "--step-on": "m.f",
             "--format": "json", "--html": "r.html", "--output": "o.json", "--light-pass": "full",
             "--drain-steps": "7"}
    flags = ["--quick", "--run-to-end", "--no-tensorboard-copy", "--no-lint", "--fail-on-sync"]
    args = parser.parse_args(["profile", *[x for kv in given.items() for x in kv], *flags, "s.py"])
    forwarded = forward_options(args)
    again = parser.parse_args(["profile", *forwarded, "s.py"])
    for dest, flag, _kind, _default in args._forwarded:
        assert getattr(again, dest) == (os.path.abspath(getattr(args, dest)) if dest in ("html", "output")
                                        else getattr(args, dest)), flag
    tested = set(given) | set(flags)
    launch = {flag for _, flag in distributed.LAUNCH_OPTIONS}
    own = {"-h", "-m", "--logdir", "--compare", "--compare-runs"}  # not forwarded: the launcher's or refused
    untested = [a.option_strings[0] for a in sub._actions if a.option_strings
                and a.option_strings[0] not in tested | launch | own]
    assert not untested, f"options not covered here: {untested}"


def test_rank_context_from_torchruns_environment():
    env = {"TORCHELASTIC_RUN_ID": "abc-123", "RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4",
           "MASTER_ADDR": "h", "MASTER_PORT": "29500", "TORCHELASTIC_USE_AGENT_STORE": "True"}
    ctx = distributed.RankContext.from_env(env)
    assert (ctx.rank, ctx.local_rank, ctx.world_size, ctx.master_port, ctx.agent_store) == (3, 1, 4, 29500, True)
    assert not ctx.primary and ctx.default_run_name("train") == "train-torchrun-abc123"
    assert distributed.RankContext.from_env({**env, "WORLD_SIZE": "1"}) is None
    assert distributed.RankContext.from_env({"RANK": "0", "WORLD_SIZE": "2"}) is None  # not torchrun's


@pytest.mark.parametrize("command,expected", [
    (["torchrun", "--nproc-per-node", "2", "t.py", "--lr", "1"], ["--nproc-per-node", "2", "t.py", "--lr", "1"]),
    (["/usr/bin/torchrun", "t.py"], ["t.py"]),
    (["python3", "-m", "torch.distributed.run", "t.py"], ["t.py"]),
])
def test_wrapped_torchrun_commands(command, expected):
    assert distributed.split_wrapped(command) == expected


def test_a_wrapped_command_that_is_not_torchrun_is_refused():
    with pytest.raises(UserError, match="only a torchrun command"):
        distributed.split_wrapped(["mpirun", "-n", "2", "t.py"])


def _exchange_roundtrip(exchange_of, world=3):
    payloads = {r: {"record": {"rank": r}, "timeline": {"x": list(range(r))}} for r in range(world)}
    threads = [threading.Thread(target=exchange_of(r).publish, args=(r, payloads[r])) for r in range(1, world)]
    for t in threads:
        t.start()
    primary = exchange_of(0)
    primary.publish(0, payloads[0])
    got = primary.collect(world, timeout_s=30)
    for t in threads:
        t.join()
    return got, payloads


def test_the_file_hand_over_waits_for_every_rank_then_times_out(tmp_path):
    got, payloads = _exchange_roundtrip(lambda r: distributed.FileExchange(tmp_path))
    assert got == payloads
    alone = distributed.FileExchange(tmp_path / "other")
    alone.publish(0, payloads[0])
    assert alone.collect(2, timeout_s=0.5) == {0: payloads[0]}  # rank 1 never came: what there is


def test_the_store_hand_over_goes_through_the_jobs_store():
    port = _free_port()
    server = dist.TCPStore("127.0.0.1", port, is_master=True, wait_for_workers=False)  # the agent's, in torchrun
    ctx = distributed.RankContext(0, 0, 3, "job", 0, "127.0.0.1", port, True)
    got, payloads = _exchange_roundtrip(lambda r: distributed.StoreExchange(ctx, tag="t"))
    assert got == payloads
    del server
