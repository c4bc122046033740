"""One profiling session: counts step boundaries and drives the passes of a `Plan`.

Used by `syncscan profile` (which runs the script in-process) and by `syncscan.profile()`.
torch is imported when a session is created, never when this module is imported.

At each boundary the session tells every pass which step is about to begin; a pass then
starts its warm-up, starts measuring, takes a step, or ends. Timing marks are taken at the
same boundaries in every pass, so bare and profiled step times compare like for like:
CUDA events on the current stream when CUDA is in use (they time the GPU's progress through
the steps without making the host wait), the host clock otherwise. The bare pass also waits
for the GPU at both ends of its window (no profiler is running then, so this adds nothing to
any trace); the profiled passes never do, so no sync of ours lands inside a profiled step.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syncscan.runtime.loader_hooks import LoaderMonitor
from syncscan.runtime.oprecorder import OpRecorder
from syncscan.runtime.schedule import PassWindow, Plan
from syncscan.runtime.sitehook import SiteRecorder
from syncscan.trace.marks import META_KEY, StepMarks

if TYPE_CHECKING:
    from syncscan.runtime.steps import OptimizerBoundary

# What the light pass records (`--light-pass`):
# - cuda (the default): CUDA activity only (kernels, copies, memsets and the CUDA runtime calls:
#   launches, copies, syncs). No CPU ops: torch then installs no per-op callback at all, and
#   recording every op is what slows a host-bound step under the profiler. The step windows come
#   from the session's own step marks (the CUDA events below: syncscan.trace.marks), and the ops,
#   scopes and source lines from the detailed pass, matched by the runtime calls of each step
#   (syncscan.trace.graft).
# - lean: CPU ops too, without external correlation (torch's per-op push and pop of an id into
#   CUPTI, which links each kernel and runtime call to the op that launched it; the analysis finds
#   an op's launches by time on its thread instead).
# - full: torch's defaults (CPU ops and CUDA activity, linked).
# Without CUDA every recipe records CPU ops: there is nothing else to record.
LIGHT_PASSES = ("cuda", "lean", "full")
DEFAULT_LIGHT_PASS = "cuda"
# torch.cuda.Event.record() shows in traces (so the cuda recipe finds its steps) since Kineto
# stopped filtering cudaEventRecord out, in torch 2.2; an older torch runs the lean recipe instead
CUDA_ONLY_MIN_TORCH = (2, 2)


def light_pass_for(torch, requested: str, cuda: bool, ranked: bool = False) -> str:
    """The recipe the light pass runs: `requested`, but lean for `cuda` on a torch too old to
    show its step marks, and on a rank of a multi-rank job: the cross-rank analysis reads the
    collectives from the light trace, and gloo's exist only as CPU ops there (measured on two
    ranks sharing an H100: with the cuda recipe no collective wait was seen at all)."""
    if requested == "cuda" and cuda and (ranked or _torch_version(torch) < CUDA_ONLY_MIN_TORCH):
        return "lean"
    return requested


def _torch_version(torch) -> tuple[int, int]:
    try:
        major, minor = str(torch.__version__).split(".")[:2]
        return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)
    except (AttributeError, ValueError):
        return (0, 0)


def profiler_options(torch, pass_name: str, cuda: bool, light_pass: str = DEFAULT_LIGHT_PASS) -> dict:
    """torch.profiler.profile's options for a profiled pass (light or detail).

    On a GPU the light pass records CUDA activity, and CPU ops unless its recipe is `cuda`; the
    detailed pass records CPU ops and CUDA activity (its ops are the light pass's under the cuda
    recipe). Neither records shapes or memory. The detailed pass adds what costs most and only
    serves attribution: Python stacks and, on a GPU, CUDA sync events."""
    from torch.profiler import ProfilerActivity

    cpu = not (cuda and pass_name == "light" and light_pass == "cuda")
    activities = [*([ProfilerActivity.CPU] if cpu else []), *([ProfilerActivity.CUDA] if cuda else [])]
    options: dict = dict(activities=activities, with_stack=pass_name == "detail", record_shapes=False,
                         profile_memory=False)
    config: dict = {}
    if pass_name == "detail" and cuda:
        config["enable_cuda_sync_events"] = True
    if pass_name == "light" and cuda and light_pass == "lean":
        config["disable_external_correlation"] = True
    if config:
        try:
            options["experimental_config"] = torch.profiler._ExperimentalConfig(**config)
        except TypeError:  # a torch without the option: record as it does by default
            config.pop("disable_external_correlation", None)
            if config:
                options["experimental_config"] = torch.profiler._ExperimentalConfig(**config)
    return options


class StopScript(BaseException):
    """Raised from a step boundary once the schedule is done: ends the script like Ctrl-C
    would, but not catchable by `except Exception`."""


_current: "Session | None" = None


def current() -> "Session | None":
    return _current


@dataclass
class PassResult:
    name: str
    window: PassWindow
    state: str = "not reached"  # not reached | warm-up only | partial | complete
    steps_measured: int = 0
    step_ms: list = field(default_factory=list)  # per measured step
    ms_per_step: float | None = None
    clock: str = "host"
    host_ms_per_step: float | None = None
    trace: str | None = None  # the raw trace, as torch wrote it
    tensorboard_trace: str | None = None  # the copy TensorBoard reads (may be the same file)
    profiler_step_first: int | None = None  # ProfilerStep#N of the first measured step
    activities: list = field(default_factory=list)  # what the profiler recorded: CPU, CUDA
    analysis_error: str | None = None
    span: tuple[float, float] | None = None  # host clock (perf_counter) at the first and last mark measured

    def as_dict(self) -> dict:
        return {
            "state": self.state, "steps": self.steps_measured,
            "ms_per_step": _round(self.ms_per_step), "host_ms_per_step": _round(self.host_ms_per_step),
            "clock": self.clock, "step_ms": [_round(x) for x in self.step_ms],
            "first": self.window.start, "last": self.window.end - 1,
            "trace": self.trace, "tensorboard_trace": self.tensorboard_trace,
            **({"analysis_error": self.analysis_error} if self.analysis_error else {}),
        }


def _round(x, nd=4):
    return None if x is None else round(x, nd)


class _Clock:
    """Marks at step boundaries: host time, plus a CUDA event when CUDA is in use. The host clock
    is read just before and just after each record, so a trace of the pass can find the record
    call among its CUDA runtime calls (syncscan.trace.marks)."""

    def __init__(self, torch, cuda: bool):
        self.torch = torch
        self.cuda = cuda
        self.before: list[float] = []
        self.host: list[float] = []
        self.events: list = []
        self.tid: int | None = None

    def mark(self, wait_for_gpu: bool = False) -> None:
        before = time.perf_counter()
        if self.cuda:
            if wait_for_gpu:
                self.torch.cuda.synchronize()
            event = self.torch.cuda.Event(enable_timing=True)
            before = time.perf_counter()
            event.record()
            self.events.append(event)
        self.host.append(time.perf_counter())
        self.before.append(before)
        self.tid = threading.get_native_id()

    def marks(self, first_step: int | None) -> StepMarks:
        return StepMarks([1e6 * t for t in self.before], [1e6 * t for t in self.host], self.tid, first_step,
                         _REALTIME_MINUS_PERF_US)

    def read(self, result: PassResult, keep: int | None = None) -> None:
        """The timings into `result`: the last `keep` steps marked (all of them by default; a
        lengthened bare pass measures its last `steps`)."""
        host, events = self.host, self.events
        if keep is not None:
            host, events = host[-keep - 1:], events[-keep - 1:]
        if len(host) < 2:
            return
        host_ms = [1e3 * (b - a) for a, b in zip(host, host[1:])]
        result.span = (host[0], host[-1])
        result.host_ms_per_step = sum(host_ms) / len(host_ms)
        result.steps_measured = len(host_ms)
        if self.cuda and len(events) >= 2:
            events[-1].synchronize()
            result.step_ms = [a.elapsed_time(b) for a, b in zip(events, events[1:])]
            result.clock = "cuda_events"
        else:
            result.step_ms = host_ms
        result.ms_per_step = sum(result.step_ms) / len(result.step_ms)


# the offset between the trace's clock (realtime) and the marks' (perf_counter), as a hint for
# finding the marks in a trace (both clocks run at the same rate; syncscan.trace.marks)
_REALTIME_MINUS_PERF_US = time.time_ns() / 1e3 - time.perf_counter() * 1e6


class _Pass:
    def __init__(self, session: "Session", window: PassWindow):
        self.session = session
        self.window = window
        self.result = PassResult(window.name, window)
        self.clock = _Clock(session.torch, session.cuda)
        self.state = "pending"  # pending | warmup | active | done
        self.prof: Any = None  # torch.profiler.profile while this pass profiles
        self.sites: SiteRecorder | OpRecorder | None = None
        self._debug_mode = None

    @property
    def profiled(self) -> bool:
        return self.window.name != "bare"

    # called with the index of the step about to begin
    def at_step(self, j: int) -> None:
        w = self.window
        if self.state == "done" or j < w.warmup_start:
            return
        if self.state == "active" and j == w.end:
            if not self.profiled and self.session.lengthen_bare(self):
                self.clock.mark()  # the loader still hands out prefetched batches: measure on
                return
            self._stop_measuring()
            self.clock.mark(wait_for_gpu=not self.profiled)
            self._write_marks()
            self._profiler_step()  # RECORD_AND_SAVE -> NONE: stops the trace, writes it
            self._close(complete=True)
            return
        # a measured window starts once the profiler records (its start-up is not a step's cost)
        if self.state == "pending":
            self._start_profiler()
            if j == w.start:
                self.clock.mark(wait_for_gpu=not self.profiled)
                self._start_measuring()
            else:
                self.state = "warmup"
            return
        if self.state == "warmup" and j == w.start:
            self._profiler_step()
            self.clock.mark(wait_for_gpu=not self.profiled)
            self._start_measuring()
            return
        if self.state == "active":
            self.clock.mark()
        self._profiler_step()

    def abort(self) -> None:
        """The script ended (or failed) inside this pass: keep what was captured."""
        if self.state in ("pending", "done"):
            return
        if self.state == "active":
            self._stop_measuring()  # the step in progress is not timed: it did not end
            self._write_marks()
        self._close(complete=False)

    # ------------------------------------------------------------ profiler plumbing

    def _schedule(self):
        from torch.profiler import ProfilerAction

        warmup, active = self.window.start - self.window.warmup_start, self.window.steps

        def schedule(step: int):
            if step < warmup:
                return ProfilerAction.WARMUP
            if step < warmup + active - 1:
                return ProfilerAction.RECORD
            if step == warmup + active - 1:
                return ProfilerAction.RECORD_AND_SAVE
            return ProfilerAction.NONE
        return schedule

    def _start_profiler(self) -> None:
        if not self.profiled:
            return
        from torch.profiler import profile

        kwargs = profiler_options(self.session.torch, self.window.name, self.session.cuda, self.session.light_pass)
        self.result.activities = [str(a).rsplit(".", 1)[-1] for a in kwargs["activities"]]
        self.prof = profile(schedule=self._schedule(), on_trace_ready=self._trace_ready, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.prof.start()

    def _profiler_step(self) -> None:
        if self.prof is not None:
            self.prof.step()

    def _write_marks(self) -> None:
        """The step marks into the trace's metadata, while the profiler still records (a trace
        without ProfilerStep#N finds its steps by them: syncscan.trace.marks)."""
        if self.prof is None or len(self.clock.host) < 2:
            return
        meta = json.dumps(self.clock.marks(self.result.profiler_step_first).as_meta())
        with contextlib.suppress(Exception):  # a torch without it: the trace has ProfilerStep#N or none
            self.prof.add_metadata_json(META_KEY, meta)

    def _start_measuring(self) -> None:
        self.state = "active"
        if self.prof is not None:
            self.result.profiler_step_first = self.prof.step_num
        if self.window.name != "detail":
            return
        step_of = lambda: self.prof.step_num if self.prof is not None else -1  # noqa: E731
        if self.session.cuda:
            torch = self.session.torch
            self.sites = SiteRecorder(step_of)
            self.sites.install()
            self._debug_mode = torch.cuda.get_sync_debug_mode()
            with warnings.catch_warnings():  # "a prototype feature": true, and not the user's concern
                warnings.simplefilter("ignore", UserWarning)
                torch.cuda.set_sync_debug_mode("warn")
        else:  # nothing syncs without a GPU: record where the ops that would sync on one are called
            self.sites = OpRecorder(step_of)
            self.sites.install()

    def _stop_measuring(self) -> None:
        if self._debug_mode is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                self.session.torch.cuda.set_sync_debug_mode(self._debug_mode)
            self._debug_mode = None
        if self.sites is not None:
            self.sites.uninstall()

    def _close(self, complete: bool) -> None:
        measured = self.state == "active"
        if self.prof is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.prof.stop()  # after a partial window: stops the trace and writes it
            self.prof = None
        self.result.state = ("complete" if complete else "partial") if measured else "warm-up only"
        self.state = "done"

    def _trace_ready(self, prof) -> None:
        self.result.trace, self.result.tensorboard_trace = self.session.write_trace(self.window.name, prof)


