"""Host syncs in a trace: which CUDA calls blocked the host, grouped into one event per site hit.

A host sync is a call that makes the CPU wait for the GPU:
- `cudaStreamSynchronize`, `cudaDeviceSynchronize`, `cudaEventSynchronize` (and the driver
  API's `cuStreamSynchronize`, `cuCtxSynchronize`, `cuEventSynchronize`), or any call a
  `cuda_sync` event of kind Stream Sync / Context Sync links to;
- a synchronous `cudaMemcpy` (except device to device, which does not wait for the host);
- a `cudaMemcpyAsync` whose copy involves pageable host memory (the driver stages it and the
  call returns only when done).

A device-to-host copy into pinned memory does not block by itself: torch follows it with a
`cudaStreamSynchronize` when the value is needed (`.item()`, `nonzero`, boolean masks in torch
2.11). The copy and that sync, issued by the same op, are ONE event; a pinned copy with no sync
after it (`.to("cpu", non_blocking=True)`, the recommended rewrite) is not a sync at all.
Torch 2.0 traces show one long `cudaMemcpyAsync` into pageable memory instead: one event too.

Cost of each event (see `cost`): the CPU time blocked, and the GPU idle time it causes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from syncscan.trace.attribution import Attribution, Attributor, base_call, rule_for
from syncscan.trace.model import Memcpy, RuntimeCall, Trace
from syncscan.trace.steps import StepWindow, WindowIndex

SYNC_CALLS = {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
              "cudaThreadSynchronize", "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize"}
BLOCKING_SYNC_KINDS = {"Stream Sync", "Context Sync"}
_MEMCPY_NAME = re.compile(r"Memcpy (?P<dir>\w+) \((?P<src>\w+) -> (?P<dst>\w+)\)")


@dataclass(frozen=True)
class CopyKind:
    direction: str   # HtoD, DtoH, DtoD, HtoH, PtoP, or "?" when the GPU record is missing
    src: str         # Pageable, Pinned, Device, ...
    dst: str

    @property
    def pageable(self) -> bool:
        return "Pageable" in (self.src, self.dst)

    @property
    def host_memory(self) -> str:
        """The host side's memory kind (what pin_memory() changes); Device for DtoD."""
        if self.direction == "HtoD":
            return self.src
        if self.direction == "DtoH":
            return self.dst
        return self.src if self.src != "Device" else self.dst


def copy_kind(m: Memcpy | None) -> CopyKind | None:
    if m is None:
        return None
    g = _MEMCPY_NAME.search(m.name)
    if not g:
        return CopyKind("?", "?", "?")
    return CopyKind(g["dir"], g["src"], g["dst"])


@dataclass
class HostSync:
    """One host sync: one call, or a copy plus the stream sync that waits for it."""

    tid: object
    start: float
    end: float
    calls: list[str]
    corr: int                 # correlation of the last call (what "launched after" is measured from)
    ext: int
    copy: Memcpy | None = None
    kind: CopyKind | None = None
    stream: int = -1
    device: object = None
    window: int = -1
    profiler_own: bool = False
    att: Attribution | None = None
    rule: str | None = None
    # costs, microseconds
    cpu_blocked: float = 0.0
    gpu_idle: float | None = None
    gpu_busy_during: float | None = None
    idle_span: tuple[float, float] | None = None
    # exact call site from the profiler's sync-debug hook, when matched
    site: dict | None = field(default=None, repr=False)
    first_end: float | None = None  # end of the first call: attribution looks inside it

    @property
    def attr_time(self) -> float:
        """A time inside the first call, where its op stack is looked up."""
        end = self.first_end if self.first_end is not None else self.end
        return (self.start + end) / 2


def _is_sync_call(trace: Trace, c: RuntimeCall) -> bool:
    base = base_call(c.name)
    if base in SYNC_CALLS:
        return True
    cs = trace.cuda_syncs.get(c.corr) if c.corr >= 0 else None
    return cs is not None and cs.kind in BLOCKING_SYNC_KINDS and "Memcpy" not in c.name


def _is_copy_call(c: RuntimeCall) -> bool:
    return "Memcpy" in c.name or "memcpy" in c.name


