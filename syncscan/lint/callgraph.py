"""Hot, epoch and cold across files, from small per-file summaries.

`hotpath.frequencies` gives each function how often it runs (step / epoch / once) from its root
(what it is: `forward`, a loss, a function that runs a step, `train_one_epoch` ...) and from its
callers, each call scaled by its place in the caller (a step loop, a data loop, an epoch loop, a
periodic test). Calls resolve by name: `helper(...)` reaches every function named `helper`,
`obj.update(...)` every method and function named `update` (`self.x(...)` only methods). So a
function's frequency is its root's or what its *name group* receives, whichever is higher: the
functions called `name` (module-level) are `f:name`, the methods `m:name`; a function defined inside
`outer` is `n:outer.name` (reached from `outer` itself, from code beside it, and through `w:outer`, the
decorator `outer` wrapping a function).

A file's `Summary` folds its call graph by group and root: for each (group, root) of its functions,
the calls they make as `target@place`. Summaries are what the cache keeps per file and what a
project index merges (`CallGraph`, with counts, so that a file's old summary can be taken out
again). Memory grows with the distinct names of a project, not with its files. The frequencies are
`hotpath.frequencies`' over all the files' functions (a test checks it on random graphs) but for two
corners: a function of the same group as its caller (recursion) is not raised by its own calls in a
loop, and two files each defining `inner` in a function named `outer` share `n:outer.inner`.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable

from syncscan.lint.often import (_RANK, EPOCH, GENERIC_METHODS, LOADER, ONCE, STEP, by_class, context_of, dropped,
                                 frequency)

try:  # CPython's own blake2: importing hashlib would load OpenSSL, a few ms of every run
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import blake2b

MAX_ROUNDS = 8  # as hotpath.frequencies: frequencies are not monotone in the callers' (data loops)
_ROOTS = ("", STEP, EPOCH)


class Summary(namedtuple("Summary", ["defs"])):  # (not typing.NamedTuple: importing typing costs a warm lint ms)
    """What other files need to know of one file to settle hot, epoch and cold."""

    # "group@root" (root: "", "step" or "epoch") -> the calls its functions make, "target@place" (sorted)
    defs: dict[str, tuple[str, ...]]
    __slots__ = ()

    def to_json(self) -> list:
        return [self.defs]

    @classmethod
    def from_json(cls, data) -> Summary:
        """The summary a `to_json` gave; TypeError for anything else (a corrupt cache)."""
        if not (isinstance(data, (list, tuple)) and len(data) == 1 and isinstance(data[0], dict)):
            raise TypeError("not a summary")
        defs = {}
        for g, ts in data[0].items():
            if not (isinstance(g, str) and "@" in g and isinstance(ts, (list, tuple))
                    and all(isinstance(t, str) and "@" in t for t in ts)):
                raise TypeError("not a summary")
            defs[g] = tuple(ts)
        return cls(defs)

    def digest(self) -> str:
        """A short hash of the summary: equal summaries, equal digests."""
        # (groups and targets are names: no tab or newline in them)
        text = "\n".join(f"{g}\t{chr(9).join(ts)}" for g, ts in sorted(self.defs.items()))
        return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


EMPTY = Summary({})


def group(name: str, method: bool) -> str:
    return ("m:" if method else "f:") + name


def group_of(key: str, function: dict) -> str:
    """The group of the function `key` (a `FileResult.functions` key and value)."""
    qual = key.rpartition("::")[2]
    if ".<locals>." in qual:
        outer, _, inner = qual.partition(".<locals>.")
        return f"n:{outer.rpartition('.')[2]}.{inner}"
    return group(function["name"], function["method"])


def class_group(key: str, function: dict) -> str | None:
    """`c:Class.name` for a method of a generic name (`update`, `step`): calls through an instance
    the caller knows is of that class (`metric_logger.update(...)` after `metric_logger =
    MetricLogger()`) reach it, where the name alone is too generic to follow."""
    if not function["method"] or not by_class(function["name"]):
        return None
    qual = key.rpartition("::")[2]
    if ".<locals>." in qual or "." not in qual:
        return None
    return "c:" + ".".join(qual.rsplit(".", 2)[-2:])


def root_of(function: dict) -> str:
    """A function's root frequency: "step", "epoch" or "" (a bool from an older result: step or "")."""
    hot = function["hot"]
    return hot if isinstance(hot, str) else STEP if hot else ""


