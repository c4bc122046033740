"""`syncscan lint`: find host-device syncs; `--fix` rewrites the fixable ones.

What is shown: findings in hot code (training/inference steps, loss and forward functions, and
what they call); `--all` adds cold ones (setup, __init__, one-off code). Every format (text,
json, sarif, github) shows the same findings, and `--fix` / `--diff` fix the same findings.

Exit codes (as ruff): 0 nothing shown, 1 findings (or a --diff with changes), 2 usage error or
an input that could not be read or parsed (the other files are still linted and reported).
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
from syncscan.lint.runner import _keep, lint_paths


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", default=None, metavar="PATH",
                   help="files, folders (recursively, .py/.pyi/.ipynb) or - for stdin (default: .)")
    p.add_argument("--select", type=_codes, metavar="CODES", help="only these codes or prefixes (SYN3,SYN101)")
    p.add_argument("--ignore", type=_codes, metavar="CODES", help="skip these codes or prefixes")
    p.add_argument("--extend-select", type=_codes, default=[], metavar="CODES", help="add to the selection")
    p.add_argument("--all", action="store_true",
                   help="also show (and with --fix, fix) cold findings: setup, __init__, one-off code")
    p.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text",
                   help="json: an array of findings; sarif: SARIF 2.1.0 for GitHub code scanning; "
                        "github: workflow annotations. Every format holds the findings text shows: "
                        "hot ones, cold ones too with --all")
    p.add_argument("--statistics", action="store_true", help="text format: count findings per rule")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the results cache")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff: also apply unsafe fixes")
    p.add_argument("--diff", action="store_true", help="print the diff --fix would make; write nothing")
    p.add_argument("--costs", metavar="REPORT.json",
                   help="annotate and rank findings by the costs measured in a profile/analyze JSON report")
    p.add_argument("--config", metavar="PYPROJECT", help="read [tool.syncscan] from this file")
    p.add_argument("--stdin-filename", metavar="NAME",
                   help="the name to report for - (stdin); config and per-file-ignores apply to it")
    p.add_argument("--explicit-paths", action="store_true",
                   help="lint only the PATHs given, nothing when none is (the pre-commit hooks use this)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="processes (default: all cores)")
    p.add_argument("--no-show-source", dest="show_source", action="store_false",
                   help="text format: one line per finding")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary line")


def run(args) -> int:
    if args.paths:
        paths = list(args.paths)
    elif args.stdin_filename:  # as ruff: a name for stdin and no path means stdin
        paths = ["-"]
    elif args.explicit_paths:
        return _nothing_to_lint(args)
    else:
        paths = ["."]
    if args.stdin_filename and "-" not in paths:
        raise UserError("--stdin-filename needs - (stdin) among the paths")
    start = args.stdin_filename if args.stdin_filename else next((p for p in paths if p != "-"), ".")
    cfg = config_mod.load(args.config, start)
    if args.select:
        cfg.select = args.select
    cfg.select = cfg.select + args.extend_select
    if args.ignore:
        cfg.ignore = cfg.ignore + args.ignore
    _check_codes(cfg)
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UserError("--unsafe-fixes needs --fix or --diff")
    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    stdin_text = None
    if "-" in paths:
        from syncscan.lint.files import ReadError, decode

        try:
            stdin_text = decode(sys.stdin.buffer.read())
        except ReadError as e:
            raise UserError(f"{args.stdin_filename or '-'}: {e}") from None
    show_cold = args.all or cfg.show_cold
    if args.costs:  # a missing or broken report fails before any work
        from syncscan.schema import read_report

        args.costs_report = read_report(args.costs)
    if args.fix or args.diff:
        return _fix(args, paths, cfg, stdin_text, show_cold)
    run_ = lint_paths(paths, cfg, use_cache=not args.no_cache, jobs=args.jobs, stdin_text=stdin_text,
                      keep_sources=args.format == "text" and args.show_source)
    return _report(args, run_, cfg, show_cold)


def _check_codes(cfg) -> None:
    from syncscan.catalog import RULE_NAMES

    known = {r.code for r in all_rules()} | set(RULE_NAMES)
    for c in cfg.select + cfg.ignore + [c for cs in cfg.per_file_ignores.values() for c in cs]:
        if c != "ALL" and not any(k.startswith(c) for k in known):
            raise UserError(f"unknown rule code or prefix {c!r} (syncscan rules lists them)")


def _nothing_to_lint(args) -> int:
    if args.format == "json":
        print("[]")
    elif args.format == "sarif":
        print(report.sarif([], all_rules()))
    elif args.format == "text" and not args.quiet:
        print("No files to lint.")
    return 0


def _prepare(args, run_, cfg) -> list:
    """Findings as the user should see them: stdin renamed, notebook positions in cells."""
    from syncscan.lint.files import cell_error

    if args.stdin_filename:
        name = args.stdin_filename
        for r in run_.results:
            if r.path == "-":
                r.path = name
                for f in r.findings:
                    f.path = name
                r.findings = [f for f in r.findings if _keep(f, cfg)]  # per-file-ignores by its name
        if "-" in run_.sources:
            run_.sources[name] = run_.sources.pop("-")
            run_.sources[name].path = name
        run_.errors = [(name if p == "-" else p, e) for p, e in run_.errors]
    for i, (path, err) in enumerate(run_.errors):
        src = run_.sources.get(path)
        if src is not None and src.cells:
            run_.errors[i] = (path, cell_error(err, src.cells))
    for f in run_.findings:
        if f.cell is not None and f.fix is not None:
            f.fix = _fix_in_cells(f, run_.sources.get(f.path))
    return run_.findings


def _fix_in_cells(f, src):
    """A notebook finding's fix with its edits in the cell's coordinates (as `line` is), or None
    when it spans cells."""
    from dataclasses import replace

    if src is None or not src.cells:
        return None
    edits = []
    for e in f.fix.edits:
        cell, line = src.locate(e.line)
        end_cell, end_line = src.locate(e.end_line)
        if cell != f.cell or end_cell != f.cell:
            return None
        edits.append(replace(e, line=line, end_line=end_line))
    return replace(f.fix, edits=tuple(edits))


def _report(args, run_, cfg, show_cold, extra_lines=()) -> int:
    findings = _prepare(args, run_, cfg)
    if args.costs:
        from syncscan.join import annotate_with_costs

        findings = annotate_with_costs(findings, args.costs_report)  # loaded in run()
    shown = [f for f in findings if show_cold or f.context == "hot"]
    hidden_cold = len(findings) - len(shown)
    for path, err in run_.errors:
        print(f"syncscan: error: {path}: {err}", file=sys.stderr)
    fmt = args.format
    if fmt == "json":
        print(report.as_json(shown))
    elif fmt == "sarif":
        print(report.sarif(shown, all_rules(), run_.sources))
    elif fmt == "github":
        if shown:
            print(report.github(shown, run_.sources))
    else:
        if args.statistics:
            if shown:
                print(report.statistics(shown))
        elif shown:
            color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
            print(report.text(shown, run_.sources, color=color, show_source=args.show_source))
        for line in extra_lines:
            print(line)
        if args.costs and not args.quiet and not args.statistics:
            print(("\n" if shown else "") + report.cost_summary(shown, args.costs))
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


def _hot_functions(run_) -> set[str]:
    """Function keys that are hot across all the linted files (what `settle_context` computes)."""
    from syncscan.lint.hotpath import resolve_hot

    functions, seeds = {}, []
    for r in run_.results:
        functions.update(r.functions)
        seeds.extend(r.seeds)
    return resolve_hot(functions, seeds)


def _fix(args, paths, cfg, stdin_text, show_cold) -> int:
    from syncscan.lint import fixer
    from syncscan.lint.files import ReadError, read

    rules = [r() for r in all_rules()]
    hot = tuple(cfg.hot_functions)
    # fix what would be shown: hot findings, and cold ones only with --all; hotness comes from
    # the call graph of all the files, so lint them all first (cached)
    first = lint_paths(paths, cfg, use_cache=not args.no_cache, jobs=args.jobs, stdin_text=stdin_text)
    hot_functions = _hot_functions(first)
    failed = dict(first.errors)  # unreadable / unparsable: never touched
    errors = list(first.errors)
    changed, n_fixed = 0, 0

    def select(f):
        if f.path == "-" and args.stdin_filename:  # per-file-ignores by the name given
            from dataclasses import replace

            f = replace(f, path=args.stdin_filename)
        return _keep(f, cfg) and (show_cold or f.local_hot or f.function in hot_functions)

    for r in first.results:
        path = r.path
        if path in failed or r.skipped and path != "-":
            if path == "-" and not args.diff:
                sys.stdout.write(stdin_text or "")  # unchanged, as it came
            continue
        try:
            src = read(path, stdin_text)
        except ReadError as e:
            errors.append((path, str(e)))
            continue
        if src.cells is not None:
            ff = fixer.fix_notebook(src, rules, hot, args.unsafe_fixes, select)
        else:
            ff = fixer.fix_text(path, src.text, rules, hot, args.unsafe_fixes, select)
        name = args.stdin_filename if path == "-" and args.stdin_filename else path
        if ff.error:
            errors.append((name, ff.error + "; left unchanged"))
        if path == "-" and not args.diff:
            sys.stdout.write(ff.before if ff.error else ff.after)  # fixed or not, stdin comes back
        if ff.error:
            continue
        if not ff.changed:
            continue
        changed += 1
        n_fixed += len(ff.applied)
        if args.diff:
            ff.path = name
            sys.stdout.write(ff.diff())
        elif path != "-":
            why = _write(path, src, ff.after)
            if why:
                errors.append((path, why))
    errors = list(dict.fromkeys(errors))
    if args.diff or "-" in paths:
        for path, err in errors:
            print(f"syncscan: error: {path}: {err}", file=sys.stderr)
        if args.diff and not args.quiet:
            print(f"Would fix {n_fixed} sync{'s' if n_fixed != 1 else ''} in {changed} file"
                  f"{'s' if changed != 1 else ''}.", file=sys.stderr)
        return 2 if errors else (1 if changed and args.diff else 0)
    # what is left after fixing, reported as a normal lint run
    out_lines = []
    if n_fixed:
        out_lines.append(f"Fixed {n_fixed} sync{'s' if n_fixed != 1 else ''} in {changed} file"
                         f"{'s' if changed != 1 else ''}.")
    run_ = lint_paths(paths, cfg, use_cache=not args.no_cache, jobs=args.jobs,
                      keep_sources=args.format == "text" and args.show_source)
    run_.errors = list(dict.fromkeys(run_.errors + [e for e in errors if e[0] not in dict(run_.errors)]))
    return _report(args, run_, cfg, show_cold, out_lines)


def _write(path: str, src, text: str) -> str | None:
    """Write the fixed text back in the file's encoding, through a symlink to its target.
    Returns why not, or None."""
    from syncscan.lint import fixer

    if src.encoding not in ("utf-8", "utf-8-sig"):
        return f"declares the {src.encoding} encoding; fixes are written only to UTF-8 files (left unchanged)"
    if src.encoding == "utf-8-sig":
        text = "\ufeff" + text
    try:
        fixer.write_atomic(os.path.realpath(path), text)
    except OSError as e:
        return f"cannot write the fix: {e.strerror or e}"
    return None
