"""`syncscan lint`: find host-device syncs; `--fix` rewrites the fixable ones.

What is shown: findings in hot code (training/inference steps, loss and forward functions, and
what they call); `--all` adds cold ones (setup, __init__, one-off code). Every format (text,
json, sarif, github, gitlab, junit) shows the same findings, and `--fix` / `--diff` /
`--add-noqa` act on the same findings. Each file gets the config of the nearest
pyproject.toml above it (see config.Settings).

Exit codes (as ruff): 0 nothing shown, 1 findings (or a --diff with changes), 2 usage error or
an input that could not be read or parsed (the other files are still linted and reported).
"""

from __future__ import annotations

import functools
import os
import sys
from collections import Counter

from syncscan.errors import UserError
from syncscan.lint import config as config_mod
from syncscan.lint.runner import _keep, lint_paths

TYPE_CHECKING = False  # (typing's, without importing typing: see records.py)
if TYPE_CHECKING:
    import argparse

FORMATS = ("text", "json", "sarif", "github", "gitlab", "junit")


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
    p.add_argument("--format", "--output-format", dest="format", choices=FORMATS, default="text",
                   help="json: an array of findings; sarif: SARIF 2.1.0 for GitHub code scanning; "
                        "github: workflow annotations; gitlab: a GitLab Code Quality report; junit: JUnit "
                        "XML. Every format holds the findings text shows: hot ones, cold ones too with --all")
    p.add_argument("--statistics", action="store_true", help="text format: count findings per rule")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the results cache")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff: also apply unsafe fixes")
    p.add_argument("--diff", action="store_true", help="print the diff --fix would make; write nothing")
    p.add_argument("--line-length", type=int, metavar="N",
                   help="with --fix/--diff: wrap rewritten lines longer than N (default: line-length of ruff or "
                        "black in the nearest pyproject.toml / ruff.toml, else 88; 0: never wrap)")
    p.add_argument("--show-fixes", action="store_true",
                   help="with --fix/--diff: list what was (would be) fixed, per file and rule")
    p.add_argument("--add-noqa", action="store_true",
                   help="add `# noqa: SYN…` to every line with a shown finding (to adopt syncscan in a "
                        "codebase with many); writes the files, exits 0")
    p.add_argument("--costs", metavar="REPORT.json",
                   help="annotate and rank findings by the costs measured in a profile/analyze JSON report")
    p.add_argument("--config", metavar="PYPROJECT",
                   help="read [tool.syncscan] from this file for every file (default: the nearest "
                        "pyproject.toml with a [tool.syncscan] table above each file)")
    p.add_argument("--stdin-filename", metavar="NAME",
                   help="the name to report for - (stdin); its config and per-file-ignores apply, and a "
                        "name ending in .ipynb reads stdin as a notebook")
    p.add_argument("--explicit-paths", action="store_true",
                   help="lint only the PATHs given, nothing when none is (the pre-commit hooks use this)")
    p.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false", default=None,
                   help="also lint files that .gitignore (and .git/info/exclude) ignore in the folders searched")
    p.add_argument("--jobs", "-j", type=int, default=None, help="processes (default: all cores)")
    p.add_argument("--no-show-source", dest="show_source", action="store_false",
                   help="text format: one line per finding")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary line and no progress")


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
    _check_usage(args, paths)
    settings = config_mod.Settings(args.config, config_mod.Overrides(
        select=tuple(args.select or ()), extend_select=tuple(args.extend_select), ignore=tuple(args.ignore or ()),
        respect_gitignore=args.respect_gitignore), stdin_name=args.stdin_filename)
    stdin = _read_stdin(args) if "-" in paths else None

    def shown(f) -> bool:
        from syncscan.lint.report import shown_by_default  # (not on import: see _report)

        return shown_by_default(f) or args.all or settings.for_path(f.path).show_cold

    if args.costs:  # a missing or broken report fails before any work
        from syncscan.schema import read_report

        args.costs_report = read_report(args.costs)
    if args.fix or args.diff:
        return _fix(args, paths, settings, stdin, shown)
    run_ = _lint(args, paths, settings, stdin_text=stdin, keep_sources=args.format == "text" and args.show_source)
    if args.add_noqa:
        return _add_noqa(args, run_, settings, shown)
    return _report(args, run_, settings, shown)


