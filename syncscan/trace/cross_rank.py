"""Across the ranks of one run: who waits in collectives, who makes them wait, and the syncs only
some ranks run. Pure functions over the ranks' timelines (syncscan.trace.ranks) and sites.

- **Collective wait.** The same collective (same step, process group, kind and order) runs on
  every rank; its duration on a rank is the time that rank waited for the last one to arrive
  plus the transfer, and the last rank to arrive waits least. So a rank's wait in it is its
  duration less the shortest duration any rank had (as TraceLens' NCCL analyser takes the
  minimum across ranks as the transfer time). Durations only: no common clock is needed.
- **Straggler and skew.** A rank's busy time in a step is the step's duration less its waits.
  The skew of a step is the busiest rank's busy time less the least busy one's; the straggler is
  the busiest rank when the skew is at least STRAGGLER_MIN_SHARE of the step (else no rank
  stands out). Over the run, the straggler is the rank that is it in most steps.
- **Syncs on some ranks only.** Sites are matched across ranks by what they are (op, rule, file,
  line, function, phase); a site that runs on some ranks and not on others is listed with the
  ranks it runs on. Each of its syncs delays its rank; the other ranks pay at the collective
  that rank reaches next: their wait there is listed as what the site costs them, bounded by the
  GPU idle the sync caused on its own rank when that was measured (a wait longer than the delay
  has another cause).
"""

from __future__ import annotations

from bisect import bisect_right
from statistics import median
from typing import Any, Dict, List, Optional, Sequence, Tuple

from syncscan.schema import CrossRank, CrossRankStep, RankOnlySync, Straggler
from syncscan.trace.ranks import RankTimeline

# the busiest rank is called the straggler of a step when it works this much longer than the
# least busy one, as a share of the step (below that, ranks are even within noise)
STRAGGLER_MIN_SHARE = 0.05
# what makes two ranks' sites the same site
SITE_IDENTITY = ("op", "outer_op", "forward_op", "phase", "rule", "function")
SITE_FIELDS = ("op", "outer_op", "forward_op", "phase", "scope", "file", "line", "function", "line_kind",
               "rule", "rule_name", "rewrite")
METHOD = ("a collective's wait on a rank is its duration there less the shortest duration any rank had "
          "(the last rank to arrive waits least); busy = step time less the waits; skew = busiest less "
          "least busy rank")


def _file_key(path: Any) -> Optional[str]:
    """The file's last two path parts: ranks on other hosts may see other absolute prefixes."""
    if not isinstance(path, str) or not path:
        return None
    return "/".join(path.replace("\\", "/").split("/")[-2:])


def site_key(site: dict) -> tuple:
    return (*(site.get(k) for k in SITE_IDENTITY), _file_key(site.get("file")), site.get("line"))


def _step_ids(tl: RankTimeline) -> List[Any]:
    """Each step's identity across ranks: its ProfilerStep number (its index without one)."""
    return [s.get("number") if s.get("number") is not None else f"#{i}" for i, s in enumerate(tl["steps"])]


def _round(x: Optional[float], nd: int = 4) -> Optional[float]:
    return None if x is None else round(x, nd)


class _Collectives:
    """The shortest duration of every collective, by (step id, key), over the ranks. Nothing per
    rank is kept: each rank's waits are read off its own timeline's columns when asked, so memory
    grows with the collectives of one step range, not with the ranks."""

    def __init__(self, ranks: Sequence[Tuple[int, RankTimeline]]):
        self.ranks = ranks
        shortest: Dict[tuple, float] = {}
        seen: Dict[tuple, int] = {}
        for _, tl in ranks:
            for k, ms in self._items(tl):
                if ms < shortest.get(k, float("inf")):
                    shortest[k] = ms
                seen[k] = seen.get(k, 0) + 1
        n = len(ranks)
        # a collective some rank has no record of (a trace cut short) cannot be compared
        self.unmatched = sum(1 for m in seen.values() if m != n)
        self.shortest = {k: ms for k, ms in shortest.items() if seen[k] == n}

    @staticmethod
    def _items(tl: RankTimeline):
        ids = _step_ids(tl)
        c = tl["collectives"]
        return (((ids[step], key), ms) for step, key, ms in zip(c["step"], c["key"], c["ms"]))

    @property
    def matched(self) -> int:
        return len(self.shortest)

    def waits_per_step(self, rank_i: int) -> Dict[Any, float]:
        """The rank's wait in each step: its matched collectives' durations less the shortest."""
        out: Dict[Any, float] = {}
        for k, ms in self._items(self.ranks[rank_i][1]):
            low = self.shortest.get(k)
            if low is not None:
                out[k[0]] = out.get(k[0], 0.0) + ms - low
        return out

    def waits_at(self, keys: set) -> Dict[tuple, List[Optional[float]]]:
        """Every rank's wait at each of `keys` (None where the rank has no record of it)."""
        out: Dict[tuple, List[Optional[float]]] = {k: [None] * len(self.ranks) for k in keys if k in self.shortest}
        for i, (_, tl) in enumerate(self.ranks):
            for k, ms in self._items(tl):
                row = out.get(k)
                if row is not None:
                    row[i] = ms - self.shortest[k]
        return out


