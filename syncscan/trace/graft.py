"""Give a trace of CUDA activity only the host structure of another trace of the same steps.

The light pass's default recipe records CUDA activity only: kernels, copies, memsets and the
CUDA runtime calls (launches, copies, syncs), no CPU ops, because recording every op is what
slows a host-bound step under the profiler. But attribution (which op synced, in which scope),
the rewrite's footprint in the replay (the syncing op's host interval and the GPU work it
launched) and the host cost of a typical op read CPU ops. The detailed pass of the same run
records them. `graft` copies them onto the light trace:

- **Steps are paired** by their index in the window: the k-th light step with the k-th detailed
  step (both passes time the same number of steps; the step boundaries are syncscan's own marks
  in both traces, syncscan.trace.marks).
- **Calls are anchors.** Both passes run the same code, so a thread makes the same runtime calls
  in the same order: the k-th call of a step in one pass is the k-th in the other (when the two
  differ, the calls are aligned by their common prefix and suffix, and difflib in between). The
  starts and ends of paired calls, and the steps' own bounds, map the detailed pass's host time
  onto the light pass's, piecewise linearly, per thread.
- **Ops and scopes are copied** through that map, with their names, nesting and Sequence numbers:
  an op that contains a launch or a sync in the detailed pass contains the same call in the light
  one, and its host interval is the light pass's own wherever a call bounds it (the syncs' waits
  included); in between, the time is the light gap shared out in the detailed pass's proportions.

The analysis then runs on the light trace as on one recorded with CPU ops (tested on recorded
H100 light traces with their CPU ops stripped: tests/test_graft.py, benchmarks/light_graft.py).
"""

from __future__ import annotations

import difflib
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from syncscan.trace.marks import mark_windows
from syncscan.trace.model import HostIntervals, Trace
from syncscan.trace.steps import StepWindow, windows

# difflib between two steps' differing middles: quadratic on repetitive call names, so only when
# they are this small (elements a x elements b); larger middles keep the prefix and suffix only
MAX_ALIGN = 4_000_000


@dataclass
class GraftStats:
    """What was carried: for the report's notes and the tests."""

    steps: int = 0         # light steps given ops
    exact: int = 0         # of them, paired with a detailed step that made exactly the same calls
    #                        (on every thread, by name, in order)
    calls: int = 0         # runtime calls in the light steps
    anchored: int = 0      # of them, paired with a call of the detailed step
    ops: int = 0
    scopes: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"steps": self.steps, "exact_steps": self.exact, "calls": self.calls,
                "anchored_calls": self.anchored, "ops": self.ops, "scopes": self.scopes}


def has_cpu_ops(trace: Trace) -> bool:
    return any(len(iv) for iv in trace.ops.values())


def source_windows(trace: Trace) -> list[StepWindow]:
    """A detailed trace's steps for pairing: its step marks when it has them (the same
    boundaries as the light trace's), else its ProfilerStep#N windows."""
    steps = mark_windows(trace)
    if steps:
        return [StepWindow(s.name, s.number, s.start, s.end) for s in steps]
    return windows(trace)


def _calls(trace: Trace, w: StepWindow) -> dict[Any, tuple[list[str], list[float], list[float]]]:
    """Per thread, the runtime calls that start in the window: (names, starts, ends)."""
    names = trace.names.names
    out = {}
    for tid, lc in trace.launches.items():
        lo, hi = lc.span(w.start, w.end)
        if hi > lo:
            out[tid] = ([names[i] for i in lc.names[lo:hi]], list(lc.starts[lo:hi]), list(lc.ends[lo:hi]))
    return out


