"""What git ignores, for the folder walk: `.gitignore` files (nested, with negation) and
`.git/info/exclude`, matched with `pathspec`'s git semantics.

As in git (and ruff): only inside a repository (a folder holding `.git`, file or folder); the
patterns of a `.gitignore` are relative to its folder; a deeper file overrides a shallower one
and, within a file, the last matching pattern wins; an ignored folder is not entered, so what
is inside cannot be re-included. A nested repository starts afresh. Paths named on the command
line are linted whatever git says (as ruff does); the walk of a folder named on the command
line that git ignores applies only the `.gitignore` files inside it.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

import pathspec


class Patterns:
    """The patterns of one ignore file: pathspec's GitIgnoreSpec, which gives git's answer,
    behind one regex that joins them all and rules out, in one C call, the paths that match
    none (most of them: pathspec tries each pattern in turn from Python)."""

    __slots__ = ("any_match", "spec")

    def __init__(self, spec: pathspec.GitIgnoreSpec):
        self.spec = spec
        # the patterns' own named group (a folder mark) is not needed to know that one matches
        sources = [p.regex.pattern.replace("(?P<ps_d>", "(?:") for p in spec.patterns
                   if getattr(p, "include", None) is not None and getattr(p, "regex", None) is not None]
        self.any_match = re.compile("|".join(f"(?:{s})" for s in sources)).search if sources else None

    def check(self, rel: str) -> bool | None:
        """True: ignored, False: re-included (`!`), None: no pattern says."""
        if self.any_match is None or self.any_match(rel) is None:
            return None
        return self.spec.check_file(rel).include


# (absolute folder the patterns are relative to, its patterns), shallowest first
Chain = tuple[tuple[str, Patterns], ...]


@lru_cache(maxsize=4096)
def _spec(path: str) -> Patterns | None:
    """The patterns of one ignore file, or None when it is missing, unreadable or empty."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # noqa: BLE001 - a pattern pathspec rejects: git would skip it too
        spec = pathspec.GitIgnoreSpec.from_lines([ln for ln in lines if _valid(ln)])
    if not len(spec):
        return None
    try:
        return Patterns(spec)
    except re.error:  # a pattern that only compiles on its own: no shortcut
        patterns = Patterns.__new__(Patterns)
        patterns.spec, patterns.any_match = spec, lambda rel: True
        return patterns


def _valid(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
        return True
    except Exception:  # noqa: BLE001 - see _spec
        return False


def repository_root(folder: str) -> str | None:
    """The nearest folder at or above `folder` (absolute) that holds `.git`, or None."""
    d = folder
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _own(folder: str, root: bool) -> Chain:
    """The specs a folder adds: its .gitignore, and for a repository root .git/info/exclude
    first (lowest precedence)."""
    out = []
    if root:
        exclude = _spec(os.path.join(folder, ".git", "info", "exclude"))
        if exclude is not None:
            out.append((folder, exclude))
    spec = _spec(os.path.join(folder, ".gitignore"))
    if spec is not None:
        out.append((folder, spec))
    return tuple(out)


def ignored(path: str, is_dir: bool, chain: Chain) -> bool:
    """Whether git ignores `path` (absolute) under the specs of its folders."""
    result = False
    for base, spec in chain:
        rel = path[len(base) + 1:] if path.startswith(base + os.sep) else None
        if not rel:
            continue
        r = spec.check(rel + "/" if is_dir else rel)
        if r is not None:
            result = r
    return result


def chain_for_walk(top: str) -> Chain | None:
    """The specs in force at a folder the walk starts from (absolute), or None outside a
    repository. A folder that git ignores gets none of its parents' specs: it was named."""
    root = repository_root(top)
    if root is None:
        return None
    chain: Chain = ()
    d = root
    parts = [] if top == root else os.path.relpath(top, root).split(os.sep)
    for i in range(len(parts) + 1):
        chain += _own(d, d == root)
        if i < len(parts):
            d = os.path.join(d, parts[i])
    own = _own(top, top == root)
    above = chain[: len(chain) - len(own)]
    if ignored(top, True, above):
        return own
    return chain


def enter(folder: str, chain: Chain | None) -> Chain | None:
    """The specs in force inside `folder` (absolute), a sub-folder of where `chain` holds."""
    if os.path.lexists(os.path.join(folder, ".git")):
        return _own(folder, True)  # a nested repository: its own rules only
    if chain is None:
        return None
    return chain + _own(folder, False)