def _steps(ranks: Sequence[Tuple[int, RankTimeline]], colls: _Collectives) -> List[CrossRankStep]:
    common: Optional[set] = None
    for _, tl in ranks:
        common = set(_step_ids(tl)) if common is None else common & set(_step_ids(tl))
    order = [s for s in _step_ids(ranks[0][1]) if s in (common or set())]
    waits: List[Dict[Any, float]] = []
    durations: List[Dict[Any, float]] = []
    for i, (_, tl) in enumerate(ranks):
        ids = _step_ids(tl)
        durations.append({ids[j]: s["duration_ms"] for j, s in enumerate(tl["steps"])})
        waits.append(colls.waits_per_step(i))
    out: List[CrossRankStep] = []
    for sid in order:
        dur = [d.get(sid) for d in durations]
        wait = [w.get(sid, 0.0) for w in waits]
        busy = [None if d is None else d - x for d, x in zip(dur, wait)]
        known = [(b, i) for i, b in enumerate(busy) if b is not None]
        skew = straggler = None
        if len(known) >= 2:
            hi, lo = max(known), min(known)
            skew = hi[0] - lo[0]
            step_ms = median(d for d in dur if d is not None)
            if step_ms > 0 and skew >= STRAGGLER_MIN_SHARE * step_ms:
                straggler = ranks[hi[1]][0]
        out.append({"number": sid if isinstance(sid, int) else None,
                    "duration_ms": [_round(d) for d in dur],
                    "collective_wait_ms": [_round(x) for x in wait],
                    "busy_ms": [_round(b) for b in busy],
                    "skew_ms": _round(skew), "straggler": straggler})
    return out


def _straggler(ranks: Sequence[Tuple[int, RankTimeline]], steps: List[CrossRankStep]) -> Optional[Straggler]:
    """The rank that is the steps' straggler most often (ties: the lower rank), with what it costs."""
    picked = [s["straggler"] for s in steps if s["straggler"] is not None]
    if not picked:
        return None
    rank = max(set(picked), key=lambda r: (picked.count(r), -r))
    i = next(j for j, (r, _) in enumerate(ranks) if r == rank)
    mine: List[float] = [b for s in steps if (b := s["busy_ms"][i]) is not None]
    others_busy: List[float] = [b for s in steps for j, b in enumerate(s["busy_ms"]) if j != i and b is not None]
    others_wait: List[float] = [w for s in steps for j, w in enumerate(s["collective_wait_ms"])
                                if j != i and w is not None]
    n_others = max(len(ranks) - 1, 1)
    return {"rank": rank, "steps": picked.count(rank), "of_steps": len(steps),
            "busy_ms_per_step": round(sum(mine) / len(mine), 4) if mine else 0.0,
            "others_busy_ms_per_step": round(median(others_busy), 4) if others_busy else 0.0,
            "others_wait_ms_per_step": round(sum(others_wait) / (len(steps) * n_others), 4) if steps else 0.0}


def _job_saving(own_idle: Optional[float], on: Sequence[int], waits: Sequence[Optional[float]]) -> Optional[float]:
    """What removing a sync on the ranks `on` saves the whole job per step. The ranks meet at their
    collectives, so a step lasts as long as the busiest rank's work: the sync's ranks get faster by
    the GPU idle it causes there (`own_idle`), and the job by that much at most, and by no more than
    the other ranks waited on them (each rank's mean collective wait per step, `waits`: the slack
    between the sync's ranks and the next busiest). A sync on a rank that waits for a straggler
    saves nothing."""
    others = [w for i, w in enumerate(waits) if i not in on and w is not None]
    if own_idle is None or not others:
        return None
    mine = max((w for i, w in enumerate(waits) if i in on and w is not None), default=0.0)
    return round(max(0.0, min(own_idle, min(others) - mine)), 4)


