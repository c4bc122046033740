"""The server's one door into the lint engine, the fixer, the rule registry and the profile join.

Every call the language server makes into `syncscan.lint` / `syncscan.join` internals is here, so
that when those modules change shape (typed inference providers, a whole-repository project
context, nearest-pyproject config per file, a typed report schema) only this file has to follow.
The rest of `syncscan.server` sees `Finding`, `Fix`, `Edit` and `FileSummary` and the functions
below.

Where the API the server wants does not exist yet, the function says what it stands in for.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from syncscan.lint import config as _config
from syncscan.lint import engine as _engine
from syncscan.lint import hotpath as _hotpath
from syncscan.lint import registry as _registry
from syncscan.lint.lines import line_starts, split_lines
from syncscan.lint.report import DOCS_URL
from syncscan.lint.rule import Edit, Finding, Fix

__all__ = ["DOCS_URL", "Edit", "FileSummary", "Finding", "Fix", "line_starts", "split_lines"]

Config = _config.Config


@dataclass
class FileSummary:
    """What one linted file gives the cross-file hot-path analysis, and its findings before hot and
    cold are settled (`function` and `local` set, `context` not yet)."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    functions: dict[str, dict] = field(default_factory=dict)
    error: str | None = None
    deps: list[tuple[str, int, int]] = field(default_factory=list)  # (FileResult.deps)


# -- rules and config -------------------------------------------------------------------------

@lru_cache(maxsize=1)
def rules() -> tuple:
    """One instance of every rule (the lint functions take instances)."""
    return tuple(r() for r in _registry.all_rules())


def rule_class(code: str):
    return _registry.by_code().get(code)


def fix_safety_text(code: str) -> str:
    from syncscan.lint import docs

    r = rule_class(code)
    return docs.fix_safety(r) if r is not None else ""


def load_config(path: str) -> Config:
    """`[tool.syncscan]` of the nearest pyproject.toml above `path` (a UserError when it is broken).
    Stands in for the nearest-pyproject-per-file discovery the CLI is getting."""
    return _config.load(None, path)


def config_error_type() -> type[Exception]:
    from syncscan.errors import UserError

    return UserError


def hot_patterns(cfg: Config) -> tuple[str, ...]:
    return tuple(cfg.hot_functions)


def shown_by_config(f: Finding, cfg: Config) -> bool:
    """select / ignore / per-file-ignores, as `syncscan lint` applies them."""
    from syncscan.lint.runner import _keep

    return _keep(f, cfg)


# -- linting one buffer -----------------------------------------------------------------------

def lint_text(path: str, text: str, cfg: Config) -> FileSummary:
    """Lint a buffer's text as the file `path` (unsettled: hot and cold come from `settle`)."""
    r = _engine.lint_source(path, text, list(rules()), hot_patterns(cfg))
    return FileSummary(path, r.findings, r.functions, r.error, r.deps)


def summary_from_cache(path: str, data: dict) -> FileSummary:
    r = _engine.FileResult.from_cache(path, data)
    return FileSummary(path, r.findings, r.functions, r.error, r.deps)


def summary_to_cache(s: FileSummary) -> dict:
    return _engine.FileResult(s.path, s.findings, s.functions, s.error, deps=s.deps).to_cache()


def parse(text: str) -> ast.Module | str:
    """The module's tree, or the one-line reason it does not parse."""
    return _engine.parse("<buffer>", text)


def noqa_edit(text: str, f: Finding) -> tuple[str, int] | None:
    """(the text with the `# noqa` that `lint --add-noqa` would write for `f`, the 0-based line it
    changed), or None when no line of the finding can take one, or a bare noqa covers it."""
    from syncscan.lint import noqa

    edits, _ = noqa.noqa_edits(text, [f])
    if not edits:
        return None
    ((line, body),) = edits.items()
    starts = line_starts(text)  # (with len(text) last)
    start = starts[line - 1]
    segment = text[start:starts[line]] if line < len(starts) else text[start:]
    end = start + len(segment.rstrip("\r\n"))  # the line without its end
    return text[:start] + body + text[end:], line - 1


def settle(mine: FileSummary, others: list[FileSummary]) -> list[Finding]:
    """The file's findings with hot / epoch / cold settled over the call graph of `mine` and `others`
    (the rest of the repository), by the engine's own rule."""
    from dataclasses import replace

    results = [_engine.FileResult(s.path, [replace(f) for f in s.findings] if s is mine else [], s.functions)
               for s in [mine, *others]]
    _engine.settle_context(results)
    return results[0].findings


# the call graph's pieces (hotpath), for the server's base-plus-one-file closure (project.py)
frequencies = _hotpath.frequencies
call_edges = _hotpath.call_edges
solve = _hotpath.solve
enclosing_name = _hotpath.enclosing_name


def context_of(f: Finding, freqs: Mapping[str, str]) -> str:
    """A finding's context ("hot" / "epoch" / "cold") given its functions' frequencies (what
    `settle_context` assigns)."""
    return _engine.context_of(f, freqs)


def shown_by_default(f: Finding, context: str) -> bool:
    """What `syncscan lint` shows without --all, for a finding of this context: hot and of high confidence."""
    return context == "hot" and f.confidence == "high"


# -- the repository around a file ---------------------------------------------------------------

