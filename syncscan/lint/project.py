"""The project around the linted files: hot, epoch and cold whatever files are named.

A function runs as often as the code anywhere in the project that calls it (callgraph.py), so a helper
linted alone must learn of the training loop in another file. The project of a file is the
nearest folder at or above it holding a `pyproject.toml` or a `.git`, and its files are those
discovery finds there (the project's excludes and ignore files apply), less those of nested
projects (a folder below with its own marker is a project of its own). A named file that
discovery would not find (excluded, ignored, in a virtual environment) has no project: it is
settled with the other such named files only, as every file was before projects.

A project index (in the cache, see cache.py) keeps, per file, the digest of its summary, its
settled stat (ctime, inode, size) and its config's fingerprint; the folders walked with their mtimes and the ignore/config files with their stats
(so new, removed and re-ignored files are noticed without walking the tree); the merged call
graph (a separate file, read only when some summary changed) and the groups it reaches, with their
frequencies. A run
where nothing changed reads the index, stats the files and folders, and takes the reached groups
as they are. A file whose stat changed is read and hashed; one whose text changed is scanned
again (parsed and walked for its summary, without rules) and the graph updated: its old summary
taken out (kept in its shard), the new one added. Anything inconsistent (a missing or corrupt
graph, a shard that is not the one the index counted) rebuilds the graph from the shards.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator

from syncscan.lint import files as files_mod
from syncscan.lint.folders import nearest
from syncscan.lint.cache import Shard, Store, config_fingerprint
from syncscan.lint.callgraph import CallGraph, Rounds, Summary
from syncscan.lint.often import EPOCH, STEP

MARKERS = ("pyproject.toml", ".git")
WATCHED = (".gitignore", "pyproject.toml")  # in every folder walked: an edit may change what is found


class Outcome:
    """One file processed by the runner (linted, or scanned for its summary)."""

    __slots__ = ("error", "key", "old", "path", "shard")

    def __init__(self, path: str, key: str, shard: Shard | None = None, old: Shard | None = None,
                 error: str | None = None):
        self.path = path  # as given
        self.key = key  # resolved
        self.shard = shard  # the current shard (None: unreadable, see error)
        self.old = old  # the shard it replaced, when the file had changed
        self.error = error  # why the file could not be read


# process(paths, mode) -> an outcome per path, in any order; mode "lint" or "scan" (summary only)
Process = Callable[[list[str], str], Iterator[Outcome]]

_root_memo: dict[str, str | None] = {}


def find_root(directory: str) -> str | None:
    """The nearest folder at or above `directory` (resolved) with a pyproject.toml or a .git."""
    return nearest(os.path.realpath(directory), MARKERS, _root_memo)


def _excluded_below(root: str, key: str, patterns) -> bool:
    """Whether a folder between the root and the file (or the file) matches an exclude pattern:
    such a file is never part of the project (a quick answer before any walk)."""
    rel = os.path.relpath(key, root)
    parts = rel.split(os.sep)
    if parts[0] == os.pardir:
        return True
    path = root
    for part in parts:
        path = os.path.join(path, part)
        if files_mod._matches(path, patterns):
            return True
    return False


_FREQUENCIES = (STEP, EPOCH)  # (what a reached group may have: once is left out)


class Index:
    """A project's index as stored (see the module's docstring)."""

    def __init__(self, root: str, config: str, token: str = "", files: dict | None = None,
                 dirs: dict | None = None, watch: dict | None = None, reached: dict[str, str] | None = None):
        self.root = root
        self.config = config  # what discovery depends on (see ProjectContext.identity)
        self.token = token  # shared with the graph file it goes with
        # relative path -> [summary digest, ctime_ns, inode, size, config fingerprint] (the stat's three
        # None while not settled; the fingerprint of the hot-function patterns its summary was made with)
        self.files: dict[str, list] = files if files is not None else {}
        self.dirs: dict[str, int] = dirs if dirs is not None else {}  # relative folder -> mtime_ns
        self.watch: dict[str, list] = watch if watch is not None else {}  # ignore/config file -> [size, mtime, ctime]
        self.reached = reached  # the reached groups: group -> frequency (step or epoch)

    def to_json(self) -> dict:
        return {"root": self.root, "config": self.config, "token": self.token,
                "files": self.files, "dirs": self.dirs, "watch": self.watch, "reached": self.reached}

    @classmethod
    def from_json(cls, d) -> Index:
        ok = isinstance(d, dict) and isinstance(d.get("root"), str) and isinstance(d.get("config"), str) \
            and isinstance(d.get("token"), str) \
            and isinstance(d.get("files"), dict) and isinstance(d.get("dirs"), dict) \
            and isinstance(d.get("watch"), dict) and (d.get("reached") is None or isinstance(d["reached"], dict))
        if ok:
            ok = all(type(v) is list and len(v) == 5 and type(v[0]) is str for v in d["files"].values()) \
                and all(isinstance(v, int) for v in d["dirs"].values()) \
                and (d["reached"] is None or all(type(g) is str and f in _FREQUENCIES for g, f in d["reached"].items()))
        if not ok:
            raise TypeError("not a project index")
        return cls(d["root"], d["config"], d["token"], d["files"], d["dirs"], d["watch"], d["reached"])


class ProjectContext:
    """The call graph of one project, kept up to date with the disk and (when a store is given)
    with its index in the cache."""

    def __init__(self, root: str, settings, store: Store | None, process: Process):
        self.root = root
        self.settings = settings  # config.Config or config.Settings (each file's own config)
        self.store = store
        self.process = process
        self.config = identity(root, settings)
        self.index = Index(root, self.config)
        self._graph: CallGraph | None = None  # loaded on the first change
        self._reached: dict[str, str] | None = None
        self.dirty = False  # index to write
        self.graph_dirty = False
        self.consistent = True  # False: rebuild the graph from the shards before trusting it
        self.checked = 0.0  # time of the last refresh
        self._loaded = False
        self._listing = None  # see listing()
        self._walked = False  # the listing came from a walk, not the index
        self.prefix = root if root.endswith(os.sep) else root + os.sep
        self.patterns = tuple(files_mod.DEFAULT_EXCLUDE)  # (excluded everywhere, whatever the config)
        self._fingerprints: dict[str, str] = {}
        self.version = 0  # bumped whenever the graph changes
        self._without: tuple[str, int, Rounds] | None = None  # (file, version, rounds of the graph without it): see reached_with

    # -- loading ---------------------------------------------------------------------------------
    def load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.store is None:
            return
        data = self.store.load_data(self.store.index_file(self.root))
        if data is None:
            return
        try:
            index = Index.from_json(data)
        except TypeError:
            self.store.corrupt.append(self.store.index_file(self.root))
            return
        if index.root == self.root and index.config == self.config:
            self.index = index
            self._reached = index.reached

    def graph(self) -> CallGraph:
        """The merged call graph, read from the cache on first use (or empty: then rebuilt)."""
        if self._graph is None:
            g = None
            if self.store is not None and self.index.files:
                data = self.store.load_data(self.store.index_file(self.root, ".graph"))
                if isinstance(data, dict) and data.get("token") == self.index.token and self.index.token:
                    try:
                        g = CallGraph.from_json(data.get("graph"))
                    except TypeError:
                        self.store.corrupt.append(self.store.index_file(self.root, ".graph"))
                elif data is not None and not isinstance(data, dict):
                    self.store.corrupt.append(self.store.index_file(self.root, ".graph"))
            if g is None:
                g = CallGraph()
                if self.index.files:
                    self.consistent = False  # the index's files are not in this graph: rebuild it
            self._graph = g
        return self._graph

    def may_list(self, key: str) -> bool:
        """False when the file (resolved) is surely not the project's: outside its folder, or below an
        excluded one (a virtual environment's site-packages). Answered without walking the project."""
        return key.startswith(self.prefix) and not _excluded_below(self.root, key, self.patterns)

    def lists(self, key: str) -> bool:
        """Whether discovery finds this file (resolved) in the project."""
        return self.may_list(key) and self._rel(key) in self.listing()

    def listing(self):
        """The project's files, relative to the root: the index's while no walked folder or watched
        file changed (then a view of its keys), else what discovery finds now."""
        if self._listing is None:
            self.load()
            if not self.index.dirs or self._moved():
                self._listing = self._discover()
                self._walked = True
            else:
                self._listing = self.index.files.keys()
        return self._listing

    def _rel(self, key: str) -> str:
        return key[len(self.prefix):] if key.startswith(self.prefix) else os.path.relpath(key, self.root)

    # -- changes -----------------------------------------------------------------------------------
    def changed(self, key: str, old: Shard | None, new: Summary | None, st: list | None, config: str = "") -> None:
        """A file of the project now has summary `new` (None: gone or unreadable), made with the config
        fingerprint `config`, and settled stat `st`; `old` is its shard before (whose summary the graph
        counted, when the digests agree)."""
        rel = self._rel(key)
        entry = self.index.files.get(rel)
        new_digest = new.digest() if new is not None else None
        tail = [*settled(st), config]
        if entry is not None and entry[0] == new_digest:
            if entry[1:] != tail:
                entry[1:] = tail
                self.dirty = True
            return
        g = self.graph()
        if entry is not None:
            if old is not None and old.summary.digest() == entry[0]:
                g.remove(old.summary)
            else:
                self.consistent = False
        if new is None:
            self.index.files.pop(rel, None)
        else:
            g.add(new)
            self.index.files[rel] = [new_digest, *tail]
        self._reached = None
        self.version += 1
        self.dirty = self.graph_dirty = True

    def refresh(self, named: Iterable[str] = (), *, max_age: float = 0.0) -> None:
        """Bring the index up to date with the disk, scanning the files that changed (not the named
        ones: the runner lints those and reports them with `changed`). A long-lived caller passes
        `max_age`: a refresh younger than that is not done again."""
        now = time.monotonic()
        if self.checked:
            if now - self.checked < max_age:
                return
            self._listing = None  # look at the folders again
        self.checked = now
        named = {self._rel(k) for k in named}
        listing = self.listing()
        if self._walked:  # files the walk no longer finds: gone from the project
            for rel in [r for r in self.index.files if r not in listing and r not in named]:
                gone = self.prefix + rel
                old = self.store.load(gone) if self.store is not None else None
                self.changed(gone, old, None, None)
                if self.store is not None:
                    self.store.drop(gone)
        stale = []
        files = self.index.files
        walked = self._walked  # (configs may have changed only where a watched file did: then a walk)
        for rel in listing:
            if rel in named:
                continue
            entry = files.get(rel)
            key = self.prefix + rel
            if entry is not None and walked and entry[4] != self.fingerprint(key):
                entry = None
            if entry is not None and entry[1] is not None:
                try:
                    st = os.stat(key)
                except OSError:
                    pass
                else:  # (a write moves ctime; a file renamed over it has another inode)
                    if st.st_ctime_ns == entry[1] and st.st_ino == entry[2] and st.st_size == entry[3]:
                        continue
            stale.append(key)
        if stale:
            for out in self.process(sorted(stale), "scan"):
                if out.shard is None:
                    self.changed(out.key, out.old, None, None)
                else:
                    self.changed(out.key, out.old, out.shard.summary, out.shard.stat, out.shard.config)
        if not self.consistent:
            self._rebuild()

    def _moved(self) -> bool:
        """Whether a walked folder or a watched file changed since the index was made."""
        for rel, mtime in self.index.dirs.items():
            try:
                if os.stat(self.prefix + rel if rel != "." else self.root).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        for rel, st in self.index.watch.items():
            try:
                s = os.stat(self.prefix + rel)
            except OSError:
                return True
            if st != [s.st_size, s.st_mtime_ns, s.st_ctime_ns]:
                return True
        return False

    def fingerprint(self, key: str) -> str:
        """The config fingerprint a file's summary is made with (its config's hot-function patterns)."""
        folder = os.path.dirname(key)
        fp = self._fingerprints.get(folder)
        if fp is None:
            fp = self._fingerprints[folder] = config_fingerprint(self.settings.for_path(key).hot_functions)
        return fp

    def _discover(self) -> set[str]:
        """The project's files (relative to the root), found as `syncscan lint ROOT` finds them, and
        the folders and watched files that say when to look again."""
        folders: list[str] = []
        found, _ = files_mod.discover([self.root], self.settings, folders)
        out = set()
        for f in found:
            key = os.path.realpath(f)
            if key.startswith(self.prefix) and find_root(os.path.dirname(key)) == self.root:
                out.add(key[len(self.prefix):])
        dirs: dict[str, int] = {}
        watch: dict[str, list] = {}
        extra = [os.path.join(self.root, ".git", "info", "exclude")]
        extra += [str(c.path) for c in _configs(self.settings) if c.path is not None]
        for folder in folders:
            if find_root(folder) != self.root:  # a nested project's folder
                continue
            try:
                dirs[os.path.relpath(folder, self.root)] = os.stat(folder).st_mtime_ns
            except OSError:
                continue
            extra += [os.path.join(folder, n) for n in WATCHED]
        for path in extra:
            try:
                st = os.stat(path)
            except OSError:
                continue
            watch[os.path.relpath(path, self.root)] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        if dirs != self.index.dirs or watch != self.index.watch:
            self.index.dirs, self.index.watch = dirs, watch
            self.dirty = True
        return out

    def _rebuild(self) -> None:
        """The graph from the shards of every file of the index (scanning those without one)."""
        g = CallGraph()
        missing = []
        for rel, entry in self.index.files.items():
            key = self.prefix + rel
            shard = self.store.load(key) if self.store is not None else None
            if shard is not None and shard.summary.digest() == entry[0] and shard.config == entry[4]:
                g.add(shard.summary)
            else:
                missing.append(key)
        for out in (self.process(sorted(missing), "scan") if missing else ()):
            rel = self._rel(out.key)
            if out.shard is None:
                self.index.files.pop(rel, None)
            else:
                g.add(out.shard.summary)
                self.index.files[rel] = [out.shard.summary.digest(), *settled(out.shard.stat), out.shard.config]
        self._graph = g
        self.consistent = True
        self._reached = None
        self.version += 1
        self.dirty = self.graph_dirty = True

    # -- answers -----------------------------------------------------------------------------------
    def reached(self) -> dict[str, str]:
        """Group -> frequency ("step" / "epoch") the project's callers give it (once: left out)."""
        if self._reached is None:
            self._reached = self.graph().reached()
            self.index.reached = self._reached
            self.dirty = True
        return self._reached

    def reached_with(self, overrides: dict[str, Summary]) -> dict[str, str]:
        """The reached groups with these files' summaries in place of the index's (text being edited,
        stdin), without recording them. For one file, the rounds of the graph without it are kept
        while the graph stays as it is: the next summary of that file (the next change of a buffer)
        costs only the groups it reaches."""
        todo = {k: s for k, s in overrides.items() if self.index.files.get(self._rel(k), [None])[0] != s.digest()}
        if not todo:
            return self.reached()
        g = self.graph()
        if len(todo) == 1:
            ((key, summary),) = todo.items()
            kept = self._without
            if kept is not None and kept[0] == key and kept[1] == self.version:
                return kept[2].reached_with(summary)
        removed: list[Summary] = []
        for key in todo:
            entry = self.index.files.get(self._rel(key))
            if entry is None:
                continue
            old = self.store.load(key) if self.store is not None else None
            if old is None or old.summary.digest() != entry[0]:
                self._rebuild()  # the graph's share of this file is unknown: count it again
                return self.reached_with(overrides)
            removed.append(old.summary)
        for s in removed:
            g.remove(s)
        try:
            if len(todo) == 1:
                rounds = Rounds([g.edges])
                self._without = (key, self.version, rounds)
                return rounds.reached_with(summary)
            return g.reached(todo.values())
        finally:
            for s in removed:
                g.add(s)

    def save(self) -> None:
        if self.store is None or not (self.dirty or self.graph_dirty):
            return
        self.reached()
        if self.graph_dirty or not self.index.token:
            self.index.token = os.urandom(8).hex()
            self.store.save_data(self.store.index_file(self.root, ".graph"),
                                 {"token": self.index.token, "graph": self.graph().to_json()})
        self.store.save_data(self.store.index_file(self.root), self.index.to_json())
        self.dirty = self.graph_dirty = False


def identity(root: str, settings) -> str:
    """What the project's file list depends on beyond its watched files: the config the root
    folder gets (its excludes, whether .gitignore counts, a --config file given)."""
    cfg = settings.for_path(root)
    return config_fingerprint((str(cfg.path), *cfg.exclude, f"gitignore={cfg.respect_gitignore}"))


def _configs(settings) -> list:
    """The configs in use (a Settings knows them; a Config is one)."""
    configs = getattr(settings, "configs", None)
    return configs() if configs is not None else [settings]


def settled(st: list | None) -> list:
    """What the index keeps of a shard's settled stat key: [ctime_ns, inode, size], or Nones."""
    return [None, None, None] if st is None else [st[2], st[3], st[0]]


def loose_reached(summaries: Iterable[Summary]) -> dict[str, str]:
    """The reached groups of files outside any project: from the named ones alone."""
    return CallGraph().reached(summaries)