def _width(args, path: str) -> int:
    """The line length fixed lines are wrapped to: --line-length, else the project's (syncscan.lint.wrap)."""
    from syncscan.lint.wrap import line_length_for

    if args.line_length is not None:
        return args.line_length
    return line_length_for(args.stdin_filename if path == "-" and args.stdin_filename else path)


def _check_usage(args, paths) -> None:
    from syncscan.lint.config import known_code

    for c in (args.select or []) + args.extend_select + (args.ignore or []):
        if not known_code(c):
            raise UserError(f"unknown rule code or prefix {c!r} (syncscan rules lists them)")
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UserError("--unsafe-fixes needs --fix or --diff")
    if args.line_length is not None and (args.line_length < 0 or not (args.fix or args.diff)):
        raise UserError("--line-length needs --fix or --diff and a length of 0 or more")
    if args.show_fixes and not (args.fix or args.diff):
        raise UserError("--show-fixes needs --fix or --diff")
    if args.add_noqa and (args.fix or args.diff):
        raise UserError("--add-noqa cannot be combined with --fix or --diff")
    if args.add_noqa and "-" in paths:
        raise UserError("--add-noqa writes files: it cannot take - (stdin)")
    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be at least 1")


def _read_stdin(args):
    """Standard input, decoded, with the name it is linted as (a notebook when it ends in .ipynb)."""
    from syncscan.lint.files import ReadError, Stdin, decode

    name = args.stdin_filename or "-"
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # `syncscan lint - <&-`: Python gives no stdin at all
        raise UserError(f"{name}: standard input is closed")
    try:
        data = stream.read()
    except (OSError, ValueError) as e:
        raise UserError(f"{name}: cannot read standard input ({getattr(e, 'strerror', None) or e})") from None
    try:
        return Stdin(decode(data), args.stdin_filename)
    except ReadError as e:
        raise UserError(f"{name}: {e}") from None


def _lint(args, paths, settings, **kw):
    from syncscan.lint.progress import Progress

    progress = Progress.on_terminal(sys.stderr, enabled=not args.quiet)
    try:
        return lint_paths(paths, settings, use_cache=not args.no_cache, jobs=args.jobs, progress=progress, **kw)
    finally:
        if progress is not None:
            progress.close()


def _nothing_to_lint(args) -> int:
    # (imported here, not on import: a warm run of one file counts every millisecond)
    from syncscan.lint import report
    from syncscan.lint.registry import all_rules

    if args.format in ("json", "gitlab"):
        print("[]")
    elif args.format == "sarif":
        print(report.sarif([], all_rules()))
    elif args.format == "junit":
        print(report.junit([]))
    elif args.format == "text" and not args.quiet:
        print("No files to lint.")
    return 0


def _prepare(args, run_, settings) -> list:
    """Findings as the user should see them: stdin renamed, notebook positions in cells."""
    from syncscan.lint.files import cell_error

    if args.stdin_filename:
        name = args.stdin_filename
        for r in run_.results:
            if r.path == "-":
                r.path = name
                for f in r.findings:
                    f.path = name
                r.findings = [f for f in r.findings if _keep(f, settings.for_path(name))]  # by its name
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
    if src is None or not src.cells:
        return None
    edits = []
    for e in f.fix.edits:
        cell, line = src.locate(e.line)
        end_cell, end_line = src.locate(e.end_line)
        if cell != f.cell or end_cell != f.cell:
            return None
        edits.append(e.replace(line=line, end_line=end_line))
    return f.fix.replace(edits=tuple(edits))


