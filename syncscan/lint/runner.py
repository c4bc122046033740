"""Lint many files: discover them, take what the cache still holds, lint the rest over worker
processes, then settle hot, epoch and cold with the call graph of each file's project (project.py).

Memory stays flat in the size of the tree: workers read the files themselves, only a bounded
number of batches is in flight, and of each file only its findings (with the functions they stand
in) are kept; the cross-file facts are merged, as they arrive, into one call graph per project
whose size follows the project's distinct names. Sources are read again at the end for the
text report, only for files with findings.

`project_context(path)` gives the same project context to a caller that lints one file at a time
(the language server): memoised per project in the process, refreshed from the disk on use.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

from syncscan.lint import files as files_mod
from syncscan.lint.cache import (
    Shard,
    Store,
    config_fingerprint,
    content_hash,
    engine_signature,
    resolved,
    rules_signature,
    same_stat,
    stat_key,
)
from syncscan.lint.callgraph import EMPTY, CallGraph, Summary, settle, settled_elsewhere, summarize
from syncscan.lint.config import Config, Settings, selected
from syncscan.lint.project import (
    Outcome,
    ProjectContext,
    find_root,
    identity,
    loose_reached,
)
from syncscan.lint.result import FileResult
from syncscan.lint.finding import Finding

TYPE_CHECKING = False  # (typing's, without importing typing: see records.py)
if TYPE_CHECKING:
    from pathlib import Path

    from syncscan.lint.spool import GraphSpool

# A file with none of the rules' trigger words (Rule.triggers) cannot produce a finding, so it is
# not parsed at all. Plain substring tests (most likely first): several times faster than one
# regex alternation over a whole file.
SERIAL_BYTES = 200_000  # less to lint than this: one process (starting workers costs more)
MAX_PENDING = 256  # named files' changes held back while no finding needs their project's context


def may_find(text: str) -> bool:
    """Whether a file's text holds any of the words some rule needs (else it is not parsed)."""
    # (imported here: the registry imports every rule, which a fully cached run does not need)
    from syncscan.lint.registry import trigger_words

    for w in trigger_words():
        if w in text:
            return True
    return False


class LintRun:
    """What a run gives: a result per file linted, errors, notebook (and stdin) sources, warnings."""

    def __init__(self) -> None:
        self.results: list[FileResult] = []
        self.errors: list[tuple[str, str]] = []  # (path, one-line reason)
        self.sources: dict[str, files_mod.Source] = {}
        self.warnings: list[str] = []  # one line each (a corrupt cache file ...)
        # function key -> how often it runs (hotpath.STEP / EPOCH / ONCE), for the functions findings stand in
        self.frequencies: dict[str, str] = {}

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]


# -- one file, in a worker or in this process ---------------------------------------------------

class _State:
    """What a worker needs for every file: the rules (made on first use: a file whose text turns
    out unchanged needs none, and importing them costs more than the rest of a warm run) and the
    cache."""

    def __init__(self, store: Store | None):
        self.store = store
        self._rules: list | None = None

    @property
    def rules(self) -> list:
        if self._rules is None:
            from syncscan.lint.registry import all_rules

            self._rules = [r() for r in all_rules()]
        return self._rules


_STATE: _State | None = None


def _worker_init(store_dir, engine) -> None:
    global _STATE
    store = Store(store_dir, engine) if store_dir is not None else None
    _STATE = _State(store)


def _lint_text(path: str, key: str | None, text: str, digest: str | None, st: list | None, mode: str,
               hot: tuple, config: str) -> Shard:
    """Lint (mode "lint") or only walk for its summary (mode "scan") one file's text, with the
    hot-function patterns of its config (`config`: their fingerprint)."""
    s = _STATE
    assert s is not None, "_worker_init first"
    from syncscan.lint.engine import crossfile, parse
    if not may_find(text) and (path == "-" or not crossfile().called_from_folder(path, text)):
        # nothing to find, but a file that does not parse is still reported (as ruff does)
        err = parse(path, text) if mode == "lint" else None
        result = FileResult(path, error=err) if isinstance(err, str) else FileResult(path, skipped=True)
        summary = EMPTY
    else:
        # Python's cyclic collector would walk the file's whole tree again and again while it is
        # linted (15-20% of the time, more for a big file): off meanwhile, and the file's garbage
        # (its tree is held in cycles of the lint context) collected once, after it
        enabled = gc.isenabled()
        gc.disable()
        try:
            result = lint_source(path, text, s.rules if mode == "lint" else [], hot)
        finally:
            if enabled:
                gc.enable()
                gc.collect(0)
        summary = summarize(result.functions)
    # (the findings' own functions, and the whole graph apart: read only when a file of the run
    # compiles something, _settle_compiled)
    return Shard(key or path, config, digest, st, summary, result.to_cache(graph=True) if mode == "lint" else None)


