"""The input pipeline's pure functions (syncscan.runtime.input_pipeline) on observations built
here, where every number is known by construction: the steady-state check of the bare pass,
what the steps waited for, which resource sets the pace, and the remedies' figures. Also the
lint rule's verdict on the fixtures."""

from __future__ import annotations

import pytest

from syncscan.runtime.input_pipeline import bare_window, drain_check, input_pipeline, loader_model
from syncscan.runtime.loader_hooks import Fetch, LoaderObservations, LoaderSeen, WorkerBatch
from syncscan.trace.loader import loader_period

PIDS = (11, 12)


def loader(fetches, workers=2, prefetch=2, seen=True, pin=False, persistent=False, per_epoch=100,
           transform="Compose") -> LoaderSeen:
    return LoaderSeen(index=0, kind="multiprocess" if workers else "single process", workers=workers,
                      prefetch_factor=prefetch if workers else None, pin_memory=pin, persistent_workers=persistent,
                      batch_size=4, batches_per_epoch=per_epoch, dataset="Images", transform=transform,
                      pids=PIDS[:workers], seen_from_start=seen, fetches=fetches)


def observed(lo: LoaderSeen, batches: dict, main=(), cpus=8) -> LoaderObservations:
    return LoaderObservations(loaders=[lo], worker_batches=batches, main_batches=list(main), pin_copies=[],
                              cpus=cpus, worker_timing=True)


def batch(start, end, transform=0.0, collate=0.001, cpu=0.0):
    return WorkerBatch(start, end, transform, collate, 4, cpu)


# --------------------------------------------------------------------------- the steady-state check

def draining():
    """Eight batches made by t=1.6 while the script started up (two workers, 0.4 s a batch, then
    idle: the queue is full); then the script takes one every 0.05 s from t=2.0, without waiting:
    at its steps 2..5 there are 6, 5, 4, 3 batches ready."""
    made = {11: [batch(0.4 * i, 0.4 * (i + 1)) for i in range(4)],
            12: [batch(0.4 * i, 0.4 * (i + 1)) for i in range(4)]}
    fetches = [Fetch(0, 0.40, 0.401, True), Fetch(1, 1.9, 1.901, True)]
    fetches += [Fetch(k, 2.0 + 0.05 * (k - 2), 2.001 + 0.05 * (k - 2), True) for k in range(2, 6)]
    return observed(loader(fetches), made)


def test_a_queue_still_draining_asks_for_more_steps():
    check = drain_check(draining(), 2, 6, 4)
    assert check.status == "draining"
    # a step every 0.05 s against a batch every 0.2 s: 0.75 batch of stock used per step, but the
    # ready count fell by 1 a step: 3 left -> 3 more steps, then the 4 measured again
    assert check.extra_steps == 3 + 4
    assert "6 ready at first, 3 at the end" in check.reason


def test_a_step_that_waited_means_nothing_prefetched_is_left():
    """The same start, but the queue ran dry at step 4: its fetch began before any batch was
    ready and took 0.15 s."""
    obs = draining()
    lo = obs.loaders[0]
    lo.fetches[4] = Fetch(4, 2.1, 2.25, True)
    obs.worker_batches = {11: [batch(0.0, 0.4), batch(2.0, 2.24)], 12: [batch(0.0, 0.4)]}
    lo.fetches[:] = [Fetch(0, 0.40, 0.401, True), Fetch(1, 1.9, 1.901, True), Fetch(2, 2.0, 2.001, True),
                     Fetch(3, 2.05, 2.051, True), Fetch(4, 2.1, 2.25, True), Fetch(5, 2.3, 2.301, True)]
    check = drain_check(obs, 2, 6, 4)
    assert check.status == "steady" and check.extra_steps == 0
    assert "had to be waited for" in check.reason


def test_workers_that_keep_up_are_steady():
    """Four workers at 0.16 s a batch (one every 0.04 s) and a step every 0.05 s: the queue stays
    full, nothing waits."""
    made = {p: [batch(0.16 * i, 0.16 * (i + 1)) for i in range(20)] for p in (11, 12, 13, 14)}
    lo = loader([Fetch(k, 0.5 + 0.05 * k, 0.501 + 0.05 * k, True) for k in range(8)], workers=4)
    lo.pids = (11, 12, 13, 14)
    check = drain_check(observed(lo, made), 2, 6, 4)
    assert check.status == "steady" and "keep up" in check.reason


