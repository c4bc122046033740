"""Analysis windows: the `ProfilerStep#N` annotations, or the whole trace as one window."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Literal

from syncscan.trace.model import Trace

WHOLE_TRACE: Literal["whole trace"] = "whole trace"


@dataclass(frozen=True)
class StepWindow:
    name: str
    number: int | None
    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


def windows(trace: Trace) -> list[StepWindow]:
    """The step windows in time order; a trace without ProfilerStep#N is one window."""
    if trace.steps:
        out: list[StepWindow] = []
        for s in trace.steps:
            # nested or repeated step markers (a profiler restarted inside a step) keep the first
            if out and s.start < out[-1].end:
                continue
            out.append(StepWindow(s.name, s.number, s.start, s.end))
        return out
    rng = trace.host_range()
    if rng is None:
        return []
    return [StepWindow(WHOLE_TRACE, None, rng[0], rng[1])]


class WindowIndex:
    """Which window a time falls in (-1 outside all of them)."""

    def __init__(self, wins: list[StepWindow]):
        self.wins = wins
        self._starts = [w.start for w in wins]

    def find(self, t: float) -> int:
        i = bisect_right(self._starts, t) - 1
        if i >= 0 and t < self.wins[i].end:
            return i
        return -1
