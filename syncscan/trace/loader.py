"""The input pipeline as a trace shows it: batches taken from DataLoaders, copies to the GPU.

Pure functions of a loaded trace and its step windows:

- `data_loading(trace, wins, events, unions)`: the report's `data_loading` record: per step, the
  host time in the DataLoader's `__next__` (torch's `enumerate(DataLoader)#...__next__` scope):
  taking a batch that is ready (`receive`, the fastest fetch) and waiting for one that is not
  (the rest); and the host-to-device copies: how many, how long, pinned or pageable, how many
  the host waited for (pageable, or without `non_blocking`), on which stream, and how much of
  their time kernels ran beside them.
- `LoaderModel`, `fetch_spans`, `loader_period`: what the replay (syncscan.trace.estimate) needs
  to put the input pipeline in its model. A step cannot go faster than the loader delivers
  batches: when it waits for data, a saving in host or GPU time only makes it wait longer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from syncscan.schema import DataLoading, HostToDevice, LoaderTrace
from syncscan.trace.model import KERNEL, Trace
from syncscan.trace.steps import StepWindow, WindowIndex
from syncscan.trace.syncs import HostSync, copy_kind
from syncscan.units import US_PER_MS, ms_from_us

LOADER_PREFIX = "enumerate(DataLoader)#"
LOADER_SUFFIX = ".__next__"
MULTIPROCESS = "_MultiProcessingDataLoaderIter"
# a step that spends at least this share of its time waiting for data is paced by the loader...
INPUT_BOUND_SHARE = 0.1
# ...unless the loader's measured capacity is clearly faster than what host and GPU need: then the
# waits are bursts a deeper queue evens out, and the loader keeps up on average
CAPACITY_MARGIN = 0.8
# from a trace alone, fetch time beyond the fastest counts as waiting when it is this share of the
# step and this many times a quick (lower-quartile) fetch (see model_from_trace)
TRACE_INPUT_SHARE = 0.25
TRACE_WAIT_FACTOR = 3.0
STEP_DIGITS = 4


@dataclass(frozen=True)
class FetchSpan:
    """One DataLoader `__next__` in a step window: host interval on its thread."""

    tid: object
    start: float
    end: float
    window: int
    multiprocess: bool

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class LoaderModel:
    """The input pipeline as the replay models it (all ms per step, host clock).

    `wait_ms`: what the step waited for data (the bare pass's, or the trace's own): a fixed
    host hold at each fetch of a worker-fed loader, not host work the profiler slowed down.
    `capacity_ms`: the fastest the loader can deliver one batch (its workers' time per batch
    over their number, or the pin-memory thread's, whichever is slower); None when not measured.
    """

    wait_ms: float
    capacity_ms: Optional[float] = None
    source: str = "trace"  # "trace" | "bare pass"
    # what each worker-fed fetch in the traced steps waited (ms, in order), when the run measured
    # it: the rest of its time is receiving the batch (host work). None: not known
    trace_waits_ms: Optional[tuple[float, ...]] = None


def fetch_spans(trace: Trace, wins: list[StepWindow]) -> list[FetchSpan]:
    """The DataLoader fetches inside the windows, in time order."""
    if not wins:
        return []
    index = WindowIndex(wins)
    out = []
    for tid, iv in trace.scopes.items():
        for i in range(len(iv)):
            name = trace.names[iv.names[i]]
            if not (name.startswith(LOADER_PREFIX) and name.endswith(LOADER_SUFFIX)):
                continue
            w = index.find(iv.starts[i])
            if w >= 0:
                out.append(FetchSpan(tid, iv.starts[i], iv.ends[i], w, MULTIPROCESS in name))
    out.sort(key=lambda f: f.start)
    return out


def receive_us(spans: list[FetchSpan]) -> Optional[float]:
    """Host time to take a batch that is ready: the fastest worker-fed fetch (the others waited)."""
    durations = [f.duration for f in spans if f.multiprocess]
    return min(durations) if durations else None


def loader_period(step_ms: Optional[float], compute_ms: Optional[float],
                  capacity_ms: Optional[float]) -> tuple[bool, Optional[float]]:
    """(paced by the loader, the period it delivers batches at) for the prediction.

    When the step spends INPUT_BOUND_SHARE or more of its time waiting for data (and the loader's
    capacity, when measured, is not clearly faster than the compute), the loader sets the pace:
    it delivers one batch per step, so its period is the step time measured. Otherwise its period
    is its measured capacity (None when unknown): a saving that brings the step below it is
    absorbed all the same."""
    if not step_ms or compute_ms is None or step_ms - compute_ms < INPUT_BOUND_SHARE * step_ms:
        return False, capacity_ms
    if capacity_ms is None or capacity_ms >= CAPACITY_MARGIN * compute_ms:
        return True, step_ms
    return False, capacity_ms


def paced(step: float, period: Optional[float]) -> float:
    """A step time as the loader lets it be (any unit)."""
    return step if period is None else max(step, period)


def data_loading(trace: Trace, wins: list[StepWindow], events: list[HostSync], unions: dict,
                 primary) -> Optional[DataLoading]:
    """The report's `data_loading` record (see the module docstring); None when the steps take
    no batch from a DataLoader and copy nothing to the GPU."""
    n = len(wins)
    if not n:
        return None
    loader = _loader_trace(fetch_spans(trace, wins), wins)
    h2d = _host_to_device(trace, wins, events, unions, primary)
    if loader is None and h2d is None:
        return None
    return {"loader": loader, "h2d": h2d}


def model_from_trace(record: Optional[DataLoading]) -> Optional[LoaderModel]:
    """The loader model `syncscan analyze` replays with: the trace's own waits, when they pace its
    steps beyond doubt (else the replay runs as without a loader).

    A trace cannot tell waiting for a batch from receiving it: without pin_memory the main thread
    unpickles each batch inside `__next__`, which takes longer for some batches than for others.
    So the fetch time beyond the fastest one counts as waiting only when it is both
    TRACE_INPUT_SHARE of the step and several times what a quick fetch takes (a loader behind its
    step shows long waits every few steps, between fetches of a ready batch). `syncscan profile`
    measures the waits instead (syncscan.runtime.input_pipeline)."""
    loader: Mapping[str, Any] = (record["loader"] if record else None) or {}
    wait, step, fetches = loader.get("wait_ms_per_step"), loader.get("step_ms"), loader.get("fetch_ms") or []
    if wait is None or not step or wait < TRACE_INPUT_SHARE * step:
        return None
    quick = sorted(fetches)[len(fetches) // 4] if fetches else 0.0
    if wait < TRACE_WAIT_FACTOR * quick:
        return None
    return LoaderModel(wait_ms=wait, capacity_ms=None, source="trace")


def _loader_trace(spans: list[FetchSpan], wins: list[StepWindow]) -> Optional[LoaderTrace]:
    if not spans:
        return None
    n = len(wins)
    per_step = [0.0] * n
    waits = [0.0] * n
    rec = receive_us(spans)
    for f in spans:
        per_step[f.window] += f.duration
        if f.multiprocess and rec is not None:
            waits[f.window] += f.duration - rec
    kinds = {f.multiprocess for f in spans}
    return {
        "fetches": len(spans),
        "kind": "mixed" if len(kinds) > 1 else ("multiprocess" if kinds.pop() else "single process"),
        "fetch_ms_per_step": round(sum(per_step) / n / US_PER_MS, STEP_DIGITS),
        "receive_ms": ms_from_us(rec),
        "wait_ms_per_step": round(sum(waits) / n / US_PER_MS, STEP_DIGITS) if rec is not None else None,
        "fetch_ms": [round(x / US_PER_MS, STEP_DIGITS) for x in per_step],
        "step_ms": round(sum(w.duration for w in wins) / n / US_PER_MS, STEP_DIGITS),
    }


def _host_to_device(trace: Trace, wins: list[StepWindow], events: list[HostSync], unions: dict,
                    primary) -> Optional[HostToDevice]:
    index = WindowIndex(wins)
    copies = [m for m in trace.memcpy_list if (k := copy_kind(m)) is not None and k.direction == "HtoD"
              and index.find(m.start) >= 0]
    if not copies:
        return None
    n = len(wins)
    blocking = {id(ev.copy) for ev in events if ev.copy is not None}
    total = sum(m.end - m.start for m in copies)
    nbytes = sum(max(m.nbytes, 0) for m in copies)
    pinned = sum(max(m.nbytes, 0) for m in copies if copy_kind(m).src == "Pinned")  # type: ignore[union-attr]
    hidden = 0.0
    for m in copies:
        kernels = unions.get(m.device)
        if kernels is not None:
            hidden += kernels.covered(m.start, m.end)
    compute = _busiest_stream(trace, primary)
    streams = sorted({m.stream for m in copies})
    return {
        "copies_per_step": round(len(copies) / n, 3),
        "mb_per_step": round(nbytes / n / 1e6, 3),
        "ms_per_step": round(total / n / US_PER_MS, STEP_DIGITS),
        "pinned_share": round(pinned / nbytes, 4) if nbytes else 0.0,
        "blocking_per_step": round(sum(id(m) in blocking for m in copies) / n, 3),
        "hidden_share": round(hidden / total, 4) if total > 0 else 0.0,
        "streams": streams,
        "own_stream": compute is not None and compute not in streams,
    }


def _busiest_stream(trace: Trace, device) -> Optional[int]:
    """The stream with the most kernel time on the device: where the model computes."""
    act = trace.devices.get(device)
    if act is None:
        return None
    busy: dict[int, float] = {}
    for k, s, e, st in zip(act.kind, act.starts, act.ends, act.streams):
        if k == KERNEL:
            busy[st] = busy.get(st, 0.0) + (e - s)
    return max(busy, key=busy.__getitem__) if busy else None
