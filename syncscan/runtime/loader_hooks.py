"""Watching the input pipeline while the script runs: what the steps wait for, and why.

`LoaderMonitor` (installed by the Session for the whole run) patches, at class level:

- `_BaseDataLoaderIter.__next__`: each batch the script takes (any DataLoader, however it is
  iterated: `for`, `next()`, a generator around it), with the step it was taken in, timed on the
  host; and, the first time an iterator is seen, its settings (workers, prefetch depth,
  pin_memory, persistent_workers, batch size, batches per epoch, dataset and transform);
- torch's DataLoader worker loop and the dataset fetchers (syncscan.runtime.loader_worker):
  what one worker spends on each batch, and how much of it in the dataset's transforms and in
  collate; `num_workers=0` fetches are timed in this process;
- the pin-memory thread's `pin_memory(batch)`: the copy of each batch into pinned memory.

Everything is put back by `uninstall`. `observations()` returns what was seen (typed records,
read by the pure functions of syncscan.runtime.input_pipeline); it can be asked mid-run (the
bare pass's steady-state check) and at the end.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from syncscan.runtime import loader_worker

# fetches kept per iterator (one per step, typically): a --run-to-end script keeps running
MAX_FETCHES = 100_000


@dataclass
class Fetch:
    """One batch taken by the script: `__next__` of a DataLoader iterator, host clock (s)."""

    step: int
    start: float
    end: float
    main_thread: bool


@dataclass
class WorkerBatch:
    """One batch made by a fetcher (in a worker, or in the main process with num_workers=0)."""

    start: float
    end: float
    transform: float  # seconds in the dataset's transforms
    collate: float    # seconds in collate_fn
    samples: int
    cpu: float = 0.0  # CPU seconds the fetching thread used (less than end - start: waiting on storage)


@dataclass
class LoaderSeen:
    """A DataLoader iterator the script used, its settings, and the batches it took from it."""

    index: int
    kind: str  # "multiprocess" | "single process"
    workers: int
    prefetch_factor: Optional[int]
    pin_memory: bool
    persistent_workers: bool
    batch_size: Optional[int]
    batches_per_epoch: Optional[int]
    dataset: str
    transform: Optional[str]
    pids: tuple[int, ...]
    seen_from_start: bool  # its first batch was timed (so counts since its start are whole)
    fetches: list[Fetch] = field(default_factory=list)


@dataclass
class LoaderObservations:
    loaders: list[LoaderSeen]
    worker_batches: dict[int, list[WorkerBatch]]  # worker pid -> its batches, in order
    main_batches: list[WorkerBatch]               # fetched in the main process (num_workers=0)
    pin_copies: list[tuple[float, float]]         # the pin-memory thread's copies (start, end)
    cpus: int                                     # CPU cores this process may run on
    worker_timing: bool                           # the worker loop could be timed


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _type_name(obj: Any) -> Optional[str]:
    if obj is None:
        return None
    t = type(obj)
    return t.__name__ if t.__module__ in ("builtins", "__main__") else f"{t.__module__}.{t.__qualname__}"


def _describe(it: Any, index: int) -> LoaderSeen:
    """An iterator's settings, read from torch's own attributes (missing ones stay unknown)."""
    workers = int(getattr(it, "_num_workers", 0) or 0)
    sampler = getattr(it, "_index_sampler", None)
    try:
        per_epoch: Optional[int] = len(sampler) if sampler is not None else None
    except TypeError:  # an iterable dataset without __len__
        per_epoch = None
    dataset = getattr(it, "_dataset", None)
    procs = getattr(it, "_workers", None) or []
    return LoaderSeen(
        index=index, kind="multiprocess" if workers > 0 else "single process", workers=workers,
        prefetch_factor=getattr(it, "_prefetch_factor", None) if workers > 0 else None,
        pin_memory=bool(getattr(it, "_pin_memory", False)),
        persistent_workers=bool(getattr(it, "_persistent_workers", False)),
        batch_size=getattr(sampler, "batch_size", None),
        batches_per_epoch=per_epoch, dataset=_type_name(dataset) or "?",
        transform=_type_name(getattr(dataset, "transform", None)),
        pids=tuple(p.pid for p in procs if getattr(p, "pid", None)),
        seen_from_start=getattr(it, "_num_yielded", None) == 0)


class LoaderMonitor:
    """See the module docstring. `step_of()` gives the index of the step in progress."""

    def __init__(self, step_of: Callable[[], int], log_dir: Path):
        self.step_of = step_of
        self.log_dir = Path(log_dir)
        self._seen: "weakref.WeakKeyDictionary[Any, LoaderSeen]" = weakref.WeakKeyDictionary()
        self._loaders: list[LoaderSeen] = []
        self._main_sink = loader_worker.MemorySink()
        self._pins: list[tuple[float, float]] = []
        self._undo: list[tuple[Any, str, Any]] = []
        self._fetch_undo: list = []
        self._env_before: Optional[str] = None
        self._installed = False
        self.worker_timing = False
        self._main = threading.main_thread()

    # ------------------------------------------------------------ install / uninstall

    def install(self) -> None:
        try:
            from torch.utils.data import dataloader
        except ImportError:
            return
        base = getattr(dataloader, "_BaseDataLoaderIter", None)
        if base is None or "__next__" not in base.__dict__:
            return
        self._patch(base, "__next__", self._timed_next(base.__dict__["__next__"]))
        self._installed = True
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            for old in self.log_dir.glob("w*.log"):  # a run folder used before: its workers are not ours
                old.unlink()
            from torch.utils.data._utils import worker

            loop = worker._worker_loop
            if loop is not loader_worker.worker_loop:
                loader_worker.remember_original(loop)
                self._patch(worker, "_worker_loop", loader_worker.worker_loop)
            self._env_before = os.environ.get(loader_worker.LOG_ENV)
            os.environ[loader_worker.LOG_ENV] = str(self.log_dir)
            self.worker_timing = True
        except (ImportError, AttributeError, OSError):
            self.worker_timing = False
        self._fetch_undo = loader_worker.patch_fetchers()
        loader_worker.set_sink(self._main_sink)
        try:
            from torch.utils.data._utils import pin_memory as pin_module

            if callable(getattr(pin_module, "pin_memory", None)):
                self._patch(pin_module, "pin_memory", self._timed_pin(pin_module.pin_memory))
        except ImportError:
            pass

    def uninstall(self) -> None:
        if not self._installed:
            return
        self._installed = False
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)
        self._undo.clear()
        for cls, original in self._fetch_undo:
            cls.fetch = original
        self._fetch_undo = []
        loader_worker.set_sink(None)
        loader_worker.restore_wrapped_attrs()
        if self._env_before is None:
            os.environ.pop(loader_worker.LOG_ENV, None)
        else:
            os.environ[loader_worker.LOG_ENV] = self._env_before

    def _patch(self, owner, name: str, new) -> None:
        self._undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, new)

    # ------------------------------------------------------------ the wrappers

    def _timed_next(self, original):
        monitor = self

        def __next__(it):
            info = monitor._info(it)
            step = monitor.step_of()
            start = time.perf_counter()
            data = original(it)  # StopIteration (end of epoch) is not a batch: not recorded
            end = time.perf_counter()
            if info is not None and len(info.fetches) < MAX_FETCHES:
                info.fetches.append(Fetch(step, start, end, threading.current_thread() is monitor._main))
            return data

        __next__.__wrapped__ = original  # type: ignore[attr-defined]
        return __next__

    def _timed_pin(self, original):
        pins = self._pins

        def pin_memory(*args, **kwargs):
            start = time.perf_counter()
            out = original(*args, **kwargs)
            if len(pins) < MAX_FETCHES:
                pins.append((start, time.perf_counter()))
            return out

        pin_memory.__wrapped__ = original  # type: ignore[attr-defined]
        return pin_memory

    def _info(self, it) -> Optional[LoaderSeen]:
        try:
            info = self._seen.get(it)
        except TypeError:
            return None
        if info is None:
            try:
                info = _describe(it, len(self._loaders))
                self._seen[it] = info
            except Exception:  # an iterator torch did not make the usual way: not described
                return None
            self._loaders.append(info)
        elif not info.pids:  # workers start lazily in some versions
            info.pids = tuple(p.pid for p in getattr(it, "_workers", None) or [] if getattr(p, "pid", None))
        return info

    # ------------------------------------------------------------ what was seen

    def observations(self) -> LoaderObservations:
        workers: dict[int, list[WorkerBatch]] = {}
        if self.worker_timing and self.log_dir.is_dir():
            for path in sorted(self.log_dir.glob("w*.log")):
                try:
                    pid = int(path.stem[1:])
                except ValueError:
                    continue
                workers[pid] = [WorkerBatch(*r) for r in loader_worker.read_log(str(path))]
        return LoaderObservations(
            loaders=list(self._loaders), worker_batches=workers,
            main_batches=[WorkerBatch(*r) for r in self._main_sink.records],
            pin_copies=list(self._pins), cpus=_cpus(), worker_timing=self.worker_timing)
