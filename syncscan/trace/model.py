"""The loaded trace, in compact form: only the fields the analysis needs.

A 1 GB trace holds millions of events; keeping them as dicts would take several GB. Each kind
of event the analysis needs goes into parallel `array` columns (8 bytes a number), names are
interned once, and everything else (flows, launches, kernel names, metadata rows) is dropped
while reading. Host intervals are sorted and given parent links lazily, the first time a
question is asked about a thread.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from syncscan.trace.intervals import IntervalSet

KERNEL, MEMCPY, MEMSET = 0, 1, 2


class Names:
    """Interned strings: one int per event instead of one str."""

    __slots__ = ("_ids", "names")

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self.names: list[str] = []

    def id(self, name: str) -> int:
        i = self._ids.get(name)
        if i is None:
            i = self._ids[name] = len(self.names)
            self.names.append(name)
        return i

    def __getitem__(self, i: int) -> str:
        return self.names[i]


class HostIntervals:
    """Nested host intervals of one thread (ops, annotations or Python frames).

    Columns are appended in file order; `_finalize` sorts them by (start, -end) and links each
    interval to its innermost enclosing one, so "which intervals contain time t" is one bisect
    plus a walk up the parents.
    """

    __slots__ = ("starts", "ends", "names", "has_ids", "ext", "seq", "parent", "_sorted")

    def __init__(self, with_ids: bool = False) -> None:
        self.starts = array("d")
        self.ends = array("d")
        self.names = array("i")
        # External id and Sequence number (ops only: empty otherwise; -1 when absent)
        self.has_ids = with_ids
        self.ext = array("q")
        self.seq = array("q")
        self.parent = array("i")  # filled by _finalize
        self._sorted = False

    def __len__(self) -> int:
        return len(self.starts)

    def _finalize(self) -> None:
        if self._sorted:
            return
        n = len(self.starts)
        starts, ends = self.starts, self.ends
        in_order = all(
            starts[i] < starts[i + 1] or (starts[i] == starts[i + 1] and ends[i] >= ends[i + 1])
            for i in range(n - 1)
        )
        if not in_order:
            # parents before children at equal start: sort by end descending, then (stably) by start
            order = sorted(range(n), key=ends.__getitem__, reverse=True)
            order.sort(key=starts.__getitem__)
            self.starts = array("d", (starts[i] for i in order))
            self.ends = array("d", (ends[i] for i in order))
            self.names = array("i", (self.names[i] for i in order))
            if self.has_ids:
                self.ext = array("q", (self.ext[i] for i in order))
                self.seq = array("q", (self.seq[i] for i in order))
        parent = array("i", bytes(4 * n))
        stack: list[int] = []
        starts, ends = self.starts, self.ends
        for i in range(n):
            s = starts[i]
            while stack and ends[stack[-1]] <= s:
                stack.pop()
            parent[i] = stack[-1] if stack else -1
            stack.append(i)
        self.parent = parent
        self._sorted = True

    def chain(self, t: float) -> list[int]:
        """Indices of the intervals containing time t (start <= t < end), innermost first."""
        self._finalize()
        j = bisect_right(self.starts, t) - 1
        out: list[int] = []
        ends, parent = self.ends, self.parent
        while j >= 0:
            if ends[j] > t:
                out.append(j)
            j = parent[j]
        return out

    def outermost_of(self, i: int) -> int:
        self._finalize()
        while self.parent[i] >= 0:
            i = self.parent[i]
        return i


@dataclass
class DeviceActivity:
    """GPU activity on one device: kernels, copies and memsets, as parallel columns."""

    device: Any
    kind: array = field(default_factory=lambda: array("b"))
    starts: array = field(default_factory=lambda: array("d"))
    ends: array = field(default_factory=lambda: array("d"))
    streams: array = field(default_factory=lambda: array("q"))
    corr: array = field(default_factory=lambda: array("q"))
    _by_corr: tuple | None = None
    _busy: IntervalSet | None = None

    def __len__(self) -> int:
        return len(self.starts)

    def busy(self) -> IntervalSet:
        """Union of all activity (kernels, copies, memsets): when the GPU has work."""
        if self._busy is None:
            self._busy = IntervalSet.from_arrays(self.starts, self.ends)
        return self._busy

    def _corr_index(self):
        """Activities ordered by correlation id with prefix-max of end and suffix-min of start.

        CUPTI hands out correlation ids in the order API calls are entered, so "launched before
        call c returned" is corr <= c and "launched after" is corr > c, across threads.
        """
        if self._by_corr is None:
            order = sorted((i for i in range(len(self.corr)) if self.corr[i] >= 0),
                           key=self.corr.__getitem__)
            corrs = [self.corr[i] for i in order]
            pre_max_end: list[float] = []
            m = float("-inf")
            for i in order:
                if self.ends[i] > m:
                    m = self.ends[i]
                pre_max_end.append(m)
            suf_min_start = [0.0] * len(order)
            m = float("inf")
            for k in range(len(order) - 1, -1, -1):
                s = self.starts[order[k]]
                if s < m:
                    m = s
                suf_min_start[k] = m
            self._by_corr = (corrs, pre_max_end, suf_min_start)
        return self._by_corr

    def drain_and_resume(self, corr: int, returned_at: float) -> tuple[float | None, float | None]:
        """(end of the last work launched up to call `corr`, start of the first work launched after).

        Falls back to times when the activity has no correlation ids (synthetic traces).
        """
        corrs, pre_max_end, suf_min_start = self._corr_index()
        if corr >= 0 and corrs:
            k = bisect_right(corrs, corr)
            drain = pre_max_end[k - 1] if k > 0 else None
            resume = suf_min_start[k] if k < len(corrs) else None
            return drain, resume
        # by time: work started before the call returned vs after
        drain = None
        resume = None
        for s, e in zip(self.starts, self.ends):
            if s < returned_at:
                if drain is None or e > drain:
                    drain = e
            elif resume is None or s < resume:
                resume = s
        return drain, resume


class Launches:
    """Start, end, name and correlation id of every runtime/driver call of one thread that has one.

    Any of them may launch GPU work (kernels, copies, memsets); the GPU activity with the same
    correlation id is what it launched. Used to find the GPU work an op instance launched (the
    calls on its thread inside its host interval), and, by their names in order, to pair the
    calls of one step in two traces of the same run (syncscan.trace.graft).
    """

    __slots__ = ("starts", "ends", "names", "corr", "_sorted")

    def __init__(self) -> None:
        self.starts = array("d")
        self.ends = array("d")
        self.names = array("i")  # interned in the trace's Names
        self.corr = array("q")
        self._sorted = False

    def __len__(self) -> int:
        return len(self.starts)

    def sort(self) -> None:
        """Order the calls by start (file order usually is)."""
        if self._sorted:
            return
        starts = self.starts
        if any(starts[i] > starts[i + 1] for i in range(len(starts) - 1)):
            order = sorted(range(len(starts)), key=starts.__getitem__)
            for col in ("starts", "ends", "names", "corr"):
                old = getattr(self, col)
                setattr(self, col, array(old.typecode, (old[i] for i in order)))
        self._sorted = True

    def between(self, start: float, end: float) -> list[int]:
        """Correlation ids of the calls that start in [start, end)."""
        lo, hi = self.span(start, end)
        return list(self.corr[lo:hi])

    def span(self, start: float, end: float) -> tuple[int, int]:
        """Index range of the calls that start in [start, end)."""
        self.sort()
        lo = bisect_left(self.starts, start)
        return lo, bisect_left(self.starts, end, lo)


@dataclass
class RuntimeCall:
    """A CUDA runtime/driver call the sync analysis may need (syncs and copies only)."""

    tid: Any
    start: float
    end: float
    name: str
    corr: int
    ext: int


@dataclass
class Memcpy:
    name: str
    device: Any
    stream: int
    start: float
    end: float
    corr: int
    nbytes: int


@dataclass
class CudaSync:
    kind: str
    device: Any
    stream: int
    start: float
    end: float


@dataclass
class Collective:
    """One collective as this rank ran it: an NCCL kernel on a GPU stream, or a gloo collective
    on one of the host threads gloo runs them on. Its duration includes the time spent waiting
    for the other ranks to arrive (syncscan.trace.collectives)."""

    name: str    # normalised: allreduce, allgather, broadcast, reducescatter, barrier, ...
    where: str   # "gpu" | "host"
    lane: Any    # (device, stream) on a GPU, the thread id on the host
    start: float
    end: float
    group: str = ""  # the process group's name, when the trace records it


@dataclass
class Step:
    name: str
    start: float
    end: float
    tid: Any = None

    @property
    def number(self) -> int | None:
        head, _, tail = self.name.partition("#")
        return int(tail) if head == "ProfilerStep" and tail.isdigit() else None


@dataclass
class Trace:
    """A Kineto trace reduced to what `analyze` reads. Build it with `load_trace`."""

    path: str = ""
    meta: dict = field(default_factory=dict)
    names: Names = field(default_factory=Names)
    ops: dict = field(default_factory=dict)          # tid -> HostIntervals (cpu_op, with ids)
    scopes: dict = field(default_factory=dict)       # tid -> HostIntervals (user_annotation)
    frames: dict = field(default_factory=dict)       # tid -> HostIntervals (python_function)
    steps: list = field(default_factory=list)        # [Step] from ProfilerStep#N
    calls: list = field(default_factory=list)        # [RuntimeCall]
    launches: dict = field(default_factory=dict)     # tid -> Launches (all calls with a correlation)
    memcpys: dict = field(default_factory=dict)      # corr -> Memcpy
    memcpy_list: list = field(default_factory=list)  # [Memcpy], all of them, by start
    cuda_syncs: dict = field(default_factory=dict)   # corr -> CudaSync
    devices: dict = field(default_factory=dict)      # device -> DeviceActivity
    input_types: dict = field(default_factory=dict)  # (tid, ext) -> ["float", "bool", ...]
    collectives: list = field(default_factory=list)  # [Collective], by start
    counts: dict = field(default_factory=dict)       # category -> events seen

    @property
    def has_gpu_activity(self) -> bool:
        return any(len(d) for d in self.devices.values())

    @property
    def with_stack(self) -> bool:
        return bool(self.frames)

    def host_range(self) -> tuple[float, float] | None:
        lo, hi = float("inf"), float("-inf")
        for group in (self.ops, self.scopes):
            for iv in group.values():
                if len(iv):
                    lo = min(lo, min(iv.starts))
                    hi = max(hi, max(iv.ends))
        for s in self.steps:
            lo, hi = min(lo, s.start), max(hi, s.end)
        for c in self.calls:
            lo, hi = min(lo, c.start), max(hi, c.end)
        for d in self.devices.values():
            if len(d):
                lo = min(lo, min(d.starts))
                hi = max(hi, max(d.ends))
        return None if lo == float("inf") else (lo, hi)

    def primary_device(self):
        """The device with the most GPU activity (None without any)."""
        best = None
        for dev, act in self.devices.items():
            if len(act) and (best is None or len(act) > len(self.devices[best])):
                best = dev
        return best