def test_without_the_workers_logs_and_no_wait_it_cannot_tell():
    obs = draining()
    obs.worker_batches = {}
    assert drain_check(obs, 2, 6, 4).status == "not checked"


def test_loading_in_the_main_process_has_nothing_to_drain():
    lo = loader([Fetch(k, k * 0.1, k * 0.1 + 0.05, True) for k in range(6)], workers=0)
    check = drain_check(observed(lo, {}), 2, 6, 4)
    assert check.status == "steady" and "num_workers=0" in check.reason


# --------------------------------------------------------------------------- the bare window and the verdict

def loader_bound(cpu=0.4, **kw):
    """One worker, 0.4 s a batch (0.3 s of it in the dataset's transform, all of it computing); the
    script needs 0.05 s a step with data at hand, so each of its steps waits for the next batch.
    Steps 2..5 run from t=1.0 to t=2.6 (0.4 s each: 0.35 s waiting, 0.05 s computing)."""
    made = {11: [batch(0.4 * i, 0.4 * (i + 1), transform=0.3, cpu=cpu) for i in range(10)]}
    fetches = [Fetch(k, 0.4 * k + 0.05, 0.4 * (k + 1), True) for k in range(8)]
    lo = loader(fetches, workers=1, **kw)
    return observed(lo, made, cpus=8)


def test_waits_are_what_the_fetch_spent_before_a_batch_was_made():
    bw = bare_window(loader_bound(), 2, 6, (1.0, 2.6))
    assert bw.wait_s == pytest.approx(0.35)       # each fetch starts 0.35 s before its batch is made
    assert bw.waits == pytest.approx([0.35] * 4)
    assert bw.fetch_s == pytest.approx(0.35)
    assert len(bw.batches) == 4 and bw.batches_in_window  # made between t=1.0 and t=2.6 (ends at 1.2..2.4)
    assert bw.busy_share == pytest.approx(1.0)
    model = loader_model(bw)
    assert model.wait_ms == pytest.approx(350) and model.capacity_ms == pytest.approx(400)


def test_the_loader_sets_the_pace_and_the_remedies_say_by_how_much():
    bw = bare_window(loader_bound(), 2, 6, (1.0, 2.6))
    rec = input_pipeline(bw, [], None, 400.0, {"gpu_activity": False, "steps": []})
    pace = rec["pace"]
    assert pace["resource"] == "input pipeline"
    assert pace["wait_ms"] == pytest.approx(350) and pace["compute_ms"] == pytest.approx(50)
    assert pace["loader_period_ms"] == pytest.approx(400)
    assert pace["saving_bound_ms"] == 0.0  # no host or GPU saving shows while the loader sets the pace
    remedies = {r["remedy"]: r for r in rec["remedies"]}
    # 0.4 s of CPU a batch against 0.05 s of compute: 8 workers would do, but 8 CPUs leave 7 beside
    # the main process, which make one batch every 0.4 / 7 s at best
    workers = remedies["num_workers"]
    assert workers["change"] == "num_workers=7"
    assert workers["step_ms"] == pytest.approx(400 / 7) and workers["saving_ms"] == pytest.approx(400 - 400 / 7)
    assert "7 CPU cores beside the main process make no more than one every 57.1 ms" in workers["basis"]
    assert remedies["prefetch_factor"]["saving_ms"] == 0.0  # a deeper queue does not make the worker faster
    # without its 0.3 s transform a batch takes 0.1 s: 1 worker delivers one every 0.1 s
    gpu = remedies["gpu_augmentation"]
    assert gpu["step_ms"] == pytest.approx(100) and gpu["saving_ms"] == pytest.approx(300)
    # not persistent: the first batch (0.35 s) again every 100 steps
    persistent = remedies["persistent_workers"]
    assert persistent["saving_ms"] == pytest.approx(3.5)
    assert rec["workers"]["transform_ms"] == pytest.approx(300)
    assert rec["workers"]["capacity_ms"] == pytest.approx(400)
    assert rec["loaders"][0]["first_batch_ms"] == pytest.approx(350)