def _rank_only(ranks: Sequence[Tuple[int, RankTimeline]], sites: Sequence[List[dict]], colls: _Collectives,
               n_steps: int, rank_waits: Sequence[Optional[float]] = ()) -> List[RankOnlySync]:
    union: Dict[tuple, Dict[str, Any]] = {}
    for i, rank_sites in enumerate(sites):
        for j, s in enumerate(rank_sites):
            if not s.get("count"):
                continue
            u = union.setdefault(site_key(s), {"site": s, "on": {}})
            u["on"][i] = j
    only = [u for u in union.values() if len(u["on"]) < len(ranks)]
    # the collective each of their syncs' ranks starts next, then every rank's wait at those
    nexts = {id(u): {i: _next_collectives(ranks[i][1], j) for i, j in u["on"].items()} for u in only}
    at = colls.waits_at({k for per in nexts.values() for keys in per.values() for k in keys})
    all_ranks = [r for r, _ in ranks]
    measured = bool(ranks[0][1]["syncs_measured"])
    out: List[RankOnlySync] = []
    for u in only:
        on = u["on"]
        others = [i for i in range(len(ranks)) if i not in on]
        count = waited = idle = 0.0
        idle_known = True
        names: Dict[str, int] = {}
        for i, j in on.items():
            site = sites[i][j]
            count += site.get("count") or 0
            if site.get("gpu_idle_ms") is None:
                idle_known = False
            else:
                idle += site["gpu_idle_ms"]
            for k in nexts[id(u)][i]:
                row = at.get(k)
                waits: List[float] = [w for o in others if row is not None and (w := row[o]) is not None]
                if not waits:
                    continue
                name = k[1].split("/", 1)[-1].split("#", 1)[0]
                names[name] = names.get(name, 0) + 1
                waited += sum(waits) / len(waits)
        n = max(n_steps, 1) * len(on)
        own_idle = idle / n if idle_known and measured else None
        wait = waited / n
        rec = {k: u["site"].get(k) for k in SITE_FIELDS}
        out.append({**rec,  # type: ignore[typeddict-item]
                    "measured": measured,
                    "ranks": [ranks[i][0] for i in sorted(on)],
                    "not_on": [r for r in all_ranks if r not in {ranks[i][0] for i in on}],
                    "per_step": round(count / n, 3),
                    "next_collective": max(names, key=names.__getitem__) if names else None,
                    "others_wait_ms_per_step": round(wait, 4) if names else None,
                    "own_gpu_idle_ms_per_step": _round(own_idle),
                    "cost_to_others_ms_per_step": (round(min(wait, own_idle) if own_idle is not None else wait, 4)
                                                   if names else None),
                    "job_saving_ms_per_step": _job_saving(own_idle, list(on), rank_waits) if names else None})
    out.sort(key=lambda s: (-(s["cost_to_others_ms_per_step"] or 0.0), -s["per_step"]))
    return out


def _next_collectives(tl: RankTimeline, site: int) -> List[tuple]:
    """For each sync of the site on this rank, the (step id, key) of the first collective the
    rank started after it."""
    c = tl["collectives"]
    ids = _step_ids(tl)
    order = sorted(range(len(c["t_ms"])), key=c["t_ms"].__getitem__)
    times = [c["t_ms"][k] for k in order]
    out = []
    s = tl["syncs"]
    for site_i, t in zip(s["site"], s["t_ms"]):
        if site_i != site:
            continue
        pos = bisect_right(times, t)
        if pos < len(order):
            k = order[pos]
            out.append((ids[c["step"][k]], c["key"][k]))
    return out


def cross_rank(ranks: Sequence[Tuple[int, RankTimeline]], sites: Sequence[List[dict]],
               world_size: Optional[int] = None) -> CrossRank:
    """The cross-rank section of a multi-rank report. `ranks`: (rank, timeline) in rank order;
    `sites`: each rank's sites (its report's `syncs`, or `would_sync` without a GPU), which the
    timelines' sync columns index."""
    colls = _Collectives(ranks)
    steps = _steps(ranks, colls)
    n_steps = len(steps)
    waits = []
    for i in range(len(ranks)):
        col: List[float] = [w for s in steps if (w := s["collective_wait_ms"][i]) is not None]
        waits.append(round(sum(col) / len(col), 4) if col else None)
    skews: List[float] = [k for s in steps if (k := s["skew_ms"]) is not None]
    on = {tl["collectives_on"] for _, tl in ranks if tl["collectives_on"]}
    notes: List[str] = []
    present = [r for r, _ in ranks]
    missing = sorted(set(range(world_size)) - set(present)) if world_size else []
    if missing:
        notes.append(f"no trace of rank(s) {', '.join(map(str, missing))}: the comparison covers the others only")
    if not on:
        notes.append("no collective in the traces' steps: no waits to compare")
    elif len(on) > 1:
        notes.append("some ranks' collectives are NCCL kernels, others gloo host calls: compared as they are")
    if colls.unmatched:
        notes.append(f"{colls.unmatched} collective(s) not seen on every rank were left out of the waits")
    return {
        "ranks": present,
        "world_size": world_size,
        "missing_ranks": missing,
        "collectives_on": on.pop() if len(on) == 1 else None,  # type: ignore[typeddict-item]
        "method": METHOD,
        "collectives_matched": colls.matched,
        "collectives_unmatched": colls.unmatched,
        "steps": steps,
        "wait_ms_per_step": waits,
        "skew_ms_per_step": round(sum(skews) / len(skews), 4) if skews else None,
        "straggler": _straggler(ranks, steps),
        "rank_only_syncs": _rank_only(ranks, sites, colls, n_steps, waits),
        "notes": notes,
    }