def find_syncs(trace: Trace) -> list[HostSync]:
    """Every host sync in the trace, in time order (windows and attribution not applied yet)."""
    by_thread: dict[object, list[RuntimeCall]] = {}
    for c in trace.calls:  # already sorted by start
        by_thread.setdefault(c.tid, []).append(c)
    events: list[HostSync] = []
    for tid, calls in by_thread.items():
        pending: tuple[RuntimeCall, Memcpy | None, CopyKind | None, bool] | None = None
        for c in calls:
            if _is_sync_call(trace, c):
                cs = trace.cuda_syncs.get(c.corr)
                stream = cs.stream if cs is not None else -1
                device = cs.device if cs is not None and cs.stream != -1 else None
                if pending is not None and _same_op(trace, pending[0], c):
                    pc, m, k, _ = pending
                    events.append(HostSync(tid, pc.start, c.end, [pc.name, c.name], c.corr, pc.ext, m, k,
                                            m.stream if m else stream, m.device if m else device,
                                            first_end=pc.end))
                else:
                    _flush(events, tid, pending)
                    events.append(HostSync(tid, c.start, c.end, [c.name], c.corr, c.ext,
                                            stream=stream, device=device))
                pending = None
            elif _is_copy_call(c):
                _flush(events, tid, pending)
                m = trace.memcpys.get(c.corr) if c.corr >= 0 else None
                k = copy_kind(m)
                asynchronous = "Async" in c.name
                if k is None:
                    blocking = not asynchronous
                elif asynchronous:
                    blocking = k.pageable
                else:
                    blocking = k.direction != "DtoD"
                pending = (c, m, k, blocking)
        _flush(events, tid, pending)
    events.sort(key=lambda e: e.start)
    return events


def _flush(events: list[HostSync], tid, pending) -> None:
    """A copy no sync followed: an event of its own if the copy blocks by itself."""
    if pending is not None and pending[3]:
        c, m, k, _ = pending
        events.append(HostSync(tid, c.start, c.end, [c.name], c.corr, c.ext, m, k,
                                m.stream if m else -1, m.device if m else None))


def _same_op(trace: Trace, copy: RuntimeCall, sync: RuntimeCall) -> bool:
    """A copy and the sync right after it belong to one event when one op issued both: the same
    External id, or (a trace recorded without external correlation: the light pass) the same
    outermost op around both on their thread."""
    if copy.ext >= 0 or sync.ext >= 0:
        return copy.ext == sync.ext
    ops = trace.ops.get(copy.tid)
    if ops is not None and len(ops):
        a, b = ops.chain((copy.start + copy.end) / 2), ops.chain((sync.start + sync.end) / 2)
        if a or b:
            return bool(a) and bool(b) and a[-1] == b[-1]
    return True  # neither inside an op: adjacent on the thread with nothing kept in between


def place_in_windows(trace: Trace, events: list[HostSync], wins: list[StepWindow],
                     attributor: Attributor) -> tuple[list[HostSync], int]:
    """Keep the events inside the windows; drop the profiler's own sync. Returns (kept, ignored)."""
    index = WindowIndex(wins)
    kept: list[HostSync] = []
    ignored = 0
    has_steps = bool(trace.steps)
    last_bare = _last_bare_device_sync(trace, events) if not has_steps else None
    for ev in events:
        ev.window = index.find(ev.attr_time)
        if ev.window < 0:
            ignored += 1
            continue
        if attributor.is_profiler_call(ev.tid, ev.attr_time) or ev is last_bare:
            ev.profiler_own = True
            ignored += 1
            continue
        kept.append(ev)
    return kept, ignored


def _last_bare_device_sync(trace: Trace, events: list[HostSync]) -> HostSync | None:
    """Without steps or stacks: the profiler's stop sync is the trace's last call, a bare
    cudaDeviceSynchronize outside any op after which nothing more is launched."""
    if trace.with_stack or not events or not trace.calls:
        return None
    ev = events[-1]
    if base_call(ev.calls[-1]) not in ("cudaDeviceSynchronize", "cuCtxSynchronize") or ev.ext >= 0:
        return None
    if trace.calls[-1].start > ev.start:
        return None
    for act in trace.devices.values():
        if len(act) and max(act.corr) > ev.corr >= 0:
            return None
    return ev


def attribute(events: list[HostSync], attributor: Attributor) -> None:
    atts = [attributor.attribute(ev.tid, ev.attr_time) for ev in events]
    attributor.resolve_backward(atts)
    for ev, att in zip(events, atts):
        ev.att = att
        ev.rule = rule_for(att, ev.kind.direction if ev.kind else None, ev.calls)


