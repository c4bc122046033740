"""Unions of time intervals with O(log n) coverage queries.

Everything in a trace that is "busy time" (kernels on a stream, all GPU activity on a device)
is turned once into an IntervalSet: sorted, merged, with prefix sums, so that "how much of
[a, b] is covered" is two bisects and "when does work resume after t" is one.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable, Sequence


class IntervalSet:
    """A union of closed-open intervals [start, end), kept sorted, disjoint and merged."""

    __slots__ = ("starts", "ends", "_cum")

    def __init__(self, starts: list[float], ends: list[float]):
        # callers pass already merged lists (use from_pairs / from_arrays otherwise)
        self.starts = starts
        self.ends = ends
        cum = [0.0]
        total = 0.0
        for s, e in zip(starts, ends):
            total += e - s
            cum.append(total)
        self._cum = cum

    @classmethod
    def from_arrays(cls, starts: Sequence[float], ends: Sequence[float]) -> "IntervalSet":
        """Merge intervals given as parallel start/end sequences (any order, may overlap)."""
        n = len(starts)
        if n == 0:
            return cls([], [])
        if all(starts[i] <= starts[i + 1] for i in range(n - 1)):
            order: Iterable[int] = range(n)
        else:
            order = sorted(range(n), key=starts.__getitem__)
        out_s: list[float] = []
        out_e: list[float] = []
        first = True
        cur_s = cur_e = 0.0
        for i in order:
            s, e = starts[i], ends[i]
            if e < s:
                e = s
            if first:
                cur_s, cur_e, first = s, e, False
            elif s <= cur_e:
                if e > cur_e:
                    cur_e = e
            else:
                out_s.append(cur_s)
                out_e.append(cur_e)
                cur_s, cur_e = s, e
        out_s.append(cur_s)
        out_e.append(cur_e)
        return cls(out_s, out_e)

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[float, float]]) -> "IntervalSet":
        pairs = list(pairs)
        return cls.from_arrays([p[0] for p in pairs], [p[1] for p in pairs])

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self):
        return zip(self.starts, self.ends)

    def total(self) -> float:
        return self._cum[-1]

    def _covered_upto(self, x: float) -> float:
        j = bisect_right(self.starts, x) - 1
        if j < 0:
            return 0.0
        return self._cum[j] + (min(self.ends[j], x) - self.starts[j])

    def covered(self, a: float, b: float) -> float:
        """Length of this set inside [a, b]."""
        if b <= a:
            return 0.0
        return self._covered_upto(b) - self._covered_upto(a)

    def uncovered(self, a: float, b: float) -> float:
        """Length of [a, b] not covered by this set (the idle time in it)."""
        if b <= a:
            return 0.0
        return (b - a) - self.covered(a, b)

    def clip(self, a: float, b: float) -> "IntervalSet":
        """The part of this set inside [a, b]."""
        if b <= a or not self.starts:
            return IntervalSet([], [])
        i = bisect_right(self.ends, a)  # ends are sorted too: first interval ending after a
        out_s: list[float] = []
        out_e: list[float] = []
        n = len(self.starts)
        while i < n and self.starts[i] < b:
            s = max(self.starts[i], a)
            e = min(self.ends[i], b)
            if e > s:
                out_s.append(s)
                out_e.append(e)
            i += 1
        return IntervalSet(out_s, out_e)

    def intersection_length(self, other: "IntervalSet") -> float:
        """Length of self ∩ other (two-pointer sweep over both sorted unions)."""
        i = j = 0
        total = 0.0
        a_s, a_e, b_s, b_e = self.starts, self.ends, other.starts, other.ends
        while i < len(a_s) and j < len(b_s):
            lo = a_s[i] if a_s[i] > b_s[j] else b_s[j]
            hi = a_e[i] if a_e[i] < b_e[j] else b_e[j]
            if hi > lo:
                total += hi - lo
            if a_e[i] < b_e[j]:
                i += 1
            else:
                j += 1
        return total

    def union(self, other: "IntervalSet") -> "IntervalSet":
        return IntervalSet.from_arrays(self.starts + other.starts, self.ends + other.ends)


def union_length(pairs: Iterable[tuple[float, float]]) -> float:
    """Length of the union of (start, end) pairs."""
    return IntervalSet.from_pairs(pairs).total()
