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
                             "*.pt.trace.json[.gz] files (the newest is analysed, or each with --all)")
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
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"{args.output}: cannot write ({exc.strerror or exc})") from None
    else:
        sys.stdout.write(text)
    if args.html:
        write_html(args.html, reports[0], analyses[0].timeline, reports[0].get("join"), _roots(args, paths[0]))
        # with JSON on standard output, the note goes to standard error
        where = sys.stderr if args.format == "json" and not args.output else sys.stdout
        print(f"HTML report: {args.html}", file=where)
    return 0
