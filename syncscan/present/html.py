"""A self-contained HTML report: per step, a timeline of GPU work per stream with the host syncs
and the GPU idle they caused; the ranked sync sites with source and rewrite; streams and copies.

No scripts and no network resources: inline CSS and SVG only, so it opens anywhere, survives
being attached to a ticket, and renders the same in a headless browser as in a desktop one.
"""

from __future__ import annotations

import html
import linecache
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from syncscan.present.analyze_text import overlap_worth_showing
from syncscan.present.compile_text import where
from syncscan.present.input_text import input_summary, input_title
from syncscan.present.ranks_html import ranks_section
from syncscan.schema import TimelineStep
from syncscan.trace.pipeline import TIMELINE_WIDTH_PX

WIDTH = TIMELINE_WIDTH_PX  # px of the timeline's time axis: the bars were merged at this resolution
ROW = 18
LABEL = 150
COLORS = ["#4C78A8", "#54A24B", "#B279A2", "#9D755D", "#72B7B2", "#EECA3B"]


def _esc(x) -> str:
    return html.escape("" if x is None else str(x))


def _svg_step(step: TimelineStep) -> str:
    dur = step["duration_ms"] or 1e-9
    scale = WIDTH / dur
    names = list(step["streams"])
    rows = len(names) + 1
    height = rows * (ROW + 6) + 30
    out = [f'<svg class="timeline" width="{LABEL + WIDTH + 10}" height="{height}" '
           f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="timeline of {_esc(step["name"])}">']
    # idle gaps caused by syncs, drawn behind every row
    for s in step["syncs"]:
        if s["idle"] and s["idle"][1] > s["idle"][0]:
            x = LABEL + s["idle"][0] * scale
            w = max(1.0, (s["idle"][1] - s["idle"][0]) * scale)
            out.append(f'<rect class="idle-gap" x="{x:.1f}" y="0" width="{w:.1f}" height="{rows * (ROW + 6)}">'
                       f'<title>GPU idle caused by {_esc(s["op"])}: {s["gpu_idle_ms"] * 1000:.0f} µs</title></rect>')
    for i, name in enumerate(names):
        y = i * (ROW + 6)
        color = COLORS[i % len(COLORS)]
        out.append(f'<text x="0" y="{y + ROW - 4}" class="label">{_esc(name)}</text>')
        for a, b in step["streams"][name]["kernels"]:
            out.append(f'<rect class="kernel" x="{LABEL + a * scale:.1f}" y="{y}" '
                       f'width="{max(0.6, (b - a) * scale):.1f}" height="{ROW}" fill="{color}"/>')
        for a, b in step["streams"][name]["copies"]:
            out.append(f'<rect class="copy" x="{LABEL + a * scale:.1f}" y="{y + ROW // 2}" '
                       f'width="{max(0.6, (b - a) * scale):.1f}" height="{ROW // 2}"/>')
    y = len(names) * (ROW + 6)
    out.append(f'<text x="0" y="{y + ROW - 4}" class="label">host syncs</text>')
    for s in step["syncs"]:
        x = LABEL + s["start"] * scale
        w = max(2.0, (s["end"] - s["start"]) * scale)
        rank = "?" if s["site"] is None else s["site"] + 1
        out.append(f'<rect class="sync" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{ROW}">'
                   f'<title>#{rank} {_esc(s["op"])}: host blocked {(s["end"] - s["start"]) * 1000:.0f} µs, '
                   f'GPU idle caused {s["gpu_idle_ms"] * 1000:.0f} µs</title></rect>')
        out.append(f'<text x="{x + 1:.1f}" y="{y + ROW + 11}" class="marker">{rank}</text>')
    # time axis
    ty = rows * (ROW + 6) + 22
    for k in range(6):
        t = dur * k / 5
        out.append(f'<text x="{LABEL + t * scale:.1f}" y="{ty}" class="tick">{t:.2f} ms</text>')
    out.append("</svg>")
    return "\n".join(out)


def _snippet(file: str | None, line: int | None, search_roots=()) -> str:
    if not file or not line:
        return ""
    candidates = [Path(file)] + [Path(r) / Path(file).name for r in search_roots]
    for p in candidates:
        text = linecache.getline(str(p), int(line))
        if text:
            return text.strip()
    return ""


def _summary(report: Mapping[str, Any], est: Mapping[str, Any], n: int, measured: bool, syncs: list) -> str:
    if not measured:
        per_step = sum(s.get("count") or 0 for s in syncs) / n
        return f"<span>ops that would sync on a GPU, per step: {per_step:.1f}</span>"
    rp = report.get("replay") or {}
    replay = (f'<span>replayed without the syncs: <b>{rp["saving_syncs_ms"]:.3f} ms</b> per step saved; with '
              f'the rewrites, <b>{rp["saving_rewrites_ms"]:.3f} ms</b> (of {rp["step_ms"]:.3f} ms'
              f'{" at the bare pass&#x27;s speed" if rp.get("calibrated") else ""})</span>\n'
              if rp.get("saving_rewrites_ms") is not None else "")
    return (f'<span>GPU utilisation: {100 * (report.get("gpu_utilization") or 0):.1f}%</span>\n'
            f'<span>host syncs per step: {(report.get("total_syncs") or 0) / n:.1f}</span>\n'
            f'<span>GPU idle caused by syncs: {est.get("per_step_ms", 0) or 0:.3f} ms per step\n'
            f'({100 * (est.get("share_of_step") or 0):.1f}% of a step)</span>\n{replay}'
            f'<span>{html.escape(est.get("basis") or "")}</span>')


def _savings(site: Mapping[str, Any]) -> str:
    """The replay's estimate for one site (already per step)."""
    if site.get("saving_rewrite_ms") is None:
        return "—"
    return f'{site["saving_syncs_ms"]:.3f} · {site["saving_rewrite_ms"]:.3f} ms'


def _per_step_ms(total, n: int, measured: bool) -> str:
    return f"{(total or 0) / n:.3f} ms" if measured else "—"


def _join_key(d: Mapping[str, Any]) -> tuple:
    return (d.get("op"), d.get("outer_op"), d.get("file"), d.get("line"))


def _join_section(join: Mapping[str, Any]) -> str:
    """What lint said about the profiled files: findings that never synced, syncs it missed."""
    out = ['<h2>Lint and runtime together</h2><p class="note">Linted: '
           + ", ".join(f"<code>{_esc(p)}</code>" for p in join.get("linted", [])) + "</p>",
           f'<p>{len(join.get("confirmed", []))} runtime sites confirmed by a lint finding, '
           f'{len(join.get("missed_by_lint", []))} missed by lint, '
           f'{len(join.get("not_observed", []))} hot findings not observed at run time.</p>']
    if join.get("not_observed"):
        out.append('<table class="not-observed"><tr><th>not observed</th><th>rule</th><th>message</th></tr>')
        for f in join["not_observed"]:
            out.append(f'<tr><td>{_esc(f.get("path"))}:{_esc(f.get("line"))}</td><td>{_esc(f.get("code"))} '
                       f'{_esc(f.get("name"))}</td><td>{_esc(f.get("message"))}</td></tr>')
        out.append("</table>")
    return "\n".join(out)


def _compile_section(report) -> str:
    """The HTML report's torch.compile section ("" when nothing compiled)."""
    n = report.get("compilations") or 0
    breaks, recompiles, skips = (report.get(k) or [] for k in ("graph_breaks", "recompilations", "cudagraph_skips"))
    if not n and not breaks:
        return ""
    out = [f'<h2>torch.compile</h2><p>{n} compilations, {sum(b["count"] for b in breaks)} graph breaks at '
           f'{len(breaks)} lines, {sum(r["count"] for r in recompiles)} recompilations, '
           f'{sum(s["count"] for s in skips)} CUDA-graph skips.</p>']

    def lint_cell(e: dict) -> str:
        hits = e.get("lint") or []
        if not hits:
            return "no finding on this line" if e.get("lint") is not None else ""
        f = hits[0]
        opts = "".join(f"<br>{_esc(o)}" for o in ((f.get("compile") or {}).get("options") or ()))
        return f"{_esc(f['code'])} {_esc(f['name'])}<br>{_esc(f.get('suggestion'))}{opts}"

    tables = (("Graph breaks", breaks, "graph-breaks"), ("CUDA graphs skipped", skips, "cudagraph-skips"))
    for title, rows, cls in tables:
        if not rows:
            continue
        out.append(f'<h3>{title}</h3><table class="{cls}"><tr><th>count</th><th>where</th><th>reason</th>'
                   '<th>lint and options</th></tr>')
        for e in rows:
            out.append(f'<tr><td class="num">{e["count"]}</td><td>{_esc(where(e))}</td><td>{_esc(e["reason"])}</td>'
                       f'<td>{lint_cell(e)}</td></tr>')
        out.append("</table>")
    if recompiles:
        out.append('<h3>Recompilations</h3><table class="recompilations"><tr><th>count</th><th>where</th>'
                   '<th>guard that failed</th></tr>')
        for r in recompiles:
            out.append(f'<tr><td class="num">{r["count"]}</td><td>{_esc(where(r))}</td><td>{_esc(r["reason"])}'
                       f'{"<br>" + _esc(r["explanation"]) if r.get("explanation") else ""}</td></tr>')
        out.append("</table>")
    return "\n".join(out)


def _input_section(rec: Mapping[str, Any], loading: Optional[Mapping[str, Any]]) -> str:
    """The input pipeline (schema.InputPipeline): what sets the pace, and the remedies."""
    out = [f"<h2>{_esc(input_title(rec))}</h2>", '<ul class="input">']
    out += [f"<li>{_esc(x)}</li>" for x in input_summary(rec, loading)]
    out.append("</ul>")
    if rec.get("remedies"):
        out.append('<table class="remedies"><tr><th>change</th><th>predicted step</th><th>saves / step</th>'
                   '<th>why</th></tr>')
        for r in rec["remedies"]:
            step = f'{r["step_ms"]:.1f} ms' if r.get("step_ms") is not None else "—"
            saving = f'{r["saving_ms"]:.1f} ms' if r.get("saving_ms") is not None else "—"
            out.append(f'<tr><td><code>{_esc(r["change"])}</code></td><td class="num">{step}</td>'
                       f'<td class="num">{saving}</td><td>{_esc(r["basis"])}</td></tr>')
        out.append("</table>")
    return "\n".join(out)


def render_html(report: Mapping[str, Any], timeline: Sequence[TimelineStep], join: Optional[Mapping[str, Any]] = None,
                search_roots=()) -> str:
    """The page for a report (schema.AnalysisFields: analyze's or profile's) and the timeline its
    analysis drew (syncscan.trace.pipeline.Analysis.timeline)."""
    measured = report.get("gpu_activity") is not False
    syncs = (report.get("syncs") if measured else report.get("would_sync")) or []
    status = {}
    for c in (join or {}).get("confirmed", []):
        lint = ", ".join(f'{f["code"]} at line {f["line"]}' for f in c.get("findings", []))
        rewrite = f' · rewrite: {c["rewrite"]}' if c.get("rewrite") else ""
        status[_join_key(c)] = f"confirmed by lint: {lint}{rewrite}"
    for m in (join or {}).get("missed_by_lint", []):
        status[_join_key(m)] = "missed by lint: no finding on this line"
    n = max(len(report.get("steps") or []), 1)
    est = report.get("estimated_saving") or {}
    dev = (report.get("device") or {}).get("name") or "no GPU activity recorded"
    parts = [f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>syncscan report</title>
<style>
body {{ font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; }}
h1 {{ font-size: 20px; }} h2 {{ font-size: 16px; margin-top: 28px; }}
table {{ border-collapse: collapse; margin: 8px 0; }}
td, th {{ border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f4f4f4; }} td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
code {{ background: #f6f6f6; padding: 1px 3px; }}
.summary span {{ display: inline-block; margin-right: 24px; }}
svg.timeline {{ display: block; margin: 6px 0 18px; }}
svg .label, svg .tick, svg .marker {{ font: 11px system-ui, sans-serif; fill: #333; }}
svg .sync {{ fill: #D62728; }} svg .copy {{ fill: #F58518; }}
svg .idle-gap {{ fill: #D62728; opacity: 0.13; }}
.note {{ color: #555; }}
</style></head><body>
<h1>syncscan: where the CPU waits for the GPU</h1>
<p class="summary"><span>trace: <code>{_esc(report.get("trace"))}</code></span><span>device: {_esc(dev)}</span></p>
<p class="summary"><span>steps: {len(report.get("steps") or [])}</span>
{_summary(report, est, n, measured, syncs)}</p>
"""]
    if report.get("gpu_bound"):
        parts.append('<p class="note"><b>GPU-bound:</b> the GPU is busy most of the step, so syncs mostly wait '
                     'for queued work; removing them saves little beyond the work of the synced ops.</p>')
    parts.append('<h2>Timeline</h2><p class="note">Bars: GPU work per stream (copies in orange). Red: host '
                 'syncs (numbers refer to the table below). Pink bands: GPU idle caused by a sync.</p>')
    for st in timeline:
        parts.append(f'<h3>{_esc(st["name"])} — {st["duration_ms"]:.2f} ms</h3>')
        parts.append(_svg_step(st))
    if not measured:
        parts.append('<p class="note"><b>No GPU activity was recorded</b> (a run without a CUDA GPU): the table '
                     'lists the ops that would make the host wait on a GPU, found by name; nothing was measured.</p>')
    parts.append(f'<h2>Sync sites, {"ranked by GPU idle caused" if measured else "that would sync on a GPU"}</h2>'
                 '<table class="sites"><tr><th>#</th><th>op</th>'
                 '<th>where</th><th>per step</th><th>GPU idle / step</th><th>CPU blocked / step</th>'
                 '<th>saves / step: syncs · rewrite</th><th>rule and rewrite</th></tr>')
    for i, s in enumerate(syncs, start=1):
        where = f'{_esc(s.get("file"))}:{_esc(s.get("line"))}' if s.get("file") else "(no source recorded)"
        if s.get("file") and s.get("line_kind") == "def":
            where += " (def line)"
        snip = _snippet(s.get("file"), s.get("line"), search_roots)
        said = status.get(_join_key(s))
        parts.append(
            f'<tr><td class="num">{i}</td><td><code>{_esc(s.get("op"))}</code><br>in <code>{_esc(s.get("outer_op"))}'
            f'</code>{" · scope " + _esc(s.get("scope")) if s.get("scope") else ""}</td>'
            f'<td>{where}{" (" + _esc(s.get("function")) + ")" if s.get("function") else ""}'
            f'{"<br><code>" + _esc(snip) + "</code>" if snip else ""}'
            f'{"<br><i>" + _esc(said) + "</i>" if said else ""}</td>'
            f'<td class="num">{s.get("count", 0) / n:.1f}</td>'
            f'<td class="num">{_per_step_ms(s.get("gpu_idle_ms"), n, measured)}</td>'
            f'<td class="num">{_per_step_ms(s.get("cpu_blocked_ms"), n, measured)}</td>'
            f'<td class="num">{_savings(s)}</td>'
            f'<td>{_esc(s.get("rule"))} {_esc(s.get("rule_name"))}<br>{_esc(s.get("rewrite"))}</td></tr>')
    if not syncs:
        parts.append('<tr><td colspan="8">No host syncs in the profiled steps.</td></tr>')
    parts.append("</table>")
    if join:
        parts.append(_join_section(join))
    parts.append(_compile_section(report))
    if report.get("input_pipeline"):
        parts.append(_input_section(report["input_pipeline"], report.get("data_loading")))
    parts.append(ranks_section(report))
    parts.append('<h2>Streams</h2><table class="streams"><tr><th>device</th><th>stream</th><th>kernels</th>'
                 '<th>busy</th><th>copies</th></tr>')
    for s in report.get("streams") or []:
        parts.append(f'<tr><td>{_esc(s.get("device"))}</td><td>{_esc(s.get("stream"))}</td>'
                     f'<td class="num">{s.get("kernels")}</td><td class="num">{s.get("busy_ms", 0):.3f} ms</td>'
                     f'<td class="num">{s.get("copies")}</td></tr>')
    parts.append("</table>")
    shown, left_out = overlap_worth_showing(report.get("overlap") or [])
    if shown:
        parts.append('<table class="overlap"><tr><th>streams</th><th>overlap</th><th>share of the less busy</th></tr>')
        for o in shown:
            parts.append(f'<tr><td>{_esc(o.get("streams"))}</td><td class="num">{o.get("overlap_ms", 0):.3f} ms</td>'
                         f'<td class="num">{100 * (o.get("share_of_less_busy") or 0):.1f}%</td></tr>')
        parts.append("</table>")
    if left_out:
        parts.append(f"<p>{left_out} other pair{'s' if left_out != 1 else ''} of streams did not overlap (or less): "
                     "all pairs are in report.json.</p>")
    if report.get("memcpy"):
        parts.append('<h2>Copies</h2><table class="memcpy"><tr><th>direction</th><th>memory</th><th>count</th>'
                     '<th>bytes</th><th>time</th><th>hidden behind kernels</th><th>host syncs</th></tr>')
        for m in report["memcpy"]:
            parts.append(f'<tr><td>{_esc(m.get("direction"))}</td><td>{_esc(m.get("memory"))}</td>'
                         f'<td class="num">{m.get("count")}</td><td class="num">{m.get("bytes")}</td>'
                         f'<td class="num">{m.get("time_ms", 0):.3f} ms</td>'
                         f'<td class="num">{100 * (m.get("hidden_share") or 0):.0f}%</td>'
                         f'<td class="num">{m.get("host_syncs")}</td></tr>')
        parts.append("</table>")
    if report.get("notes"):
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_esc(x)}</li>" for x in report["notes"]) + "</ul>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
