"""Worker processes for linting many files: they die with their parent, and only a bounded
number of batches is ever in flight (memory stays flat however many files there are).

A worker that outlives its parent (`kill -9` of `syncscan lint`) would go on linting for nothing,
holding its memory. On Linux each worker asks the kernel for SIGKILL when its parent dies
(PR_SET_PDEATHSIG); everywhere a watchdog thread also checks every half second that the parent is
still the one it was forked from, and ends the worker otherwise.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

WATCH_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """In a worker: end this process when `parent` is gone."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)

    def watch():
        import time

        while True:
            time.sleep(WATCH_SECONDS)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="syncscan-parent-watch", daemon=True).start()


def _init(parent: int, initializer: Callable | None, initargs: tuple) -> None:
    _die_with(parent)
    if initializer is not None:
        initializer(*initargs)


def _batch(fn: Callable, items: list) -> list:
    return [fn(item) for item in items]


def batches(items: list, size: Callable[[Any], int], jobs: int, target: int = 400_000, most: int = 32) -> list[list]:
    """Items grouped for the workers, biggest first (a big file must not finish last on its own):
    each batch about `target` bytes or `most` items, small enough that every worker gets several."""
    items = sorted(items, key=lambda t: -size(t))
    total = sum(size(t) for t in items)
    target = max(1, min(target, total // (jobs * 4) or 1))
    out: list[list] = []
    cur: list = []
    cur_size = 0
    for t in items:
        cur.append(t)
        cur_size += size(t)
        if cur_size >= target or len(cur) >= most:
            out.append(cur)
            cur, cur_size = [], 0
    if cur:
        out.append(cur)
    return out


def run(fn: Callable, groups: list[list], jobs: int, initializer: Callable | None = None, initargs: tuple = (),
        on_death: Callable[[Any], Any] | None = None) -> Iterator[Any]:
    """`fn(item)` for every item of every group, in worker processes, yielded as they finish (in no
    particular order). At most `2 * jobs` groups are in flight. When a worker dies (killed for
    memory, a crash in C code), what is left runs one item per process, so that the item that
    kills it is named: `on_death(item)` gives its result."""
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    method = "fork" if "fork" in mp.get_all_start_methods() else None
    ctx = mp.get_context(method) if method else None
    left = list(reversed(groups))
    pending: dict = {}
    try:
        with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(groups))), mp_context=ctx, initializer=_init,
                                 initargs=(os.getpid(), initializer, initargs)) as pool:
            while left or pending:
                while left and len(pending) < 2 * jobs:
                    g = left.pop()
                    pending[pool.submit(_batch, fn, g)] = g
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    out = fut.result()  # BrokenProcessPool when a worker died
                    del pending[fut]
                    yield from out
    except BrokenProcessPool:
        rest = [item for g in list(pending.values()) + left for item in g]
        for item in rest:
            yield _isolated(fn, item, ctx, initializer, initargs, on_death)


def _isolated(fn, item, ctx, initializer, initargs, on_death):
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_init,
                                 initargs=(os.getpid(), initializer, initargs)) as pool:
            return pool.submit(fn, item).result()
    except BrokenProcessPool:
        if on_death is None:
            raise
        return on_death(item)