class Session:
    """Drives `plan` from step boundaries; `stop_script` raises StopScript after the last pass."""

    def __init__(self, plan: Plan, run_dir: Path, *, stop_script: bool = True,
                 tensorboard_copy: bool = True, light_pass: str = DEFAULT_LIGHT_PASS, watch_loaders: bool = True,
                 rank: int | None = None):
        global _current
        import torch

        if light_pass not in LIGHT_PASSES:
            raise ValueError(f"light_pass must be one of {LIGHT_PASSES}, not {light_pass!r}")
        self.torch = torch
        self.cuda = torch.cuda.is_available()
        self.light_pass = light_pass_for(torch, light_pass, self.cuda, rank is not None)  # the recipe that runs
        self.plan = plan
        self.run_dir = Path(run_dir)
        self.stop_script = stop_script
        self.tensorboard_copy = tensorboard_copy
        self.worker = f"{socket.gethostname().split('.')[0] or 'host'}_{os.getpid()}"
        # one rank of several (syncscan.runtime.distributed): its traces carry its rank in their
        # names, beside the other ranks' in the same pass folders
        self.rank = rank
        if rank is not None:
            self.worker = f"rank{rank}_{self.worker}"
        self.steps_done = 0
        self.boundary_sources: dict[str, int] = {}
        self.explicit = False
        self._last_source: str | None = None
        self.passes = [_Pass(self, w) for w in plan.windows]
        self.started = False
        self.finished = False
        self.stopped = False  # StopScript was raised
        self.optimizer_boundary: OptimizerBoundary | None = None  # set by the runner: explicit steps turn it off
        self._main_thread = threading.main_thread()
        self._lock = threading.RLock()
        # the input pipeline: DataLoader batches, their workers, and the bare pass's drain checks
        self.loader = LoaderMonitor(lambda: self.steps_done, self.run_dir / "loader") if watch_loaders else None
        self.drain_checks: list = []  # syncscan.runtime.input_pipeline.DrainCheck, one per check
        _current = self

    # ------------------------------------------------------------ step boundaries

    def start(self) -> None:
        if self.loader is not None:
            self.loader.install()
        self.started = True
        self._advance(0)

    def lengthen_bare(self, p: "_Pass") -> bool:
        """At the end of the bare pass's measured steps: were they the loader's steady state? If
        its workers were still handing out prefetched batches, lengthen the pass (within
        plan.drain_limit) so that its measured steps are the last ones; later passes move on."""
        if self.loader is None:
            return False
        from syncscan.runtime.input_pipeline import drain_check

        w = p.window
        check = drain_check(self.loader.observations(), w.start, w.end, w.steps)
        self.drain_checks.append(check)
        extra = min(check.extra_steps, self.plan.drain_limit - self.plan.drain)
        if extra <= 0:
            return False
        self.plan = replace(self.plan, drain=self.plan.drain + extra)
        for q in self.passes:
            q.window = q.result.window = self.plan.window(q.window.name) or q.window
        return True

    def boundary(self, source: str) -> None:
        """A training step just ended. `source`: optimizer | step-on | explicit."""
        if self.finished or self.stopped:
            return
        with self._lock:
            if source == "explicit" and not self.explicit:
                # explicit syncscan.step() calls take over from the automatic boundaries; when one
                # comes right after an optimizer boundary it ends that same step, not a new one
                self.explicit = True
                if self.optimizer_boundary is not None:
                    self.optimizer_boundary.enabled = False
                if self._last_source == "optimizer":
                    self._last_source = source
                    return
            elif source != "explicit" and self.explicit:
                return
            self._last_source = source
            self.boundary_sources[source] = self.boundary_sources.get(source, 0) + 1
            self.steps_done += 1
            self._advance(self.steps_done)
            if (self.stop_script and self.steps_done >= self.plan.total
                    and threading.current_thread() is self._main_thread):
                self.stopped = True
                raise StopScript()

    def _advance(self, j: int) -> None:
        for p in self.passes:
            p.at_step(j)

    @property
    def profiler_step(self) -> int | None:
        for p in self.passes:
            if p.prof is not None:
                return p.prof.step_num
        return None

    # ------------------------------------------------------------ the end

    def finish(self) -> list[PassResult]:
        """Stop whatever still runs (keeping its partial trace); return every pass's result."""
        global _current
        if not self.finished:
            self.finished = True
            for p in self.passes:
                with contextlib.suppress(Exception):
                    p.abort()
            if self.loader is not None:
                self.loader.uninstall()
            # read the CUDA events only now: waiting for them between passes would drain the GPU
            # at the start of the next pass
            for p in self.passes:
                p.clock.read(p.result, keep=p.window.steps if p.result.state == "complete" else None)
            if _current is self:
                _current = None
        return [p.result for p in self.passes]

    @property
    def sites(self) -> list[dict]:
        out = []
        for p in self.passes:
            if p.sites is not None:
                out.extend(p.sites.sites)
        return out

    @property
    def complete(self) -> bool:
        return self.steps_done >= self.plan.total

    # ------------------------------------------------------------ traces on disk

    def write_trace(self, pass_name: str, prof) -> tuple[str, str]:
        """Write the raw trace, and the copy TensorBoard reads, in the layout it expects:
        <run>/<pass>/<worker>.<ns>.pt.trace.json.gz. The raw trace goes to
        <run>/traces/<pass>.trace.json.gz (a name TensorBoard does not pick up;
        <pass>.rank<R>.trace.json.gz for one rank of several)."""
        from syncscan.runtime.tbcompat import make_compatible

        tb_dir = self.run_dir / pass_name
        tb_dir.mkdir(parents=True, exist_ok=True)
        tb_path = tb_dir / f"{self.worker}.{time.time_ns()}.pt.trace.json.gz"
        if not self.tensorboard_copy:
            prof.export_chrome_trace(str(tb_path))
            return str(tb_path), str(tb_path)
        raw_dir = self.run_dir / "traces"
        raw_dir.mkdir(parents=True, exist_ok=True)
        raw_path = raw_dir / (f"{pass_name}.trace.json.gz" if self.rank is None
                              else f"{pass_name}.rank{self.rank}.trace.json.gz")
        prof.export_chrome_trace(str(raw_path))
        make_compatible(raw_path, tb_path)
        return str(raw_path), str(tb_path)
