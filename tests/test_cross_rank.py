"""Several ranks' traces compared (syncscan.trace.collectives, .ranks, .cross_rank, syncscan.multirank,
`syncscan analyze DIR`) on small traces built here, where every wait is known by construction."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from test_trace_synthetic import TraceBuilder

from syncscan.cli import main
from syncscan.trace import analyze, load_trace
from syncscan.trace.collectives import from_annotation, from_kernel, in_steps, normalise
from syncscan.trace.cross_rank import cross_rank
from syncscan.trace.ranks import dist_info, find_rank_traces, timeline
from syncscan.trace.steps import windows

STEP_US = 10_000


class RankTrace(TraceBuilder):
    """A rank's trace: its distributedInfo, NCCL kernels on stream 20, gloo on host thread 2."""

    def __init__(self, rank: int, world: int = 2, backend: str = "nccl"):
        super().__init__()
        self.rank, self.world, self.backend = rank, world, backend
        self.corr = 100

    def nccl(self, ts, dur, name="ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
             args=None):
        self.corr += 1
        self._x("kernel", name, ts, dur, 0, 20, {"correlation": self.corr, "stream": 20, "device": 0,
                                                  "Collective name": "allreduce", "Process Group Name": "0",
                                                  **(args or {})})

    def gloo(self, name, ts, dur):
        self.scope(f"gloo:{name}", ts, dur, tid=2)

    def item(self, ts, blocked):
        """`.item()` on a GPU tensor: a DtoH copy into pinned memory, then the stream sync."""
        self.corr += 2
        e = self.op("aten::item", ts, blocked + 20)
        self.op("aten::_local_scalar_dense", ts + 1, blocked + 10, ext=e + 1000)
        self.call("cudaMemcpyAsync", ts + 2, 3, corr=self.corr - 1, ext=e + 1000)
        self.memcpy("DtoH (Device -> Pinned)", ts + 5, 1, corr=self.corr - 1)
        self.call("cudaStreamSynchronize", ts + 6, blocked, corr=self.corr, ext=e + 1000)

    def doc(self):  # before traceEvents, where torch writes it (the folder scan reads the header only)
        return {"distributedInfo": {"backend": self.backend, "rank": self.rank, "world_size": self.world},
                **super().doc()}


def rank0_item_run(steps: int = 3, idle: int = 1000):
    """Two ranks, `steps` steps of 10 ms. Both compute 0..3000 in each step; rank 0 reads a value
    meanwhile (`.item()`, blocked 2006..3156: the GPU drains at 3000) and launches its allreduce
    only at 3000 + `idle`; rank 1 starts its allreduce at 3000. Both end at 3500 + idle: rank 1
    waits `idle` us for rank 0, which waits for nobody."""
    r0, r1 = RankTrace(0), RankTrace(1)
    for k in range(steps):
        s = k * STEP_US
        for r in (r0, r1):
            r.step(k + 1, s, STEP_US)
            r.corr += 1
            r.kernel(s, 3000, corr=r.corr)
        r0.item(s + 2000, 1150)
        end = s + 3500 + idle
        r0.nccl(s + 3000 + idle, end - (s + 3000 + idle))
        r1.nccl(s + 3000, end - (s + 3000))
    return r0, r1


def _timeline(tmp_path, b, name):
    trace = load_trace(b.write(tmp_path / name))
    a = analyze(trace)
    return trace, a, timeline(trace, a)


# ------------------------------------------------------------------------------------ single traces


@pytest.mark.parametrize("raw,expected", [
    ("all_reduce", "allreduce"), ("AllReduce", "allreduce"), ("_allgather_base", "allgather"),
    ("all_gather_into_tensor", "allgather"), ("reduce_scatter_tensor_coalesced", "reducescatter"),
    ("allreduce_coalesced", "allreduce"), ("broadcast", "broadcast"), ("barrier", "barrier")])
def test_collective_names_are_spelled_one_way(raw, expected):
    assert normalise(raw) == expected


def test_nccl_kernels_and_gloo_annotations_are_collectives():
    assert from_kernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)", {}) == "reducescatter"
    assert from_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t(x)", {}) == "allgather"
    assert from_kernel("ncclDevKernel_Generic(x)", {"Collective name": "_allgather_base"}) == "allgather"
    assert from_kernel("volta_sgemm_128x64_nn", {}) is None
    assert from_annotation("gloo:all_reduce") == "allreduce"
    assert from_annotation("nccl:all_reduce") is None  # the host side of an NCCL call: its kernel is the collective
    assert from_annotation("ProfilerStep#3") is None


