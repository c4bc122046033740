"""`syncscan analyze TRACE [--format text|json] [--output FILE] [--all] [--source-sites FILE] [--html FILE]`.

When the syncs point to readable user files, those are linted and joined with the syncs
(syncscan.sources, syncscan.join): which findings synced and at what cost, which syncs lint
missed. The trace is loaded and analysed once; the text, JSON and HTML forms all come from
that one analysis."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from syncscan.commands._output import check_output_path, report_json, write_html
from syncscan.errors import UserError


def add_arguments(parser) -> None:
    parser.add_argument("trace", metavar="TRACE",
                        help="a torch.profiler trace (.json or .json.gz), or a run folder holding "
                             "*.pt.trace.json[.gz] files (the newest is analysed, or each with --all); a "
                             "folder of several ranks' traces (distributedInfo) gives one report of all ranks")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text for people (default), json for tools: one object")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--all", action="store_true",
                        help="with a folder: analyse every trace in it, not only the newest "
                             "(json: one object {\"reports\": [...]})")
    parser.add_argument("--source-sites", metavar="FILE",
                        help="JSON list of exact call sites recorded by `syncscan profile`'s "
                             "sync-debug hook, to give each sync its file and line")
    parser.add_argument("--html", metavar="FILE",
                        help="also write a self-contained HTML report (timeline per step, ranked sites)")
    parser.add_argument("--no-lint", action="store_true",
                        help="do not lint the source files the syncs point to (no `join` section)")
    parser.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                        help="a folder of several ranks' traces: analyse them in N processes (default: one "
                             "per 4 traces, up to the cores, at most 8)")


def _read_sites(path: str | None):
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            sites = json.load(f)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not a JSON list of source sites ({exc})") from None
    if isinstance(sites, dict):
        sites = sites.get("source_sites", sites.get("sites"))
    if not isinstance(sites, list):
        raise UserError(f"{path}: not a JSON list of source sites")
    return sites


def _roots(args, trace_path: Path) -> list[str]:
    """Where relative source paths in a trace may lie: here, beside the source-sites file, the trace."""
    roots = [os.getcwd()]
    if args.source_sites:
        roots.append(os.path.dirname(os.path.abspath(args.source_sites)))
    roots.append(str(trace_path.parent))
    return roots


def run(args) -> int:
    from syncscan.present.analyze_text import render_text
    from syncscan.present.join_text import render_join
    from syncscan.schema import check
    from syncscan.sources import lint_and_join
    from syncscan.trace import analyze, load_trace, resolve_traces

    if args.html:
        check_output_path(args.html, "--html")
    sites = _read_sites(args.source_sites)
    if os.path.isdir(args.trace) and not args.all:
        from syncscan.trace.ranks import find_rank_traces

        by_rank = find_rank_traces(args.trace)
        if by_rank is not None:
            return _run_ranks(args, by_rank)
    paths = resolve_traces(args.trace, args.all)
    if args.html and len(paths) > 1:
        raise UserError("--html writes the report of one trace: leave out --all, or name one trace")
    reports: list[dict[str, Any]] = []
    analyses = []
    for p in paths:
        analysis = analyze(load_trace(p), source_sites=sites)
        join = None if args.no_lint else lint_and_join(analysis.report, _roots(args, p))
        report: dict[str, Any] = {**analysis.report, **({"join": join} if join is not None else {})}
        check(report)
        reports.append(report)
        analyses.append(analysis)
    if args.format == "json":
        obj = reports[0] if len(reports) == 1 and not args.all else {"reports": reports}
        text = report_json(obj)
    else:
        parts = []
        for r in reports:
            body = render_text(r)
            extra = render_join(r.get("join"))
            parts.append(body + ("\n" + "\n".join(extra) + "\n" if extra else ""))
        text = "\n".join(parts)
    _emit(text, args.output)
    if args.html:
        write_html(args.html, reports[0], analyses[0].timeline, reports[0].get("join"), _roots(args, paths[0]))
        # with JSON on standard output, the note goes to standard error
        where = sys.stderr if args.format == "json" and not args.output else sys.stdout
        print(f"HTML report: {args.html}", file=where)
    return 0


def _rank_part(item, workers=None):
    """One rank's record and timeline from its trace (in a worker process with --jobs); the
    trace and its analysis are dropped before the next is loaded."""
    from syncscan import multirank
    from syncscan.trace import analyze, load_trace
    from syncscan.trace.ranks import timeline

    rank, path = item
    trace = load_trace(path, workers=workers)
    analysis = analyze(trace)
    tl = timeline(trace, analysis)
    return multirank.rank_record(rank, analysis.report, tl, trace=str(path)), tl


def _jobs(asked: int, n: int) -> int:
    """--jobs: as asked; 0 picks one worker per 4 traces, up to the cores (at most 8)."""
    if asked > 0:
        return min(asked, n)
    return max(1, min(os.cpu_count() or 1, 8, n // 4))


def analyze_ranks(by_rank, *, lint: bool = True, roots_for=None, jobs: int = 1):
    """The merged report of per-rank traces ((rank, path) in rank order) and the primary rank's
    Analysis (its timeline is what the HTML report draws). What is kept of each trace is its
    record (its sites, steps) and its timeline (syncscan.trace.ranks), never the trace itself;
    with jobs > 1 the other ranks' traces are analysed in that many worker processes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from syncscan import multirank
    from syncscan.sources import lint_and_join
    from syncscan.trace import analyze, load_trace
    from syncscan.trace.ranks import timeline

    first, rest = by_rank[0], list(by_rank[1:])
    trace = load_trace(first[1])
    primary_analysis = analyze(trace)
    tl = timeline(trace, primary_analysis)
    del trace
    primary, info = primary_analysis.report, tl["info"]
    records = [multirank.rank_record(first[0], primary, tl, trace=str(first[1]))]
    timelines = [(first[0], tl)]
    if jobs > 1 and len(rest) > 1:
        # spawn: a fresh interpreter per worker, safe beside torch's threads; one process each reads a trace
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            parts = list(pool.map(_rank_part, rest, [1] * len(rest), chunksize=max(1, len(rest) // (4 * jobs))))
    else:
        parts = [_rank_part(item) for item in rest]
    for (rank, _), (record, rank_tl) in zip(rest, parts):
        records.append(record)
        timelines.append((rank, rank_tl))
    merged = multirank.merge(dict(primary), records, timelines, {
        "world_size": info.get("world_size"), "backend": info.get("backend"), "launcher": None,
        "primary_rank": by_rank[0][0], "rank_reports": []})
    if lint:
        roots = roots_for(Path(by_rank[0][1])) if roots_for else [os.getcwd()]
        merged["join"] = lint_and_join(multirank.union_report(merged, records), roots)
    return merged, primary_analysis


def _run_ranks(args, by_rank) -> int:
    from syncscan.present.analyze_text import render_text
    from syncscan.present.join_text import render_join
    from syncscan.present.ranks_text import render_ranks
    from syncscan.schema import check

    report, primary = analyze_ranks(by_rank, lint=not args.no_lint, roots_for=lambda p: _roots(args, p),
                                    jobs=_jobs(args.jobs, len(by_rank)))
    check(report)
    if args.format == "json":
        text = report_json(report)
    else:
        parts = [render_text(report).rstrip("\n")]
        extra = render_join(report.get("join"))
        if extra:
            parts += ["", *extra]
        parts += ["", *render_ranks(report)]
        text = "\n".join(parts) + "\n"
    _emit(text, args.output)
    if args.html:
        write_html(args.html, report, primary.timeline, report.get("join"), _roots(args, Path(by_rank[0][1])))
        where = sys.stderr if args.format == "json" and not args.output else sys.stdout
        print(f"HTML report: {args.html}", file=where)
    return 0


def _emit(text: str, output: str | None) -> None:
    """The report to `--output`'s file, or to standard output."""
    if not output:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{output}: cannot write ({exc.strerror or exc})") from None