def lint_source(path: str, text: str, rules: list, hot: tuple = ()) -> FileResult:
    """engine.lint_source, the engine imported on first use: a run served from the cache never needs it."""
    from syncscan.lint import engine

    return engine.lint_source(path, text, rules, hot)


def _work(task) -> tuple[str, str, object]:
    """(kind, path, payload): ("new", path, Shard) written to the cache; ("same", path, stat key) when
    the text hashes as the cached shard's; ("error", path, one-line reason)."""
    path, key, st, known, mode, hot, config = task
    try:
        src = files_mod.read(path)
    except files_mod.ReadError as e:
        return "error", path, str(e)
    digest = content_hash(src.text)
    if known is not None and digest == known:
        return "same", path, st
    shard = _lint_text(path, key, src.text, digest, st, mode, hot, config)
    if _STATE is not None and _STATE.store is not None:
        _STATE.store.save(shard)
    return "new", path, shard


def _died(task) -> tuple[str, str, object]:
    path, key, st, _, mode, _, config = task
    result = FileResult(path, error="internal error: the process linting this file died (out of memory?); "
                                    "please report it")
    return "new", path, Shard(key, config, None, st, EMPTY, result.to_cache() if mode == "lint" else None)


def default_jobs() -> int:
    """The cores this process may run on (a container's CPU set, not the host's core count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _Linter:
    """Files to outcomes: cache hits here, the rest linted in workers (or here, when it is little)."""

    def __init__(self, cfg: Config | Settings, store: Store | None, jobs: int | None,
                 stdin_text: files_mod.Stdin | str | None = None, progress: Callable[[int, int], None] | None = None):
        self.cfg = cfg
        self.store = store
        self.jobs = jobs or default_jobs()
        self.stdin_text = stdin_text
        self.progress = progress
        self.engine = store.engine if store is not None else ""
        self.sources: dict[str, files_mod.Source] = {}  # notebooks and stdin: kept for positions and --fix
        self._fingerprints: dict[tuple, str] = {}

    def hot(self, path: str) -> tuple[tuple, str]:
        """The hot-function patterns of a file's config, and their fingerprint (its results depend on them)."""
        hot = tuple(self.cfg.for_path(path).hot_functions)
        fp = self._fingerprints.get(hot)
        if fp is None:
            fp = self._fingerprints[hot] = config_fingerprint(hot)
        return hot, fp

    def _init_here(self) -> None:
        _worker_init(str(self.store.directory) if self.store else None, self.engine)

    def process(self, paths: list[str], mode: str) -> Iterator[Outcome]:
        tasks = []
        olds: dict[str, Shard] = {}
        sizes: dict[str, int] = {}
        store = self.store
        for path in paths:
            if path == "-" or path.endswith(".ipynb"):
                yield self._here(path, mode)
                continue
            key = resolved(path)
            hot, fp = self.hot(path)
            try:
                st = os.stat(path)  # before the read: a change after it shows in the next run's stat
            except OSError:
                st = None  # the read says why
            shard = store.load(key) if store is not None else None
            if shard is not None and shard.config != fp:
                shard = None
            usable = shard if shard is not None and (mode == "scan" or shard.result is not None) else None
            if usable is not None and usable.result is not None and not _deps_fresh(usable.result):
                usable = None  # another module it took kinds from changed: linted again
            if store is not None and usable is not None and st is not None and same_stat(usable.stat, st):
                store.touch(key)
                yield Outcome(path, key, usable)
                continue
            if shard is not None:
                olds[path] = shard
            sizes[path] = st.st_size if st is not None else 0
            tasks.append((path, key, stat_key(st) if st is not None else None,
                          usable.hash if usable is not None else None, mode, hot, fp))
        for done, (kind, path, payload) in enumerate(self._run(tasks, sizes), start=1):
            if self.progress is not None and mode == "lint":
                self.progress(done, len(tasks))
            key = resolved(path)
            old = olds.pop(path, None)
            if kind == "error":
                yield Outcome(path, key, None, old, error=payload)
            elif kind == "same" and old is not None and store is not None:  # the same text: its stat settles
                if payload != old.stat:
                    old.stat = payload
                    store.save(old)
                yield Outcome(path, key, old)
            else:
                yield Outcome(path, key, payload, old)

    def _run(self, tasks: list, sizes: dict[str, int]) -> Iterator[tuple]:
        if not tasks:
            return
        total = sum(sizes.values())
        if self.jobs <= 1 or len(tasks) < 4 or total < SERIAL_BYTES:
            self._init_here()
            for t in tasks:
                yield _work(t)
            return
        from syncscan.lint import workers

        groups = workers.batches(tasks, lambda t: sizes[t[0]], self.jobs)
        yield from workers.run(_work, groups, self.jobs, _worker_init,
                               (str(self.store.directory) if self.store else None, self.engine), on_death=_died)

    def _here(self, path: str, mode: str) -> Outcome:
        """Stdin and notebooks, in this process: their `Source` is needed afterwards."""
        self._init_here()
        key = resolved(path) if path != "-" else "-"
        try:
            src = files_mod.read(path, self.stdin_text)
        except files_mod.ReadError as e:
            return Outcome(path, key, error=str(e))
        if mode == "lint" and (src.cells is not None or path == "-"):
            self.sources[path] = src
        digest = content_hash(src.text)
        hot, fp = self.hot(path)
        shard = self.store.load(key) if self.store is not None and path != "-" else None
        if shard is not None and shard.config == fp and shard.hash == digest \
                and (mode == "scan" or shard.result is not None) \
                and (shard.result is None or _deps_fresh(shard.result)):
            return Outcome(path, key, shard)
        new = _lint_text(path, key, src.text, digest, None, mode, hot, fp)
        if self.store is not None and path != "-":
            self.store.save(new)
        return Outcome(path, key, new, shard)


