"""The input pipeline of a profiled run: did the steps wait for data, which resource sets the
pace, and what would a change to the loader give. Pure functions over what
syncscan.runtime.loader_hooks observed (and, for the verdict, the timing pass's analysis).

- `drain_check`: at the end of the bare pass, were its measured steps the loader's steady
  state? A DataLoader's workers prefetch up to `workers x prefetch_factor` batches while the
  script starts up; a loop faster than its workers uses them up at first without waiting, then
  waits on every batch. When no measured step had to wait for its batch, but the steps took
  batches faster than the workers make them (or the batches ready kept falling), they came
  from that stock: the pass is lengthened by the steps it should last, plus its measured steps
  again (Session.lengthen_bare), and checked again.
- `bare_window`: what the bare pass's measured steps took from their loaders: host time in
  `next(loader)` per step, the part of it spent waiting, and what making a batch costs where
  it is made (a worker's time per batch, the share of it in the dataset's transforms and in
  collate, the pin-memory thread's copy).
- `loader_model`: those figures as the replay needs them (syncscan.trace.loader.LoaderModel).
- `input_pipeline`: the report's record: the loaders and their settings, the steady-state
  check, which resource sets the pace, and remedies with the step time each should give.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from statistics import mean
from typing import Any, Mapping, Optional, cast

from syncscan.runtime.loader_hooks import Fetch, LoaderObservations, LoaderSeen, WorkerBatch
from syncscan.schema import InputPipeline, LoaderSettings, Pace, Remedy, SteadyState, WorkerTiming
from syncscan.trace.loader import LoaderModel, loader_period

MS = 1000.0
# a fetch waited when it took this much longer than taking a ready batch (s), or half as long again
WAIT_NOISE_S = 0.0002
# the batches ready fell by at least this many over the measured steps: the queue is draining
# (one batch more or less is a batch in flight)
DRAIN_DROP = 2.0
# steps taking batches at least this close to the workers' pace (as a share of it) keep up with them
CAUGHT_UP = 0.8
# loading in the main process (num_workers=0) taking at least this share of the step: the input
# pipeline sets the pace even though nothing waits
MAIN_LOAD_SHARE = 0.5
# a dataset transform that takes at least this share of a batch is worth moving to the GPU
TRANSFORM_SHARE = 0.25
# the most workers suggested, per CPU core (workers that wait on storage may outnumber the cores)
MAX_WORKERS_PER_CPU = 4
# waiting this share of the step while the workers keep up on average: bursts a deeper queue evens out
JITTER_SHARE = 0.02
DIGITS = 4


@dataclass(frozen=True)
class DrainCheck:
    """The verdict on one window of bare steps."""

    status: str  # "steady" | "draining" | "not checked"
    extra_steps: int
    reason: str


@dataclass(frozen=True)
class BareWindow:
    """What the bare pass's measured steps took from their loaders (seconds, per step)."""

    steps: int
    fetches: int
    fetch_s: float
    wait_s: float
    load_s: float  # single-process loaders: loading in the main thread
    waits: list[float]  # per step
    receive_s: Optional[float]
    main: Optional[LoaderSeen]
    batches: list[WorkerBatch]  # made for the main loader during the window (else in the run)
    batches_in_window: bool
    busy_share: Optional[float]
    pin_s: Optional[float]
    loaders: list[LoaderSeen]  # every loader seen in the run
    cpus: int
    traced_waits: Optional[list[float]] = None  # the main loader's fetches in the traced steps: waits (s)


