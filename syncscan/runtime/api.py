"""Explicit control from inside a script: `syncscan.step()` and `with syncscan.profile(...)`.

    import syncscan
    with syncscan.profile(steps=8) as p:
        for batch in loader:
            train_step(batch)
            syncscan.step()          # optional: each optimizer.step() ends a step anyway
    print(p.report["sync_summary"])

Under `syncscan profile`, `syncscan.step()` marks the command's steps and `syncscan.profile()`
does nothing of its own (the command already profiles the whole script).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from syncscan.runtime import session as _session

if TYPE_CHECKING:
    from syncscan.runtime.session import Session
    from syncscan.runtime.steps import OptimizerBoundary
    from syncscan.schema import ProfileReport

__all__ = ["step", "profile"]


def step() -> None:
    """End the current training step. The first call switches step counting from
    `optimizer.step()` to these calls. Does nothing when no profiling is running."""
    s = _session.current()
    if s is not None:
        s.boundary("explicit")


class profile:
    """Profile the steps run inside the block (see the module docstring).

    `wait`, `warmup`, `steps`, `passes`, `light_pass` and `drain_steps` as for `syncscan profile`. Unlike
    the command, the block is never stopped: steps after the last pass run unprofiled. On exit the run folder
    (`logdir`, default ./syncscan-runs/<name>-<time>/) holds the traces and report.json; the
    report is in `.report` (a dict) and `.text`, and is printed unless `print_report=False`.
    """

    def __init__(self, steps: int = 8, *, wait: int = 1, warmup: int = 2,
                 passes: str | tuple = ("bare", "light", "detail"), logdir=None,
                 name: str | None = None, print_report: bool = True, tensorboard_copy: bool = True,
                 step_on_optimizer: bool = True, light_pass: str = "cuda", drain_steps: int | None = None):
        from syncscan.runtime.schedule import DRAIN_LIMIT, make_plan, parse_passes

        passes = passes if isinstance(passes, str) else ",".join(passes)
        self.plan = make_plan(wait, warmup, steps, parse_passes(passes),
                              drain_limit=DRAIN_LIMIT if drain_steps is None else drain_steps)
        self.name = name or Path(sys.argv[0] or "python").stem or "python"
        self.logdir: Path | None = Path(logdir) if logdir else None
        self.print_report = print_report
        self.tensorboard_copy = tensorboard_copy
        self.step_on_optimizer = step_on_optimizer
        self.light_pass = light_pass
        self.report: ProfileReport | None = None
        self.text: str | None = None
        self._session: Session | None = None
        self._boundary: OptimizerBoundary | None = None
        self._started = 0.0
        self._nested = False

    def __enter__(self) -> "profile":
        from syncscan.runtime.compile_events import CompileEvents
        from syncscan.runtime.session import Session
        from syncscan.runtime.steps import OptimizerBoundary

        if _session.current() is not None:  # under `syncscan profile`: the command profiles
            self._nested = True
            return self
        if self.logdir is None:
            self.logdir = Path("syncscan-runs") / f"{self.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        self.logdir.mkdir(parents=True, exist_ok=True)
        session = self._session = Session(self.plan, self.logdir, stop_script=False,
                                           tensorboard_copy=self.tensorboard_copy, light_pass=self.light_pass)
        if self.step_on_optimizer:
            boundary = self._boundary = OptimizerBoundary(session.boundary)
            session.optimizer_boundary = boundary
            boundary.install()
        self._started = time.time()
        self._compile_events = CompileEvents(step=lambda: self.steps_done)
        self._compile_events.install()
        session.start()
        return self

    @property
    def steps_done(self) -> int:
        return self._session.steps_done if self._session else 0

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if self._nested or self._session is None or self.logdir is None:
            return False
        from syncscan.present.profile_text import render_profile
        from syncscan.runtime import report as report_mod
        from syncscan.runtime.runner import Outcome, Target
        from syncscan.trace.graph_breaks import summarize as summarize_compile

        if self._boundary is not None:
            self._boundary.remove()
        results = self._session.finish()
        self._compile_events.remove()
        if exc_type is None:
            outcome = Outcome("finished", 0)
        elif issubclass(exc_type, KeyboardInterrupt):
            outcome = Outcome("interrupted", 130)
        else:
            outcome = Outcome("exception", 1, exc=exc)
        target = Target(sys.argv[0] or None, None, list(sys.argv[1:]))
        from syncscan.runtime.input_pipeline import loader_model

        inputs = report_mod.input_window(self._session, results)
        merged = report_mod.merge_passes(report_mod.analyze_passes(results, self._session.sites,
                                                                   loader=loader_model(inputs)))
        self.report = report_mod.build(target=target, plan=self.plan, outcome=outcome, session=self._session,
                                       results=results, merged=merged, run_dir=self.logdir,
                                       started=self._started, tensorboard_copy=self.tensorboard_copy,
                                       what="block", command=["syncscan.profile()", "in", *sys.argv[:1]],
                                       compiled=summarize_compile(self._compile_events.records,
                                                                  [(w.start, w.end) for w in self.plan.windows]),
                                       inputs=inputs)
        (self.logdir / "report.json").write_text(json.dumps(self.report, indent=2) + "\n", encoding="utf-8")
        self.text = render_profile(self.report)
        if self.print_report:
            print(self.text, flush=True)
        return False