def targets(name: str, via: str) -> tuple[str, ...]:
    """The groups a call reaches: `name(...)` functions, `self.name(...)` methods, `obj.name(...)`
    both, unless the name is too generic to follow (`step`, `update`, ...)."""
    if via == "":
        return ("f:" + name,)
    if via == "self":
        return ("m:" + name,)
    if via == "wraps":  # the caller is decorated with `name`: the wrappers defined in `name`
        return ("w:" + name,)
    if via == "cls":  # `obj.update(...)` with `obj` an instance of `C`: `name` is "C.update"
        return ("c:" + name,)
    if name in GENERIC_METHODS:
        return ()
    return ("m:" + name, "f:" + name)


def summarize(functions: dict[str, dict]) -> Summary:
    """The summary of one file's `FileResult.functions`."""
    defs: dict[str, set[str]] = {}
    for key, f in functions.items():
        qual = key.rpartition("::")[2]
        called: set[str] = set()
        for call in f["calls"]:
            name, via, local = call if len(call) == 3 else (*call, "")
            if local == "export":  # (runs once, whatever the caller: reaches nothing)
                continue
            if via == "def":  # a function defined in this one: by its key
                if name in functions:
                    called.add(f"{group_of(name, functions[name])}@{local}")
                continue
            ts = list(targets(name, via))
            if via == "":  # a function defined in this one, or beside it in the same function
                path = key.rpartition("::")[0]
                for outer in {f["name"], qual.rsplit(".<locals>.", 1)[0].rpartition(".")[2]}:
                    nested = f"{path}::{outer}.<locals>.{name}" if path else f"{outer}.<locals>.{name}"
                    if nested in functions and nested != key:
                        ts.append(f"n:{outer}.{name}")
            called.update(f"{t}@{local}" for t in ts)
        if ".<locals>." in qual:  # the decorator `outer` wrapping a function runs `inner` with it
            outer = qual.partition(".<locals>.")[0].rpartition(".")[2]
            defs.setdefault(f"w:{outer}@", set()).add(f"{group_of(key, f)}@")
        if called:
            defs.setdefault(f"{group_of(key, f)}@{root_of(f)}", set()).update(called)
            cg = class_group(key, f)
            if cg is not None:  # (what its class's group receives flows on too)
                defs.setdefault(f"{cg}@{root_of(f)}", set()).update(called)
    return Summary({g: tuple(sorted(ts)) for g, ts in sorted(defs.items())})


class CallGraph:
    """Summaries merged: for each group@root, how many files' functions of it make each call
    (target@place). Counts, so that `remove` undoes `add`."""

    def __init__(self) -> None:
        self.edges: dict[str, dict[str, int]] = {}

    def add(self, s: Summary, sign: int = 1) -> None:
        for g, ts in s.defs.items():
            out = self.edges.get(g)
            if out is None:
                out = self.edges[g] = {}
            for t in ts:
                _bump(out, t, sign)
            if not out:
                del self.edges[g]

    def remove(self, s: Summary) -> None:
        self.add(s, -1)

    def reached(self, extra: Iterable[Summary] = ()) -> dict[str, str]:
        """Group -> the frequency its callers give it ("step" or "epoch"; groups left out: once), with
        the summaries in `extra` added for this question only. The same rounds as `hotpath.frequencies`."""
        calls: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for defs in [self.edges, *(s.defs for s in extra)]:
            for source, ts in defs.items():
                g, _, root = source.rpartition("@")
                out = calls.setdefault((g, root), set())
                for t in ts:
                    target, _, local = t.rpartition("@")
                    out.add((target, local))
        given: dict[str, str] = {}
        for _ in range(MAX_ROUNDS):
            new: dict[str, str] = {}
            for (g, root), out in calls.items():
                got = given.get(g, ONCE)
                freq = root if root and _RANK[root] > _RANK[got] else got
                for target, local in out:
                    f = frequency(freq, local)
                    if f != ONCE and _RANK[f] > _RANK[new.get(target, ONCE)]:
                        new[target] = f
            if new == given:
                break
            given = new
        return given

    def to_json(self) -> dict:
        return {"edges": self.edges}

    @classmethod
    def from_json(cls, data) -> CallGraph:
        """The graph a `to_json` gave; TypeError for anything else (a corrupt cache)."""
        g = cls()
        if not (isinstance(data, dict) and isinstance(data.get("edges"), dict)):
            raise TypeError("not a call graph")
        for source, out in data["edges"].items():
            if not ("@" in source and isinstance(out, dict)
                    and all("@" in t and isinstance(v, int) and v > 0 for t, v in out.items())):
                raise TypeError("not a call graph")
        g.edges = data["edges"]
        return g


