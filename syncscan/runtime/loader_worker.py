"""What a DataLoader worker spends on each batch, timed where the batch is made.

Imported in DataLoader worker processes (by any start method: fork, spawn, forkserver), so it
imports nothing beyond the standard library until a worker runs; torch is there already.

- `timed_fetch(original)`: a dataset fetcher's `fetch` (torch.utils.data._utils.fetch), timed:
  the whole batch, and inside it the time in the dataset's `transform` / `target_transform` /
  `transforms` (the per-sample augmentation of torchvision-style datasets) and in `collate_fn`.
- `worker_loop(*args, **kwargs)`: torch's `_worker_loop` with the fetchers timed; each batch is
  one line appended to `<SYNCSCAN_LOADER_LOG>/w<pid>.log` (start, end, transform s, collate s,
  samples, CPU s; `time.perf_counter`, one clock for all processes of the machine, and the
  thread's CPU time, which tells loading that computes from loading that waits on storage).
- In the main process (`num_workers=0`) the same records go to a list that
  syncscan.runtime.loader_hooks reads.

A timing failure never reaches the user's batch: the wrappers time around the original calls
and return what they return.
"""

from __future__ import annotations

import os
import time

LOG_ENV = "SYNCSCAN_LOADER_LOG"
# lines one worker writes at most (about 60 bytes each): a script left to run after the
# profile (--run-to-end) does not fill the disk
MAX_LINES = 100_000
# a dataset's per-sample callables: torchvision's VisionDataset and most custom datasets
TRANSFORM_ATTRS = ("transform", "target_transform", "transforms")
_MARK = "__syncscan_timed__"

# what the fetch in progress spent in the dataset's transforms and in collate (seconds); depth
# keeps nested timed calls (transforms calling transform) from counting twice
_inside = {"transform": 0.0, "collate": 0.0, "depth": 0}
_sink = None          # MemorySink in the main process, FileSink in a worker, None: not timing
_ORIGINAL_WORKER_LOOP = None
_wrapped_attrs: list = []  # (object, attribute, original) wrapped in this process, to restore


class MemorySink:
    """Fetches timed in the main process (num_workers=0), kept for the profile report."""

    def __init__(self, limit: int = MAX_LINES):
        self.records: list[tuple[float, float, float, float, int, float]] = []
        self.limit = limit

    def record(self, start: float, end: float, transform: float, collate: float, n: int, cpu: float) -> None:
        if len(self.records) < self.limit:
            self.records.append((start, end, transform, collate, n, cpu))


