"""The repository around an open file: every other file's call-graph summary, so that a helper
edited alone is hot when the repository's training loop (in another file) calls it every step.

`index_repository` lints the repository through the results cache (in a process of its own: the
server's threads must not fork); the server keeps the summaries and updates one when a file is
saved. `HotBase` is the call graph of the repository *without* one file, closed once; adding that
file's functions per keystroke then costs only the new part of the closure, not the whole graph.
It follows `hotpath.resolve_hot`'s rules exactly (a test checks them against each other on
random graphs), and the background full lint settles with the engine's own `settle_context`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from syncscan.server import adapter


def index_repository(root: str) -> tuple[list[adapter.FileSummary], list[tuple[str, str]]]:
    """(summaries of every Python file under `root`, errors); run in a worker process."""
    return adapter.lint_repository(root)


def _index(functions: dict[str, dict]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    by_func: dict[str, list[str]] = {}
    by_method: dict[str, list[str]] = {}
    for key, f in functions.items():
        (by_method if f["method"] else by_func).setdefault(f["name"], []).append(key)
    return by_func, by_method


@dataclass
class HotBase:
    """The hot set of a call graph, plus what it takes to add one more file's functions."""

    functions: dict[str, dict]
    seeds: list[tuple[str, str]]
    hot: set[str] = field(init=False)
    by_func: dict[str, list[str]] = field(init=False)
    by_method: dict[str, list[str]] = field(init=False)
    hot_calls: set[tuple[str, str]] = field(init=False)  # (name, via) called from hot code or seeded

    def __post_init__(self) -> None:
        self.hot = adapter.resolve_hot(self.functions, self.seeds)
        self.by_func, self.by_method = _index(self.functions)
        calls = set(self.seeds)
        for k in self.hot:
            calls.update(tuple(c) for c in self.functions[k]["calls"])
        self.hot_calls = calls

    @classmethod
    def of(cls, summaries) -> HotBase:
        functions: dict[str, dict] = {}
        seeds: list[tuple[str, str]] = []
        for s in summaries:
            functions.update(s.functions)
            seeds.extend(s.seeds)
        return cls(functions, seeds)

    def hot_with(self, functions: dict[str, dict], seeds: list[tuple[str, str]]) -> set[str]:
        """Hot keys of the graph with `functions` and `seeds` (one file's) added: what
        `resolve_hot` of the union gives, computed from the closed base."""
        own_func, own_method = _index(functions)
        generic = adapter.GENERIC_METHODS

        def targets(name: str, via: str) -> list[str]:
            if via == "":
                return self.by_func.get(name, []) + own_func.get(name, [])
            if via != "self" and name in generic:
                return []
            out = self.by_method.get(name, []) + own_method.get(name, [])
            if via != "self":
                out += self.by_func.get(name, []) + own_func.get(name, [])
            return out

        new: set[str] = set()
        work: list[str] = []

        def add(k: str) -> None:
            if k not in self.hot and k not in new:
                new.add(k)
                work.append(k)

        calls = self.hot_calls
        for k, f in functions.items():
            name = f["name"]
            reached = (name, "self") in calls if f["method"] else (name, "") in calls
            if f["hot"] or reached or (name not in generic and (name, "attr") in calls):
                add(k)
        for name, via in seeds:
            for t in targets(name, via):
                add(t)
        while work:
            k = work.pop()
            f = functions.get(k) or self.functions[k]
            for name, via in f["calls"]:
                for t in targets(name, via):
                    add(t)
        return self.hot | new


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
        if old is not None and old.functions == summary.functions and old.seeds == summary.seeds:
            return False
        self.summaries[path] = adapter.FileSummary(path, [], summary.functions, list(summary.seeds))
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