# -- many files ----------------------------------------------------------------------------------

def open_store(cfg: Config, start: str | None = None) -> Store:
    """The cache of this engine: `cache-dir` when configured, else `.syncscan_cache` in the folder of the
    config file, else in the project of `start`, else in the working folder."""
    if cfg.cache_dir:
        directory = cfg.cache_dir
    elif cfg.root is not None:
        directory = os.path.join(cfg.root, ".syncscan_cache")
    else:
        real = os.path.realpath(start) if start else None
        # (the project of a folder named is the folder's own, not its parent's: `lint .` in a project
        # nested in another must use the cache `lint FILE` there uses)
        root = find_root(real if os.path.isdir(real) else os.path.dirname(real)) if real else None
        directory = os.path.join(root or os.getcwd(), ".syncscan_cache")
    return Store(directory, _engine())


@lru_cache(maxsize=1)
def _engine() -> str:
    return engine_signature(rules_signature())


def lint_paths(paths: list[str], cfg: Config | Settings, *, use_cache: bool = True, jobs: int | None = None,
               stdin_text: files_mod.Stdin | str | None = None, keep_sources: bool = False,
               progress: Callable[[int, int], None] | None = None, stdin_filename: str | None = None) -> LintRun:
    """Lint the files and folders `paths`. `cfg`: one Config for all, or a Settings giving each
    file its own (the nearest pyproject.toml's). `progress(done, total)` is called as the files
    that need analysing are analysed. Stdin (`-`) stands for the file `stdin_filename` (or the
    name `stdin_text` carries) in that file's project."""
    run = LintRun()
    files, run.errors = files_mod.discover(paths, cfg)
    stdin_filename = stdin_filename or getattr(stdin_text, "name", None)
    first = next((f for f in paths if f != "-"), stdin_filename)
    store = open_store(cfg.for_path(first or "-"), first) if use_cache else None
    linter = _Linter(cfg, store, jobs, stdin_text, progress)

    # The project each named file may belong to. Whether it does (discovery lists it) is only asked
    # when a finding needs the project's context: one that is not hot where it stands. Until such a
    # finding shows up, the named files' changes wait (a run without one never reads the index).
    contexts: dict[str, ProjectContext] = {}
    where: dict[str, ProjectContext | None] = {}
    keys: dict[str, str] = {}
    for path in files:
        name = stdin_filename if path == "-" else path
        ctx = None
        if name is not None:
            key = keys[path] = resolved(name)
            root = find_root(os.path.dirname(key))
            if root is not None:
                ctx = contexts.get(root)
                if ctx is None:
                    ctx = contexts[root] = ProjectContext(root, cfg, store, linter.process)
                if not ctx.may_list(key):
                    ctx = None
        where[path] = ctx

    by_path: dict[str, FileResult] = {}
    # files in no project, settled with each other only: merged as they arrive (one copy of each
    # name, not every file's summary held to the end)
    loose = CallGraph()
    loose_needed = False
    overrides: dict[str, dict[str, Summary]] = {}
    pending: dict[str, list] = {}
    needed: set[str] = set()  # projects asked whether they list their files
    used: set[str] = set()  # projects whose context a file they list needs

    def place(ctx: ProjectContext, path: str, key: str, old, summary, stat, config: str, needs: bool) -> None:
        nonlocal loose_needed
        if not ctx.lists(key):
            where[path] = None
            if summary is not None:
                loose.add(summary)
            loose_needed |= needs
            return
        if needs:
            used.add(ctx.root)
        if path == "-":  # stdin stands for the named file without being it: not recorded
            overrides.setdefault(ctx.root, {})[key] = summary
        else:
            ctx.changed(key, old, summary, stat, config)

    def note(ctx: ProjectContext, *change) -> None:
        if ctx.root in needed:
            place(ctx, *change)
        else:
            pending.setdefault(ctx.root, []).append(change)
            if len(pending[ctx.root]) > MAX_PENDING:
                need(ctx)

    def need(ctx: ProjectContext) -> None:
        if ctx.root not in needed:
            needed.add(ctx.root)
            for change in pending.pop(ctx.root, ()):
                place(ctx, *change)

    prints: dict[str, tuple] = {}  # path -> (content hash, config fingerprint) of its cache entry
    # without a cache, each file's whole call graph as its worker sent it, for torch.compile's reach
    # (else a run where a file compiles something would walk every file again)
    kept = None
    if store is None:
        from syncscan.lint.spool import GraphSpool

        kept = GraphSpool()
    for out in linter.process(files, "lint"):
        ctx = where.get(out.path)
        key = keys.get(out.path, out.key)
        if out.shard is None:
            run.errors.append((out.path, out.error or "cannot be read"))
            if ctx is not None and out.path != "-":
                note(ctx, out.path, key, out.old, None, None, "", False)
            continue
        assert out.shard.result is not None  # (linted, not only scanned)
        prints[out.path] = (out.shard.hash, out.shard.config)
        if kept is not None and out.shard.hash is not None:  # (no hash: its worker died, no graph)
            kept.add(out.path, out.shard.result.get("graph", []))
        r = by_path[out.path] = FileResult.from_cache(out.path, out.shard.result)
        r.findings = [f for f in r.findings if _keep(f, cfg.for_path(out.path))]
        needs = any(not settled_elsewhere(r.functions.get(f.function), f.local) for f in r.findings)
        if ctx is None:
            if out.shard.summary is not None:
                loose.add(out.shard.summary)
            loose_needed |= needs
            continue
        note(ctx, out.path, key, out.old, out.shard.summary, out.shard.stat, out.shard.config, needs)
        if needs:
            need(ctx)
    if loose_needed:  # the files waiting on a project that may not list them: are some loose?
        for root, changes in list(pending.items()):
            for path, key, _, summary, _, _, _ in changes:
                if not contexts[root].lists(key):
                    where[path] = None
                    if summary is not None:
                        loose.add(summary)

    reached: dict[str | None, dict[str, str]] = {None: loose.reached()}
    for root, ctx in contexts.items():
        if root not in used:
            reached[root] = {}  # every finding there is settled where it stands
            continue
        ctx.refresh(named=[keys[p] for p, c in where.items() if c is ctx and p != "-"])
        reached[root] = ctx.reached_with(overrides[root]) if root in overrides else ctx.reached()
        ctx.save()
    run.sources = linter.sources
    for path in files:
        result = by_path.get(path)
        if result is None:
            continue
        if result.error:
            run.errors.append((path, result.error))
        run.results.append(result)
        ctx = where.get(path)
        run.frequencies.update(settle([result], reached[ctx.root if ctx is not None else None]))
    try:
        _settle_compiled(run.results, run.sources, cfg, store, keys, prints, kept)
    finally:
        if kept is not None:
            kept.close()
    for r in run.results:
        src = run.sources.get(r.path)
        if src is not None and src.cells is not None:
            for f in r.findings:
                f.cell, f.line = src.locate(f.line)
                _, f.end_line = src.locate(f.end_line)
    if keep_sources:  # the text report shows the lines of the findings: read those files now
        for r in run.results:
            if r.findings and r.path not in run.sources:
                try:
                    run.sources[r.path] = files_mod.read(r.path)
                except files_mod.ReadError:
                    pass
    warning = store.warning() if store is not None else None
    if warning:
        run.warnings.append(warning)
    return run