def _report(args, run_, settings, shown_fn, extra_lines=()) -> int:
    # (imported here, not on import: a warm run of one file counts every millisecond)
    from syncscan.lint import report
    from syncscan.lint.registry import all_rules

    findings = _prepare(args, run_, settings)
    if args.costs:
        from syncscan.join import annotate_with_costs

        findings = annotate_with_costs(findings, args.costs_report)  # loaded in run()
    shown = [f for f in findings if shown_fn(f)]
    hidden_cold = Counter("low" if f.context == "hot" else f.context for f in findings if not shown_fn(f))
    for path, err in run_.errors:
        print(f"syncscan: error: {path}: {err}", file=sys.stderr)
    for line in run_.warnings:
        print(f"syncscan: warning: {line}", file=sys.stderr)
    fmt = args.format
    if fmt == "json":
        print(report.as_json(shown))
    elif fmt == "sarif":
        print(report.sarif(shown, all_rules(), run_.sources))
    elif fmt == "github":
        if shown:
            print(report.github(shown, run_.sources))
    elif fmt == "gitlab":
        print(report.gitlab(shown, run_.sources))
    elif fmt == "junit":
        print(report.junit(shown, run_.sources))
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
            if shown or sum(hidden_cold.values()):
                print(("\n" if shown else "") + report.summary(shown, n_files, hidden_cold, fixable))
            elif not run_.errors:
                print(f"No syncs found in {n_files} file{'s' if n_files != 1 else ''}.")
    if run_.errors:
        return 2
    if shown and not args.exit_zero:
        return 1
    return 0


def _fix(args, paths, settings, stdin, shown_fn) -> int:
    from syncscan.lint import fixer, report
    from syncscan.lint.files import ReadError, read
    from syncscan.lint.registry import all_rules

    rules = [r() for r in all_rules()]
    # fix what would be shown: hot findings, and cold ones only with --all; hotness comes from
    # the call graph of all the files, so lint them all first (cached)
    first = _lint(args, paths, settings, stdin_text=stdin)
    from syncscan.lint.engine import context_of

    freqs = first.frequencies  # settled with each file's project (runner.py)
    failed = dict(first.errors)  # unreadable / unparsable: never touched
    errors = list(first.errors)
    fixed: dict[str, list] = {}  # name -> the findings fixed in it (written, or would be with --diff)
    stdin_text = stdin.text if stdin is not None else ""

    def select(f, name):
        f = f.replace(path=name)  # per-file-ignores and show-cold by the name it is reported as
        return _keep(f, settings.for_path(name)) and (context_of(f, freqs) == "hot" and f.confidence == "high"
                                                      or shown_fn(f))

    for r in first.results:
        path = r.path
        name = args.stdin_filename if path == "-" and args.stdin_filename else path
        if path in failed or r.skipped and path != "-":
            if path == "-" and not args.diff:
                sys.stdout.write(stdin_text)  # unchanged, as it came
            continue
        wanted = functools.partial(select, name=name)
        try:
            src = read(path, stdin)
            hot = tuple(settings.for_path(path).hot_functions)
            if src.cells is not None:
                ff = fixer.fix_notebook(src, rules, hot, args.unsafe_fixes, wanted, _width(args, path))
            else:
                ff = fixer.fix_text(path, src.text, rules, hot, args.unsafe_fixes, wanted, _width(args, path))
        except ReadError as e:
            errors.append((name, str(e)))
            continue
        except Exception as e:  # noqa: BLE001 - a bug while fixing one file: that file is left alone
            errors.append((name, (f"internal error while fixing: {type(e).__name__}: {e}; left unchanged "
                                  "(please report it)")))
            if path == "-" and not args.diff:
                sys.stdout.write(stdin_text)
            continue
        if ff.error:
            errors.append((name, ff.error + "; left unchanged"))
        if path == "-" and not args.diff:
            sys.stdout.write(ff.before if ff.error else ff.after)  # fixed or not, stdin comes back
        if ff.error or not ff.changed:
            continue
        if args.diff:
            ff.path = name
            sys.stdout.write(ff.diff())
        elif path != "-":
            why = _write(path, src, ff.after)
            if why:
                errors.append((path, why))
                continue  # not written: not fixed
        fixed[name] = ff.applied
    errors = list(dict.fromkeys(errors))
    n_fixed, changed = sum(len(v) for v in fixed.values()), len(fixed)
    if args.diff or "-" in paths:
        for path, err in errors:
            print(f"syncscan: error: {path}: {err}", file=sys.stderr)
        if not args.quiet and (args.diff or args.show_fixes):  # (stdout carries the fixed code)
            verb = "Would fix" if args.diff else "Fixed"
            print(_fixed_line(verb, n_fixed, changed, args.show_fixes), file=sys.stderr)
            if args.show_fixes and fixed:
                print(report.fixed_list(fixed), file=sys.stderr)
        return 2 if errors else (1 if changed and args.diff else 0)
    # what is left after fixing, reported as a normal lint run
    out_lines = []
    if n_fixed:
        out_lines.append(_fixed_line("Fixed", n_fixed, changed, args.show_fixes))
        if args.show_fixes:
            out_lines.append(report.fixed_list(fixed))
    run_ = _lint(args, paths, settings, keep_sources=args.format == "text" and args.show_source)
    run_.errors = list(dict.fromkeys(run_.errors + [e for e in errors if e[0] not in dict(run_.errors)]))
    return _report(args, run_, settings, shown_fn, out_lines)