def test_workers_that_wait_on_storage_are_not_bounded_by_the_cores():
    """The same batches, but the worker computes none of its 0.4 s (it reads): 8 workers deliver
    one every 0.05 s whatever the cores."""
    bw = bare_window(loader_bound(cpu=0.0), 2, 6, (1.0, 2.6))
    rec = input_pipeline(bw, [], None, 400.0, {"gpu_activity": False, "steps": []})
    workers = {r["remedy"]: r for r in rec["remedies"]}["num_workers"]
    assert workers["change"] == "num_workers=8" and workers["step_ms"] == pytest.approx(50)


def test_a_persistent_loader_with_capacity_to_spare_is_not_the_pace():
    """Four workers at 0.16 s a batch keep a 0.05 s step fed: the host sets the pace, and only a
    saving below the loader's capacity (0.04 s a batch) would be absorbed."""
    made = {p: [batch(0.16 * i, 0.16 * (i + 1)) for i in range(20)] for p in (11, 12, 13, 14)}
    lo = loader([Fetch(k, 0.5 + 0.05 * k, 0.501 + 0.05 * k, True) for k in range(8)], workers=4, persistent=True)
    lo.pids = (11, 12, 13, 14)
    bw = bare_window(observed(lo, made), 2, 6, (0.6, 0.8))
    rec = input_pipeline(bw, [], None, 50.0, {"gpu_activity": False, "steps": []})
    assert rec["pace"]["resource"] == "host"
    assert rec["pace"]["loader_period_ms"] == pytest.approx(40)
    assert rec["pace"]["saving_bound_ms"] == pytest.approx(10)
    assert not [r for r in rec["remedies"] if r["remedy"] in ("num_workers", "persistent_workers")]


def test_loading_in_the_main_process():
    """num_workers=0: the step loads its own batch (0.3 s, 0.2 s of it in the transform) and
    computes for 0.1 s."""
    fetches = [Fetch(k, 0.4 * k, 0.4 * k + 0.3, True) for k in range(8)]
    main = [batch(0.4 * k, 0.4 * k + 0.3, transform=0.2) for k in range(8)]
    lo = loader(fetches, workers=0)
    bw = bare_window(observed(lo, {}, main=main, cpus=4), 2, 6, (0.8, 2.4))
    rec = input_pipeline(bw, [], None, 400.0, {"gpu_activity": False, "steps": []})
    assert rec["pace"]["resource"] == "input pipeline" and rec["pace"]["load_ms"] == pytest.approx(300)
    assert rec["workers"]["where"] == "main process"
    gpu = {r["remedy"]: r for r in rec["remedies"]}["gpu_augmentation"]
    assert gpu["step_ms"] == pytest.approx(200)


@pytest.mark.parametrize("step, compute, capacity, expected", [
    (100.0, 60.0, None, (True, 100.0)),     # waits 40% of the step: the loader sets the pace
    (100.0, 95.0, 80.0, (False, 80.0)),     # waits 5%: its capacity only bounds a saving
    (100.0, 60.0, 30.0, (False, 30.0)),     # waits, but the workers are twice as fast: bursts
    (100.0, None, None, (False, None)),
])
def test_loader_period(step, compute, capacity, expected):
    assert loader_period(step, compute, capacity) == expected


# --------------------------------------------------------------------------- the lint rule on the fixtures

def test_syn601_flags_cpu_augmentation_in_the_fixture_and_not_the_gpu_ones():
    from conftest import FIXTURES

    from syncscan.lint.config import Config
    from syncscan.lint.runner import lint_paths

    paths = [str(FIXTURES / n) for n in ("augment_cpu.py", "augment_gpu.py", "augment_gpu_stream.py")]
    findings = [f for f in lint_paths(paths, Config(), use_cache=False, jobs=1).findings if f.code == "SYN601"]
    assert {(f.path.rsplit("/", 1)[-1], f.context) for f in findings} == {("augment_cpu.py", "hot")}
    assert sorted(f.message.split("`")[1].split("(")[0] for f in findings) == ["T.GaussianBlur", "T.RandomRotation"]
