"""Lint many files: discover, skip what cannot hold a finding, reuse cached results, fan the
rest out over processes, then settle hot/cold over the call graph of all of them."""

from __future__ import annotations

import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from syncscan.lint import files as files_mod
from syncscan.lint.cache import Cache, content_hash, engine_signature
from syncscan.lint.config import Config, selected
from syncscan.lint.engine import FileResult, lint_source, settle_context
from syncscan.lint.registry import all_rules, signature
from syncscan.lint.rule import Finding

# A file with none of these words cannot produce a finding (every rule needs a tensor op, a
# torch call, or a training-step marker to fire), so it is not parsed at all.
_TRIGGER = re.compile(r"torch|Tensor|tensor|forward|backward|\.item\(|\.cpu\(|\.numpy\(|\.tolist\(|nonzero|"
                      r"unique|synchronize|cuda|empty_cache|DataLoader|all_reduce|barrier|loss|step\(")


@dataclass
class LintRun:
    results: list[FileResult] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, one-line reason)
    sources: dict[str, files_mod.Source] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]


_WORKER_RULES = None


def _worker_init(hot_patterns):
    global _WORKER_RULES
    _WORKER_RULES = ([r() for r in all_rules()], tuple(hot_patterns))


def _lint_one(args) -> tuple[str, dict]:
    path, text = args
    rules, hot = _WORKER_RULES
    return path, lint_source(path, text, rules, hot).to_cache()


def lint_paths(paths: list[str], cfg: Config, *, use_cache: bool = True, jobs: int | None = None,
               stdin_text: str | None = None, keep_sources: bool = False) -> LintRun:
    run = LintRun()
    files, run.errors = files_mod.discover(paths, cfg.exclude)
    hot_patterns = tuple(cfg.hot_functions)
    cache = None
    if use_cache:
        root = cfg.root or Path.cwd()
        cache_dir = Path(cfg.cache_dir) if cfg.cache_dir else root / ".syncscan_cache"
        cache = Cache(cache_dir, engine_signature(signature(), hot_patterns))
    todo: list[tuple[str, str]] = []
    digests: dict[str, str] = {}
    by_path: dict[str, FileResult] = {}
    for path in files:
        try:
            src = files_mod.read(path, stdin_text)
        except files_mod.ReadError as e:
            run.errors.append((path, str(e)))
            continue
        if keep_sources or src.cells is not None:
            run.sources[path] = src
        if not _TRIGGER.search(src.text):
            by_path[path] = FileResult(path, skipped=True)
            continue
        digest = content_hash(src.text)
        digests[path] = digest
        cached = cache.get(path, digest) if cache is not None and path != "-" else None
        if cached is not None:
            by_path[path] = FileResult.from_cache(path, cached)
        else:
            todo.append((path, src.text))
    for path, data in _analyse(todo, hot_patterns, jobs):
        by_path[path] = FileResult.from_cache(path, data)
        if cache is not None and path != "-":
            cache.put(path, digests[path], data)
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
        r.findings = [f for f in r.findings if _keep(f, cfg)]
        if src is not None and src.cells is not None:
            for f in r.findings:
                f.cell, f.line = src.locate(f.line)
                _, f.end_line = src.locate(f.end_line)
    return run


def _keep(f: Finding, cfg: Config) -> bool:
    if not selected(f.code, cfg.select, cfg.ignore):
        return False
    if cfg.per_file_ignores:
        import fnmatch

        p = Path(f.path)
        rel = p.as_posix()
        if cfg.root is not None:
            try:
                rel = p.resolve().relative_to(cfg.root).as_posix()
            except ValueError:
                pass
        for pattern, codes in cfg.per_file_ignores.items():
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(p.name, pattern):
                if any(f.code.startswith(c) or c == "ALL" for c in codes):
                    return False
    return True


def _analyse(todo, hot_patterns, jobs):
    jobs = jobs or os.cpu_count() or 1
    total = sum(len(t) for _, t in todo)
    if jobs <= 1 or len(todo) < 4 or total < 200_000:
        _worker_init(hot_patterns)
        for item in todo:
            yield _lint_one(item)
        return
    # big files first, so one large file does not finish last on its own
    todo = sorted(todo, key=lambda t: -len(t[1]))
    import multiprocessing as mp

    method = "fork" if "fork" in mp.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context(method) if method else None,
                             initializer=_worker_init, initargs=(hot_patterns,)) as pool:
        yield from pool.map(_lint_one, todo, chunksize=max(1, len(todo) // (jobs * 8)))
