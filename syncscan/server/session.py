"""The server's analysis state, without any LSP plumbing: open documents, the last lint of each,
the projects around them, the profile reports, and the steps that turn a buffer into `Shown`
findings.

Hot, epoch and cold come from the runner's project context (`runner.project_context`), as for
`syncscan lint`: the buffer's call-graph summary stands in for its file's (`reached_with`), so the
editor and the CLI agree by construction. A project is used once its index is in the cache
(`index`; the server has its worker process make it): until then a buffer is settled alone.

Two ways to lint a buffer:
- `fast`: after a change, re-lint the changed definitions only (incremental.py), settle them with
  the project as last looked at (no disk access), attach measured costs;
- `apply_full`: the whole buffer linted again (in the worker process), settled with the project
  looked at again (at most once a second, `runner.REFRESH_SECONDS`); it replaces the fast result.

A buffer that does not parse (mid-typing) keeps its last findings, moved with the lines around
the edit, until it parses again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from syncscan.server import adapter, costs, incremental
from syncscan.server.diagnostics import Shown
from syncscan.server.settings import Settings
from syncscan.server.text import common_lines, lines_with_ends


@dataclass
class Doc:
    uri: str
    path: str
    version: int
    text: str
    # the last lint: the text it saw (as lines with ends), its blocks, its unsettled findings
    lines: list[str] = field(default_factory=list)
    blocks: list[incremental.Block] | None = None
    summary: adapter.FileSummary | None = None
    exact: bool = False  # `summary` is a whole-file lint of `lines`
    shown: list[Shown] = field(default_factory=list)
    shown_text: str | None = None  # the text `shown` belongs to
    shown_lines: list[str] = field(default_factory=list)  # and its lines
    closed: bool = False
    # the project context settling it (None: the file alone) and the project's state it was taken at
    project: adapter.ProjectContext | None = None
    project_state: int = -1  # (Session.state)
    reached: tuple[tuple, dict[str, str]] | None = None  # (summary digest, project version), groups' frequencies


class Session:
    def __init__(self, settings: Settings | None = None, roots: list[str] | None = None, log=None) -> None:
        self.settings = settings or Settings()
        self.roots = [os.path.abspath(r) for r in roots or []]
        self.docs: dict[str, Doc] = {}
        self.lint_settings = adapter.lint_settings()  # the projects' files' configs, as `syncscan lint` reads them
        self.indexed: set[str] = set()  # roots of the projects whose index is in the cache
        self.state = 0  # bumped whenever a project may have changed: settle again
        self.reports = costs.Reports()
        self._configs: dict[str, tuple[adapter.Config, str | None]] = {}
        self.log = log or (lambda message, level="info": None)
        self._said: set[str] = set()

    # -- configuration -------------------------------------------------------------------------
    def config(self, path: str) -> adapter.Config:
        folder = os.path.dirname(os.path.abspath(path))
        got = self._configs.get(folder)
        if got is None:
            try:
                got = (adapter.load_config(path), None)
            except adapter.config_error_type() as e:
                got = (adapter.Config(), str(e))
            self._configs[folder] = got
        if got[1]:
            self.say(f"syncscan: {got[1]} (using the default settings)", "error")
        return got[0]

    def forget_configs(self) -> None:
        self._configs.clear()
        self._said.clear()
        self.lint_settings = adapter.lint_settings()
        self.state += 1

    def say(self, message: str, level: str = "info") -> None:
        if message not in self._said:
            self._said.add(message)
            self.log(message, level)

    def root_of(self, path: str) -> str | None:
        """The workspace folder holding `path` (the deepest), else the nearest folder above it with
        pyproject.toml / .git / setup.py; None when there is neither."""
        path = os.path.abspath(path)
        inside = [r for r in self.roots if path.startswith(r.rstrip(os.sep) + os.sep)]
        if inside:
            return max(inside, key=len)
        return adapter.project_root(path)

    # -- projects --------------------------------------------------------------------------------
    def index(self, path: str, jobs: int | None = 1) -> str | None:
        """Make the index of the project holding `path` (here; the server has its worker do it, then
        calls `indexed_at`); its root."""
        root = adapter.index_project(path, self.lint_settings, jobs)
        if root is not None:
            self.indexed_at(root)
        return root

    def indexed_at(self, root: str) -> int | None:
        """The project at `root` has its index in the cache: load it here (warm) and settle with it;
        the number of its files."""
        self.indexed.add(root)
        self.state += 1
        ctx = adapter.project_at(root, self.lint_settings)
        return adapter.project_files(ctx) if ctx is not None else None

    def project(self, doc: Doc, look: bool = False) -> adapter.ProjectContext | None:
        """The project context settling `doc` (None: the file alone, or its project not indexed yet);
        `look`: look at the disk again (at most once a second) before answering."""
        if look or doc.project_state != self.state:
            root = adapter.project_root_of(doc.path)
            doc.project = adapter.project_context(doc.path, self.lint_settings) if root in self.indexed else None
            doc.project_state = self.state
        return doc.project

    def rescan(self, paths: list[str]) -> bool:
        """Files changed on disk (saved, or by another program): the projects holding them scan what
        changed; True when other files' hot, epoch or cold may have changed."""
        changed = False
        for root in dict.fromkeys(adapter.project_root_of(p) for p in paths):
            if root in self.indexed:
                ctx = adapter.project_at(root, self.lint_settings)
                changed |= ctx is not None and adapter.rescan(ctx)
        if changed:
            self.state += 1
        return changed

    # -- linting ---------------------------------------------------------------------------------
    def lint_here(self, path: str, text: str) -> adapter.FileSummary:
        return adapter.lint_text(path, text, self.config(path))

    def fast(self, doc: Doc) -> list[Shown]:
        """Lint the buffer as it is now (the changed definitions only where possible) and return
        what to show."""
        text = doc.text
        lines = lines_with_ends(text)
        plan = None
        if doc.summary is not None and doc.blocks is not None:
            if lines == doc.lines:
                return self.present(doc, text)
            plan = incremental.plan(doc.lines, doc.blocks, lines)
        if plan is not None and doc.summary is not None:
            reduced = self.lint_here(doc.path, plan.reduced)
            if not reduced.error:
                summary = incremental.merge(plan, doc.path, doc.summary, reduced)
                self._keep(doc, lines, plan.blocks, summary, exact=False)
                return self.present(doc, text)
        summary = self.lint_here(doc.path, text)
        if not self._take_whole(doc, lines, summary):
            return self._carried(doc, text, lines)
        return self.present(doc, text)

    def apply_full(self, doc: Doc, text: str, summary: adapter.FileSummary) -> list[Shown] | None:
        """Take a whole-file lint of `text` (made elsewhere) when the buffer still holds that text;
        settled with the project looked at again. None when the buffer moved on."""
        if doc.closed or doc.text != text:
            return None
        lines = lines_with_ends(text)
        if not self._take_whole(doc, lines, summary):
            return self._carried(doc, text, lines)
        return self.present(doc, text, look=True)

    def _take_whole(self, doc: Doc, lines: list[str], summary: adapter.FileSummary) -> bool:
        tree = adapter.parse("".join(lines))
        if isinstance(tree, str):
            return False
        self._keep(doc, lines, incremental.blocks_of(tree), summary, exact=True)
        if summary.error:  # a rule crashed on this file: the other rules' findings still count
            self.say(f"syncscan: {doc.path}: {summary.error}", "error")
        return True

    def _keep(self, doc, lines, blocks, summary, exact) -> None:
        doc.lines, doc.blocks, doc.summary, doc.exact = lines, blocks, summary, exact

    def _carried(self, doc: Doc, text: str, lines: list[str]) -> list[Shown]:
        """The buffer does not parse: the findings shown last, kept where the lines around the edit
        are unchanged and moved with them (the lint state stays at the last text that parsed)."""
        old = lines_with_ends(doc.shown_text) if doc.shown_text is not None else []
        p, s = common_lines(old, lines)
        delta = len(lines) - len(old)
        out = []
        for sh in doc.shown:
            f = sh.finding
            if f.end_line <= p:
                out.append(sh)
            elif f.line > len(old) - s:
                out.append(replace(sh, finding=incremental.moved_finding(f, delta)))
        doc.shown, doc.shown_text, doc.shown_lines = out, text, lines
        return out

    def frequencies(self, doc: Doc, look: bool = False) -> Mapping[str, str]:
        """How often each function of the buffer's last lint runs, in its project."""
        summary = doc.summary
        if summary is None:
            return {}
        ctx = self.project(doc, look)
        mine, digest = adapter.summary_digest(summary.functions)
        key = (digest, adapter.project_version(ctx))  # (what the groups' frequencies depend on)
        if doc.reached is None or doc.reached[0] != key:
            doc.reached = (key, adapter.reached(doc.path, mine, ctx))
        return adapter.frequencies(summary.functions, {f.function for f in summary.findings}, doc.reached[1])

    def present(self, doc: Doc, text: str, look: bool = False) -> list[Shown]:
        """Settle hot / epoch / cold, drop what the config deselects, attach the profile's costs."""
        summary = doc.summary
        assert summary is not None
        cfg = self.config(doc.path)
        freqs = self.frequencies(doc, look)
        items = [(f, adapter.context_of(f, freqs)) for f in summary.findings if adapter.shown_by_config(f, cfg)]
        root = self.root_of(doc.path) or os.path.dirname(doc.path)
        notes = self._costs(doc.path, text, items, root, self.settings.report or adapter.profile_report(cfg))
        shown = [Shown(f, c, notes.get(i)) for i, (f, c) in enumerate(items)]
        doc.shown, doc.shown_text = shown, text
        doc.shown_lines = doc.lines if "".join(doc.lines) == text else lines_with_ends(text)
        if look:  # (the background lint: the next change with new calls then costs only what they reach)
            adapter.prepare(doc.path, doc.project)
        return shown

    def _costs(self, path: str, text: str, items: list[tuple[adapter.Finding, str]], root: str,
               named: str | None) -> dict[int, costs.CostNote]:
        """index in `items` -> what the profile report says of that finding."""
        where = self.reports.find(root, named)
        report = self.reports.load(where)
        if where is not None and where in self.reports.errors:
            self.say(f"syncscan: measured costs: {self.reports.errors[where]}", "warning")
        if report is None or not items or not costs.covers(report, path):
            return {}
        disk = costs.disk_text(path)
        stale = costs.staleness(report, path, text, disk)
        # unsaved edits: join on the lines the file (as profiled) has, where the edit left them
        lines = costs.line_map(text, disk) if disk is not None and disk != text else None
        settled = [f.replace(context=c, extra={}) for f, c in items]  # the join reads the context
        got = costs.notes(settled, report, stale, lines)
        return {i: got[id(f)] for i, f in enumerate(settled) if id(f) in got}

    # -- the projects ----------------------------------------------------------------------------
    def saved(self, doc: Doc) -> bool:
        """After a save: the file's project scans it; True when other files' context may have changed."""
        return self.rescan([doc.path])

    def refresh(self, doc: Doc) -> list[Shown] | None:
        """Settle the last lint again (the repository or the report changed); None before any lint
        or while the buffer does not parse."""
        if doc.summary is None or doc.shown_text != doc.text or "".join(doc.lines) != doc.text:
            return None
        return self.present(doc, doc.text)
