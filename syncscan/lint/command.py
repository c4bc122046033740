"""`syncscan lint`: find host-device syncs; `--fix` rewrites the fixable ones.

Exit codes (as ruff): 0 nothing shown, 1 findings (or a --diff with changes), 2 usage error or
an input that could not be read or parsed (the other files are still linted).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

from syncscan.errors import UserError
from syncscan.lint import config as config_mod
from syncscan.lint import report
from syncscan.lint.registry import all_rules
from syncscan.lint.runner import lint_paths


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", default=None, metavar="PATH",
                   help="files, folders (recursively) or - for stdin (default: .)")
    p.add_argument("--select", type=_codes, help="only these codes or prefixes (SYN3,SYN101)")
    p.add_argument("--ignore", type=_codes, help="skip these codes or prefixes")
    p.add_argument("--extend-select", type=_codes, default=[], help="add to the selection")
    p.add_argument("--all", action="store_true", help="also show cold findings (setup, __init__, one-off code)")
    p.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    p.add_argument("--statistics", action="store_true", help="count findings per rule")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the results cache")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff: also apply unsafe fixes")
    p.add_argument("--diff", action="store_true", help="print the diff --fix would make; write nothing")
    p.add_argument("--costs", metavar="REPORT.json",
                   help="annotate and rank findings by the costs measured in a profile/analyze JSON report")
    p.add_argument("--config", metavar="PYPROJECT", help="read [tool.syncscan] from this file")
    p.add_argument("--stdin-filename", metavar="NAME", help="the name to report for - (stdin)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="processes (default: all cores)")
    p.add_argument("--no-show-source", dest="show_source", action="store_false",
                   help="text format: one line per finding")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary line")


def run(args) -> int:
    paths = args.paths or ["."]
    cfg = config_mod.load(args.config, next((p for p in paths if p != "-"), "."))
    if args.select:
        cfg.select = args.select
    cfg.select = cfg.select + args.extend_select
    if args.ignore:
        cfg.ignore = cfg.ignore + args.ignore
    known = {r.code for r in all_rules()}
    for c in cfg.select + cfg.ignore:
        if c != "ALL" and not any(k.startswith(c) for k in known):
            raise UserError(f"unknown rule code or prefix {c!r} (syncscan rules lists them)")
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UserError("--unsafe-fixes needs --fix or --diff")
    stdin_text = None
    if "-" in paths:
        data = sys.stdin.buffer.read()
        from syncscan.lint.files import ReadError, decode

        try:
            stdin_text = decode(data)
        except ReadError as e:
            raise UserError(f"-: {e}") from None
    show_cold = args.all or cfg.show_cold
    if args.fix or args.diff:
        return _fix(args, paths, cfg, stdin_text, show_cold)
    run_ = lint_paths(paths, cfg, use_cache=not args.no_cache, jobs=args.jobs, stdin_text=stdin_text,
                      keep_sources=args.format == "text" and args.show_source)
    return _report(args, run_, cfg, show_cold)


def _rename_stdin(run_, name):
    for f in run_.findings:
        if f.path == "-":
            f.path = name


def _report(args, run_, cfg, show_cold, extra_lines=()) -> int:
    if args.stdin_filename:
        _rename_stdin(run_, args.stdin_filename)
    findings = run_.findings
    if args.costs:
        from syncscan.join import annotate_with_costs

        findings = annotate_with_costs(findings, args.costs)
    shown = [f for f in findings if show_cold or f.context == "hot"]
    hidden_cold = len(findings) - len(shown)
    for path, err in run_.errors:
        print(f"syncscan: error: {path}: {err}", file=sys.stderr)
    fmt = args.format
    if fmt == "json":
        print(report.as_json(shown))
    elif fmt == "sarif":
        print(report.sarif(shown, all_rules()))
    elif fmt == "github":
        if shown:
            print(report.github(shown))
    else:
        if args.statistics:
            if shown:
                print(report.statistics(shown))
        elif shown:
            color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
            print(report.text(shown, run_.sources, color=color, show_source=args.show_source))
        for line in extra_lines:
            print(line)
        if not args.quiet:
            fixable = Counter(f.fix.applicability for f in shown if f.fix is not None)
            n_files = len(run_.results)
            if shown or hidden_cold:
                print(("\n" if shown else "") + report.summary(shown, n_files, hidden_cold, fixable))
            elif not run_.errors:
                print(f"No syncs found in {n_files} file{'s' if n_files != 1 else ''}.")
    if run_.errors:
        return 2
    if shown and not args.exit_zero:
        return 1
    return 0


def _fix(args, paths, cfg, stdin_text, show_cold) -> int:
    from syncscan.lint import fixer
    from syncscan.lint.files import ReadError, discover, read
    from syncscan.lint.registry import all_rules as rules_
    from syncscan.lint.runner import _keep

    rules = [r() for r in rules_()]
    hot = tuple(cfg.hot_functions)
    files, errors = discover(paths, cfg.exclude)
    changed, n_fixed, out_lines = 0, 0, []

    def select(f):
        return _keep(f, cfg)

    for path in files:
        try:
            src = read(path, stdin_text)
        except ReadError as e:
            errors.append((path, str(e)))
            continue
        if src.cells is not None:
            ff = fixer.fix_notebook(src, rules, hot, args.unsafe_fixes, select)
        else:
            ff = fixer.fix_text(path, src.text, rules, hot, args.unsafe_fixes, select)
        if ff.error:
            errors.append((path, ff.error + ("; left unchanged" if ff.applied else "")))
            continue
        if not ff.changed:
            continue
        changed += 1
        n_fixed += len(ff.applied)
        if args.diff:
            sys.stdout.write(ff.diff())
        elif path == "-":
            sys.stdout.write(ff.after)
        else:
            fixer.write_atomic(path, ff.after)
    for path, err in errors:
        print(f"syncscan: error: {path}: {err}", file=sys.stderr)
    if args.diff:
        if not args.quiet:
            print(f"Would fix {n_fixed} sync{'s' if n_fixed != 1 else ''} in {changed} file"
                  f"{'s' if changed != 1 else ''}.", file=sys.stderr)
        return 2 if errors else (1 if changed else 0)
    if "-" in paths:
        return 2 if errors else 0
    # what is left after fixing, reported as a normal lint run
    if n_fixed:
        out_lines.append(f"Fixed {n_fixed} sync{'s' if n_fixed != 1 else ''} in {changed} file"
                         f"{'s' if changed != 1 else ''}.")
    run_ = lint_paths(paths, cfg, use_cache=not args.no_cache, jobs=args.jobs,
                      keep_sources=args.format == "text" and args.show_source)
    run_.errors = sorted(set(run_.errors) | set(errors))
    return _report(args, run_, cfg, show_cold, out_lines)
