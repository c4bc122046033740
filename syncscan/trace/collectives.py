"""Collectives in one rank's trace, and the calls that wait for them on the host.

A collective shows in a Kineto trace as
- an NCCL kernel (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`, `ncclKernel_...`) on a GPU stream;
  torch also writes the call's `Collective name` and `Process Group Name` into its args;
- a `gloo:<op>` annotation on one of gloo's host threads (`pt_gloo_runloop`), for CPU tensors.

Either way its duration runs from when this rank started it until every rank had arrived and the
data had moved, so the rank that arrives last waits least. The n-th collective of one kind and
process group in step k is the same call on every rank (collectives are issued in the same order
everywhere), which is how syncscan.trace.cross_rank matches them without a common clock.

Some torch.distributed calls hold the host until every rank arrives (`barrier`, the object
collectives: SYN504's host_functions). `blocking_calls` times them from the Python stack (the
detailed pass records it), with the user's function around each, for the join with SYN504.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from syncscan.catalog import rule_for_host_function
from syncscan.trace.attribution import parse_frame
from syncscan.trace.model import Collective, Trace
from syncscan.trace.steps import StepWindow, WindowIndex

_NCCL_KERNEL = re.compile(r"^nccl(?:Dev)?Kernel_([A-Za-z]+)")
GLOO_PREFIX = "gloo:"


def normalise(name: str) -> str:
    """One spelling per collective: `all_reduce`, `AllReduce`, `allreduce_` -> `allreduce`."""
    n = name.lower().replace("_", "")
    for suffix in ("base", "intotensor", "coalesced", "tensor"):
        if n.endswith(suffix) and len(n) > len(suffix):
            n = n[: -len(suffix)]
    return n


def from_kernel(name: str, args: dict) -> Optional[str]:
    """The collective an NCCL kernel runs (None for any other kernel)."""
    if not name.startswith("nccl"):
        return None
    given = args.get("Collective name")
    if isinstance(given, str) and given:
        return normalise(given)
    m = _NCCL_KERNEL.match(name)
    return normalise(m.group(1)) if m else "nccl"


def from_annotation(name: str) -> Optional[str]:
    """The collective a host annotation stands for: gloo's run-loop annotations only (NCCL's
    host-side `nccl:*` annotations mark the launch; the collective runs in its kernel)."""
    if name.startswith(GLOO_PREFIX):
        return normalise(name[len(GLOO_PREFIX):])
    return None


@dataclass(frozen=True)
class StepCollective:
    """A collective placed in a step: `key` names it the same way on every rank."""

    window: int
    key: str         # "<group>/<name>#<n-th in this step>"
    name: str
    where: str
    start: float
    end: float

    @property
    def duration(self) -> float:
        return self.end - self.start


def in_steps(trace: Trace, wins: list[StepWindow]) -> tuple[list[StepCollective], int]:
    """The trace's collectives in its step windows, keyed per step; (collectives, left out).

    Where a trace holds both (gloo on CUDA tensors stages through the host), the GPU's are the
    collectives and the host's are left out. A collective that starts outside every window is
    left out too (it belongs to a step the profiler did not record)."""
    colls: list[Collective] = trace.collectives
    if any(c.where == "gpu" for c in colls):
        chosen = [c for c in colls if c.where == "gpu"]
    else:
        chosen = list(colls)
    index = WindowIndex(wins)
    seen: dict[tuple, int] = {}
    out: list[StepCollective] = []
    for c in sorted(chosen, key=lambda c: (c.start, c.end)):
        w = index.find(c.start)
        if w < 0:
            continue
        n = seen.get((w, c.group, c.name), 0)
        seen[(w, c.group, c.name)] = n + 1
        out.append(StepCollective(w, f"{c.group}/{c.name}#{n}", c.name, c.where, c.start, c.end))
    return out, len(colls) - len(out)


@dataclass(frozen=True)
class BlockingCall:
    """A call of a torch function that holds the host until the other ranks arrive
    (`torch.distributed.barrier`, `all_gather_object`, ...: the rules' host_functions), timed from
    the trace's Python stack, with the user's function around it."""

    api: str
    rule: str
    window: int
    start: float
    end: float
    file: Optional[str]
    line: Optional[int]       # the def line of the user's function (all a trace knows)
    function: Optional[str]

    @property
    def duration(self) -> float:
        return self.end - self.start


def blocking_calls(trace: Trace, wins: list[StepWindow], attributor: Any) -> list[BlockingCall]:
    """The outermost calls of the rules' host functions in the steps (a trace with Python stacks;
    none without)."""
    index = WindowIndex(wins)
    names = trace.names
    rules: dict[int, tuple[str, str]] = {}
    for i, n in enumerate(names.names):
        fr = parse_frame(n) if n.startswith("torch/") else None
        code = rule_for_host_function(fr.file, fr.function) if fr else None
        if code:
            rules[i] = (fr.function, code)  # type: ignore[union-attr]
    out: list[BlockingCall] = []
    if not rules:
        return out
    for tid, frames in trace.frames.items():
        frames._finalize()
        for i in range(len(frames)):
            hit = rules.get(frames.names[i])
            if hit is None:
                continue
            p = frames.parent[i]
            while p >= 0 and frames.names[p] not in rules:
                p = frames.parent[p]
            if p >= 0:
                continue  # inside another such call (all_gather_object's own barrier): counted with it
            w = index.find(frames.starts[i])
            if w < 0:
                continue
            user = attributor.user_frames(tid, frames.starts[i])
            fr = user[-1] if user else None
            out.append(BlockingCall(hit[0], hit[1], w, frames.starts[i], frames.ends[i],
                                    fr.file if fr else None, fr.line if fr else None, fr.function if fr else None))
    out.sort(key=lambda b: b.start)
    return out
