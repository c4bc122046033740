"""The nearest folder above a path that holds one of some marker files (a project's root, a
checkout's root), memoised per folder: a run asks it for every file."""

from __future__ import annotations

import os


def nearest(directory: str, markers: tuple[str, ...], memo: dict[str, str | None]) -> str | None:
    """The nearest folder from `directory` upwards holding one of `markers`, or None. `memo` keeps the
    answer of every folder walked through (the caller's, for its markers)."""
    seen = []
    d, found = directory, None
    while True:
        if d in memo:
            found = memo[d]
            break
        seen.append(d)
        if any(os.path.exists(os.path.join(d, m)) for m in markers):
            found = d
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for s in seen:
        memo[s] = found
    return found