def test_collectives_are_keyed_per_step_group_and_order(tmp_path):
    b = RankTrace(0)
    b.step(1, 0, 1000)
    b.step(2, 1000, 1000)
    b.nccl(100, 10)
    b.nccl(200, 10, name="ncclDevKernel_Broadcast_RING_LL(x)", args={"Collective name": "broadcast"})
    b.nccl(300, 10)
    b.nccl(1100, 10, args={"Process Group Name": "7"})
    b.nccl(5000, 10)  # after the last step: not in any
    trace = load_trace(b.write(tmp_path / "t.json"))
    colls, left_out = in_steps(trace, windows(trace))
    assert [(c.window, c.key) for c in colls] == [
        (0, "0/allreduce#0"), (0, "0/broadcast#0"), (0, "0/allreduce#1"), (1, "7/allreduce#0")]
    assert left_out == 1
    assert dist_info(trace.meta) == {"rank": 0, "world_size": 2, "backend": "nccl"}


def test_collectives_survive_a_trace_read_in_two_halves(tmp_path):
    r0, _ = rank0_item_run(steps=6)
    path = r0.write(tmp_path / "t.json")
    one, two = load_trace(path, workers=1), load_trace(path, workers=2)
    assert [(c.name, c.start, c.end) for c in one.collectives] == [(c.name, c.start, c.end) for c in two.collectives]
    assert len(one.collectives) == 6


def test_gloo_host_collectives_when_no_gpu(tmp_path):
    b = RankTrace(1, backend="gloo")
    b.step(1, 0, 5000)
    b.gloo("all_reduce", 100, 2000)
    b.gloo("broadcast", 2500, 100)
    _, _, tl = _timeline(tmp_path, b, "t.json")
    assert tl["collectives_on"] == "host"
    assert tl["collectives"]["key"] == ["/allreduce#0", "/broadcast#0"]
    assert list(tl["collectives"]["ms"]) == [2.0, 0.1]


# ------------------------------------------------------------------------------------ across ranks


def test_a_rank_0_sync_makes_the_other_rank_wait_at_the_next_collective(tmp_path):
    r0, r1 = rank0_item_run()
    _, a0, t0 = _timeline(tmp_path, r0, "r0.json")
    _, a1, t1 = _timeline(tmp_path, r1, "r1.json")
    assert a0.report["total_syncs"] == 3 and a1.report["total_syncs"] == 0
    cr = cross_rank([(0, t0), (1, t1)], [a0.report["syncs"], a1.report["syncs"]], world_size=2)
    assert cr["collectives_on"] == "gpu" and cr["collectives_matched"] == 3
    for step in cr["steps"]:
        assert step["collective_wait_ms"] == [pytest.approx(0.0), pytest.approx(1.0)]
        assert step["straggler"] == 0   # rank 0 works 1 ms (10% of the step) longer
        assert step["skew_ms"] == pytest.approx(1.0)
    assert cr["wait_ms_per_step"] == [pytest.approx(0.0), pytest.approx(1.0)]
    assert cr["straggler"]["rank"] == 0 and cr["straggler"]["steps"] == 3
    assert cr["straggler"]["others_wait_ms_per_step"] == pytest.approx(1.0)
    (only,) = cr["rank_only_syncs"]
    assert only["ranks"] == [0] and only["not_on"] == [1] and only["measured"]
    assert only["rule"] == "SYN101" and only["per_step"] == 1
    assert only["next_collective"] == "allreduce"
    assert only["others_wait_ms_per_step"] == pytest.approx(1.0)
    assert only["own_gpu_idle_ms_per_step"] == pytest.approx(1.0)
    assert only["cost_to_others_ms_per_step"] == pytest.approx(1.0)
    assert only["job_saving_ms_per_step"] == pytest.approx(1.0)  # rank 0 sets the pace: the job gains it all


