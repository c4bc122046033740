"""Step windows from `syncscan profile`'s own step marks, for a trace without `ProfilerStep#N`.

The session times every pass with a CUDA event recorded at each step boundary
(syncscan.runtime.session). A trace recorded with CUDA activity only (the light pass's `cuda`
recipe) has no CPU ops, so no `ProfilerStep#N` annotations, but those records are in it: CUPTI
reports them as `cudaEventRecord` / `cudaEventRecordWithFlags` runtime calls (Kineto keeps them
since 2023; torch >= 2.2). The session writes into the trace's metadata (`syncscan_marks`) the
host clock just before and just after each record, and which thread made it; this module finds
the record calls and cuts the windows between them.

Clocks: the marks are `time.perf_counter()` (monotonic), the trace is the realtime clock in µs
from `baseTimeNanoseconds`. Both run at the same rate, so they differ by one offset, which the
session also writes (realtime minus perf_counter when it recorded). The search does not rely on
it: it tries the offsets at which one of the first marks holds one record call of the marking
thread, and keeps the one at which the most marks hold exactly such a call (within a few µs:
the thread runs nothing but the record between the two clock readings, so another record of the
script's cannot fall inside a mark). The written offset only breaks ties (a script that records
its own event at a fixed distance from every boundary).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, Optional

from syncscan.trace.model import RuntimeCall, Step, Trace

META_KEY = "syncscan_marks"
MARK_CALL = re.compile(r"^(cudaEventRecord|cuEventRecord)")
# slack around a mark's two clock readings: Python's own time between the reading and the call
TOLERANCE_US = 25.0
# marks tried as the one that fixes the offset (a record the trace lost must not sink the search)
ANCHOR_MARKS = 3


@dataclass
class StepMarks:
    """The step boundaries of one pass's measured window, on the host clock (µs)."""

    before: list[float]
    after: list[float]
    tid: Optional[int] = None            # the marking thread's native id
    first_step: Optional[int] = None     # ProfilerStep number of the first window
    realtime_minus_perf_us: Optional[float] = None

    def __len__(self) -> int:
        return len(self.after)

    def as_meta(self) -> dict[str, Any]:
        return {"version": 1, "before_us": [round(x, 3) for x in self.before],
                "after_us": [round(x, 3) for x in self.after], "tid": self.tid, "first_step": self.first_step,
                "realtime_minus_perf_us": self.realtime_minus_perf_us}

    @classmethod
    def from_meta(cls, meta: Any) -> "Optional[StepMarks]":
        """The marks a trace's metadata holds; None when absent or not in this form."""
        if not isinstance(meta, dict):
            return None
        before, after = meta.get("before_us"), meta.get("after_us")
        if not (isinstance(before, list) and isinstance(after, list) and len(before) == len(after)):
            return None
        if not all(_finite(x) for x in before + after):
            return None
        tid, first, offset = meta.get("tid"), meta.get("first_step"), meta.get("realtime_minus_perf_us")
        return cls([float(x) for x in before], [float(x) for x in after],
                   tid if isinstance(tid, int) and not isinstance(tid, bool) else None,
                   first if isinstance(first, int) and not isinstance(first, bool) else None,
                   float(offset) if isinstance(offset, (int, float)) and _finite(offset) else None)


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _candidates(trace: Trace, tid: Optional[int]) -> list[RuntimeCall]:
    calls = [c for c in trace.calls if MARK_CALL.match(c.name)]
    own = [c for c in calls if c.tid == tid]
    return own or calls  # a thread id Kineto wrote otherwise: any thread's records


def locate(trace: Trace, marks: StepMarks) -> list[Optional[RuntimeCall]]:
    """The record call of each mark (None where the trace has none), in mark order."""
    cands = _candidates(trace, marks.tid)
    if not cands or not len(marks):
        return [None] * len(marks)
    starts = [c.start for c in cands]
    base = trace.meta.get("baseTimeNanoseconds")
    guess = (marks.realtime_minus_perf_us - base / 1e3
             if marks.realtime_minus_perf_us is not None and isinstance(base, (int, float)) and _finite(base)
             else None)

    def match(offset: float) -> list[Optional[RuntimeCall]]:
        out: list[Optional[RuntimeCall]] = []
        for b, a in zip(marks.before, marks.after):
            lo, hi = b + offset - TOLERANCE_US, a + offset + TOLERANCE_US
            inside = [c for c in cands[bisect_left(starts, lo):bisect_left(starts, hi)] if c.end <= hi]
            out.append(inside[0] if len(inside) == 1 else None)
        return out

    offsets = {round(c.end - marks.after[k], 1) for k in range(min(ANCHOR_MARKS, len(marks))) for c in cands}
    if guess is not None:
        offsets.add(guess)
    best: tuple = (-1, 0.0)
    found: list[Optional[RuntimeCall]] = [None] * len(marks)
    for offset in sorted(offsets):
        got = match(offset)
        score = (sum(c is not None for c in got), -abs(offset - guess) if guess is not None else 0.0)
        if score > best:
            best, found = score, got
    return found


def steps_from_marks(trace: Trace, marks: StepMarks) -> list[Step]:
    """One window per pair of consecutive marks found: from the end of one record call to the
    end of the next (a step ends once its boundary's event is recorded). Named ProfilerStep#N
    as the profiler numbered them, so the passes' step numbers stay comparable."""
    calls = locate(trace, marks)
    first = marks.first_step
    out = []
    for i in range(len(calls) - 1):
        a, b = calls[i], calls[i + 1]
        if a is None or b is None or b.end <= a.end:
            continue
        name = f"ProfilerStep#{first + i}" if first is not None else f"step {i}"
        out.append(Step(name, a.end, b.end, a.tid))
    return out


def mark_windows(trace: Trace) -> list[Step]:
    """The windows of the marks in the trace's metadata (none without them)."""
    marks = StepMarks.from_meta(trace.meta.get(META_KEY))
    return steps_from_marks(trace, marks) if marks is not None else []
