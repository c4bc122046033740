"""Which training steps serve which measurement pass, in one run of the script.

A script cannot in general be run twice, so one run is cut into consecutive step ranges:

    wait | bare: warm-up, timed | light: warm-up, profiled | detail: warm-up, profiled

- bare: no profiler; the step time the user really gets. When the DataLoader's workers are
  still handing out batches they prefetched earlier, the bare pass is lengthened (`drain`
  steps, up to `drain_limit`) and its measured steps are the last `steps` of it: the steady
  state, not the prefetch (syncscan.runtime.input_pipeline.drain_check).
- light: torch.profiler, CUDA activity only by default (session.LIGHT_PASSES): GPU busy time,
  idle gaps, stream overlap.
- detail: Python stacks, CUDA sync events and the sync debug mode: which source line syncs.

Each pass has its own warm-up because each changes the conditions (the profiler's own start-up
costs a step or two). Steps are counted from 0; step k ends at the k-th step boundary.
"""

from __future__ import annotations

from dataclasses import dataclass

from syncscan.errors import UserError

PASSES = ("bare", "light", "detail")
PROFILED = ("light", "detail")


@dataclass(frozen=True)
class PassWindow:
    name: str
    warmup_start: int  # first warm-up step
    start: int  # first measured step
    end: int  # one past the last measured step

    @property
    def steps(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Plan:
    wait: int
    warmup: int
    steps: int
    passes: tuple[str, ...]
    drain: int = 0  # steps the bare pass was lengthened by (before its measured steps)
    drain_limit: int = 0  # the most it may be lengthened by

    @property
    def windows(self) -> list[PassWindow]:
        out, first, previous = [], self.wait, None
        for name in self.passes:
            warmup = self.warmup
            if previous in PROFILED and name in PROFILED:
                # at least one step without recording between two profilers: torch crashes when a
                # record_function entered under one profiler exits under the next (seen with
                # torch 2.14: the optimizer's own "Optimizer.step#..." scope spans our boundary)
                warmup = max(warmup, 1)
            if name == "bare":
                warmup += self.drain
            out.append(PassWindow(name, first, first + warmup, first + warmup + self.steps))
            first += warmup + self.steps
            previous = name
        return out

    @property
    def total(self) -> int:
        """Steps the schedule needs before the script can be stopped."""
        return self.windows[-1].end

    def window(self, name: str) -> PassWindow | None:
        return next((w for w in self.windows if w.name == name), None)

    def describe(self) -> str:
        parts = [f"wait {self.wait}"] if self.wait else []
        for w in self.windows:
            drained = f" incl. {self.drain} to drain the loader" if w.name == "bare" and self.drain else ""
            parts.append(f"{w.name}: steps {w.warmup_start}-{w.end - 1}"
                         f" ({w.start - w.warmup_start} warm-up{drained}, {w.steps} measured)")
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {
            "wait": self.wait, "warmup": self.warmup, "steps": self.steps,
            "passes": list(self.passes), "total_steps": self.total,
            "windows": {w.name: {"warmup_start": w.warmup_start, "first": w.start, "last": w.end - 1}
                        for w in self.windows},
            "drain_steps": self.drain, "drain_limit": self.drain_limit,
        }


def parse_passes(text: str) -> tuple[str, ...]:
    """`bare,light,detail` (any order, any non-empty subset; bare alone only times the steps) -> canonical order."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = sorted(set(names) - set(PASSES))
    if unknown:
        raise UserError(f"--passes: unknown pass {', '.join(unknown)} (choose from {', '.join(PASSES)})")
    if not names:
        raise UserError("--passes: name at least one pass")
    return tuple(p for p in PASSES if p in names)


# default bound on lengthening the bare pass (--drain-steps)
DRAIN_LIMIT = 64


def make_plan(wait: int, warmup: int, steps: int, passes: tuple[str, ...], drain_limit: int = DRAIN_LIMIT) -> Plan:
    if wait < 0 or warmup < 0:
        raise UserError("--wait and --warmup must not be negative")
    if steps < 1:
        raise UserError("--steps must be at least 1")
    if drain_limit < 0:
        raise UserError("--drain-steps must not be negative")
    return Plan(wait, warmup, steps, passes, drain_limit=drain_limit)