def test_the_cost_to_the_others_is_at_most_the_delay_the_sync_caused(tmp_path):
    """Rank 1 waits 1 ms, but rank 0's sync idled its GPU for 0.05 ms only: the rest of the wait
    has another cause, and the site is charged 0.05 ms."""
    r0, r1 = rank0_item_run()
    r0.events = [e for e in r0.events if e["name"] != "cudaStreamSynchronize"]
    for k in range(3):  # a sync where the GPU was already idle: it adds its own 50 us only
        s = k * STEP_US
        e = r0.op("aten::item", s + 3100, 60)
        r0.call("cudaStreamSynchronize", s + 3105, 50, corr=900 + k, ext=e)
    _, a0, t0 = _timeline(tmp_path, r0, "r0.json")
    _, a1, t1 = _timeline(tmp_path, r1, "r1.json")
    (only,) = cross_rank([(0, t0), (1, t1)], [a0.report["syncs"], a1.report["syncs"]], 2)["rank_only_syncs"]
    assert only["others_wait_ms_per_step"] == pytest.approx(1.0)
    assert only["own_gpu_idle_ms_per_step"] == pytest.approx(0.05)
    assert only["cost_to_others_ms_per_step"] == pytest.approx(0.05)
    assert only["job_saving_ms_per_step"] == pytest.approx(0.05)


@pytest.mark.parametrize("own_idle, on, waits, saving", [
    (3.45, [0], [0.0, 4.48], 3.45),    # the sync's rank sets the pace: its GPU idle, all of it (H100, NCCL)
    (4.36, [0], [20.95, 0.0], 0.0),    # it waits for a straggler anyway: nothing
    (2.0, [0], [0.0, 0.5, 3.0], 0.5),  # the next busiest rank is 0.5 ms behind: no more than that
    (1.0, [0, 1], [0.2, 0.3, 2.0], 1.0),
    (None, [0], [0.0, 1.0], None),     # nothing measured (no GPU)
])
def test_the_jobs_saving_is_the_syncs_own_delay_bounded_by_the_slack(own_idle, on, waits, saving):
    from syncscan.trace.cross_rank import _job_saving

    assert _job_saving(own_idle, on, waits) == (pytest.approx(saving) if saving is not None else None)


def test_even_ranks_have_no_straggler_and_a_missing_rank_is_said(tmp_path):
    bs = []
    for rank in range(3):
        b = RankTrace(rank, world=4, backend="gloo")
        b.step(1, 0, 5000)
        b.gloo("all_reduce", 1000, 500 + 10 * rank)  # within noise: 20 us of a 5 ms step
        bs.append((rank, _timeline(tmp_path, b, f"r{rank}.json")))
    cr = cross_rank([(r, t[2]) for r, t in bs], [t[1].report["would_sync"] for _, t in bs], world_size=4)
    assert cr["straggler"] is None and cr["steps"][0]["straggler"] is None
    assert cr["missing_ranks"] == [3]
    assert any("rank(s) 3" in n for n in cr["notes"])
    assert cr["steps"][0]["collective_wait_ms"] == [0.0, pytest.approx(0.01), pytest.approx(0.02)]


def test_a_collective_one_rank_did_not_record_is_left_out(tmp_path):
    r0, r1 = rank0_item_run(steps=1)
    r1.nccl(5000, 100, name="ncclDevKernel_Broadcast_RING_LL(x)", args={"Collective name": "broadcast"})
    _, a0, t0 = _timeline(tmp_path, r0, "r0.json")
    _, a1, t1 = _timeline(tmp_path, r1, "r1.json")
    cr = cross_rank([(0, t0), (1, t1)], [a0.report["syncs"], a1.report["syncs"]], 2)
    assert cr["collectives_unmatched"] == 1 and cr["collectives_matched"] == 1
    assert cr["steps"][0]["collective_wait_ms"] == [pytest.approx(0.0), pytest.approx(1.0)]


# ------------------------------------------------------------------------------------ analyze DIR


def _write_ranks(folder, builders):
    folder.mkdir(parents=True, exist_ok=True)
    for b in builders:
        b.write(folder / f"worker{b.rank}.123.pt.trace.json")