class FileSink:
    """One line per batch, appended to this worker's own file with one unbuffered write."""

    def __init__(self, folder: str):
        self.fd = os.open(os.path.join(folder, f"w{os.getpid()}.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.lines = 0

    def record(self, start: float, end: float, transform: float, collate: float, n: int, cpu: float) -> None:
        if self.lines >= MAX_LINES:
            return
        self.lines += 1
        os.write(self.fd, f"{start:.6f} {end:.6f} {transform:.6f} {collate:.6f} {n} {cpu:.6f}\n".encode())


def _timed_part(fn, part: str):
    """`fn` with its time added to the fetch in progress under `part`."""
    if getattr(fn, _MARK, False):
        return fn

    def timed(*args, **kwargs):
        if _inside["depth"]:
            return fn(*args, **kwargs)
        _inside["depth"] = 1
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _inside[part] += time.perf_counter() - t0
            _inside["depth"] = 0

    setattr(timed, _MARK, True)
    return timed


def _datasets(dataset, depth: int = 0):
    """The dataset and the ones it wraps (`Subset.dataset`, `ConcatDataset.datasets`)."""
    yield dataset
    if depth >= 3:
        return
    inner = getattr(dataset, "dataset", None)
    if inner is not None and inner is not dataset:
        yield from _datasets(inner, depth + 1)
    for d in getattr(dataset, "datasets", None) or ():
        yield from _datasets(d, depth + 1)


def _time_transforms(fetcher) -> None:
    """Time the fetcher's collate_fn and its dataset's transforms (once per fetcher)."""
    if fetcher.__dict__.get(_MARK):
        return
    fetcher.__dict__[_MARK] = True
    collate = getattr(fetcher, "collate_fn", None)
    if callable(collate):
        fetcher.collate_fn = _timed_part(collate, "collate")
    try:
        datasets = list(_datasets(getattr(fetcher, "dataset", None)))
    except Exception:  # an exotic dataset whose attributes raise: time the batch alone
        return
    for ds in datasets:
        attrs = getattr(ds, "__dict__", None)
        if not isinstance(attrs, dict):
            continue
        for name in TRANSFORM_ATTRS:
            fn = attrs.get(name)
            if callable(fn) and not getattr(fn, _MARK, False):
                try:
                    setattr(ds, name, _timed_part(fn, "transform"))
                except Exception:
                    continue
                _wrapped_attrs.append((ds, name, fn))


def timed_fetch(original):
    """A fetcher class's `fetch`, timed into the process's sink (untimed when there is none)."""
    if getattr(original, _MARK, False):
        return original

    def fetch(self, possibly_batched_index):
        sink = _sink
        if sink is None:
            return original(self, possibly_batched_index)
        _time_transforms(self)
        _inside["transform"] = _inside["collate"] = 0.0
        cpu = time.thread_time()
        start = time.perf_counter()
        data = original(self, possibly_batched_index)
        end = time.perf_counter()
        cpu = time.thread_time() - cpu
        try:
            n = len(possibly_batched_index)
        except TypeError:
            n = 1
        sink.record(start, end, _inside["transform"], _inside["collate"], n, cpu)
        return data

    setattr(fetch, _MARK, True)
    fetch.__wrapped__ = original  # type: ignore[attr-defined]
    return fetch


def fetcher_classes() -> list:
    from torch.utils.data._utils import fetch

    return [c for c in (getattr(fetch, "_MapDatasetFetcher", None), getattr(fetch, "_IterableDatasetFetcher", None))
            if c is not None and "fetch" in c.__dict__]


def patch_fetchers() -> list:
    """Time every fetcher class's fetch in this process; returns (class, original) to undo it."""
    undo = []
    for cls in fetcher_classes():
        original = cls.__dict__["fetch"]
        if not getattr(original, _MARK, False):
            cls.fetch = timed_fetch(original)
            undo.append((cls, original))
    return undo


def set_sink(sink) -> None:
    global _sink
    _sink = sink


def restore_wrapped_attrs() -> None:
    """Put back the dataset transforms wrapped in this process (the main process's datasets)."""
    while _wrapped_attrs:
        obj, name, fn = _wrapped_attrs.pop()
        try:
            setattr(obj, name, fn)
        except Exception:
            continue


def worker_loop(*args, **kwargs):
    """torch's DataLoader worker loop, with each batch it makes timed (see the module docstring).
    Started by `_MultiProcessingDataLoaderIter` in place of `_utils.worker._worker_loop`."""
    global _ORIGINAL_WORKER_LOOP
    original = _ORIGINAL_WORKER_LOOP
    if original is None:  # spawn / forkserver: a fresh interpreter, torch's module unpatched
        from torch.utils.data._utils import worker

        original = _ORIGINAL_WORKER_LOOP = worker._worker_loop
    folder = os.environ.get(LOG_ENV)
    _wrapped_attrs.clear()  # the main process's list, copied by fork: not ours to restore
    set_sink(None)  # a fork's copy of the main process's sink is not this worker's
    if folder:
        try:
            patch_fetchers()
            set_sink(FileSink(folder))
        except Exception:
            set_sink(None)
    return original(*args, **kwargs)


def remember_original(fn) -> None:
    """Called in the main process before the worker loop is replaced (a fork inherits it)."""
    global _ORIGINAL_WORKER_LOOP
    _ORIGINAL_WORKER_LOOP = fn


def read_log(path: str) -> list[tuple[float, float, float, float, int, float]]:
    """A worker's records; a line cut short by a worker killed mid-write is skipped."""
    out = []
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) != 6:
                    continue
                try:
                    out.append((float(parts[0]), float(parts[1]), float(parts[2]), float(parts[3]), int(parts[4]),
                                float(parts[5])))
                except ValueError:
                    continue
    except OSError:
        return []
    return out