def cost(trace: Trace, events: list[HostSync], wins: list[StepWindow]) -> None:
    """CPU blocked and GPU idle caused, per event (microseconds).

    cpu_blocked: the span of the event's calls on the host (copy call start to sync return).
    gpu_idle: the time the GPU (device-wide: all streams; kernels, copies and memsets) sits
      without work from the moment its queue drains during the sync (the end of the last work
      launched before the sync returned, clamped into the sync's span) until the first work
      launched after the sync returned starts (the window's end if none is), less any work from
      other threads or streams in between; and no more than the blocked time less the GPU time
      of the event's own copy. The span stops where the next sync starts, which takes over (two
      syncs in a row share one gap; it is counted once). The bound matters when the GPU was starved already (a
      launch-bound run): the gap after the drain is then mostly the host's own pace, and what
      the sync adds is only the time it held the host.
    gpu_busy_during: how much of the blocked span the GPU was busy, mostly draining work queued
      before the sync; that part of the blocked time is not a cost.
    """
    primary = trace.primary_device()
    for k, ev in enumerate(events):
        ev.cpu_blocked = ev.end - ev.start
        dev = ev.device if ev.device in trace.devices else primary
        act = trace.devices.get(dev) if dev is not None else None
        if act is None or not len(act):
            continue
        ev.device = dev
        busy = act.busy()
        drain, resume = act.drain_and_resume(ev.corr, ev.end)
        a = ev.start if drain is None else min(max(drain, ev.start), ev.end)
        w = wins[ev.window] if 0 <= ev.window < len(wins) else None
        b = resume if resume is not None else (max(w.end, a) if w else a)
        nxt = events[k + 1].start if k + 1 < len(events) else None
        if nxt is not None and a <= nxt < b:
            b = nxt
        ev.idle_span = (a, b) if b > a else (a, a)
        own = (ev.copy.end - ev.copy.start) if ev.copy is not None else 0.0
        ev.gpu_idle = max(0.0, min(busy.uncovered(a, b), ev.cpu_blocked - own))
        ev.gpu_busy_during = busy.covered(ev.start, ev.end)


def match_source_sites(events: Sequence[Any], wins: list[StepWindow], sites: Sequence[Any]) -> int:
    """Give sync events (or, in a trace without GPU activity, the ops that would sync:
    would_sync.WouldSync) the exact call sites recorded by the profiler's run-time hooks.

    Matching: sites are grouped by `step` (N of
    ProfilerStep#N; a site whose step is None, or any site when the trace has no step markers,
    goes into one sequence over the whole trace) and ordered by `order`. The trace's events of that
    step are taken in host time order. Walking both in order, each site takes the next unmatched
    event whose ops (innermost to outermost, or the forward op) include the site's `op` (with or
    without the `aten::` prefix); a site with no `op` takes the next event issued by an op. Events
    the hook cannot see (torch.cuda.synchronize(), event syncs, pageable non_blocking copies) are
    skipped over. A site whose op no event left shows is matched as if its op were None; a site
    with no compatible event left is unmatched; so is a site whose op is exact (`exact_op`: named
    by the dispatcher, CPU runs) when no event left shows it. Returns the unmatched count.
    """
    by_number = {w.number: i for i, w in enumerate(wins) if w.number is not None}
    groups: dict[Any, list[dict]] = {}
    for s in sites:
        if not isinstance(s, dict):
            continue
        step = s.get("step")
        if step is None or not by_number:
            # no step given, or a trace without ProfilerStep#N: one sequence over the trace
            key = 0 if len(wins) == 1 else None
        else:
            try:
                key = by_number.get(int(step), -1)
            except (TypeError, ValueError):
                key = next((i for i, w in enumerate(wins) if w.name == step), -1)
        groups.setdefault(key, []).append(s)
    unmatched = 0
    for key, group in groups.items():
        if key == -1:
            unmatched += len(group)
            continue
        group.sort(key=lambda s: (s.get("order") is None, s.get("order") or 0))
        cands = [e for e in events if key is None or e.window == key]
        pos = 0
        for s in group:
            want = _norm_op(s.get("op"))
            j = _next_compatible(cands, pos, want)
            if j is None and want is not None and not s.get("exact_op"):
                # the hook names the op from the Python instruction; the trace may show the
                # sync under other ops (`x[i]` with a tensor index reads it with item())
                j = _next_compatible(cands, pos, None)
            if j is None:
                unmatched += 1
                continue
            cands[j].site = s
            pos = j + 1
    return unmatched


def _next_compatible(cands: list[HostSync], pos: int, want: str | None) -> int | None:
    for j in range(pos, len(cands)):
        if _compatible(cands[j], want):
            return j
    return None


def _norm_op(op) -> str | None:
    if not op or not isinstance(op, str):
        return None
    return op.split("::")[-1]


def _compatible(ev: HostSync, want: str | None) -> bool:
    if ev.site is not None or ev.att is None:
        return False
    names = [*ev.att.chain, ev.att.forward_op or "", ev.att.backward_node or ""]
    if want is None:
        return bool(ev.att.chain)
    return any(n and n.split("::")[-1] == want for n in names)