def _settle_compiled(results: list[FileResult], sources: dict, cfg: Config | Settings, store: Store | None = None,
                     keys: dict[str, str] | None = None, prints: dict[str, tuple] | None = None,
                     kept: GraphSpool | None = None) -> None:
    """Say what torch.compile makes of the findings in code it traces (compiled.settle), over the
    named files. Its reach follows the files' whole call graphs, which a run keeps only for the
    functions findings stand in (flat memory): so when a file of the run compiles something, each
    file's whole graph is read from its cache entry (`graph`) or, in a run without a cache, from
    `kept` (what each file's lint sent), or, without either, the file is walked again without rules.
    Runs without torch.compile pay nothing."""
    if not any((r.compile or {}).get("roots") for r in results):
        for r in results:
            for f in r.findings:
                f.compile = None  # (a cached finding may carry an older run's)
        return
    from syncscan.lint import compiled

    # the same files, texts, configs and findings as a run before: what it settled (a warm run of an
    # unchanged project reads no call graph at all)
    sidecar = _compile_sidecar(store, results, prints) if store is not None and prints is not None else None
    saved = store.load_data(sidecar) if sidecar is not None and store is not None else None
    if isinstance(saved, dict) and all(isinstance(saved.get(r.path), list) and len(saved[r.path]) == len(r.findings)
                                       for r in results):
        for r in results:
            for f, c in zip(r.findings, saved[r.path]):
                f.compile = c if isinstance(c, dict) else None
        return
    graphs = []
    for r in results:
        full = None
        graph = _cached_graph(r.path, store, keys)
        if graph is None and kept is not None and (rows := kept.get(r.path)) is not None:
            graph = _graph_of(r.path, rows)
        if graph is not None:
            full = FileResult(r.path, functions=graph)
        elif not r.error and not r.skipped:
            src = sources.get(r.path)
            try:
                text = src.text if src is not None else files_mod.read(r.path).text
            except files_mod.ReadError:
                text = None
            if text is not None:
                full = lint_source(r.path, text, [], tuple(cfg.for_path(r.path).hot_functions))
        # (the same Finding objects: settle sets their `compile`)
        graphs.append(FileResult(r.path, r.findings, full.functions if full is not None else r.functions,
                                 compile=r.compile))
    compiled.settle(graphs)
    if sidecar is not None:
        _write_sidecar(sidecar, {r.path: [f.compile for f in r.findings] for r in results})


