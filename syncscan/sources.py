"""The user's source files a runtime report points to: find them, lint them, join them.

A trace names files as the profiled process saw them (relative to where the script ran, or
absolute on another machine); `resolve_source` finds the readable user file behind a name, and
`lint_and_join` lints those files and matches their findings with the report's sites
(syncscan.join, which does the matching alone).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterable, Optional

from syncscan.join import join, runtime_sites, stack_frames
from syncscan.schema import CompileFields, JoinReport


def _library_dirs() -> tuple[str, ...]:
    dirs = [os.path.dirname(os.path.abspath(__file__)) + os.sep]  # syncscan's own code
    for name in ("torch", "torchvision", "torchaudio"):
        file = getattr(sys.modules.get(name), "__file__", None)
        if file:
            dirs.append(os.path.dirname(os.path.abspath(file)) + os.sep)
    return tuple(dirs)


def is_user_file(path: Path) -> bool:
    parts = set(path.parts)
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    return not str(path.resolve()).startswith(_library_dirs())


def resolve_source(name: Optional[str], roots: Iterable[str]) -> Optional[str]:
    """The readable user file (.py) a runtime site names, tried as given, then under each root
    (traces record paths relative to where the script ran, or just the file's name)."""
    if not name or name.startswith("<") or not name.endswith(".py"):
        return None
    p = Path(name)
    candidates = [p] if p.is_absolute() else [p, *(Path(r) / p for r in roots)]
    for c in candidates:
        try:
            if c.is_file() and is_user_file(c) and os.access(c, os.R_OK):
                return str(c)
        except OSError:
            continue
    return None


def source_files(report, roots: Iterable[str]) -> list[str]:
    """The user files the report's sites point to (and, for syncs in backward, the files of the
    forward code behind them; for syncs in a library, the user's line that called it), as
    readable paths; library files are left out."""
    roots = list(roots)
    sites, _ = runtime_sites(report)
    names = []
    for s in sites:
        names.append(s.get("file"))
        names.extend(src.get("file") for src in s.get("sources") or [] if isinstance(src, dict))
        names.extend(fr.get("file") for fr in s.get("frames") or [] if isinstance(fr, dict))
        if s.get("phase") == "backward":
            names.extend(f for f, _ in stack_frames(s)[:1])
    out: dict[str, None] = {}
    for name in names:
        path = resolve_source(name, roots)
        if path is not None:
            out.setdefault(os.path.abspath(path), None)
    return list(out)


def lint_and_join(report, roots: Iterable[str], config_start: Optional[str] = None) -> Optional[JoinReport]:
    """Lint the user files a profile/analyze report points to and join: the report's `join`
    record, or None when no site points to a readable user file."""
    from syncscan.lint import config as config_mod
    from syncscan.lint.runner import lint_paths

    files = source_files(report, roots)
    if not files:
        return None
    cfg = config_mod.load(None, config_start or files[0])
    run = lint_paths(files, cfg, use_cache=False, jobs=1)
    return join(report, run.findings, profiled_files=files).to_json(
        linted=files, lint_errors=[f"{p}: {e}" for p, e in run.errors])


def lint_compiled(compiled: CompileFields, roots: Iterable[str], extra: Iterable[str] = (),
                  config_start: Optional[str] = None) -> CompileFields:
    """Lint the user files of a run's graph breaks and CUDA-graph skips, with `extra` (the script:
    its torch.compile calls say what is compiled), and give each break and skip the findings of
    its line (syncscan.trace.graph_breaks.with_lint); unchanged when no file is readable."""
    from syncscan.lint import config as config_mod
    from syncscan.lint.runner import lint_paths
    from syncscan.trace.graph_breaks import files_of, with_lint

    roots = list(roots)
    names = files_of(compiled)
    files = [p for p in (resolve_source(n, roots) for n in [*names, *extra]) if p] if names else []
    if not files:
        return compiled
    files = list(dict.fromkeys(os.path.abspath(f) for f in files))
    run = lint_paths(files, config_mod.load(None, config_start or files[0]), use_cache=False, jobs=1)
    return with_lint(compiled, run.findings)
