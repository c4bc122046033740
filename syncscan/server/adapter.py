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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from syncscan.lint import cache as _cache
from syncscan.lint import callgraph as _callgraph
from syncscan.lint import config as _config
from syncscan.lint import engine as _engine
from syncscan.lint import project as _project
from syncscan.lint import registry as _registry
from syncscan.lint import runner as _runner
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


# -- hot, epoch and cold: the project around a file (the runner's project context) -------------

ProjectContext = _project.ProjectContext


def lint_settings() -> _config.Settings:
    """Each file's config from its nearest pyproject.toml, as `syncscan lint` gives it."""
    return _config.Settings()


def project_context(path: str, settings: _config.Settings) -> ProjectContext | None:
    """The project around `path` as `syncscan lint` sees it (`runner.project_context`, in this
    process: never forking), looking at the disk again at most once a second; None when the file is
    in no project or its project does not list it (then it is settled alone, as `lint FILE` does)."""
    return _runner.project_context(path, settings, jobs=1)


def index_project(path: str, settings: _config.Settings | None = None, jobs: int | None = None) -> str | None:
    """Bring the index of the project holding `path` (a file, or a folder of the project) up to date
    in the cache, scanning what changed (over worker processes unless `jobs` is 1: the server runs
    this in its worker process); the project's root, or None when `path` is in no project."""
    root = project_root_of(path)
    if root is not None:
        _runner.project_context(_in(root), settings or _config.Settings(), jobs=jobs, listed=False)
    return root


def project_at(root: str, settings: _config.Settings) -> ProjectContext | None:
    """The context of the project at `root` (in this process), whatever files it lists."""
    return _runner.project_context(_in(root), settings, jobs=1, listed=False)


def _in(root: str) -> str:
    """A path whose project is the one at `root` (the runner finds a project from a file in it)."""
    return os.path.join(root, "pyproject.toml")


def project_root_of(path: str) -> str | None:
    """The root of the project `path` (a file, or a folder) belongs to: the nearest folder with a
    pyproject.toml or a .git, whether or not the project lists the file."""
    return _project.find_root(path if os.path.isdir(path) else os.path.dirname(_cache.resolved(path)))


def rescan(ctx: ProjectContext) -> bool:
    """The project's files changed on disk (a save, a checkout): scan those whose stat moved, now,
    and write the index; True when the frequencies the project gives changed."""
    before = ctx.reached()
    ctx.refresh(max_age=0.0)
    ctx.save()
    return ctx.reached() != before


def project_version(ctx: ProjectContext | None) -> tuple:
    """Changes whenever the project's call graph does."""
    return (id(ctx), ctx.version) if ctx is not None else (None,)


def project_files(ctx: ProjectContext) -> int:
    return len(ctx.index.files)


def summary_digest(functions: dict[str, dict]) -> tuple[_callgraph.Summary, str]:
    s = _callgraph.summarize(functions)
    return s, s.digest()


def reached(path: str, summary: _callgraph.Summary, ctx: ProjectContext | None) -> dict[str, str]:
    """Group -> frequency with the buffer's summary in place of the file's on disk (`ctx.reached_with`),
    or of the file alone when it is in no project."""
    if ctx is None:
        return _project.loose_reached([summary])
    return ctx.reached_with({_cache.resolved(path): summary})


def prepare(path: str, ctx: ProjectContext | None) -> None:
    """Have the project keep the rounds of its graph without this file (what each change of a
    buffer of it with new calls is answered from): built now, in the background, rather than on
    the next such keystroke."""
    if ctx is not None:
        ctx.reached_with({_cache.resolved(path): _callgraph.EMPTY})


def frequencies(functions: dict[str, dict], keys: Iterable[str], reached: dict[str, str]) -> dict[str, str]:
    """How often each function `keys` names runs, given the groups' frequencies (what
    `callgraph.settle` gives the functions findings stand in)."""
    return {k: _callgraph.function_frequency(k, functions.get(k), reached) for k in keys}


def context_of(f: Finding, freqs: Mapping[str, str]) -> str:
    """A finding's context ("hot" / "epoch" / "cold") given its functions' frequencies (what
    `settle` assigns)."""
    return _engine.context_of(f, freqs)


# -- the workspace ------------------------------------------------------------------------------

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

