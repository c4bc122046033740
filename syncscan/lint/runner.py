"""Lint many files: discover, skip what cannot hold a finding, reuse cached results, fan the
rest out over processes, then settle hot/cold over the call graph of all of them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

from syncscan.lint import files as files_mod
from syncscan.lint.cache import Cache, content_hash, engine_signature, rules_signature
from syncscan.lint.config import Config, Settings, selected
from syncscan.lint.engine import FileResult, lint_source, parse, settle_context
from syncscan.lint.registry import all_rules, trigger_words
from syncscan.lint.rule import Finding

# A file with none of the rules' trigger words (Rule.triggers) cannot produce a finding, so it is
# not parsed at all. Plain substring tests (most likely first): several times faster than one
# regex alternation over a whole file.


def may_find(text: str) -> bool:
    """Whether a file's text holds any of the words some rule needs (else it is not parsed)."""
    for w in trigger_words():
        if w in text:
            return True
    return False


@dataclass
class LintRun:
    results: list[FileResult] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, one-line reason)
    sources: dict[str, files_mod.Source] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]


_WORKER_RULES = None


def _worker_init():
    global _WORKER_RULES
    _WORKER_RULES = [r() for r in all_rules()]


def _lint_one(args) -> tuple[str, dict]:
    path, text, hot = args  # hot-functions of the file's own config
    return path, lint_source(path, text, _WORKER_RULES, hot).to_cache()


def lint_paths(paths: list[str], cfg: Config | Settings, *, use_cache: bool = True, jobs: int | None = None,
               stdin_text: files_mod.Stdin | str | None = None, keep_sources: bool = False,
               progress: Callable[[int, int], None] | None = None) -> LintRun:
    """Lint the files and folders `paths`. `cfg`: one Config for all, or a Settings giving each
    file its own (the nearest pyproject.toml's). `progress(done, total)` is called as the files
    that need analysing are analysed."""
    run = LintRun()
    files, run.errors = files_mod.discover(paths, cfg)
    cache = None
    if use_cache:  # where the first path's config says (the location changes no result)
        first = cfg.for_path(next((p for p in paths if p != "-"), "-"))
        root = first.root or Path.cwd()
        cache_dir = Path(first.cache_dir) if first.cache_dir else root / ".syncscan_cache"
        cache = Cache(cache_dir, engine_signature(rules_signature(), ()))
    todo: list[tuple[str, str, tuple[str, ...]]] = []
    digests: dict[str, str] = {}
    stats: dict[str, os.stat_result] = {}
    by_path: dict[str, FileResult] = {}
    unread: list[str] = []  # trusted by their stat: not read (see cache.py)
    keys: dict[str, str] = {}
    for path in files:
        st = None
        # each file's hot-functions come from its own config, and its results depend on them
        hot = tuple(cfg.for_path(path).hot_functions)
        key = keys[path] = path if not hot else f"{path}\0{sorted(hot)!r}"
        if cache is not None and path != "-" and not path.endswith(".ipynb"):
            try:
                st = os.stat(path)  # before the read: a change after it shows in the next run's stat
            except OSError:
                st = None  # the read below says why
            cached = cache.by_stat(key, st) if st is not None else None
            if cached is not None and _deps_fresh(cached):
                by_path[path] = FileResult.from_cache(path, cached)
                unread.append(path)
                continue
        try:
            src = files_mod.read(path, stdin_text)
        except files_mod.ReadError as e:
            run.errors.append((path, str(e)))
            continue
        if keep_sources or src.cells is not None:
            run.sources[path] = src
        if not may_find(src.text):
            # nothing to find, but a file that does not parse is still reported (as ruff does)
            err = parse(path, src.text)
            by_path[path] = FileResult(path, error=err) if isinstance(err, str) else FileResult(path, skipped=True)
            if st is not None:  # remembered only so that the stat shortcut can skip the read
                cache.put(key, None, by_path[path].to_cache(), st)
            continue
        digest = content_hash(src.text)
        digests[path] = digest
        if st is not None:
            stats[path] = st
        cached = cache.get(key, digest, st) if cache is not None and path != "-" else None
        if cached is not None and _deps_fresh(cached):
            by_path[path] = FileResult.from_cache(path, cached)
        else:
            todo.append((path, src.text, hot))
    for done, (path, data) in enumerate(_analyse(todo, jobs), start=1):
        by_path[path] = FileResult.from_cache(path, data)
        if cache is not None and path != "-":
            cache.put(keys[path], digests[path], data, stats.get(path))
        if progress is not None:
            progress(done, len(todo))
    if cache is not None:
        cache.save()
    for path in files:
        r = by_path.get(path)
        if r is None:
            continue
        if r.error:
            run.errors.append((path, r.error))
        run.results.append(r)
    settle_context(run.results)
    for r in run.results:
        src = run.sources.get(r.path)
        r.findings = [f for f in r.findings if _keep(f, cfg.for_path(r.path))]
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
    return run


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
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(name, pattern):
                if any(f.code.startswith(c) or c == "ALL" for c in codes):
                    return False
    return True


@lru_cache(maxsize=4096)
def _relative(path: str, root: Path | None) -> tuple[str, str]:
    """(path relative to the config's folder where it lies inside it, file name), per path once."""
    p = Path(path)
    rel = p.as_posix()
    if root is not None:
        try:
            rel = p.resolve().relative_to(root).as_posix()
        except ValueError:
            pass
    return rel, p.name


def default_jobs() -> int:
    """The cores this process may run on (a container's CPU set, not the host's core count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _analyse(todo, jobs):
    jobs = jobs or default_jobs()
    total = sum(len(t[1]) for t in todo)
    if jobs <= 1 or len(todo) < 4 or total < 200_000:
        _worker_init()
        for item in todo:
            yield _lint_one(item)
        return
    # big files first, so one large file does not finish last on its own
    todo = sorted(todo, key=lambda t: -len(t[1]))
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor  # imported only when linting in parallel
    from concurrent.futures.process import BrokenProcessPool

    method = "fork" if "fork" in mp.get_all_start_methods() else None
    done = 0
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)),
                                 mp_context=mp.get_context(method) if method else None,
                                 initializer=_worker_init) as pool:
            for item in pool.map(_lint_one, todo, chunksize=max(1, len(todo) // (jobs * 8))):
                yield item
                done += 1
    except BrokenProcessPool:
        # a worker died (killed for memory, or a crash in C code): lint what is left here, one
        # file at a time, each in a process of its own so that the file that kills it is named
        for item in todo[done:]:
            yield _lint_isolated(item, mp.get_context(method) if method else mp)


def _lint_isolated(item, ctx) -> tuple[str, dict]:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    path = item[0]
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_worker_init) as pool:
            return pool.submit(_lint_one, item).result()
    except BrokenProcessPool:
        return path, FileResult(path, error="internal error: the process linting this file died "
                                            "(out of memory?); please report it").to_cache()
