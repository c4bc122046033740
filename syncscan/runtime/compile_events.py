"""What torch.compile reports while a script runs: graph breaks, recompilations, CUDA-graph skips.

Collected through torch's own logging, the hooks its tools read (no monkey-patching):
- the structured trace (`trace_structured`, the logger "torch.__trace" that TORCH_TRACE and tlparse
  use): the `dynamo_graph_break_reason` artifact of every graph break (its user stack and reason),
  and the `compilation_metrics` record of every compiled frame (its code location and, for a
  recompilation, the guard that failed). torch builds these records only while the logger has a
  handler, so installing ours is what turns them on;
- the artifact logger to which inductor's `log_cudagraph_skip_and_bump_counter` writes every
  "skipping cudagraphs due to ..." message ("cudagraphs" in torch 2.14, "perf_hints" in older
  releases); only graphs on a GPU are checked, so on the CPU there are none.
The artifact names and the trace records are those tlparse reads; a torch without them gives
empty lists (checked on torch 2.14, the message formats read from the sources of older releases).

The records are kept raw (dicts of strings and numbers); syncscan.trace.graph_breaks turns them
into the report.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable

TRACE_LOGGER = "torch.__trace"
# `log_cudagraph_skip_and_bump_counter` writes to the "cudagraphs" artifact logger of its module
# in recent torch, to "perf_hints" in older releases: both are read, for skip messages only
CUDAGRAPH_LOGGERS = ("torch._inductor.cudagraph_utils.__cudagraphs", "torch._inductor.cudagraph_utils.__perf_hints")
_SKIP = re.compile(r"\b(skipping|disabling) cudagraphs\b", re.I)
_KEEP_METRICS = ("co_name", "co_filename", "co_firstlineno", "recompile_reason", "fail_reason",
                 "cudagraph_skip_reason", "graph_op_count")


class _Handler(logging.Handler):
    def __init__(self, sink: CompileEvents, kind: str):
        super().__init__(logging.DEBUG)
        self.sink, self.kind = sink, kind

    def emit(self, record: logging.LogRecord) -> None:  # never raise into torch's compiler
        try:
            self.sink._take(self.kind, record)
        except Exception:  # noqa: BLE001 - a record we cannot read is left out, the run goes on
            pass


class CompileEvents:
    """`with CompileEvents() as events:` ... `events.records`: what torch.compile logged meanwhile,
    as dicts with `kind` "graph_break" (`payload`: torch's text), "frame" (a compiled frame's
    `compilation_metrics`: code location, `recompile_reason`, ...) or "cudagraph_skip" (`message`)."""

    def __init__(self, step: Callable[[], int] | None = None) -> None:
        """`step`: the number of the step running now, stamped on each record (`step`)."""
        self.step = step
        self.records: list[dict] = []
        self._lock = threading.Lock()
        self._installed: list[tuple[logging.Logger, logging.Handler, int]] = []

    def __enter__(self) -> CompileEvents:
        self.install()
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def install(self) -> None:
        if self._installed:
            return
        trace = logging.getLogger(TRACE_LOGGER)
        self._add(trace, _Handler(self, "trace"))
        for name in CUDAGRAPH_LOGGERS:
            self._add(logging.getLogger(name), _Handler(self, "cudagraphs"))

    def _add(self, logger: logging.Logger, handler: logging.Handler) -> None:
        level = logger.level
        if logger.name == TRACE_LOGGER and logger.getEffectiveLevel() > logging.DEBUG:
            logger.setLevel(logging.DEBUG)  # (torch sets it so on import; before that, the root's level rules)
        logger.addHandler(handler)
        self._installed.append((logger, handler, level))

    def remove(self) -> None:
        for logger, handler, level in reversed(self._installed):
            logger.removeHandler(handler)
            logger.setLevel(level)
        self._installed = []

    def _take(self, kind: str, record: logging.LogRecord) -> None:
        if kind == "cudagraphs":
            msg = record.getMessage()
            if _SKIP.search(msg):  # (not "enabling cudagraphs ...", nor other perf hints)
                self._append({"kind": "cudagraph_skip", "message": msg})
            return
        meta = getattr(record, "metadata", None)
        if not isinstance(meta, dict):
            return
        artifact = meta.get("artifact")
        if isinstance(artifact, dict) and artifact.get("name") == "dynamo_graph_break_reason":
            payload = getattr(record, "payload", None)
            if isinstance(payload, str):
                self._append({"kind": "graph_break", "payload": payload, "frame_id": meta.get("frame_id"),
                              "frame_compile_id": meta.get("frame_compile_id")})
        elif isinstance(meta.get("compilation_metrics"), dict):
            m = meta["compilation_metrics"]
            self._append({"kind": "frame", "frame_id": meta.get("frame_id"),
                          "frame_compile_id": meta.get("frame_compile_id"),
                          **{k: m.get(k) for k in _KEEP_METRICS}})

    def _append(self, rec: dict) -> None:
        if self.step is not None:
            rec["step"] = self.step()
        with self._lock:
            self.records.append(rec)
