"""Replay the profiled steps on a model of one host and its GPU, to ask what-if questions.

The trace fixes what the host did in each step, in order: host work (Python, op overhead, the
launch calls themselves), kernel/copy/memset launches, and waits for the GPU (the host syncs of
syncs.py). Each launched activity keeps its stream, its duration and the delay it had beyond
its launch and its stream's previous work (inter-kernel gaps, waits on other streams). The
replay runs that sequence again:

- the host advances by its work times `host_scale`; a launch starts its activity on its stream
  no earlier than the launch plus the launch latency; a wait holds the host until the GPU has
  drained (its stream, or all streams), plus the wait's return latency;
- the windows are replayed twice in a row and the second pass is measured, so the GPU queue
  carried from step to step is in its steady state; the step time is the time between the ends
  of the two passes (host or GPU, whichever is later), divided by the number of steps.

Replayed as recorded, at host_scale 1, it reproduces the trace's own step time (the fit is in
the report). The profiler slows the host, not the GPU, so `calibrate` finds the host_scale at
which the replay takes the step time measured without the profiler (syncscan profile's bare
pass). Then the questions:

- *without a sync*: the host no longer waits there (the sync calls are gone);
- *with a rewrite*: the op instances that synced (and their waits) are replaced by the rewrite's
  footprint: their host time becomes a few launches at this trace's typical op cost, and the
  GPU work they launched goes (except where the rewrite keeps it: a pinned copy is still a
  copy). Each rule declares its rewrite's footprint (catalog.footprint_for).

The replay knows nothing the trace does not show: a rewrite that changes work elsewhere (another
kernel choice for a later op) is in it only where estimate.py models it; `syncscan profile
--compare` measures instead. One host timeline: threads that launch concurrently are serialised.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from syncscan.trace.attribution import EVALUATE_PREFIX
from syncscan.trace.intervals import IntervalSet
from syncscan.trace.model import Trace
from syncscan.trace.steps import StepWindow

LAUNCH, WAIT = 0, 1
CYCLES = 2
# the replay's answers are per step: a long trace is replayed over its first steps only
MAX_STEPS = 64
# a replay visits every item CYCLES times per question: above this many items per question,
# only the totals are replayed (per-site questions skipped), and above 50x this, nothing
MAX_ITEMS_PER_SITE_REPLAY = 400_000
MAX_ITEMS = 50 * MAX_ITEMS_PER_SITE_REPLAY
# the DataLoader's record_function around fetching a batch from its worker processes: without
# pin_memory the main thread receives (unpickles) the batch there; with it, the pin-memory
# thread does, and the main thread only takes it from a queue
LOADER_NEXT = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


@dataclass(frozen=True)
class Replacement:
    """A host interval of one thread replaced by a footprint: its items are dropped (launches
    kept when keep_gpu), its host work removed, and `host_cost` (trace µs) added at its start;
    `gpu_cost` µs of GPU work, when given, is launched there instead of the dropped work (on the
    stream of its first activity). `hold` µs is added there too but not scaled by the host speed:
    time the host waits for something outside the model (the next batch from a DataLoader)."""

    tid: object
    start: float
    end: float
    host_cost: float
    keep_gpu: bool = False
    gpu_cost: float = 0.0
    hold: float = 0.0


def _percentile(values: list[float], q: float, default: float) -> float:
    if not values:
        return default
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


class Timeline:
    """The items of the step windows, ready to replay. Build with `Timeline.build`."""

    def __init__(self) -> None:
        self.times: list[float] = []       # item start (trace µs)
        self.kinds: list[int] = []
        self.tids: list[object] = []
        self.acts: list[tuple] = []        # LAUNCH: ((stream key, duration, extra delay), ...)
        self.waits: list[tuple | None] = []  # WAIT: (stream key or None, own cost, return latency)
        self.events: list[object] = []     # WAIT: the HostSync
        self.pre: list[float] = []         # host work before the item (trace µs)
        self.tail = 0.0
        self.n_steps = 0
        self.trace_step_us = 0.0
        self.launch_latency = 0.0
        self.op_cost = 0.0                 # median host time of a forward op with one launch
        self.node_cost = 0.0               # median host time of a backward node that launches
        self.t0 = self.t1 = 0.0

    def __len__(self) -> int:
        return len(self.times)

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(cls, trace: Trace, wins: list[StepWindow], events: list) -> "Timeline | None":
        """The replayable timeline of the windows; None without GPU activity or windows."""
        if not wins or not trace.has_gpu_activity:
            return None
        tl = cls()
        tl.t0, tl.t1 = t0, t1 = wins[0].start, wins[-1].end
        tl.n_steps = len(wins)
        tl.trace_step_us = sum(w.duration for w in wins) / len(wins)
        by_corr: dict[int, list[tuple[object, int, float, float]]] = {}
        for dev, act in trace.devices.items():
            for i in range(len(act)):
                c = act.corr[i]
                if c >= 0:
                    by_corr.setdefault(c, []).append(((dev, act.streams[i]), i, act.starts[i], act.ends[i]))
        items: list[tuple] = []
        for tid, lc in trace.launches.items():
            lo, hi = lc.span(t0, t1)
            for k in range(lo, hi):
                if lc.corr[k] in by_corr:
                    items.append((lc.starts[k], LAUNCH, lc.starts[k], tid, lc.corr[k]))
        for ev in events:
            if t0 <= ev.start < t1:
                items.append((ev.start, WAIT, ev.end, ev.tid, ev))
        items.sort(key=lambda it: (it[0], it[1]))
        tl._fill(trace, items, by_corr)
        tl._costs(trace)
        return tl

    def _fill(self, trace: Trace, items: list[tuple], by_corr: dict) -> None:
        launch_at = {it[4]: it[0] for it in items if it[1] == LAUNCH}
        # launch latency: a low percentile of launch-to-start over everything launched here
        lat = [a[2] - launch_at[c] for c, acts in by_corr.items() if c in launch_at for a in acts]
        self.launch_latency = max(1.0, _percentile([x for x in lat if x >= 0], 0.1, 5.0))
        delay = self._delays(by_corr, launch_at)
        prev_end = self.t0
        for t, kind, end, tid, payload in items:
            self.times.append(t)
            self.kinds.append(kind)
            self.tids.append(tid)
            self.pre.append(max(0.0, t - prev_end))
            if kind == LAUNCH:
                self.acts.append(tuple((a[0], a[3] - a[2], delay.get((a[0], a[1]), 0.0)) for a in by_corr[payload]))
                self.waits.append(None)
                self.events.append(None)
            else:
                self.acts.append(())
                self.waits.append(self._wait_model(trace, payload))
                self.events.append(payload)
            prev_end = max(prev_end, end)
        self.tail = max(0.0, self.t1 - prev_end)

    def _delays(self, by_corr: dict, launch_at: dict) -> dict:
        """Each activity's start beyond max(its launch + latency, its stream's previous end)."""
        acts = sorted((a[2], a[3], a[0], a[1], c) for c, lst in by_corr.items() for a in lst)
        prev_end: dict = {}
        out = {}
        lam = self.launch_latency
        for start, end, sk, i, c in acts:
            ready = prev_end.get(sk, float("-inf"))
            if c in launch_at:
                ready = max(ready, launch_at[c] + lam)
                if start > ready:
                    out[(sk, i)] = start - ready
            if end > prev_end.get(sk, float("-inf")):
                prev_end[sk] = end
        return out

    @staticmethod
    def _wait_model(trace: Trace, ev) -> tuple:
        """(stream key or None for all streams, own host cost, return latency) of a sync event."""
        dev = ev.device if ev.device in trace.devices else trace.primary_device()
        act = trace.devices.get(dev)
        drain = act.drain_and_resume(ev.corr, ev.end)[0] if act is not None else None
        if drain is not None and drain > ev.start:
            cost, latency = 0.0, max(0.0, ev.end - min(drain, ev.end))
        else:  # the GPU had nothing left to do: the call's time is the host's own
            cost, latency = ev.end - ev.start, 0.0
        key = (dev, ev.stream) if ev.stream is not None and ev.stream >= 0 else None
        return key, cost, latency

    def _costs(self, trace: Trace) -> None:
        ops_with_launch, nodes = [], []
        names = trace.names
        for tid, ops in trace.ops.items():
            ops._finalize()
            lc = trace.launches.get(tid)
            for i in range(len(ops)):
                s = ops.starts[i]
                if ops.parent[i] >= 0 or not (self.t0 <= s < self.t1) or lc is None:
                    continue
                n = len(lc.between(s, ops.ends[i]))
                if names[ops.names[i]].startswith(EVALUATE_PREFIX):
                    if n:
                        nodes.append(ops.ends[i] - s)
                elif n == 1:
                    ops_with_launch.append(ops.ends[i] - s)
        self.op_cost = _percentile(ops_with_launch, 0.5, 20.0)
        self.node_cost = _percentile(nodes, 0.5, 2 * self.op_cost)

    def gpu_time(self, tid, start: float, end: float) -> float:
        """GPU time (a sum) of what the thread launched in [start, end)."""
        lo = bisect_left(self.times, start)
        hi = bisect_left(self.times, end, lo)
        return sum(a[1] for i in range(lo, hi) if self.tids[i] == tid for a in self.acts[i])

    # -- replaying ----------------------------------------------------------------------------
    def step_time(self, host_scale: float = 1.0, skip: frozenset = frozenset(),
                  replace: tuple[Replacement, ...] = ()) -> float:
        """Replayed µs per step; `skip`: item indices of waits that no longer happen."""
        n = len(self.times)
        pre, tail = self.pre, self.tail
        drop = [False] * n
        keep_acts = [True] * n
        extra: dict[int, tuple] = {}
        hold: dict[int, float] = {}  # unscaled host time before item i (n: the tail)
        if replace:
            pre = list(pre)
            tail = self._apply(replace, pre, drop, keep_acts, extra, hold)
        kinds, acts, waits = self.kinds, self.acts, self.waits
        lam = self.launch_latency
        free: dict = {}
        t = 0.0
        ends = []
        for _ in range(CYCLES):
            for i in range(n):
                t += pre[i] * host_scale
                if hold:
                    t += hold.get(i, 0.0)
                if i in extra:
                    sk, dur = extra[i]
                    start = max(t + lam, free.get(sk, 0.0))
                    free[sk] = start + dur
                if kinds[i] == LAUNCH:
                    if drop[i] and not keep_acts[i]:
                        continue
                    for sk, dur, delay in acts[i]:
                        start = max(t + lam, free.get(sk, 0.0)) + delay
                        free[sk] = start + dur
                elif not drop[i] and i not in skip:
                    sk, cost, latency = waits[i]  # type: ignore[misc]  # a WAIT item always has one
                    if sk is not None and sk in free:
                        target = free[sk]
                    else:
                        target = max(free.values()) if free else 0.0
                    t = max(t + cost * host_scale, target + latency)
            t += tail * host_scale + hold.get(n, 0.0)
            ends.append(max(t, max(free.values()) if free else t))
        return (ends[-1] - ends[-2]) / self.n_steps

    def _apply(self, replace, pre: list[float], drop: list[bool], keep_acts: list[bool],
               extra: dict, hold: dict) -> float:
        """Drop the items inside replaced intervals (on their thread), cut the host work the
        intervals span (their union, on any thread: one host timeline), add the footprints
        before each interval's first item. Returns the new tail."""
        times, tids = self.times, self.tids
        n = len(times)
        tail = self.tail
        spans = IntervalSet.from_arrays([r.start for r in replace], [r.end for r in replace])
        for r in replace:
            lo = bisect_left(times, r.start)
            hi = bisect_left(times, r.end, lo)
            first = None
            for i in range(lo, hi):
                if tids[i] == r.tid:
                    drop[i] = True
                    keep_acts[i] = keep_acts[i] and r.keep_gpu
                    if first is None and self.acts[i]:
                        first = i
            if r.gpu_cost > 0 and first is not None:
                extra[first] = (self.acts[first][0][0], r.gpu_cost)
        for i in range(n):
            if pre[i] > 0:
                pre[i] -= min(pre[i], spans.covered(times[i] - pre[i], times[i]))
        if tail > 0:
            tail -= min(tail, spans.covered(self.t1 - tail, self.t1))
        for r in replace:
            lo = bisect_left(times, r.start)
            if lo < n:
                pre[lo] += r.host_cost
            else:
                tail += r.host_cost
            if r.hold:
                hold[min(lo, n)] = hold.get(min(lo, n), 0.0) + r.hold
        return tail


def calibrate(tl: Timeline, target_us: float, lo: float = 0.05, hi: float = 4.0,
              iterations: int = 24, replace: tuple[Replacement, ...] = ()) -> tuple[float, bool]:
    """(host_scale, exact) at which the replay (with `replace`) takes target_us per step. Not
    exact when even a host 20x faster than the trace's is slower than the target (the GPU's own
    time is longer) or a 4x slower one is faster: the nearest bound is returned."""
    if tl.step_time(lo, replace=replace) >= target_us:
        return lo, False
    if tl.step_time(hi, replace=replace) <= target_us:
        return hi, False
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if tl.step_time(mid, replace=replace) < target_us:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-3 * hi:
            break
    return (lo + hi) / 2, True