def _fixed_line(verb: str, n: int, files: int, listed: bool) -> str:
    return (f"{verb} {n} sync{'s' if n != 1 else ''} in {files} file{'s' if files != 1 else ''}"
            f"{':' if listed and n else '.'}")


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


def _add_noqa(args, run_, settings, shown_fn) -> int:
    """--add-noqa: a `# noqa: CODES` comment on the line of every shown finding, written to the
    files (as ruff's --add-noqa); exit 0 unless a file could not be read or written."""
    from syncscan.lint.files import ReadError, read

    findings = [f for f in _prepare(args, run_, settings) if shown_fn(f)]
    by_path: dict[str, list] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    errors = list(run_.errors)
    added = 0
    for path, fs in by_path.items():
        try:
            src = read(path)
        except ReadError as e:
            errors.append((path, str(e)))
            continue
        new, n, missed = _with_noqa(src, fs)
        for f in missed:
            errors.append((path, f"line {f.line}: no place for a `# noqa` comment ({f.code}): add it by hand"
                           if f.cell is None else
                           f"cell {f.cell}, line {f.line}: no place for a `# noqa` comment ({f.code})"))
        if n:
            why = _write(path, src, new)
            if why:
                errors.append((path, why))
                continue
            added += n
    for path, err in dict.fromkeys(errors):
        print(f"syncscan: error: {path}: {err}", file=sys.stderr)
    if not args.quiet:
        print(f"Added {added} noqa directive{'s' if added != 1 else ''}.")
    return 2 if errors else 0


def _with_noqa(src, findings) -> tuple[str, int, list]:
    """(the file's new text, directives added, findings no comment could reach)."""
    from syncscan.lint.files import cell_text, notebook_cell_source, python_lines
    from syncscan.lint.fixer import _patch_sources, apply_edits
    from syncscan.lint.noqa import noqa_edits
    from syncscan.lint.rule import Edit

    def edited(text: str, edits: dict[int, str], lines: list[str]) -> str:
        return apply_edits(text, [Edit(ln, 1, ln, len(lines[ln - 1]) + 1, new) for ln, new in edits.items()])

    if src.cells is None:
        from syncscan.lint.lines import split_lines

        edits, missed = noqa_edits(src.text, findings)
        return edited(src.text, edits, split_lines(src.text)), len(edits), missed
    cells = src.notebook.get("cells", [])
    changed: dict[int, str] = {}
    n, missed = 0, []
    for number in sorted({f.cell for f in findings}):
        text = cell_text(notebook_cell_source(cells[number - 1]))
        lines = text.split("\n")
        converted = python_lines(lines)
        python = "\n".join(line for line, _ in converted)
        magic = {i for i, (_, same) in enumerate(converted, start=1) if not same}
        edits, lost = noqa_edits(python, [f for f in findings if f.cell == number], magic)
        missed += lost
        if edits:
            changed[number] = "\n".join(edits.get(i, line) for i, line in enumerate(lines, start=1))
            n += len(edits)
    if not changed:
        return src.raw, 0, missed
    return _patch_sources(src.raw, src.notebook, changed), n, missed
