"""torch.compile's part of a profile report (schema.CompileFields: `compilations`,
`graph_breaks`, `recompilations`, `cudagraph_skips`; see syncscan.trace.graph_breaks) as text.
Renders what the report holds; computes nothing."""

from __future__ import annotations

from syncscan.present.join_text import _short

MAX_ROWS = 12


def where(e: dict) -> str:
    fn = f" {e['function']}" if e.get("function") else ""
    return f"{_short(e.get('file'))}:{e.get('line')}{fn}" if e.get("file") else "(no user frame)"


def _lint_text(e: dict) -> list[str]:
    hits = e.get("lint")
    if hits is None:
        return []
    if not hits:
        return ["lint: no finding on this line"]
    f = hits[0]
    more = f" (+{len(hits) - 1} more)" if len(hits) > 1 else ""
    out = [f"lint: {f['code']} {f['name']} at line {f['line']}{more}"
           + (f"; rewrite: {f['suggestion']}" if f.get("suggestion") else "")]
    out += [f"compile option: {o}" for o in ((f.get("compile") or {}).get("options") or ())]
    return out


def render_compile(report, gpu: bool) -> list[str]:
    """The torch.compile section of `syncscan profile`'s text report ([] when nothing compiled)."""
    n = report.get("compilations") or 0
    breaks, recompiles, skips = (report.get(k) or [] for k in ("graph_breaks", "recompilations", "cudagraph_skips"))
    if not n and not breaks:
        return []
    total, again = sum(b["count"] for b in breaks), sum(r["count"] for r in recompiles)
    lines = [f"torch.compile: {n} compilation{'s' if n != 1 else ''}, {total} graph break"
             f"{'s' if total != 1 else ''} at {len(breaks)} line{'s' if len(breaks) != 1 else ''}, "
             f"{again} recompilation{'s' if again != 1 else ''}"
             + (f", CUDA graphs skipped {sum(s['count'] for s in skips)} times" if skips else "")]
    late = report.get("compiled_in_measured_steps") or []
    if late:
        lines.append(f"  compiled during measured step{'s' if len(late) != 1 else ''} "
                     f"{', '.join(map(str, late))}: their times include compiling (a longer --wait leaves it out)")
    if breaks:
        lines.append("  graph breaks (the graph ends at the line and resumes after it; count: times torch reported it)")
        for b in breaks[:MAX_ROWS]:
            lib = f" (in {b['library_frame']})" if b.get("library_frame") else ""
            lines.append(f"    {b['count']:>3}x  {where(b)}{lib}: {b['reason']}")
            lines += [f"          {t}" for t in _lint_text(b)]
        if len(breaks) > MAX_ROWS:
            lines.append(f"    ... {len(breaks) - MAX_ROWS} more in the JSON report")
    if recompiles:
        lines.append("  recompilations (guard that failed; at the first line of the recompiled code)")
        for r in recompiles[:MAX_ROWS]:
            after = " (the code after a graph break)" if r.get("resumed_after_break") else ""
            lines.append(f"    {r['count']:>3}x  {where(r)}{after}: {r['reason']}")
            if r.get("explanation"):
                lines.append(f"          {r['explanation']}")
    if skips:
        lines.append("  CUDA graphs skipped (mode=\"reduce-overhead\" ran these graphs without CUDA graphs)")
        for s in skips[:MAX_ROWS]:
            lines.append(f"    {s['count']:>3}x  {where(s)}: {s['reason']}")
            lines += [f"          {t}" for t in _lint_text(s)]
    elif not gpu:
        lines.append("  CUDA graphs: not used without a GPU, so their skips are not known from this run")
    return lines
