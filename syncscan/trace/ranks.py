"""One rank's part of a multi-rank run: which rank wrote a trace, and the times that the
cross-rank analysis (syncscan.trace.cross_rank) compares.

`timeline(trace, analysis)` keeps, in compact columns, what the comparison needs once the trace
itself is gone: the steps, the collectives (keyed the same way on every rank), the times of the
syncs (or, without a GPU, of the ops that would sync) and the `c10d::*` calls on the host.
Times are ms from the rank's first step on its own clock: ranks are compared by durations and
by the order of events on each rank, never by timestamps across ranks, so the traces of several
hosts compare without a common clock.

A timeline is plain JSON but for its number columns, which are arrays (`jsonable` makes them
lists): `syncscan profile` ranks hand theirs to rank 0 (syncscan.runtime.distributed), `syncscan
analyze DIR` builds one per trace and drops the trace.
"""

from __future__ import annotations

import sys
from array import array
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, TypedDict, Union

from syncscan.trace.attribution import Attributor
from syncscan.trace.collectives import blocking_calls, in_steps
from syncscan.trace.load import find_traces, read_header
from syncscan.trace.model import Trace
from syncscan.trace.steps import windows
from syncscan.units import US_PER_MS


class DistInfo(TypedDict):
    """What a trace says about its process: torch.profiler's `distributedInfo` header."""

    rank: Optional[int]
    world_size: Optional[int]
    backend: Optional[str]


# number columns: arrays here, lists once a timeline has been through JSON
Ints = Union[List[int], "array[int]"]
Floats = Union[List[float], "array[float]"]


class Columns(TypedDict):
    step: Ints          # index into the timeline's steps
    t_ms: Floats        # start, from the rank's first step


class CollectiveColumns(Columns):
    key: List[str]      # same on every rank for the same call (syncscan.trace.collectives)
    ms: Floats          # duration: transfer plus waiting for the other ranks


class SyncColumns(Columns):
    site: Ints          # index into the rank's `syncs` (GPU) or `would_sync` (CPU) sites


class BlockingCallGroup(TypedDict):
    """The calls of one blocking torch function from one user function, and how long they held
    the host (waiting for the other ranks included)."""

    api: str
    rule: str
    file: Optional[str]
    line: Optional[int]
    function: Optional[str]
    count: int
    host_ms: float
    per_step: List[int]


class RankTimeline(TypedDict):
    info: DistInfo
    steps: List[Dict[str, Any]]          # {"number": int | None, "duration_ms": float}
    collectives_on: Optional[str]        # "gpu" (NCCL kernels), "host" (gloo), None: none seen
    collectives: CollectiveColumns
    collectives_left_out: int
    syncs_measured: bool                 # sites are measured syncs (GPU) or ops that would sync
    syncs: SyncColumns
    calls: List[BlockingCallGroup]


def dist_info(meta: dict) -> DistInfo:
    """rank, world size and backend from a trace's header (None where it has no distributedInfo)."""
    d = meta.get("distributedInfo") if isinstance(meta, dict) else None
    d = d if isinstance(d, dict) else {}

    def num(key):
        v = d.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

    backend = d.get("backend")
    return {"rank": num("rank"), "world_size": num("world_size"),
            "backend": backend if isinstance(backend, str) else None}


def find_rank_traces(folder) -> Optional[List[Tuple[int, Path]]]:
    """The per-rank traces of one run in a folder, as (rank, path) in rank order; None when the
    folder does not hold traces of two ranks or more (then it is one process's run).

    Ranks come from each trace's `distributedInfo` (read from its header only). The traces of
    one run are those of one folder (a TensorBoard run: syncscan profile writes one per pass);
    of several such folders, syncscan's timing pass (`light`) is taken, else the newest. A rank
    with several traces in the folder (a profiler that ran several cycles) gives its newest."""
    by_folder: Dict[Path, Dict[int, Path]] = {}
    for p in find_traces(folder):  # newest first: the first trace seen of a rank is kept
        rank = dist_info(read_header(p))["rank"]
        if rank is not None:
            by_folder.setdefault(p.parent, {}).setdefault(rank, p)
    runs = {d: ranks for d, ranks in by_folder.items() if len(ranks) >= 2}
    if not runs:
        return None
    chosen = next((d for d in runs if d.name == "light"), None)
    if chosen is None:
        chosen = max(runs, key=lambda d: max(p.stat().st_mtime for p in runs[d].values()))
    return sorted(runs[chosen].items())


def _ms(us: float) -> float:
    return round(us / US_PER_MS, 4)


def blocking_call_groups(trace: Trace, wins=None, attributor: Optional[Attributor] = None) -> List[BlockingCallGroup]:
    """The trace's blocking torch.distributed calls grouped by function and the user's function
    around them, longest first (syncscan.trace.collectives.blocking_calls)."""
    wins = windows(trace) if wins is None else wins
    groups: Dict[tuple, BlockingCallGroup] = {}
    for b in blocking_calls(trace, wins, attributor or Attributor(trace)):
        key = (b.api, b.file, b.line, b.function)
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"api": b.api, "rule": b.rule, "file": b.file, "line": b.line, "function": b.function,
                               "count": 0, "host_ms": 0.0, "per_step": [0] * len(wins)}
        g["count"] += 1
        g["host_ms"] += b.duration / US_PER_MS
        g["per_step"][b.window] += 1
    out = sorted(groups.values(), key=lambda g: -g["host_ms"])
    for g in out:
        g["host_ms"] = round(g["host_ms"], 4)
    return out


def jsonable(value):
    """json.dumps' `default` for a timeline: its array columns as lists."""
    if isinstance(value, array):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def empty_timeline() -> RankTimeline:
    """The timeline of a rank whose trace could not be analysed: nothing to compare."""
    return {"info": {"rank": None, "world_size": None, "backend": None}, "steps": [], "collectives_on": None,
            "collectives": {"step": [], "t_ms": [], "key": [], "ms": []}, "collectives_left_out": 0,
            "syncs_measured": False, "syncs": {"step": [], "t_ms": [], "site": []}, "calls": []}


def timeline(trace: Trace, analysis) -> RankTimeline:
    """The rank's timeline from its trace and that trace's Analysis (syncscan.trace.pipeline)."""
    wins = windows(trace)
    t0 = wins[0].start if wins else 0.0
    colls, left_out = in_steps(trace, wins)
    measured = bool(analysis.report.get("gpu_activity"))
    items = analysis.events if measured else analysis.would_sync
    sites = analysis.event_site if measured else analysis.would_site
    placed = [(it, site) for it, site in zip(items, sites) if it.window >= 0]
    syncs: SyncColumns = {"step": array("i", (it.window for it, _ in placed)),
                          "t_ms": array("d", (_ms(it.start - t0) for it, _ in placed)),
                          "site": array("i", (site for _, site in placed))}
    return {
        "info": dist_info(trace.meta),
        "steps": [{"number": w.number, "duration_ms": _ms(w.duration)} for w in wins],
        "collectives_on": colls[0].where if colls else None,
        # numbers in arrays (24 bytes a collective, not 80: a 1,024-rank FSDP run holds millions);
        # keys interned: every rank names its collectives the same way
        "collectives": {"step": array("i", (c.window for c in colls)),
                        "t_ms": array("d", (_ms(c.start - t0) for c in colls)),
                        "key": [sys.intern(c.key) for c in colls],
                        "ms": array("d", (_ms(c.duration) for c in colls))},
        "collectives_left_out": left_out,
        "syncs_measured": measured,
        "syncs": syncs,
        "calls": blocking_call_groups(trace, wins),
    }