def align(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs (i, j) with a[i] == b[j], in order: everything when a == b, else the common
    prefix and suffix, and difflib's matching blocks between them when small enough."""
    if a == b:
        return [(i, i) for i in range(len(a))]
    n = min(len(a), len(b))
    p = 0
    while p < n and a[p] == b[p]:
        p += 1
    s = 0
    while s < n - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    pairs = [(i, i) for i in range(p)]
    mid_a, mid_b = a[p:len(a) - s], b[p:len(b) - s]
    if mid_a and mid_b and len(mid_a) * len(mid_b) <= MAX_ALIGN:
        matcher = difflib.SequenceMatcher(None, list(mid_a), list(mid_b), autojunk=False)
        for blk in matcher.get_matching_blocks():
            pairs += [(p + blk.a + k, p + blk.b + k) for k in range(blk.size)]
    pairs += [(len(a) - s + k, len(b) - s + k) for k in range(s)]
    return pairs


class TimeMap:
    """Map one trace's host time onto another's through anchor points (source time, target
    time); points that would make it decrease are dropped.

    Between two anchors, a time is placed half by proportion (its share of the gap) and half by
    its distance from the nearer anchor, kept as it was where the target's gap is long enough
    (the middle of the gap absorbs the difference): the detailed pass's own extra host time
    (Python stack recording) lies mostly between the ops, away from the calls, so a pure
    proportion shrinks the ops' share of a gap and a pure distance keeps too much. On recorded
    H100 traces the mix was the closest to the light trace's own ops (benchmarks/light_graft.py).
    Both halves are non-decreasing, so nesting is kept."""

    def __init__(self, points: list[tuple[float, float]]):
        self.xs: list[float] = []
        self.ys: list[float] = []
        for x, y in sorted(points):
            if self.ys and y < self.ys[-1]:
                continue
            self.xs.append(x)
            self.ys.append(y)

    def __call__(self, t: float) -> float:
        xs, ys = self.xs, self.ys
        i = bisect_right(xs, t) - 1
        if i < 0:
            return ys[0]
        if i >= len(xs) - 1:
            return ys[-1]
        x0, x1, y0, y1 = xs[i], xs[i + 1], ys[i], ys[i + 1]
        if x1 <= x0:
            return y1
        source_gap, target_gap = x1 - x0, y1 - y0
        proportional = y0 + (t - x0) * target_gap / source_gap
        if target_gap >= source_gap:
            return proportional
        half = target_gap / 2
        if t - x0 <= half:
            nearest = y0 + (t - x0)
        elif x1 - t <= half:
            nearest = y1 - (x1 - t)
        else:
            nearest = y0 + half
        return (proportional + nearest) / 2


def _pair_steps(target: Trace, twins: list[StepWindow], source: Trace,
                swins: list[StepWindow]) -> list[tuple[int, int, dict, dict]]:
    """(light index, detailed index, light calls, detailed calls) per light step: the detailed
    step at the same index (modulo their number)."""
    scalls = [_calls(source, w) for w in swins]
    return [(i, i % len(swins), _calls(target, w), scalls[i % len(swins)]) for i, w in enumerate(twins)]


def _same_calls(tcalls: dict, scalls: dict, threads: dict) -> bool:
    """Whether two steps made the same calls on every thread (by name, in order)."""
    paired = set(threads.values())
    return (all(t_tid in paired for t_tid in tcalls)
            and all(tcalls.get(threads.get(s_tid)) is not None and tcalls[threads[s_tid]][0] == c[0]
                    for s_tid, c in scalls.items()))


def pair_threads(tcalls: Sequence[dict], scalls: Sequence[dict]) -> dict[Any, Any]:
    """Source thread -> target thread. The same thread id in both when both made calls on it (one
    process: the passes of one run); otherwise (two processes, as in the tests) the threads whose
    calls are most alike by name (a share over 1/2 of the larger count)."""
    def counts(per_step: Sequence[dict]) -> dict[Any, Counter]:
        out: dict[Any, Counter] = {}
        for calls in per_step:
            for tid, c in calls.items():
                out.setdefault(tid, Counter()).update(c[0])
        return out

    tc, sc = counts(tcalls), counts(scalls)
    pairs = {tid: tid for tid in sc if tid in tc}
    scores = []
    for s_tid, s_count in sc.items():
        for t_tid, t_count in tc.items():
            if s_tid in pairs or t_tid in pairs.values():
                continue
            common = sum((s_count & t_count).values())
            share = common / max(sum(s_count.values()), sum(t_count.values()))
            if share > 0.5:
                scores.append((share, str(s_tid), str(t_tid), s_tid, t_tid))
    for _, _, _, s_tid, t_tid in sorted(scores, reverse=True):
        if s_tid not in pairs and t_tid not in pairs.values():
            pairs[s_tid] = t_tid
    return pairs


def _thread_maps(tw: StepWindow, sw: StepWindow, tcalls: dict, scalls: dict, threads: dict,
                 stats: GraftStats) -> dict[Any, TimeMap]:
    """Source thread -> the map of its host time in sw onto its target thread's in tw."""
    bounds = [(sw.start, tw.start), (sw.end, tw.end)]
    stats.calls += sum(len(c[0]) for c in tcalls.values())
    maps: dict[Any, TimeMap] = {}
    for s_tid, t_tid in threads.items():
        points = list(bounds)
        t, s = tcalls.get(t_tid), scalls.get(s_tid)
        if t is not None and s is not None:
            pairs = align(s[0], t[0])
            stats.anchored += len(pairs)
            for j, i in pairs:
                points.append((s[1][j], t[1][i]))
                points.append((s[2][j], t[2][i]))
        maps[s_tid] = TimeMap(points)
    return maps


def _copy(src: dict, dst: dict, source: Trace, target: Trace, sw: StepWindow, time_map, threads: dict,
          with_ids: bool) -> int:
    """Copy the intervals of `src` (tid -> HostIntervals) that overlap sw into `dst` (on the
    paired thread), clipped to the step and mapped; returns how many."""
    n = 0
    for tid, iv in src.items():
        if not len(iv):
            continue
        iv._finalize()
        inside = iv.chain(sw.start)[::-1]  # intervals that began before the step and run into it
        lo, hi = bisect_left(iv.starts, sw.start), bisect_left(iv.starts, sw.end)
        picked = [i for i in inside if i < lo] + list(range(lo, hi))
        if not picked:
            continue
        to = threads.get(tid, tid)
        out = dst.get(to)
        if out is None:
            out = dst[to] = HostIntervals(with_ids)
        f = time_map(tid)
        for i in picked:
            s, e = max(iv.starts[i], sw.start), min(iv.ends[i], sw.end)
            out.starts.append(f(s))
            out.ends.append(f(e))
            out.names.append(target.names.id(source.names[iv.names[i]]))
            if with_ids:
                out.ext.append(-1)  # ids of another trace: they would join to nothing here
                out.seq.append(iv.seq[i])
            n += 1
    return n


def graft(target: Trace, source: Trace, source_wins: Optional[list[StepWindow]] = None) -> GraftStats:
    """Copy `source`'s CPU ops and scopes onto `target` (a trace without CPU ops whose steps are
    known: syncscan.trace.marks) through the runtime calls of paired steps; see the module
    docstring. `target` is changed in place; nothing is done when it has CPU ops already, has no
    steps, or `source` has no ops."""
    stats = GraftStats()
    twins = windows(target) if target.steps else []
    swins = source_wins if source_wins is not None else source_windows(source)
    if not twins or not swins or has_cpu_ops(target) or not has_cpu_ops(source):
        return stats
    target.ops = {}
    target.scopes = {}
    paired = _pair_steps(target, twins, source, swins)
    threads = pair_threads([p[2] for p in paired], [p[3] for p in paired])
    for i, j, tcalls, scalls in paired:
        tw, sw = twins[i], swins[j]
        maps = _thread_maps(tw, sw, tcalls, scalls, threads, stats)
        window_only = TimeMap([(sw.start, tw.start), (sw.end, tw.end)])

        def time_map(tid, maps=maps, window_only=window_only):
            return maps.get(tid, window_only)

        stats.ops += _copy(source.ops, target.ops, source, target, sw, time_map, threads, True)
        stats.scopes += _copy(source.scopes, target.scopes, source, target, sw, time_map, threads, False)
        stats.steps += 1
        stats.exact += _same_calls(tcalls, scalls, threads)
    return stats
