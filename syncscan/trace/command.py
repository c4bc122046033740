"""`syncscan analyze TRACE [--format text|json] [--output FILE] [--all] [--source-sites FILE]`."""

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


def run(args) -> int:
    from syncscan.trace import analyze, load_trace, render_text

    sites = _read_sites(args.source_sites)
    reports = [analyze(load_trace(p), source_sites=sites) for p in resolve(args.trace, args.all)]
    if args.format == "json":
        obj = reports[0] if len(reports) == 1 and not args.all else {"reports": reports}
        text = json.dumps(obj, indent=2, default=str) + "\n"
    else:
        text = "\n".join(render_text(r) for r in reports)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"{args.output}: cannot write ({exc.strerror or exc})") from None
    else:
        sys.stdout.write(text)
    return 0
