"""What the ops that sync cost themselves: host time and the GPU work they launch.

A sync's cost to the GPU is the idle it causes (syncs.cost), but rewriting the code removes the
whole op that synced (`nonzero`, `x[m]`, `unique`): on a host-bound step its host time, on a
GPU-bound one also the kernels it launched. Per sync site:

- host: the host interval of each outermost op instance (the site's `outer_op`, the backward
  node in backward) that contained one of the site's syncs, each instance once however many
  times it synced; a sync outside any op counts its own calls' span;
- GPU: the union of the intervals of the GPU activity (kernels, copies, memsets, all devices and
  streams) launched from inside those instances: the runtime calls on the instance's thread that
  start inside its host interval, joined to the GPU activity by correlation id. A union, not a
  sum: it is GPU time the rewrite can free, and work on two streams at once frees it once.
"""

from __future__ import annotations

from syncscan.trace.intervals import IntervalSet
from syncscan.trace.model import Trace
from syncscan.trace.syncs import HostSync


def instance_key(ev: HostSync) -> tuple:
    """The op instance an event counts against: (thread, op index), or (thread, -1, start, end)
    for a sync outside any op (its own calls)."""
    att = ev.att
    if att is not None and att.outer_index >= 0:
        return (att.op_tid, att.outer_index)
    return (ev.tid, -1, ev.start, ev.end)


def _span(trace: Trace, key: tuple) -> tuple[object, float, float]:
    if key[1] < 0:
        return key[0], key[2], key[3]
    ops = trace.ops[key[0]]
    return key[0], ops.starts[key[1]], ops.ends[key[1]]


def measure(trace: Trace, groups: list[set]) -> list[tuple[float, float | None]]:
    """(host µs, GPU µs or None without GPU activity) for each set of instance keys."""
    host = [0.0] * len(groups)
    wanted: dict[int, list[int]] = {}  # correlation id -> groups whose instances launched it
    for g, keys in enumerate(groups):
        for key in keys:
            tid, start, end = _span(trace, key)
            host[g] += end - start
            launches = trace.launches.get(tid)
            if launches is not None:
                for corr in launches.between(start, end):
                    wanted.setdefault(corr, []).append(g)
    if not trace.has_gpu_activity:
        return [(h, None) for h in host]
    starts: list[list[float]] = [[] for _ in groups]
    ends: list[list[float]] = [[] for _ in groups]
    if wanted:
        for act in trace.devices.values():
            for i, corr in enumerate(act.corr):
                gs = wanted.get(corr)
                if gs is not None:
                    for g in gs:
                        starts[g].append(act.starts[i])
                        ends[g].append(act.ends[i])
    return [(host[g], IntervalSet.from_arrays(starts[g], ends[g]).total()) for g in range(len(groups))]
