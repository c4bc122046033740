"""Analysis of torch.profiler (Kineto) traces: host syncs, what they cost, streams and copies.

Pure Python, no torch: usable on a trace recorded elsewhere (`syncscan analyze`) and by
`syncscan profile` right after recording.

API
---
load_trace(path, *, workers=None) -> Trace
    Reads a `.json` or `.json.gz` trace (gzip detected by content) in one streaming pass and
    keeps only what the analysis needs, in compact columns (a 1 GB trace: about 300 MiB). A
    file over 48 MB is read in two halves, the second by a helper Python process (a new
    interpreter, not a fork: safe next to torch's threads); workers=1 keeps it to one process.
    The TensorBoard-compatible copies `syncscan profile` writes (syncscan.runtime.tbcompat:
    `runtime` for `cuda_runtime`/`cuda_driver`, `gpu_annotation`, External id 0 for calls
    outside any op) read the same as torch's own traces. Raises `syncscan.errors.UserError`
    with a one-line message for a missing file, a folder, a file that is not JSON, a truncated
    or corrupt gzip, and JSON that is not a Kineto trace (no `traceEvents`, or no profiler
    events in it).

analyze(trace, *, source_sites=None, step_ms=None, replay=True) -> Analysis
    The analysis, run once (syncscan.trace.pipeline): `.report` is what report.json says (its
    keys and their meaning: syncscan.schema, published as docs/report.schema.json), `.timeline`
    what the HTML report draws. `step_ms`: the step time measured without the profiler, when
    known; the replay's estimate is calibrated to it (else it answers at the trace's own speed).
    `replay=False` skips the estimate. `source_sites`: exact call sites recorded at run time by
    `syncscan profile` (syncscan.trace.syncs.match_source_sites says how they are matched).

analyze_path(path, *, source_sites=None) -> Analysis
    load_trace + analyze; a folder means its newest `*.pt.trace.json[.gz]`.

The text and HTML forms of a report are syncscan.present's.

What counts as a host sync and how its cost is measured: see syncscan.trace.syncs.
"""

from __future__ import annotations

from syncscan.trace.load import load_trace, resolve_traces
from syncscan.trace.model import Trace
from syncscan.trace.pipeline import Analysis, analyze


def analyze_path(path, *, source_sites=None) -> Analysis:
    """Load and analyse a trace file, or the newest trace in a run folder."""
    return analyze(load_trace(resolve_traces(str(path))[0]), source_sites=source_sites)


__all__ = ["Analysis", "Trace", "analyze", "analyze_path", "load_trace", "resolve_traces"]
