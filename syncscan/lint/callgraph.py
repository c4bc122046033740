"""Hot context across files, from small per-file summaries.

`hotpath.resolve_hot` resolves calls by name: a call of `helper` reaches every function named
`helper` in the linted files, and `obj.update(...)` every method and function named `update`
(`self.x(...)` only methods). So hotness spreads per *name group*, never to one function alone:
`f:name` holds the functions (module-level or nested) called `name`, `m:name` the methods. A
function is hot when it is locally hot (a loss, `forward`, a function that steps the optimizer,
...) or when its group is reached from hot code.

A file's `Summary` folds its call graph by group: for each group it defines, the groups its
functions call (followed once the group is reached), and the groups called from its locally hot
code (hot functions and hot loops: the roots). Summaries are what the cache keeps per file and
what a project index merges (`CallGraph`, with counts, so that a file's old summary can be taken
out again). Memory grows with the distinct names of a project, not with its files, and the
answer is exactly `resolve_hot`'s (a test checks it on random graphs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import NamedTuple

from syncscan.lint.hotpath import GENERIC_METHODS

try:  # CPython's own blake2: importing hashlib would load OpenSSL, a few ms of every run
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import blake2b


class Summary(NamedTuple):
    """What other files need to know of one file to settle hot and cold."""

    defs: dict[str, tuple[str, ...]]  # group -> the groups its functions call (sorted)
    roots: tuple[str, ...]  # groups called from locally hot code (sorted)

    def to_json(self) -> list:
        return [self.defs, list(self.roots)]

    @classmethod
    def from_json(cls, data) -> Summary:
        """The summary a `to_json` gave; TypeError for anything else (a corrupt cache)."""
        if not (isinstance(data, (list, tuple)) and len(data) == 2 and isinstance(data[0], dict)
                and isinstance(data[1], (list, tuple))):
            raise TypeError("not a summary")
        defs = {}
        for g, ts in data[0].items():
            if not isinstance(ts, (list, tuple)) or not all(isinstance(t, str) for t in ts):
                raise TypeError("not a summary")
            defs[g] = tuple(ts)
        if not all(isinstance(t, str) for t in data[1]):
            raise TypeError("not a summary")
        return cls(defs, tuple(data[1]))

    def digest(self) -> str:
        """A short hash of the summary: equal summaries, equal digests."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return blake2b(text.encode(), digest_size=8).hexdigest()


EMPTY = Summary({}, ())


def group(name: str, method: bool) -> str:
    return ("m:" if method else "f:") + name


def targets(name: str, via: str) -> tuple[str, ...]:
    """The groups a call reaches: `name(...)` functions, `self.name(...)` methods, `obj.name(...)`
    both, unless the name is too generic to follow (`step`, `update`, ...)."""
    if via == "":
        return ("f:" + name,)
    if via == "self":
        return ("m:" + name,)
    if name in GENERIC_METHODS:
        return ()
    return ("m:" + name, "f:" + name)


def summarize(functions: dict[str, dict], seeds: Iterable[tuple[str, str]]) -> Summary:
    """The summary of one file's `FileResult.functions` and `.seeds`."""
    defs: dict[str, set[str]] = {}
    roots: set[str] = set()
    for name, via in seeds:
        roots.update(targets(name, via))
    for f in functions.values():
        called: set[str] = set()
        for name, via in f["calls"]:
            called.update(targets(name, via))
        defs.setdefault(group(f["name"], f["method"]), set()).update(called)
        if f["hot"]:
            roots.update(called)
    # (a group whose functions call nothing adds nothing once reached: left out)
    return Summary({g: tuple(sorted(ts)) for g, ts in sorted(defs.items()) if ts}, tuple(sorted(roots)))


class CallGraph:
    """Summaries merged: for each group, how many files' functions of that group call each other
    group, and how many files call each group from hot code. Counts, so that `remove` undoes `add`."""

    def __init__(self) -> None:
        self.edges: dict[str, dict[str, int]] = {}
        self.roots: dict[str, int] = {}

    def add(self, s: Summary, sign: int = 1) -> None:
        for g, ts in s.defs.items():
            out = self.edges.get(g)
            if out is None:
                out = self.edges[g] = {}
            for t in ts:
                _bump(out, t, sign)
            if not out:
                del self.edges[g]
        for t in s.roots:
            _bump(self.roots, t, sign)

    def remove(self, s: Summary) -> None:
        self.add(s, -1)

    def reached(self, extra: Iterable[Summary] = ()) -> frozenset[str]:
        """The groups hot code reaches, with the summaries in `extra` added for this question only."""
        extra = list(extra)
        more: dict[str, set[str]] = {}
        work = list(self.roots)
        for s in extra:
            work.extend(s.roots)
            for g, ts in s.defs.items():
                more.setdefault(g, set()).update(ts)
        seen: set[str] = set()
        while work:
            g = work.pop()
            if g in seen:
                continue
            seen.add(g)
            work.extend(self.edges.get(g, ()))
            work.extend(more.get(g, ()))
        return frozenset(seen)

    def to_json(self) -> dict:
        return {"edges": self.edges, "roots": self.roots}

    @classmethod
    def from_json(cls, data) -> CallGraph:
        """The graph a `to_json` gave; TypeError for anything else (a corrupt cache)."""
        g = cls()
        if not (isinstance(data, dict) and isinstance(data.get("edges"), dict) and isinstance(data.get("roots"), dict)):
            raise TypeError("not a call graph")
        for out in data["edges"].values():
            if not isinstance(out, dict) or not all(isinstance(v, int) and v > 0 for v in out.values()):
                raise TypeError("not a call graph")
        if not all(isinstance(v, int) and v > 0 for v in data["roots"].values()):
            raise TypeError("not a call graph")
        g.edges, g.roots = data["edges"], data["roots"]
        return g


def _bump(counts: dict[str, int], key: str, by: int) -> None:
    n = counts.get(key, 0) + by
    if n > 0:
        counts[key] = n
    else:
        counts.pop(key, None)


def is_hot(function: dict | None, reached: frozenset[str] | set[str]) -> bool:
    """Whether a function (a `FileResult.functions` value) is hot given the reached groups."""
    if function is None:
        return False
    return bool(function["hot"]) or group(function["name"], function["method"]) in reached


def settle(results: Iterable, reached: frozenset[str] | set[str]) -> set[str]:
    """Mark each finding of these `FileResult`s hot or cold; returns the keys of their functions
    that are hot (what `--fix` needs to select the findings it fixes)."""
    hot: set[str] = set()
    for r in results:
        for key, f in r.functions.items():
            if is_hot(f, reached):
                hot.add(key)
        for finding in r.findings:
            finding.context = "hot" if finding.local_hot or finding.function in hot else "cold"
    return hot


def slim(result) -> None:
    """Keep only the functions a result's findings stand in (the rest is in its summary)."""
    if result.functions:
        used = {f.function for f in result.findings}
        result.functions = {k: v for k, v in result.functions.items() if k in used}
        result.seeds = []