def _compile_sidecar(store: Store, results: list[FileResult], prints: dict[str, tuple]) -> str | None:
    """The cache file that keeps what torch.compile makes of this run's findings, named by a hash of
    every file's path, content hash, config and findings (None when a file has no cache entry)."""
    from syncscan.lint.callgraph import blake2b

    h = blake2b(digest_size=16)
    for r in sorted(results, key=lambda r: r.path):
        p = prints.get(r.path)
        if p is None or p[0] is None:
            return None
        h.update(f"{r.path}\0{p[0]}\0{p[1]}\0".encode())
        for f in r.findings:
            h.update(f"{f.line},{f.column},{f.code},{f.function},{f.context}\0".encode())
    return os.path.join(store.base, f"compile-{h.hexdigest()}.marshal")


def _write_sidecar(path: str, data: dict) -> None:
    """Write it (atomically) and drop the other runs' (one per set of named files is enough)."""
    import marshal

    from syncscan.lint.cache import write_atomic

    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        for e in os.scandir(folder):
            if e.name.startswith("compile-") and e.path != path:
                os.unlink(e.path)
        write_atomic(path, marshal.dumps(data))
    except (OSError, ValueError):  # (a read-only or full disk: the next run settles again)
        pass


def _cached_graph(path: str, store: Store | None, keys: dict[str, str] | None) -> dict | None:
    """A file's whole call graph from its cache entry (written by this run or an earlier one for the
    same text), or None."""
    key = keys.get(path) if keys is not None else None
    if store is None or key is None:
        return None
    shard = store.load(key)
    data = shard.result if shard is not None else None
    if not isinstance(data, dict) or not isinstance(data.get("graph"), list):
        return None
    return _graph_of(path, data["graph"])