Call = tuple[str, str, str]  # (group, the caller's root, place) into a target, or (target, root, place) out of a group


def _index(defs: Iterable[dict]) -> tuple[dict[str, set[Call]], dict[str, set[Call]]]:
    """(the calls into each group, the calls out of each group) of graphs' or summaries'
    `group@root -> target@place` maps."""
    into: dict[str, set[Call]] = {}
    out_of: dict[str, set[Call]] = {}
    for d in defs:
        for source, ts in d.items():
            g, _, root = source.rpartition("@")
            mine = out_of.get(g)
            if mine is None:
                mine = out_of[g] = set()
            for t in ts:
                target, _, local = t.rpartition("@")
                callers = into.get(target)
                if callers is None:
                    callers = into[target] = set()
                callers.add((g, root, local))
                mine.add((target, root, local))
    return into, out_of


def _gives(root: str, got: str, local: str) -> str:
    """What a call at `local` gives its target from a caller of this root running `got` often."""
    return frequency(root if root and _RANK[root] > _RANK[got] else got, local)


class Rounds:
    """`CallGraph.reached`'s rounds over a graph, each round's answer kept: the answer with one more
    file's summary (a buffer being edited, its file's own summary left out of the graph) then costs
    only the groups that summary's calls reach, and of their callers only those reached too (see
    `reached_with`). Built once per graph (its rounds recompute only the groups a caller of which
    changed in the last one); for the language server, which asks per change of a buffer's calls.

    Per round and group it keeps how many callers give it step and how many epoch: the part of a
    group's callers a summary does not reach is then taken from the count, not walked again."""

    def __init__(self, defs: Iterable[dict]):
        self.into, self.out_of = _index(defs)
        self.trajectory: list[dict[str, str]] = [{}]  # the frequencies before each round
        self.changes: list[set[str]] = []  # the groups each round changed
        self.counts: list[dict[str, tuple[int, int]]] = []  # per round: group -> (callers giving step, epoch)
        given: dict[str, str] = {}
        todo: Iterable[str] = self.into
        for _ in range(MAX_ROUNDS):
            new = dict(given)
            changed = set()
            counts = {}
            for target in todo:
                n_step = n_epoch = 0
                for g, root, local in self.into[target]:
                    f = _gives(root, given.get(g, ONCE), local)
                    if f == STEP:
                        n_step += 1
                    elif f == EPOCH:
                        n_epoch += 1
                counts[target] = (n_step, n_epoch)
                best = STEP if n_step else EPOCH if n_epoch else ONCE
                if best != given.get(target, ONCE):
                    changed.add(target)
                    _put(new, target, best)
            self.counts.append(counts)
            if not changed:
                break
            todo = {t for g in changed for t, _, _ in self.out_of.get(g, ())}
            given = new
            self.trajectory.append(given)
            self.changes.append(changed)

    def reached(self) -> dict[str, str]:
        return self.trajectory[-1]

    def _count(self, target: str, k: int) -> tuple[int, int]:
        for counts in reversed(self.counts[:k + 1]):
            got = counts.get(target)
            if got is not None:
                return got
        return (0, 0)

    def reached_with(self, s: Summary) -> dict[str, str]:
        """`reached` of the graph with `s` added. Only the groups `s`'s calls reach (R) can differ: a
        group outside R has no caller in R and none in `s`, so its frequency goes round by round as it
        went without `s`. R's are computed round by round: from their callers outside R as those went
        (the round's counts less what R's own callers gave), and from R's callers and `s` as they go
        now."""
        into, out_of = _index([s.defs])
        reach: set[str] = set()
        work = list(into)
        while work:
            g = work.pop()
            if g not in reach:
                reach.add(g)
                work.extend(t for t, _, _ in self.out_of.get(g, ()))
                work.extend(t for t, _, _ in out_of.get(g, ()))
        if not reach:
            return self.reached()
        inner: dict[str, list[Call]] = {}  # target -> its callers in R (all of them in R: R is closed)
        for g in reach:
            for t, root, local in self.out_of.get(g, ()):
                inner.setdefault(t, []).append((g, root, local))
        last = len(self.trajectory) - 1
        mine: dict[str, str] = {}  # R's frequencies before this round
        rounds = MAX_ROUNDS
        todo: Iterable[str] = reach
        for k in range(MAX_ROUNDS):
            before = self.trajectory[min(k, last)]
            new = dict(mine)
            changed = set()
            for t in todo:
                n_step, n_epoch = self._count(t, k)
                best = ONCE
                for g, root, local in inner.get(t, ()):
                    f = _gives(root, before.get(g, ONCE), local)  # (what the count holds of it)
                    if f == STEP:
                        n_step -= 1
                    elif f == EPOCH:
                        n_epoch -= 1
                    f = _gives(root, mine.get(g, ONCE), local)
                    if _RANK[f] > _RANK[best]:
                        best = f
                for g, root, local in into.get(t, ()):
                    f = _gives(root, (mine if g in reach else before).get(g, ONCE), local)
                    if _RANK[f] > _RANK[best]:
                        best = f
                outside = STEP if n_step else EPOCH if n_epoch else ONCE
                if _RANK[outside] > _RANK[best]:
                    best = outside
                if best != mine.get(t, ONCE):
                    changed.add(t)
                    _put(new, t, best)
            moved = self.changes[k] if k < len(self.changes) else set()
            if not changed and moved <= reach:
                rounds = k
                break
            mine = new
            todo = {t for g in changed | moved for t, _, _ in (*self.out_of.get(g, ()), *out_of.get(g, ()))
                    if t in reach}
        out = {g: f for g, f in self.trajectory[min(rounds, last)].items() if g not in reach}
        out.update(mine)
        return out


