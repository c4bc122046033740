"""The repository around an open file: every other file's call-graph summary, so that a helper
edited alone is hot when the repository's training loop (in another file) calls it every step.

`index_repository` lints the repository through the results cache (in a process of its own: the
server's threads must not fork); the server keeps the summaries and updates one when a file is
saved. `HotBase` is the call graph of the repository *without* one file, closed once; adding that
file's functions per keystroke then costs only the new part of the closure, not the whole graph.
It gives what `hotpath.frequencies` gives for the whole graph (a test checks them against each
other on random graphs), and the background full lint settles with the engine's own `settle_context`.
"""

from __future__ import annotations

import os
from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass, field

from syncscan.server import adapter


def index_repository(root: str) -> tuple[list[adapter.FileSummary], list[tuple[str, str]]]:
    """(summaries of every Python file under `root`, errors); run in a worker process."""
    return adapter.lint_repository(root)


@dataclass
class HotBase:
    """How often each function of a call graph runs (hotpath's step / epoch / once), plus what it
    takes to add one more file's functions."""

    functions: dict[str, dict]
    freq: dict[str, str] = field(init=False)
    out: dict[str, list[tuple[str, str]]] = field(init=False)  # caller -> [(callee, local place)]
    into: dict[str, list[tuple[str, str]]] = field(init=False)  # callee -> [(caller, local place)]
    callers_of: dict[str, set[str]] = field(init=False)  # a called name -> the keys of its callers

    def __post_init__(self) -> None:
        edges = adapter.call_edges(self.functions)
        self.freq = adapter.solve(self.functions, edges)
        self.out, self.into, self.callers_of = {}, {}, {}
        for caller, callee, local in edges:
            self.out.setdefault(caller, []).append((callee, local))
            self.into.setdefault(callee, []).append((caller, local))
        for key, f in self.functions.items():
            for call in f["calls"]:
                self.callers_of.setdefault(call[0], set()).add(key)

    @classmethod
    def of(cls, summaries) -> HotBase:
        functions: dict[str, dict] = {}
        for s in summaries:
            functions.update(s.functions)
        return cls(functions)

    def freqs_with(self, functions: dict[str, dict]) -> Mapping[str, str]:
        """Frequencies of the graph with `functions` (one file's, none of them in the base) added: what
        `hotpath.frequencies` of the union gives. Only what the file's functions reach can change, so
        only that part is solved again, its other callers held at the base's frequencies."""
        if not functions:
            return self.freq
        union = {**self.functions, **functions}
        names = {f["name"] for f in functions.values()}
        names |= {n for k in functions if (n := adapter.enclosing_name(k)) is not None}
        callers = set(functions)  # the functions whose calls may land on the new ones: edges redone
        for n in names:
            callers |= self.callers_of.get(n, set())
        new_out: dict[str, list[tuple[str, str]]] = {}
        for caller, callee, local in adapter.call_edges(union, callers):
            new_out.setdefault(caller, []).append((callee, local))
        reach, work = set(functions), list(functions)
        while work:
            k = work.pop()
            for t, _ in (new_out.get(k, ()) if k in callers else self.out.get(k, ())):
                if t not in reach:
                    reach.add(t)
                    work.append(t)
        edges = [(c, t, local) for t in reach for c, local in self.into.get(t, ()) if c not in callers]
        edges += [(c, t, local) for c in callers for t, local in new_out.get(c, ()) if t in reach]
        solved = adapter.solve({k: union[k] for k in reach}, edges, fixed=self.freq)
        return ChainMap(solved, self.freq)


class ProjectIndex:
    """Call-graph summaries of a repository's files, by absolute path; `generation` counts the
    changes, so that bases built from an older state are rebuilt."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.summaries: dict[str, adapter.FileSummary] = {}
        self.ready = False
        self.errors: list[tuple[str, str]] = []
        self.generation = 0
        self._bases: dict[str, tuple[int, HotBase]] = {}

    def load(self, summaries: list[adapter.FileSummary], errors) -> None:
        self.summaries = {os.path.abspath(s.path): s for s in summaries}
        self.errors = list(errors)
        self.ready = True
        self.generation += 1

    def update(self, summary: adapter.FileSummary) -> bool:
        """Take a file's new summary; True when its call graph changed (other files' hot
        context may have)."""
        path = os.path.abspath(summary.path)
        old = self.summaries.get(path)
        if old is not None and old.functions == summary.functions:
            return False
        self.summaries[path] = adapter.FileSummary(path, [], summary.functions)
        self.generation += 1
        return True

    def contains(self, path: str) -> bool:
        path = os.path.abspath(path)
        return path == self.root or path.startswith(self.root.rstrip(os.sep) + os.sep)

    def others(self, path: str) -> list[adapter.FileSummary]:
        path = os.path.abspath(path)
        return [s for p, s in self.summaries.items() if p != path]

    def base(self, path: str) -> HotBase:
        """The closed call graph of every file but `path` (memoised per generation)."""
        path = os.path.abspath(path)
        got = self._bases.get(path)
        if got is None or got[0] != self.generation:
            got = (self.generation, HotBase.of(self.others(path)))
            self._bases[path] = got
        return got[1]

    def forget(self, path: str) -> None:
        self._bases.pop(os.path.abspath(path), None)