def _receive(fetches: list[Fetch]) -> Optional[float]:
    """Taking a batch that is ready: the 10th-percentile fetch (the fastest ones did not wait)."""
    d = sorted(f.end - f.start for f in fetches)
    return d[len(d) // 10] if d else None


def _in_window(lo: LoaderSeen, first: int, end: int) -> list[Fetch]:
    return [f for f in lo.fetches if first <= f.step < end and f.main_thread]


def main_loader(obs: LoaderObservations, first: int, end: int) -> Optional[LoaderSeen]:
    """The loader the steps take most batches from in steps [first, end)."""
    best, most = None, 0
    for lo in obs.loaders:
        n = len(_in_window(lo, first, end))
        if n > most:
            best, most = lo, n
    return best


def _made(obs: LoaderObservations, lo: LoaderSeen) -> list[WorkerBatch]:
    out = [b for pid in lo.pids for b in obs.worker_batches.get(pid, [])]
    out.sort(key=lambda b: b.end)
    return out


class _Queue:
    """The batches of one worker-fed loader that were ready to take at a given time: made by its
    workers (their logs) and not yet taken by the script. Counts are whole when the loader was
    watched from its first batch; otherwise only their changes mean something."""

    def __init__(self, obs: LoaderObservations, lo: LoaderSeen):
        self.made = [b.end for b in _made(obs, lo)]
        self.taken = sorted(f.end for f in lo.fetches)
        self.timed = bool(self.made) and lo.workers > 0
        self.whole = self.timed and lo.seen_from_start
        # taking a ready batch: what the fetches that found one took (else the quick ones)
        ready = [f.end - f.start for f in lo.fetches if self.whole and self.ready(f.start) > 0]
        self.ready_receive = sorted(ready)[len(ready) // 2] if ready else None
        self.receive = self.ready_receive if self.ready_receive is not None else _receive(lo.fetches)

    def ready(self, t: float) -> int:
        """Made and not yet taken at t: queued, being pinned, or held for in-order delivery."""
        return bisect_right(self.made, t) - bisect_right(self.taken, t)

    def wait(self, f: Fetch) -> float:
        """What the fetch waited for data: nothing when a batch was ready (its time is taking
        it); else its time beyond taking a ready one, or, when no fetch found one ready, until the
        workers' next batch was made. Without the workers' logs: its time beyond the quick
        fetches', above noise."""
        dur = f.end - f.start
        if self.whole:
            if self.ready(f.start) > 0:
                return 0.0
            if self.ready_receive is not None:
                return max(0.0, dur - self.ready_receive)
            i = bisect_right(self.made, f.start)
            return min(dur, self.made[i] - f.start) if i < len(self.made) else dur
        over = max(0.0, dur - (self.receive or 0.0))
        return over if over > max(WAIT_NOISE_S, 0.5 * (self.receive or 0.0)) else 0.0


def drain_check(obs: LoaderObservations, first: int, end: int, steps: int) -> DrainCheck:
    """See the module docstring. `first`, `end`: the measured steps [first, end)."""
    lo = main_loader(obs, first, end)
    if lo is None:
        return DrainCheck("steady", 0, "the measured steps took no batch from a DataLoader")
    if lo.workers == 0:
        return DrainCheck("steady", 0, "batches are loaded in the main process (num_workers=0): none prefetched")
    fetches = _in_window(lo, first, end)
    q = _Queue(obs, lo)
    dry = sum(q.wait(f) > 0 for f in fetches)
    if dry:
        return DrainCheck("steady", 0, f"{dry} of the {len(fetches)} batches taken in the measured steps had to be "
                                       "waited for: nothing prefetched was left")
    if not q.timed or len(fetches) < 2:
        return DrainCheck("not checked", 0, "the workers' batches were not timed, and no batch was waited for")
    ready_at = [q.ready(f.start) for f in fetches]
    made = _made(obs, lo)
    # taking batches faster than the workers make them, without waiting: they come from stock
    period = (fetches[-1].start - fetches[0].start) / (len(fetches) - 1)
    capacity = mean(b.end - b.start for b in made[-2 * lo.workers:]) / lo.workers
    deficit = 1.0 - period / capacity if capacity > 0 else 0.0  # batches of stock used per step
    drop = (ready_at[0] - ready_at[-1]) / (len(ready_at) - 1)
    if deficit < 1.0 - CAUGHT_UP and drop * (len(ready_at) - 1) < DRAIN_DROP:
        return DrainCheck("steady", 0, f"none of the batches was waited for, and the workers keep up: one batch "
                                       f"every {capacity * MS:.1f} ms, one step every {period * MS:.1f} ms")
    rate = max(deficit, drop)
    left = math.ceil(max(ready_at[-1], 1) / rate) if q.whole and rate > 0 else steps
    return DrainCheck("draining", left + steps,
                      f"no batch was waited for, but the steps took one every {period * MS:.1f} ms while the workers "
                      f"make one every {capacity * MS:.1f} ms: they came from what was prefetched "
                      f"({ready_at[0]} ready at first, {ready_at[-1]} at the end), which should last about {left} "
                      "more steps")


def bare_window(obs: LoaderObservations, first: int, end: int, span: Optional[tuple[float, float]],
                traced: Optional[tuple[int, int]] = None) -> BareWindow:
    """The bare pass's measured steps [first, end); `span`: their host-clock start and end;
    `traced`: the timing pass's measured steps, whose fetches' waits the replay needs."""
    n = max(1, end - first)
    waits = [0.0] * n
    fetch = load = 0.0
    count = 0
    receive_main = None
    lo = main_loader(obs, first, end)
    for loader in obs.loaders:
        fs = _in_window(loader, first, end)
        q = _Queue(obs, loader)
        if loader is lo:
            receive_main = q.receive
        for f in fs:
            count += 1
            fetch += f.end - f.start
            if loader.workers == 0:
                load += f.end - f.start
            else:
                waits[f.step - first] += q.wait(f)
    batches: list[WorkerBatch] = []
    in_window = False
    busy = pin = None
    if lo is not None:
        every = obs.main_batches if lo.workers == 0 else _made(obs, lo)
        if span is not None:
            batches = [b for b in every if span[0] <= b.end <= span[1]]
        in_window = len(batches) >= 2
        if not in_window:
            batches = every
        if span is not None and lo.workers > 0 and span[1] > span[0] and every:
            work = sum(max(0.0, min(b.end, span[1]) - max(b.start, span[0])) for b in every)
            busy = work / (lo.workers * (span[1] - span[0]))
        pins = [e - s for s, e in obs.pin_copies if span is None or span[0] <= e <= span[1]] or \
            [e - s for s, e in obs.pin_copies]
        pin = mean(pins) if pins and lo.pin_memory else None
    traced_waits = None
    if lo is not None and lo.workers > 0 and traced is not None:
        q = _Queue(obs, lo)
        traced_waits = [q.wait(f) for f in _in_window(lo, *traced)]
    return BareWindow(n, count, fetch / n, sum(waits) / n, load / n, waits, receive_main, lo, batches, in_window,
                      busy, pin, list(obs.loaders), obs.cpus, traced_waits)


def _capacity_s(bw: BareWindow) -> Optional[float]:
    """The fastest the main loader delivers batches (see _remedies for the model), or its pin-memory
    thread, if that is slower."""
    lo = bw.main
    if lo is None or lo.workers == 0 or not bw.batches:
        return None
    cores = max(1, bw.cpus - 1)
    batch = mean(b.end - b.start for b in bw.batches)
    cpu = min(mean(b.cpu for b in bw.batches), batch)
    wall = max(cpu, batch - cpu * max(0.0, lo.workers / cores - 1.0))
    return max(_period(wall, cpu, lo.workers, cores), bw.pin_s or 0.0)


def loader_model(bw: Optional[BareWindow]) -> Optional[LoaderModel]:
    """The bare pass's loader figures for the replay (None: the steps took no batch)."""
    if bw is None or bw.main is None:
        return None
    cap = _capacity_s(bw)
    traced = tuple(w * MS for w in bw.traced_waits) if bw.traced_waits is not None else None
    return LoaderModel(wait_ms=bw.wait_s * MS, capacity_ms=None if cap is None else cap * MS, source="bare pass",
                       trace_waits_ms=traced)


# ------------------------------------------------------------------------------------------ report

def _r(x: Optional[float], digits: int = DIGITS) -> Optional[float]:
    return None if x is None else round(x, digits)


def _settings(lo: LoaderSeen) -> LoaderSettings:
    first = lo.fetches[0] if lo.seen_from_start and lo.fetches else None
    return {"kind": cast(Any, lo.kind), "workers": lo.workers, "prefetch_factor": lo.prefetch_factor,
            "pin_memory": lo.pin_memory, "persistent_workers": lo.persistent_workers,
            "batch_size": lo.batch_size, "batches_per_epoch": lo.batches_per_epoch, "dataset": lo.dataset,
            "transform": lo.transform, "batches_taken": len(lo.fetches),
            "first_batch_ms": _r((first.end - first.start) * MS) if first else None}


def _worker_timing(bw: BareWindow, cpus: int) -> Optional[WorkerTiming]:
    lo = bw.main
    if lo is None or not bw.batches:
        return None
    batch = mean(b.end - b.start for b in bw.batches)
    has_transform = lo.transform is not None or any(b.transform for b in bw.batches)
    cap = _capacity_s(bw)
    return {"where": "workers" if lo.workers else "main process", "batches": len(bw.batches),
            "batch_ms": round(batch * MS, DIGITS),
            "transform_ms": _r(mean(b.transform for b in bw.batches) * MS) if has_transform else None,
            "collate_ms": round(mean(b.collate for b in bw.batches) * MS, DIGITS),
            "busy_share": _r(bw.busy_share, 3), "capacity_ms": round((cap if cap is not None else batch) * MS, DIGITS),
            "pin_ms": _r(bw.pin_s * MS) if bw.pin_s is not None else None, "cpus": cpus}


def _steady(checks: list, plan) -> SteadyState:
    drained = plan.drain if plan is not None else 0
    limit = plan.drain_limit if plan is not None else 0
    if not checks:
        return {"status": "not checked", "drain_steps": drained, "limit": limit,
                "reason": "the bare pass did not complete its measured steps"}
    last: DrainCheck = checks[-1]
    if last.status == "draining":
        status = "not reached"
        reason = (f"{last.reason}; the bare pass was lengthened by {drained} steps, the most --drain-steps allows: "
                  "its step time is what the prefetched batches allow, faster than the steady state")
    elif drained:
        status = "drained"
        reason = f"lengthened by {drained} steps until the prefetched batches were used up; then {last.reason}"
    else:
        status, reason = last.status, last.reason
    return {"status": cast(Any, status), "drain_steps": drained, "limit": limit, "reason": reason}


def _mean_gpu_ms(analysis: Mapping[str, Any]) -> Optional[float]:
    busy = [s.get("gpu_busy_ms") for s in analysis.get("steps") or [] if s.get("gpu_busy_ms") is not None]
    return mean(busy) if busy and analysis.get("gpu_activity") else None


def _workers_for(per_batch_one: float, target: float, most: int) -> int:
    return min(most, max(1, math.ceil(per_batch_one / target - 1e-9))) if target > 0 else most


def _period(wall: float, cpu: float, workers: int, cores: int) -> float:
    """One batch every ... from `workers` workers that each take `wall` per batch, `cpu` of it
    computing: together they use at most `cores` cores."""
    return max(wall / max(workers, 1), cpu / cores)


def _remedies(bw: BareWindow, step: float, compute: float, bound: bool, period: Optional[float],
              cpus: int, replay: Mapping[str, Any]) -> list[Remedy]:
    """Each change with the step time it should give (seconds in, ms out). `compute`: what host
    and GPU need per step with data at hand; `period`: the loader's, as the prediction uses it.

    The workers' model: one batch takes `wall` seconds, `cpu` of them computing (the rest waits
    on storage); `workers` of them deliver one every max(wall / workers, cpu / cores), the cores
    being those beside the main process. Measured with more workers than cores, `wall` holds
    their wait for a core, which more workers would not remove: it is taken out first."""
    lo = bw.main
    out: list[Remedy] = []
    if lo is None:
        return out
    cores = max(1, cpus - 1)  # the main process keeps one
    most = MAX_WORKERS_PER_CPU * cpus  # workers waiting on storage outnumber the cores, within reason
    batch = mean(b.end - b.start for b in bw.batches) if bw.batches else None
    cpu = min(mean(b.cpu for b in bw.batches), batch) if batch is not None else 0.0
    transform = mean(b.transform for b in bw.batches) if bw.batches else 0.0
    pin = bw.pin_s or 0.0

    def remedy(kind: str, change: str, new_step: Optional[float], basis: str) -> None:
        out.append({"remedy": cast(Any, kind), "change": change,
                    "step_ms": _r(new_step * MS) if new_step is not None else None,
                    "saving_ms": _r((step - new_step) * MS) if new_step is not None else None, "basis": basis})

    if lo.workers > 0 and batch is not None:
        wall = max(cpu, batch - cpu * max(0.0, lo.workers / cores - 1.0))  # without the wait for a core
        capacity = _period(wall, cpu, lo.workers, cores)
        if bound or capacity > compute:
            floor = cpu / cores  # all the cores computing batches
            workers = _workers_for(wall, max(compute, floor), most)
            new = max(compute, _period(wall, cpu, workers, cores), pin)
            how = (f"one worker takes {wall * MS:.1f} ms per batch ({cpu * MS:.1f} ms of CPU): {workers} deliver "
                   f"one every {_period(wall, cpu, workers, cores) * MS:.1f} ms, against the {compute * MS:.1f} ms "
                   "host and GPU need per step")
            if floor > compute:
                how += (f"; {cores} CPU cores beside the main process make no more than one every "
                        f"{floor * MS:.1f} ms")
            elif workers == most and _period(wall, cpu, workers, cores) > compute:
                how += f"; more than {MAX_WORKERS_PER_CPU} workers per CPU core are not suggested"
            if workers > lo.workers:
                remedy("num_workers", f"num_workers={workers}", new, how)
            else:
                remedy("num_workers", f"num_workers={lo.workers} is as many as help", None, how)
        # a deeper queue evens out bursts; it does not make the workers faster
        if bound:
            remedy("prefetch_factor", f"prefetch_factor={lo.prefetch_factor} (raising it does not help)", step,
                   f"the workers make one batch every {capacity * MS:.1f} ms on average, slower than the "
                   f"{compute * MS:.1f} ms the step needs: a deeper queue only evens out bursts")
        elif bw.wait_s >= JITTER_SHARE * step:
            remedy("prefetch_factor", f"prefetch_factor={2 * (lo.prefetch_factor or 2)}", step - bw.wait_s,
                   f"the workers keep up on average (one batch every {capacity * MS:.1f} ms) but the step still "
                   f"waits {bw.wait_s * MS:.2f} ms: batches come in bursts, and more of them queued absorbs the gaps")
        if not lo.persistent_workers:
            first = lo.fetches[0] if lo.seen_from_start and lo.fetches else None
            cost = first.end - first.start if first else None
            per_epoch = lo.batches_per_epoch
            if cost is not None:
                per_step = cost / per_epoch if per_epoch else None
                remedy("persistent_workers", "persistent_workers=True",
                       step - per_step if per_step is not None else None,
                       f"each epoch starts {lo.workers} workers again: the first batch took {cost * MS:.0f} ms here"
                       + (f", once per {per_epoch} steps" if per_epoch else ""))
        if transform >= TRANSFORM_SHARE * batch:
            loads = _period(wall - transform, max(0.0, cpu - transform), lo.workers, cores)
            remedy("gpu_augmentation", "augment whole batches on the GPU, on a stream of their own",
                   max(compute, loads, pin),
                   f"the workers spend {transform * MS:.1f} of their {batch * MS:.1f} ms per batch in "
                   f"{lo.transform or 'the dataset transform'}: without it they deliver a batch every "
                   f"{loads * MS:.1f} ms" + GPU_AUGMENT_COST)
    elif lo.workers == 0 and bw.load_s >= JITTER_SHARE * step:
        # loading leaves the main process: what stays is taking a ready batch, and the workers' pace
        load = batch if batch is not None else bw.load_s
        cpu = cpu if batch is not None else load
        workers = _workers_for(load, max(compute, cpu / cores), most)
        new = max(compute, _period(load, cpu, workers, cores), pin)
        remedy("num_workers", f"num_workers={workers}", new,
               f"the main process spends {bw.load_s * MS:.1f} ms of each step loading data; {workers} worker"
               f"{'s' if workers != 1 else ''} would load one batch every "
               f"{_period(load, cpu, workers, cores) * MS:.1f} ms beside it, against the {compute * MS:.1f} ms host "
               "and GPU need per step")
        if batch is not None and transform >= TRANSFORM_SHARE * batch:
            remedy("gpu_augmentation", "augment whole batches on the GPU, on a stream of their own",
                   max(step - transform * bw.fetches / bw.steps, compute),
                   f"the main process spends {transform * MS:.1f} ms per batch in "
                   f"{lo.transform or 'the dataset transform'}" + GPU_AUGMENT_COST)
    if not lo.pin_memory and replay.get("saving_pin_memory_ms") is not None:
        saving = replay["saving_pin_memory_ms"] / MS
        remedy("pin_memory", "pin_memory=True, then .to(device, non_blocking=True)", step - saving,
               "the batches are copied from pageable memory, which blocks the host; pinned, the copy runs "
               "beside the GPU's work (replayed" + (", bounded by the loader)" if period is not None else ")"))
    return out


# the GPU augmentation's own cost is not known before it runs
GPU_AUGMENT_COST = ("; plus the augmentation's own GPU time, hidden on its own stream (not known before it runs: "
                    "about 1 ms per batch of 32 images on an H100 in fixtures/augment_gpu.py)")


def input_pipeline(bw: Optional[BareWindow], checks: list, plan, step_ms: Optional[float],
                   analysis: Mapping[str, Any]) -> Optional[InputPipeline]:
    """The report's `input_pipeline` record; None when the steps took no batch from a DataLoader.
    `step_ms`: the bare pass's; `analysis`: the timing pass's (its replay, steps, data_loading)."""
    if bw is None or bw.main is None:
        return None
    loaders = [_settings(lo) for lo in bw.loaders]
    replay: Mapping[str, Any] = analysis.get("replay") or {}
    notes: list[str] = []
    step = (step_ms / MS) if step_ms else None
    pace: Optional[Pace] = None
    remedies: list[Remedy] = []
    if step is None:
        trace_step = ((analysis.get("data_loading") or {}).get("loader") or {}).get("step_ms")
        step = trace_step / MS if trace_step else None
        notes.append("no bare pass: the step time is the trace's, slowed by the profiler")
    if step:
        if replay.get("compute_ms") is not None:
            compute = replay["compute_ms"] / MS
            bound, period_ms = bool(replay.get("input_bound")), replay.get("loader_period_ms")
            period = period_ms / MS if period_ms is not None else None
        else:
            compute = max(0.0, step - bw.wait_s)
            cap = _capacity_s(bw)
            bound, period_ms = loader_period(step * MS, compute * MS, None if cap is None else cap * MS)
            period = period_ms / MS if period_ms is not None else None
        compute = max(0.0, compute - bw.load_s)  # loading in the main process is no compute either
        main_load = bw.load_s >= MAIN_LOAD_SHARE * step
        gpu = _mean_gpu_ms(analysis)
        resource = ("input pipeline" if bound or main_load else
                    "GPU" if analysis.get("gpu_bound") else "host")
        bound_ms = None if period is None else max(0.0, compute - period) * MS
        pace = {"resource": cast(Any, resource), "step_ms": round(step * MS, DIGITS),
                "wait_ms": round(bw.wait_s * MS, DIGITS), "load_ms": round(bw.load_s * MS, DIGITS),
                "compute_ms": round(compute * MS, DIGITS), "gpu_ms": _r(gpu),
                "loader_period_ms": _r(period * MS) if period is not None else None,
                "saving_bound_ms": _r(bound_ms)}
        remedies = _remedies(bw, step, compute, bound or main_load, period, bw.cpus, replay)
    if bw.main.workers and not bw.batches:
        notes.append("the workers' batches were not timed (workers started before syncscan watched them, or "
                     "another start method): no per-batch cost, no remedy with a figure")
    elif bw.batches and not bw.batches_in_window:
        notes.append("fewer than two batches were made during the bare pass's measured steps: the per-batch "
                     "figures cover the whole run")
    if not bw.main.seen_from_start:
        notes.append("the loader was already running when syncscan started watching it")
    return {
        "loaders": loaders, "main": next(i for i, lo in enumerate(bw.loaders) if lo is bw.main),
        "fetches_per_step": round(bw.fetches / bw.steps, 3),
        "fetch_ms_per_step": round(bw.fetch_s * MS, DIGITS), "wait_ms_per_step": round(bw.wait_s * MS, DIGITS),
        "receive_ms": _r(bw.receive_s * MS) if bw.receive_s is not None else None,
        "wait_ms": [round(w * MS, DIGITS) for w in bw.waits],
        "workers": _worker_timing(bw, bw.cpus), "steady_state": _steady(checks, plan), "pace": pace,
        "remedies": remedies, "notes": notes,
    }