def _put(freqs: dict[str, str], group: str, freq: str) -> None:
    """Set a group's frequency in a map that leaves out the groups that run once."""
    if freq == ONCE:
        freqs.pop(group, None)
    else:
        freqs[group] = freq


def _bump(counts: dict[str, int], key: str, by: int) -> None:
    n = counts.get(key, 0) + by
    if n > 0:
        counts[key] = n
    else:
        counts.pop(key, None)


def function_frequency(key: str, function: dict | None, reached: dict[str, str]) -> str:
    """How often a function runs (hotpath.STEP / EPOCH / ONCE) given the groups' frequencies."""
    if function is None:
        return ONCE
    root = root_of(function) or ONCE
    got = reached.get(group_of(key, function), ONCE)
    cg = class_group(key, function)
    if cg is not None and _RANK[reached.get(cg, ONCE)] > _RANK[got]:
        got = reached[cg]
    return root if _RANK[root] >= _RANK[got] else got


def settled_elsewhere(function: dict | None, local: str) -> bool:
    """Whether a finding's context is settled where it stands, whatever calls its function: it is
    in a step loop or export code, or its function is a step root. (Else the project's graph decides.)"""
    return local in ("step", "export") or (function is not None and root_of(function) == STEP)


def settle(results: Iterable, reached: dict[str, str]) -> dict[str, str]:
    """Set the context (hot / epoch / cold) of each finding of these `FileResult`s; returns the
    frequencies of the functions their findings stand in (what `--fix` needs to select findings)."""
    freqs: dict[str, str] = {}
    for r in results:
        mine: dict[str, str] = {}  # (per file: "<module>" is every file's key of its module level)
        for finding in r.findings:
            key = finding.function
            freq = mine.get(key)
            if freq is None:
                freq = mine[key] = function_frequency(key, r.functions.get(key), reached)
            finding.context = context_of(freq, finding.local)
        if any(f.local == LOADER for f in r.findings):
            r.findings = [f for f in r.findings if not dropped(f)]
        freqs.update(mine)
    return freqs
