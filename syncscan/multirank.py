"""One report for several ranks: each rank's record, the union of their sites, the cross-rank
section. Shared by `syncscan profile` (rank 0 merges what the ranks hand it) and `syncscan
analyze DIR` (a folder of per-rank traces). Pure functions over reports and timelines.

The merged report is the primary rank's own report (rank 0: the rank whose logging code runs)
plus `distributed`, `ranks` and `cross_rank` (schema.MultiRank); its `join` matches the sites of
every rank, each listed with the ranks it ran on.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from syncscan import catalog
from syncscan.schema import CrossRank, DistributedRun, RankRecord, RankStep
from syncscan.trace.cross_rank import cross_rank, site_key
from syncscan.trace.ranks import RankTimeline


def _mean(values) -> Optional[float]:
    values = [v for v in values if v is not None]
    return round(fmean(values), 4) if values else None


def rank_record(rank: int, report: Mapping[str, Any], tl: RankTimeline, *, host: Optional[str] = None,
                pid: Optional[int] = None, trace: Optional[str] = None, report_path: Optional[str] = None,
                status: Optional[str] = None, exit_code: Optional[int] = None,
                bare_ms_per_step: Optional[float] = None) -> RankRecord:
    """One rank's entry of `ranks`, from its analysis (a report's analysis keys) and timeline."""
    gpu = bool(report.get("gpu_activity"))
    steps_in = report.get("steps") or []
    coll_ms = [0.0] * len(steps_in)
    for step, ms in zip(tl["collectives"]["step"], tl["collectives"]["ms"]):
        if 0 <= step < len(coll_ms):
            coll_ms[step] += ms
    steps: List[RankStep] = []
    for i, s in enumerate(steps_in):
        busy = s.get("gpu_busy_ms")
        steps.append({"number": s.get("number"), "duration_ms": s["duration_ms"], "gpu_busy_ms": busy,
                      "gpu_idle_ms": round(s["duration_ms"] - busy, 6) if gpu and busy is not None else None,
                      "syncs": s.get("syncs") or 0, "would_sync": None if gpu else s.get("would_sync"),
                      "collective_ms": round(coll_ms[i], 4)})
    n = max(len(steps), 1)
    idle_syncs = report.get("total_gpu_idle_from_syncs_ms")
    return {
        "rank": rank, "host": host, "pid": pid, "trace": trace if trace is not None else report.get("trace"),
        "report": report_path, "status": status, "exit_code": exit_code,
        "bare_ms_per_step": bare_ms_per_step,
        "ms_per_step": _mean(s["duration_ms"] for s in steps),
        "steps": steps,
        "gpu_activity": gpu,
        "gpu_utilization": report.get("gpu_utilization"),
        "gpu_idle_ms_per_step": _mean(s["gpu_idle_ms"] for s in steps) if gpu else None,
        "gpu_idle_from_syncs_ms_per_step": round(idle_syncs / n, 4) if gpu and idle_syncs is not None else None,
        "total_syncs": report.get("total_syncs") or 0,
        "syncs": list(report.get("syncs") or []),
        "would_sync": list(report.get("would_sync") or []),
        "blocking_calls": list(tl["calls"]),
    }


def union_sites(records: Sequence[RankRecord], key: str) -> List[Dict[str, Any]]:
    """The sites of every rank, one entry per site (the first rank's record of it), each with
    the ranks it ran on: what the join matches against the lint findings."""
    out: Dict[tuple, Dict[str, Any]] = {}
    for rec in records:
        for s in rec[key]:  # type: ignore[literal-required]
            if not s.get("count"):
                continue
            k = site_key(s)
            if k not in out:
                out[k] = {**s, "ranks": []}
            out[k]["ranks"].append(rec["rank"])
    return list(out.values())


def blocking_sites(records: Sequence[RankRecord]) -> List[Dict[str, Any]]:
    """Every rank's blocking torch.distributed calls as runtime sites (rule SYN504, the user's
    function's def line), each with the host time they held per rank on average (`host_wait_ms`)
    and the ranks that made them: the join confirms SYN504 findings with measured waits."""
    out: Dict[tuple, Dict[str, Any]] = {}
    for rec in records:
        for b in rec["blocking_calls"]:
            if not b.get("file") or not b.get("line"):
                continue
            k = (b["api"], b["file"], b["line"], b["function"])
            site = out.get(k)
            if site is None:
                name = f"torch.distributed.{b['api']}"
                site = out[k] = {"op": name, "outer_op": name, "forward_op": None, "phase": "forward", "scope": None,
                                 "file": b["file"], "line": b["line"], "function": b["function"], "line_kind": "def",
                                 "stack": [], "rule": b["rule"], "rule_name": catalog.RULE_NAMES.get(b["rule"]),
                                 "rewrite": catalog.rewrite_for(b["rule"]), "count": b["count"],
                                 "per_step": list(b["per_step"]), "host_ms": [], "ranks": []}
            site["host_ms"].append(b["host_ms"])
            site["ranks"].append(rec["rank"])
    for site in out.values():
        waits = site.pop("host_ms")
        site["host_wait_ms"] = round(fmean(waits), 4)
    return list(out.values())


def union_report(primary: Dict[str, Any], records: Sequence[RankRecord]) -> Dict[str, Any]:
    """The primary report with the union of every rank's sites in place of its own (for the join),
    and their blocking torch.distributed calls."""
    blocking = blocking_sites(records)
    measured = bool(primary.get("gpu_activity"))
    syncs, would = union_sites(records, "syncs"), union_sites(records, "would_sync")
    return {**primary, "syncs": syncs + (blocking if measured else []),
            "would_sync": would + ([] if measured else blocking)}


def cross_section(records: Sequence[RankRecord], timelines: Sequence[Tuple[int, RankTimeline]],
                  world_size: Optional[int]) -> CrossRank:
    """The cross-rank section, from the records and timelines of the same ranks in rank order."""
    measured = any(r["gpu_activity"] for r in records)
    sites = [r["syncs"] if measured else r["would_sync"] for r in records]
    return cross_rank(timelines, sites, world_size)  # type: ignore[arg-type]


def merge(primary: Dict[str, Any], records: Sequence[RankRecord], timelines: Sequence[Tuple[int, RankTimeline]],
          distributed: DistributedRun) -> Dict[str, Any]:
    """The merged report: the primary rank's report, `distributed`, `ranks` and `cross_rank`."""
    return {**primary, "distributed": distributed, "ranks": list(records),
            "cross_rank": cross_section(records, timelines, distributed.get("world_size"))}
