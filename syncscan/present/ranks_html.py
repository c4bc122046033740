"""The ranks and cross-rank section of the HTML report (a report of several ranks,
schema.MultiRank): one row per rank, the collective wait of every rank in every step (shaded by
how long), the straggler and the syncs only some ranks run. Reads the report only."""

from __future__ import annotations

import html
from typing import Any, Mapping

from syncscan.present.ranks_text import WHERE

STEP_COLUMNS = 24  # steps shown in the wait table


def _esc(x) -> str:
    return html.escape("" if x is None else str(x))


def _ms(x) -> str:
    return "-" if x is None else f"{x:.3f} ms"


def _shade(x, top: float) -> str:
    """A cell's background: white for no wait, red for the longest wait of the table."""
    if x is None or top <= 0:
        return ""
    alpha = max(0.0, min(1.0, x / top))
    return f' style="background: rgba(214, 39, 40, {0.75 * alpha:.2f})"'


def ranks_section(report: Mapping[str, Any]) -> str:
    cross, ranks = report.get("cross_rank"), report.get("ranks")
    if not cross or not ranks:
        return ""
    measured = any(r["gpu_activity"] for r in ranks)
    waits = dict(zip(cross["ranks"], cross["wait_ms_per_step"]))
    out = [f'<h2>Ranks: {len(ranks)} of {_esc(cross.get("world_size") or len(ranks))}</h2>',
           f'<p class="note">Collectives: {_esc(WHERE.get(cross.get("collectives_on") or "", "none seen"))}. '
           f'{_esc(cross["method"])}.</p>',
           '<table class="ranks"><tr><th>rank</th><th>ms / step</th><th>GPU idle / step</th>'
           f'<th>{"syncs" if measured else "would sync"} / step</th><th>collective wait / step</th></tr>']
    for r in ranks:
        n = max(len(r["steps"]), 1)
        count = sum((s["syncs"] if measured else s.get("would_sync") or 0) for s in r["steps"]) / n
        out.append(f'<tr><td class="num">{r["rank"]}</td><td class="num">{_ms(r["ms_per_step"])}</td>'
                   f'<td class="num">{_ms(r["gpu_idle_ms_per_step"])}</td><td class="num">{count:.2f}</td>'
                   f'<td class="num">{_ms(waits.get(r["rank"]))}</td></tr>')
    out.append("</table>")
    steps = cross["steps"][:STEP_COLUMNS]
    if steps:
        top = max((w or 0.0) for s in steps for w in s["collective_wait_ms"])
        out.append('<p class="note">Time each rank waited in collectives for the others, per step '
                   '(the straggler\'s column is the one with the least wait).</p>')
        out.append('<table class="waits"><tr><th>rank</th>'
                   + "".join(f'<th>step {_esc(s["number"])}</th>' for s in steps) + "</tr>")
        for i, rank in enumerate(cross["ranks"]):
            cells = "".join(f'<td class="num"{_shade(w, top)}>{_ms(w)}</td>'
                            for w in (s["collective_wait_ms"][i] for s in steps))
            out.append(f'<tr><td class="num">{rank}</td>{cells}</tr>')
        out.append('<tr><th>straggler</th>' + "".join(
            f'<td class="num">{_esc(s["straggler"]) if s["straggler"] is not None else "-"}</td>' for s in steps)
            + "</tr></table>")
    st = cross.get("straggler")
    if st:
        out.append(f'<p><b>Straggler: rank {st["rank"]}</b> (busiest in {st["steps"]} of {st["of_steps"]} steps: '
                   f'{_ms(st["busy_ms_per_step"])} of work per step, the others {_ms(st["others_busy_ms_per_step"])}); '
                   f'the others wait {_ms(st["others_wait_ms_per_step"])} per step in collectives.</p>')
    only = cross.get("rank_only_syncs") or []
    if only:
        out.append('<h3>Syncs on some ranks only</h3><table class="rank-only"><tr><th>op</th><th>where</th>'
                   '<th>on ranks</th><th>per step</th><th>next collective</th><th>the others wait / step</th>'
                   '<th>own GPU idle / step</th><th>costs the others / step</th><th>saves the job / step</th>'
                   '<th>rule and rewrite</th></tr>')
        for s in only:
            where = f'{_esc(s["file"])}:{_esc(s["line"])} ({_esc(s["function"])})' if s.get("file") else "-"
            on = ", ".join(map(str, s["ranks"])) if len(s["ranks"]) <= 8 else f'{len(s["ranks"])} ranks'
            out.append(f'<tr><td><code>{_esc(s["op"])}</code><br>in <code>{_esc(s["outer_op"])}</code></td>'
                       f'<td>{where}</td><td>{_esc(on)}</td><td class="num">{s["per_step"]:g}</td>'
                       f'<td>{_esc(s["next_collective"] or "-")}</td>'
                       f'<td class="num">{_ms(s["others_wait_ms_per_step"])}</td>'
                       f'<td class="num">{_ms(s["own_gpu_idle_ms_per_step"])}</td>'
                       f'<td class="num">{_ms(s["cost_to_others_ms_per_step"])}</td>'
                       f'<td class="num">{_ms(s.get("job_saving_ms_per_step"))}</td>'
                       f'<td>{_esc(s["rule"])} {_esc(s["rule_name"])}<br>{_esc(s["rewrite"])}</td></tr>')
        out.append("</table>")
    if cross.get("notes"):
        out.append("<ul>" + "".join(f"<li>{_esc(n)}</li>" for n in cross["notes"]) + "</ul>")
    return "\n".join(out)
