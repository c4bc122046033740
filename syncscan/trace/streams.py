"""GPU streams, their overlap, utilisation per step, and memory copies.

Definitions (the ones TensorBoard's plugin and HTA use, see shared/reference/kineto-trace.md):
- busy time of a stream = length of the union of its kernel intervals, over all the GPU activity
  the trace recorded (the profiler records the active steps; work launched in the last step and
  still running after it counts, as it should);
- GPU busy in a step = union of kernel intervals over all streams of the device, clipped to the
  step's wall window; utilisation = busy / step wall time (never above 100%, unlike a per-stream
  sum);
- overlap of streams a and b = length of busy(a) ∩ busy(b); its share is overlap divided by the
  busy time of the less busy stream (1.0 = the smaller one runs entirely alongside the other);
- a copy is hidden for the part of its interval during which kernels run on the device.
"""

from __future__ import annotations

from dataclasses import dataclass

from syncscan.trace.attribution import Attributor
from syncscan.trace.intervals import IntervalSet
from syncscan.trace.model import KERNEL, MEMCPY, MEMSET, DeviceActivity, Trace
from syncscan.trace.syncs import HostSync, copy_kind
from syncscan.units import US_PER_MS


@dataclass
class StreamStats:
    device: object
    stream: int
    kernels: int
    busy: IntervalSet
    copies: int
    copy_time: float
    memsets: int


def stream_stats(act: DeviceActivity) -> list[StreamStats]:
    """Per stream of one device: kernel count and busy union, copies, memsets."""
    per: dict[int, list] = {}
    kind, starts, ends, streams = act.kind, act.starts, act.ends, act.streams
    for i in range(len(starts)):
        row = per.get(streams[i])
        if row is None:
            row = per[streams[i]] = [[], [], 0, 0.0, 0]
        k = kind[i]
        if k == KERNEL:
            row[0].append(starts[i])
            row[1].append(ends[i])
        elif k == MEMCPY:
            row[2] += 1
            row[3] += ends[i] - starts[i]
        elif k == MEMSET:
            row[4] += 1
    out = []
    for stream in sorted(per):
        s, e, ncopy, tcopy, nset = per[stream]
        out.append(StreamStats(act.device, stream, len(s), IntervalSet.from_arrays(s, e), ncopy, tcopy, nset))
    return out


def streams_report(trace: Trace) -> tuple[list[dict], list[dict], dict]:
    """(streams, overlap, per-device kernel union) for the report."""
    streams: list[dict] = []
    overlap: list[dict] = []
    unions: dict = {}
    for dev, act in sorted(trace.devices.items(), key=lambda kv: str(kv[0])):
        stats = stream_stats(act)
        unions[dev] = IntervalSet.from_arrays(
            [s for st in stats for s in st.busy.starts], [e for st in stats for e in st.busy.ends])
        for st in stats:
            if not st.kernels and not st.copies and not st.memsets:
                continue
            streams.append({
                "device": dev, "stream": st.stream, "kernels": st.kernels,
                "busy_ms": st.busy.total() / US_PER_MS,
                "copies": st.copies, "copy_ms": st.copy_time / US_PER_MS, "memsets": st.memsets,
            })
        busy_streams = [st for st in stats if st.kernels]
        for x in range(len(busy_streams)):
            for y in range(x + 1, len(busy_streams)):
                a, b = busy_streams[x], busy_streams[y]
                ov = a.busy.intersection_length(b.busy)
                less = min(a.busy.total(), b.busy.total())
                overlap.append({
                    "device": dev, "streams": [a.stream, b.stream],
                    "overlap_ms": ov / US_PER_MS,
                    "share_of_less_busy": (ov / less) if less > 0 else 0.0,
                })
    return streams, overlap, unions


def memcpy_report(trace: Trace, attributor: Attributor, syncs: list[HostSync], unions: dict) -> list[dict]:
    """All copies in the trace, grouped by direction and host memory kind."""
    call_of = {c.corr: c for c in trace.calls if c.corr >= 0 and "emcpy" in c.name}
    synced = {id(ev.copy) for ev in syncs if ev.copy is not None}
    groups: dict[tuple, dict] = {}
    for m in trace.memcpy_list:
        k = copy_kind(m)
        assert k is not None  # a copy record always has a kind ("?" when its name does not say)
        key = (k.direction, k.host_memory)
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"direction": k.direction, "memory": k.host_memory, "name": m.name,
                               "count": 0, "bytes": 0, "time_ms": 0.0, "hidden_ms": 0.0,
                               "hidden_share": 0.0, "host_syncs": 0, "ops": {}}
        g["count"] += 1
        g["bytes"] += max(m.nbytes, 0)
        g["time_ms"] += (m.end - m.start) / US_PER_MS
        kernels = unions.get(m.device)
        if kernels is not None:
            g["hidden_ms"] += kernels.covered(m.start, m.end) / US_PER_MS
        if id(m) in synced:
            g["host_syncs"] += 1
        call = call_of.get(m.corr)
        op = None
        if call is not None:
            att = attributor.attribute(call.tid, (call.start + call.end) / 2)
            op = att.outer_op
        g["ops"][op or "(no op)"] = g["ops"].get(op or "(no op)", 0) + 1
    out = sorted(groups.values(), key=lambda g: -g["time_ms"])
    for g in out:
        g["hidden_share"] = g["hidden_ms"] / g["time_ms"] if g["time_ms"] > 0 else 0.0
        g["ops"] = dict(sorted(g["ops"].items(), key=lambda kv: -kv[1]))
    return out
