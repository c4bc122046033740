"""The join of lint and runtime (schema.JoinReport) as text: confirmed sites with their cost and
rewrite, syncs lint missed, findings that did not sync."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional

from syncscan.present.analyze_text import saves
from syncscan.units import format_ms


def _where(d: Mapping[str, Any]) -> str:
    where = f"{_short(d.get('file'))}:{d.get('line')}"
    return where + " (def line)" if d.get("line_kind") == "def" else where


def _short(path: str | None) -> str:
    if not path:
        return "?"
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _op(d: Mapping[str, Any]) -> str:
    op, outer = d.get("op"), d.get("outer_op")
    return f"{op} in {outer}" if outer not in (None, op) else str(op)


def _cost_text(cost: Mapping[str, Any], measured: bool) -> str:
    if cost.get("host_wait_ms_per_step") is not None:  # a blocking torch.distributed call, timed
        return f"host waits {format_ms(cost['host_wait_ms_per_step'])}/step"
    if measured:
        saving = cost.get("saving_rewrite_ms_per_step")
        more = f", rewrite {saves(saving)}" if saving is not None else ""
        return f"{format_ms(cost.get('gpu_idle_ms_per_step') or 0.0)}/step GPU idle{more}"
    return f"would sync {cost.get('syncs_per_step', 0):g}/step"


def _ranks(site: Mapping[str, Any], finding: Optional[Mapping[str, Any]]) -> str:
    """A report of several ranks: the ranks the site ran on, and the rank condition lint saw."""
    if site.get("ranks") is None:
        return ""
    ranks = site["ranks"]
    on = ", ".join(map(str, ranks)) if len(ranks) <= 8 else f"{len(ranks)} ranks"
    cond = (finding or {}).get("rank_condition")
    return f"  [on rank {on}" + (f"; under `{cond['test']}`]" if cond else "]")


def render_join(j: Optional[Mapping[str, Any]], max_rows: int = 12) -> list[str]:
    """A short text section: confirmed sites with cost and rewrite, missed, not observed."""
    if not j:
        return []
    measured = j.get("measured", True)
    confirmed, missed, nobs = j["confirmed"], j["missed_by_lint"], j["not_observed"]
    # what to fix first: the largest predicted saving (the report's order otherwise)
    confirmed = sorted(confirmed, key=lambda c: -(c["cost"].get("saving_rewrite_ms_per_step") or 0.0))
    files = ", ".join(_short(p) for p in j.get("linted", [])) or "the profiled files"
    out = [f"Lint and runtime together (lint of {files})"]
    if not measured:
        out.append("  no GPU activity: the runtime side is the ops that would sync on a GPU, found by name")
    ranked = " (ranked by what the rewrite saves)" if any(
        c["cost"].get("saving_rewrite_ms_per_step") is not None for c in confirmed) else ""
    out.append(f"  confirmed by lint: {len(confirmed) or 'none'}{ranked}")
    width = max((len(_cost_text(c["cost"], measured)) for c in confirmed[:max_rows]), default=0)
    for c in confirmed[:max_rows]:
        f0 = c["findings"][0]
        more = f" (+{len(c['findings']) - 1} more)" if len(c["findings"]) > 1 else ""
        how = {"function": f" at {_where(c)}", "forward": " (backward of the forward op)"}.get(c.get("match"), "")
        out.append(f"    {_cost_text(c['cost'], measured):>{width}}  {_short(f0['path'])}:{f0['line']} "
                   f"{f0['code']} {f0['name']}{more}  <- {_op(c)}{how}{_ranks(c, f0)}")
        if c.get("rewrite"):
            out.append(f"    {'':>{width}}  rewrite: {c['rewrite']}")
    if any(c.get("match") == "function" for c in confirmed):
        out.append("    (def line: the trace gives only the line where the function starts; matched to a finding "
                   "of that op's rule in the function)")
    if len(confirmed) > max_rows:
        out.append(f"    ... {len(confirmed) - max_rows} more in the JSON report")
    out.append(f"  missed by lint: {len(missed) or 'none'}" + (" (runtime sites with no finding)" if missed else ""))
    for m in missed[:max_rows]:
        out.append(f"    {_cost_text(m['cost'], measured)}  {_where(m)} {_op(m)}{_ranks(m, None)}")
    label = "did not sync when profiled" if measured else "ran no op that would sync"
    out.append(f"  not observed: {len(nobs) or 'none'}" + (f" (hot findings that {label})" if nobs else ""))
    for f in nobs[:max_rows]:
        out.append(f"    {_short(f['path'])}:{f['line']} {f['code']} {f['name']}")
    if j.get("stale"):
        out.append(f"  {len(j['stale'])} runtime site(s) point at lines that do not fit the file as it is now "
                   "(edited since the run?): not matched")
    if j.get("unattributed"):
        out.append(f"  {j['unattributed']} runtime site(s) without a source line were not matched")
    return out