def test_analyze_a_folder_of_rank_traces_gives_one_report(tmp_path, capsys):
    _write_ranks(tmp_path / "run", rank0_item_run())
    assert [r for r, _ in find_rank_traces(tmp_path / "run")] == [0, 1]
    assert main(["analyze", str(tmp_path / "run"), "--format", "json", "--no-lint"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["rank"] for r in report["ranks"]] == [0, 1]
    assert report["ranks"][0]["total_syncs"] == 3 and report["ranks"][1]["total_syncs"] == 0
    assert report["ranks"][1]["steps"][0]["collective_ms"] == pytest.approx(1.5)
    # 10 ms steps; rank 0's GPU works 3.5 ms (compute, its allreduce), rank 1's 4.5 (it waits in its allreduce)
    assert report["ranks"][0]["gpu_idle_ms_per_step"] == pytest.approx(6.5)
    assert report["ranks"][1]["gpu_idle_ms_per_step"] == pytest.approx(5.5)
    assert report["ranks"][0]["gpu_idle_from_syncs_ms_per_step"] == pytest.approx(1.0)
    assert report["distributed"]["world_size"] == 2 and report["distributed"]["backend"] == "nccl"
    assert report["cross_rank"]["rank_only_syncs"][0]["ranks"] == [0]
    assert report["total_syncs"] == 3  # the top-level analysis is rank 0's
    assert main(["analyze", str(tmp_path / "run")]) == 0
    text = capsys.readouterr().out
    assert "Ranks: 2 of 2, nccl" in text
    assert "Straggler: rank 0" in text
    assert "on rank 0 (not 1), 1/step; at the next collective (allreduce) the other ranks wait 1.000 ms" in text


def test_a_folder_with_one_rank_is_analysed_as_before(tmp_path, capsys):
    r0, _ = rank0_item_run(steps=1)
    _write_ranks(tmp_path / "run", [r0])
    assert find_rank_traces(tmp_path / "run") is None
    assert main(["analyze", str(tmp_path / "run"), "--format", "json", "--no-lint"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "ranks" not in report and report["total_syncs"] == 1


def test_analyze_takes_the_timing_pass_of_a_syncscan_run_folder(tmp_path):
    r0, r1 = rank0_item_run(steps=2)
    _write_ranks(tmp_path / "run" / "detail", [r0, r1])
    _write_ranks(tmp_path / "run" / "light", rank0_item_run(steps=1))
    found = find_rank_traces(tmp_path / "run")
    assert [p.parent.name for _, p in found] == ["light", "light"]


def test_the_html_report_shows_the_ranks(tmp_path, capsys):
    _write_ranks(tmp_path / "run", rank0_item_run())
    page = tmp_path / "r.html"
    assert main(["analyze", str(tmp_path / "run"), "--no-lint", "--html", str(page)]) == 0
    capsys.readouterr()
    text = page.read_text()
    assert "<h2>Ranks: 2 of 2</h2>" in text
    assert "<b>Straggler: rank 0</b>" in text
    # rank 1's wait in each step, shaded as the longest of the table
    assert text.count('style="background: rgba(214, 39, 40, 0.75)">1.000 ms') == 3
    assert "<h3>Syncs on some ranks only</h3>" in text and "<td>0</td>" in text


def test_ranks_analysed_in_worker_processes_give_the_same_report(tmp_path, capsys):
    r0, r1 = rank0_item_run(steps=2)
    extra = []
    for rank in (2, 3):
        b = RankTrace(rank, world=4)
        b.events = [dict(e) for e in r1.events]
        extra.append(b)
    for b in (r0, r1):
        b.world = 4
    _write_ranks(tmp_path / "run", [r0, r1, *extra])
    assert main(["analyze", str(tmp_path / "run"), "--format", "json", "--no-lint", "-j", "1"]) == 0
    reports = [json.loads(capsys.readouterr().out)]
    # in a process of its own: the workers start from its main module, not pytest's (and without
    # validating each rank's report against the schema, which the run above did)
    env = {k: v for k, v in os.environ.items() if k != "SYNCSCAN_CHECK_REPORTS"}
    out = subprocess.run([sys.executable, "-m", "syncscan", "analyze", str(tmp_path / "run"), "--format", "json",
                          "--no-lint", "-j", "3"], capture_output=True, text=True, check=True, env=env).stdout
    reports.append(json.loads(out))
    assert reports[0] == reports[1]
    assert [r["rank"] for r in reports[0]["ranks"]] == [0, 1, 2, 3]
    assert reports[0]["cross_rank"]["rank_only_syncs"][0]["not_on"] == [1, 2, 3]