def _graph_of(path: str, rows: list) -> dict | None:
    """The functions of a `graph` (FileResult.to_cache), or None when it is not well formed."""
    try:
        return FileResult.from_cache(path, {"findings": [], "functions": rows}).functions
    except (TypeError, ValueError, IndexError, KeyError):
        return None


def _deps_fresh(cached: dict) -> bool:
    """A cached result still holds: the other files of the tree it read kinds from are unchanged."""
    for path, size, mtime_ns in cached.get("deps", ()):
        try:
            st = os.stat(path)
        except OSError:
            return False
        if st.st_size != size or st.st_mtime_ns != mtime_ns:
            return False
    return True


def _keep(f: Finding, cfg: Config) -> bool:
    if not selected(f.code, cfg.select, cfg.ignore):
        return False
    if cfg.per_file_ignores:
        import fnmatch

        rel, name = _relative(f.path, cfg.root)
        for pattern, codes in cfg.per_file_ignores.items():
            if (fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(name, pattern)) \
                    and any(f.code.startswith(c) or c == "ALL" for c in codes):
                return False
    return True


@lru_cache(maxsize=4096)
def _relative(path: str, root: Path | None) -> tuple[str, str]:
    """(path relative to the config's folder where it lies inside it, file name), per path once."""
    from pathlib import Path  # (only with per-file-ignores)

    p = Path(path)
    rel = p.as_posix()
    if root is not None:
        try:
            rel = p.resolve().relative_to(root).as_posix()
        except ValueError:
            pass
    return rel, p.name


# -- one file at a time (the language server) ------------------------------------------------------

_CONTEXTS: dict[tuple, ProjectContext] = {}
REFRESH_SECONDS = 1.0  # a project context looks at the disk again at most this often


def project_context(path: str, cfg: Config | Settings | None = None, *, use_cache: bool = True,
                    jobs: int | None = None, listed: bool = True) -> ProjectContext | None:
    """The project around `path`, up to date with the disk (memoised per project in this process;
    it looks at the disk again at most once a second). None when `path` is in no project, or in one
    that does not list it (excluded, ignored; `listed` False: the project's context all the same, for
    a caller that keeps the whole project, as the language server does). `cfg`: a Config for every
    file, or a Settings giving each its own (the nearest pyproject.toml's), as `syncscan lint` does;
    default: a Settings."""
    if cfg is None:
        cfg = Settings()
    key = resolved(path)
    root = find_root(os.path.dirname(key))
    if root is None:
        return None
    store = open_store(cfg.for_path(key), key) if use_cache else None
    memo = (root, identity(root, cfg), str(store.directory) if store is not None else None)
    ctx = _CONTEXTS.get(memo)
    if ctx is None:
        ctx = _CONTEXTS[memo] = ProjectContext(root, cfg, store, _Linter(cfg, store, jobs).process)
    else:  # the caller's config objects of this call (the configs they hold are watched: see project.py)
        ctx.settings = cfg
        ctx.process = _Linter(cfg, ctx.store, jobs).process
    # (the file itself is not "named": no run reports it with `changed`, and the project must keep
    # listing it once its listing comes from the index)
    ctx.refresh(max_age=REFRESH_SECONDS)
    ctx.save()
    return ctx if not listed or ctx.lists(key) else None


def settle_in_project(results: Iterable[FileResult], cfg: Config | Settings | None = None) -> dict[str, str]:
    """Set the context (hot / epoch / cold) of the findings of these results (each linted from its
    file's current text, saved or not) as a run over the whole project would; returns the
    frequencies of the functions their findings stand in."""
    freqs: dict[str, str] = {}
    for r in results:
        summary = summarize(r.functions)
        ctx = project_context(r.path, cfg)
        reached = ctx.reached_with({resolved(r.path): summary}) if ctx is not None else loose_reached([summary])
        freqs.update(settle([r], reached))
    return freqs
