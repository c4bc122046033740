"""`render_ranks(report) -> list[str]`: the ranks and the cross-rank section of a report of
several ranks (schema.MultiRank) as text lines. Reads the report only."""

from __future__ import annotations

from typing import Any, Mapping

from syncscan.units import format_ms as _ms

ROWS_SHOWN = 16  # ranks listed one per line; past that, the extremes
WHERE = {"gpu": "NCCL kernels on the GPUs", "host": "gloo's host threads"}


def _site(s: Mapping[str, Any]) -> str:
    op, outer = s.get("op"), s.get("outer_op")
    what = f"{op} in {outer}" if outer and outer != op else (op or "sync")
    where = ""
    if s.get("file"):
        where = f"  {s['file']}:{s.get('line')}" + (f" {s['function']}" if s.get("function") else "")
    rule = f"  {s['rule']} {s.get('rule_name') or ''}".rstrip() if s.get("rule") else ""
    return f"{what}{rule}{where}"


def _ranks_list(ranks: list) -> str:
    return ", ".join(str(r) for r in ranks) if len(ranks) <= 8 else f"{ranks[0]}..{ranks[-1]} ({len(ranks)} ranks)"


def _rank_rows(report: Mapping[str, Any]) -> list[str]:
    ranks = report.get("ranks") or []
    cross = report.get("cross_rank") or {}
    waits = dict(zip(cross.get("ranks") or [], cross.get("wait_ms_per_step") or []))
    measured = any(r["gpu_activity"] for r in ranks)
    what = "syncs/step" if measured else "would sync/step"
    head = f"  {'rank':>5}  {'ms/step':>10}  {'GPU idle/step':>13}  {what:>15}  {'collective wait/step':>20}"
    rows = [head]
    shown = ranks
    if len(ranks) > ROWS_SHOWN:  # the slowest and the fastest few
        by_wait = sorted(ranks, key=lambda r: waits.get(r["rank"]) or 0.0)
        shown = by_wait[: ROWS_SHOWN // 2] + by_wait[-ROWS_SHOWN // 2:]
        shown.sort(key=lambda r: r["rank"])
    for r in shown:
        n = max(len(r["steps"]), 1)
        count = (sum(s["syncs"] for s in r["steps"]) if measured
                 else sum(s.get("would_sync") or 0 for s in r["steps"])) / n
        rows.append(f"  {r['rank']:>5}  {_ms(r['ms_per_step']):>10}  {_ms(r['gpu_idle_ms_per_step']):>13}  "
                    f"{count:>15.2f}  {_ms(waits.get(r['rank'])):>20}")
    if len(shown) < len(ranks):
        rows.append(f"  ({len(ranks) - len(shown)} more ranks between these; all in report.json)")
    return rows


def render_ranks(report: Mapping[str, Any]) -> list[str]:
    """The lines for `ranks` and `cross_rank` ([] for a report of one process)."""
    cross = report.get("cross_rank")
    ranks = report.get("ranks")
    if not cross or not ranks:
        return []
    dist = report.get("distributed") or {}
    backend = f", {dist['backend']}" if dist.get("backend") else ""
    on = WHERE.get(cross.get("collectives_on") or "", "no collectives seen")
    out = [f"Ranks: {len(ranks)} of {cross.get('world_size') or len(ranks)}{backend} · collectives: {on}"
           + (f" · {cross['collectives_matched']} matched across ranks" if cross.get("collectives_matched") else "")]
    out += _rank_rows(report)
    st = cross.get("straggler")
    if st:
        out.append(f"Straggler: rank {st['rank']} (busiest in {st['steps']} of {st['of_steps']} steps: "
                   f"{_ms(st['busy_ms_per_step'])} of work per step, the others {_ms(st['others_busy_ms_per_step'])}); "
                   f"the others wait {_ms(st['others_wait_ms_per_step'])} per step in collectives")
    elif cross.get("steps"):
        out.append("Straggler: none (no rank works 5% of a step longer than the others)")
    if cross.get("skew_ms_per_step") is not None:
        out.append(f"Step skew: {_ms(cross['skew_ms_per_step'])} per step (busiest rank's work less the least busy's)")
    only = cross.get("rank_only_syncs") or []
    if only:
        kind = "Syncs" if only[0].get("measured") else "Ops that would sync on a GPU,"
        out.append(f"{kind} on some ranks only:")
        for s in only:
            out.append(f"  {_site(s)}")
            line = f"    on rank {_ranks_list(s['ranks'])} (not {_ranks_list(s['not_on'])}), {s['per_step']:g}/step"
            if s.get("next_collective"):
                line += (f"; at the next collective ({s['next_collective']}) the other ranks wait "
                         f"{_ms(s['others_wait_ms_per_step'])} per step")
                if s.get("own_gpu_idle_ms_per_step") is not None:
                    line += (f"; it idles its own GPU {_ms(s['own_gpu_idle_ms_per_step'])}: costs the others "
                             f"{_ms(s['cost_to_others_ms_per_step'])} per step")
                if s.get("job_saving_ms_per_step") is not None:
                    line += f"; removing it saves the job {_ms(s['job_saving_ms_per_step'])} per step"
            out.append(line)
    for n in cross.get("notes") or []:
        out.append(f"  - {n}")
    reports = dist.get("rank_reports") or []
    if reports:
        out.append(f"each rank's own report: {reports[0].rsplit('/', 1)[0]}/")
    return out
