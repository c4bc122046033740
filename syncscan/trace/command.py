"""`syncscan analyze TRACE [--format text|json] [--output FILE] [--all] [--source-sites FILE] [--html FILE]`.

When the syncs point to readable user files, those are linted and joined with the syncs
(syncscan.join): which findings synced and at what cost, which syncs lint missed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from syncscan.errors import UserError

TRACE_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")


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


def find_traces(folder: str | os.PathLike) -> list[Path]:
    """Trace files in a run folder, newest first (*.pt.trace.json[.gz], else any *.json[.gz])."""
    folder = Path(folder)
    files = [p for p in folder.rglob("*") if p.is_file() and p.name.endswith(TRACE_SUFFIXES)]
    if not files:
        files = [p for p in folder.iterdir() if p.is_file() and p.name.endswith((".json", ".json.gz"))]
    files.sort(key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
    return files


def resolve(path: str, every: bool = False) -> list[Path]:
    p = Path(path)
    if not p.exists():
        raise UserError(f"{path}: no such file or folder")
    if p.is_dir():
        files = find_traces(p)
        if not files:
            raise UserError(f"{path}: no torch.profiler trace (*.pt.trace.json[.gz]) in this folder")
        return files if every else files[:1]
    return [p]


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


def check_html_path(path: str) -> None:
    """Fail before any work when the HTML report cannot be written where asked."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"--html {path}: is a folder")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"--html {path}: no such folder {str(parent)!r}")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UserError(f"--html {path}: not writable")


def write_html(path: str, trace, report: dict, *, source_sites=None, roots=()) -> None:
    from syncscan.html_report import write_html as write

    try:
        write(path, trace, report, source_sites=source_sites, join=report.get("join"), search_roots=roots)
    except OSError as exc:
        raise UserError(f"--html {path}: cannot write ({exc.strerror or exc})") from None


def _roots(args, trace_path: Path) -> list[str]:
    """Where relative source paths in a trace may lie: here, beside the source-sites file, the trace."""
    roots = [os.getcwd()]
    if args.source_sites:
        roots.append(os.path.dirname(os.path.abspath(args.source_sites)))
    roots.append(str(trace_path.parent))
    return roots


def run(args) -> int:
    from syncscan.join import join_report, render_join
    from syncscan.trace import analyze, load_trace, render_text

    if args.html:
        check_html_path(args.html)
    sites = _read_sites(args.source_sites)
    paths = resolve(args.trace, args.all)
    if args.html and len(paths) > 1:
        raise UserError("--html writes the report of one trace: leave out --all, or name one trace")
    reports, traces = [], []
    for p in paths:
        trace = load_trace(p)
        report = analyze(trace, source_sites=sites)
        if not args.no_lint:
            j = join_report(report, _roots(args, p))
            if j is not None:
                report["join"] = j
        reports.append(report)
        if args.html:  # one trace at most: keep it for the timeline
            traces.append(trace)
    if args.format == "json":
        obj = reports[0] if len(reports) == 1 and not args.all else {"reports": reports}
        text = json.dumps(obj, indent=2, default=str) + "\n"
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
        write_html(args.html, traces[0], reports[0], source_sites=sites, roots=_roots(args, paths[0]))
        # with JSON on standard output, the note goes to standard error
        where = sys.stderr if args.format == "json" and not args.output else sys.stdout
        print(f"HTML report: {args.html}", file=where)
    return 0