def lint_repository(root: str) -> tuple[list[FileSummary], list[tuple[str, str]]]:
    """Every Python file under `root`, each with the config of its nearest pyproject.toml
    (excludes and .gitignore honoured), through the results cache (in the config's folder, else
    the working folder): (summaries, errors). Stands in for the project-context API
    (`project_context(path)`) that the runner is getting; runs in the worker process."""
    from syncscan.lint.runner import lint_paths

    run = lint_paths([root], _config.Settings(), use_cache=True)
    return ([FileSummary(os.path.abspath(r.path), [], r.functions, r.error) for r in run.results],
            run.errors)


def lint_files(paths: list[str]) -> list[FileSummary]:
    from syncscan.lint.runner import lint_paths

    run = lint_paths(paths, _config.Settings(), use_cache=True, jobs=1)
    return [FileSummary(os.path.abspath(r.path), [], r.functions, r.error) for r in run.results]


def project_root(path: str) -> str | None:
    """The nearest folder above `path` holding pyproject.toml, .git, setup.py or setup.cfg."""
    d = Path(os.path.abspath(path)).parent
    for p in [d, *d.parents]:
        if any((p / m).exists() for m in ("pyproject.toml", ".git", "setup.py", "setup.cfg")):
            return str(p)
    return None


def profile_report(cfg: Config) -> str | None:
    """`[tool.syncscan] profile-report`, absolute (it is relative to the pyproject.toml)."""
    return cfg.profile_report


# -- fixes ------------------------------------------------------------------------------------

def fix_group(finding: Finding, findings: list[Finding]) -> list[Finding]:
    """The findings whose fixes go with `finding`'s (a fix group is applied whole or not at all:
    the accumulators of one loop, the masked reads of one loss), `finding` first; [] when they
    cannot go together."""
    from syncscan.lint import fixer

    if finding.fix is None:
        return []
    group = finding.fix.group
    chosen = fixer.choose(findings, finding.fix.applicability != "safe",
                          lambda f: f is finding or bool(group) and f.fix is not None and f.fix.group == group)
    if not any(f is finding for f in chosen):
        return []
    return [finding] + [f for f in chosen if f is not finding]


def apply_fix(path: str, text: str, together: list[Finding]) -> str | None:
    """The text with these findings' fixes applied (one fix, or one fix group), the imports they
    need added and lines they made too long wrapped as `lint --fix` does, or None when the result
    would not parse."""
    from syncscan.lint import fixer
    from syncscan.lint.wrap import line_length_for

    new = fixer.apply_edits(text, fixer.edits_of(together))
    if isinstance(parse(new), str):
        return None
    modules = {m for f in together if f.fix is not None for m in f.fix.imports}
    if modules:
        try:
            new = fixer.add_imports(new, modules)
        except Exception:  # noqa: BLE001 - LibCST could not place the import: offer no fix
            return None
    return fixer._wrapped(text, new, line_length_for(path))


def fix_all(path: str, text: str, cfg: Config, unsafe: bool, select) -> tuple[str, int, str | None]:
    """(fixed text, number of syncs the fixes remove, error): `syncscan lint --fix` on one buffer,
    fixing the findings `select(finding)` accepts (round after round, each result checked to
    parse, long lines wrapped to the project's line length)."""
    from syncscan.lint import fixer
    from syncscan.lint.wrap import line_length_for

    ff = fixer.fix_text(path, text, list(rules()), hot_patterns(cfg), unsafe, select, line_length_for(path))
    return ff.after, len(ff.applied), ff.error


# -- measured costs (a profile / analyze report) ------------------------------------------------

def load_report(path: str) -> dict:
    """A profile/analyze JSON report (UserError when missing or not one)."""
    from syncscan.schema import read_report

    return read_report(path)


def report_files(report: dict) -> list[str]:
    """The file names the report's sync sites point to."""
    from syncscan.join import runtime_sites

    sites, _ = runtime_sites(report)
    names = []
    for s in sites:
        names.append(s.get("file"))
        names.extend(src.get("file") for src in s.get("sources") or [] if isinstance(src, dict))
    return [n for n in dict.fromkeys(names) if isinstance(n, str) and n]


def same_file(a: str, b: str) -> int:
    from syncscan.join import same_file as same

    return same(a, b)


def annotate_costs(findings: list[Finding], report: dict) -> None:
    """Attach `extra["cost"]` to each finding (status confirmed / not_observed / not_profiled, the
    measured GPU idle per step and the replay's predicted saving), as `lint --costs` does."""
    from syncscan.join import annotate_with_costs

    annotate_with_costs(findings, report)


def cost_label(cost: dict | None) -> str:
    """`0.083 ms/step GPU idle, rewrite saves 0.171 ms/step` (as `lint --costs` prints it)."""
    from syncscan.lint.report import cost_label as label

    return label(cost)


def report_time(report: dict, report_path: str) -> float | None:
    """When the profiled sources were read: the run's start for a profile report, else when the
    report file was written. (The report records no per-file hash or mtime yet.)"""
    import time

    started = report.get("started")
    if isinstance(started, str):
        try:
            return time.mktime(time.strptime(started, "%Y-%m-%dT%H:%M:%S"))
        except ValueError:
            pass
    try:
        return os.stat(report_path).st_mtime
    except OSError:
        return None

