"""The typed report: every record `syncscan analyze` and `syncscan profile` write, in one place.

`report.json` (and `--format json`) is one of three shapes:
- `AnalyzeReport`: one trace's analysis (`syncscan analyze TRACE`);
- `AnalyzeReportList`: `{"reports": [...]}` (`syncscan analyze DIR --all`);
- `ProfileReport`: a profiled run (`syncscan profile`, `syncscan.profile()`): the run, its passes,
  and the analysis of the timing pass with the detailed pass's source lines (the same keys as
  `AnalyzeReport`, always present; empty when no pass was traced).

The JSON Schema in docs/report.schema.json is generated from these types (`python -m
syncscan.schema > docs/report.schema.json`; tests/test_schema.py fails when it is out of date,
and validates every report the tests produce). Records are closed (no keys beyond their
type) except lint findings, whose keys belong to the linter.

Stability: add keys, never rename or remove them; SCHEMA_VERSION changes only when a change
breaks readers (a renamed or removed key, a changed meaning).

A new analysis plugs in as one typed record: declare its TypedDict here, add one key for it to
`AnalysisFields` (per trace) or `ProfileFields` (per run), and render it in syncscan.present.

This module imports nothing from the rest of syncscan and no third-party package (jsonschema is
imported only to validate, in tests), so any layer can use its types.
"""

import json
import os
import sys
from typing import Annotated, Any, Dict, List, Literal, Optional, TypedDict, Union, get_args, get_origin, get_type_hints

SCHEMA_VERSION = 1
SCHEMA_ID = "https://github.com/syncscan/syncscan/blob/main/docs/report.schema.json"
# set (to anything) to validate each report against the schema as it is produced (the tests do)
CHECK_ENV = "SYNCSCAN_CHECK_REPORTS"

DeviceId = Union[int, str]
Ms = Annotated[float, "milliseconds"]
OptMs = Annotated[Optional[float], "milliseconds; null when not measured"]


# ------------------------------------------------------------------------------------------
# one trace's analysis


class Device(TypedDict):
    """The GPU with the most activity in the trace."""

    id: Optional[DeviceId]
    name: Optional[str]
    count: Annotated[int, "GPUs with activity in the trace"]


class StepRecord(TypedDict):
    """One analysis window: a ProfilerStep#N, or the whole trace."""

    name: str
    number: Optional[int]
    start_ms: Annotated[float, "from the first window's start"]
    duration_ms: Ms
    gpu_busy_ms: Annotated[Optional[float], "union of kernel intervals over all streams in the step"]
    gpu_utilization: Annotated[Optional[float], "gpu_busy / duration, 0..1"]
    syncs: int
    gpu_idle_from_syncs_ms: OptMs
    cpu_blocked_in_syncs_ms: Ms


class StepRecordCpu(StepRecord):
    """A step of a trace without GPU activity: also the ops that would sync on a GPU."""

    would_sync: int


class EstimatedSaving(TypedDict):
    per_step_ms: OptMs
    share_of_step: float
    basis: str


class SourceLine(TypedDict):
    """One of several call lines the detailed pass found for one site."""

    file: Optional[str]
    line: Optional[int]
    function: Optional[str]
    per_step: float


class CallFrame(TypedDict):
    """One frame of the Python call chain of a sync, recorded at run time."""

    file: str
    line: int
    function: str
    library: Annotated[bool, "in an installed library (site-packages) or torch, not the user's own code"]


class SiteFields(TypedDict):
    """What a sync site (measured, or an op that would sync) is: its ops, scope and source."""

    op: Annotated[Optional[str], "innermost op that issued the sync"]
    outer_op: Annotated[Optional[str], "outermost op the user's code called; the backward node in backward"]
    forward_op: Annotated[Optional[str], "backward only: the forward op behind the node"]
    phase: Literal["forward", "backward"]
    scope: Annotated[Optional[str], "record_function scope (a backward sync takes its forward op's)"]
    file: Optional[str]
    line: Optional[int]
    function: Optional[str]
    line_kind: Annotated[Optional[Literal["def", "call"]],
                         "def: the function's definition line (all a trace records); call: the exact call line"]
    stack: Annotated[List[str], "user frames from the trace, outermost first ('file:line in function')"]
    rule: Optional[str]
    rule_name: Optional[str]
    rewrite: Optional[str]
    count: int
    per_step: Annotated[List[int], "counts, one per entry of steps"]


class SiteAttribution(TypedDict, total=False):
    """Keys a profile adds to a site: where its source line comes from."""

    attributed_by: Literal["detail"]
    sources: List[SourceLine]
    only_in: Literal["detail"]
    frames: Annotated[List[CallFrame], "call chain recorded at run time, outermost first: the user's line, "
                                       "the wrapper libraries' lines, the line that synced"]


class SyncSite(SiteFields, SiteAttribution):
    """One distinct place that made the host wait, with what it cost."""

    calls: Annotated[str, "the CUDA calls, e.g. 'cudaMemcpyAsync + cudaStreamSynchronize'"]
    copy: Annotated[Optional[str], "e.g. 'DtoH (Device -> Pinned)'"]
    cpu_blocked_ms: Ms
    gpu_idle_ms: OptMs
    gpu_busy_during_sync_ms: OptMs
    outer_op_host_ms: OptMs
    outer_op_gpu_ms: OptMs
    saving_syncs_ms: Annotated[Optional[float], "replay: step time saved per step without this site's syncs"]
    saving_rewrite_ms: Annotated[Optional[float], "replay: step time saved per step with its rule's rewrite"]


class WouldSyncSite(SiteFields, SiteAttribution):
    """An op in a trace without GPU activity that would make the host wait on a GPU."""


class Replay(TypedDict):
    """What removing the syncs would save, from replaying the steps (syncscan.trace.replay)."""

    method: Literal["replay"]
    trace_ms_per_step: Ms
    replay_ms_per_step: Ms
    fit_error: Optional[float]
    target_ms_per_step: OptMs
    host_scale: float
    calibrated: bool
    step_ms: Ms
    without_syncs_ms: Ms
    with_rewrites_ms: Ms
    saving_syncs_ms: Ms
    saving_rewrites_ms: Ms
    launch_latency_us: float
    op_host_us: float
    node_host_us: float
    items: int
    steps_replayed: int
    notes: List[str]


class ReplaySkipped(TypedDict):
    method: Literal["replay"]
    skipped: str


class StreamRecord(TypedDict):
    device: Optional[DeviceId]
    stream: int
    kernels: int
    busy_ms: Ms
    copies: int
    copy_ms: Ms
    memsets: int


class OverlapRecord(TypedDict):
    device: Optional[DeviceId]
    streams: List[int]
    overlap_ms: Ms
    share_of_less_busy: float


class CopyGroup(TypedDict):
    """All copies of one direction and host memory kind."""

    direction: str
    memory: str
    name: str
    count: int
    bytes: int
    time_ms: Ms
    hidden_ms: Ms
    hidden_share: float
    host_syncs: int
    ops: Dict[str, int]


class FixEdit(TypedDict):
    line: int
    column: int
    end_line: int
    end_column: int
    content: str


class LintFix(TypedDict):
    applicability: str
    message: str
    assumption: str
    imports: List[str]
    edits: List[FixEdit]


class LintFinding(TypedDict):
    """A lint finding as `syncscan lint --format json` writes it (open: the linter may add keys)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    context: str
    suggestion: str
    fix: Optional[LintFix]


class SiteCost(TypedDict):
    """A runtime site's cost per profiled step, as the join shows it next to a finding."""

    measured: bool
    gpu_idle_ms_per_step: OptMs
    cpu_blocked_ms_per_step: OptMs
    syncs_per_step: float
    saving_syncs_ms_per_step: OptMs
    saving_rewrite_ms_per_step: OptMs
    op: Optional[str]
    outer_op: Optional[str]


class JoinSite(TypedDict):
    file: Optional[str]
    line: Optional[int]
    line_kind: Optional[str]
    function: Optional[str]
    op: Optional[str]
    outer_op: Optional[str]
    phase: Optional[str]
    rule: Optional[str]
    cost: SiteCost


class JoinConfirmed(JoinSite):
    match: Literal["statement", "function", "forward"]
    lint_codes: List[str]
    rewrite: Optional[str]
    findings: List[LintFinding]


class JoinReport(TypedDict):
    """Static and runtime together (syncscan.join): which findings synced, which syncs lint missed."""

    measured: bool
    confirmed: List[JoinConfirmed]
    missed_by_lint: List[JoinSite]
    not_observed: List[LintFinding]
    unattributed: int
    stale: List[JoinSite]
    linted: List[str]
    lint_errors: List[str]


class AnalysisFields(TypedDict):
    """Everything one trace's analysis reports (syncscan.trace.pipeline)."""

    schema_version: int
    trace: Optional[str]
    device: Optional[Device]
    gpu_activity: bool
    with_stack: bool
    cuda_sync_events: bool
    windows: Annotated[Optional[Literal["ProfilerStep", "whole trace"]], "null: nothing was analysed"]
    steps: List[Union[StepRecordCpu, StepRecord]]
    gpu_utilization: Optional[float]
    gpu_bound: bool
    gpu_bound_threshold: float
    total_syncs: int
    total_gpu_idle_from_syncs_ms: OptMs
    total_cpu_blocked_ms: Ms
    estimated_saving: Optional[EstimatedSaving]
    syncs: Annotated[List[SyncSite], "ranked by GPU idle caused"]
    replay: Optional[Union[Replay, ReplaySkipped]]
    would_sync: List[WouldSyncSite]
    streams: List[StreamRecord]
    overlap: List[OverlapRecord]
    memcpy: List[CopyGroup]
    ignored_syncs: int
    unmatched_source_sites: int
    notes: List[str]


class AnalyzeReport(AnalysisFields, total=False):
    """`syncscan analyze TRACE --format json`."""

    join: Optional[JoinReport]


class AnalyzeReportList(TypedDict):
    """`syncscan analyze DIR --all --format json`."""

    reports: List[AnalyzeReport]


# ------------------------------------------------------------------------------------------
# a profiled run


class Environment(TypedDict):
    python: str
    torch: str
    cuda_available: bool
    host: str
    pid: int


class EnvironmentGpu(Environment):
    device: str


class PassSpan(TypedDict):
    warmup_start: int
    first: int
    last: int


class Schedule(TypedDict):
    wait: int
    warmup: int
    steps: int
    passes: List[str]
    total_steps: int
    windows: Dict[str, PassSpan]
    step_boundary: str
    boundaries_seen: Dict[str, int]


class Outcome(TypedDict):
    status: Literal["finished", "stopped", "exit", "os_exit", "exception", "interrupted"]
    exit_code: int
    steps: int
    complete: bool
    message: str


class PassRecord(TypedDict):
    state: Literal["not reached", "warm-up only", "partial", "complete"]
    steps: int
    ms_per_step: OptMs
    host_ms_per_step: OptMs
    clock: Literal["host", "cuda_events"]
    step_ms: List[float]
    first: int
    last: int
    trace: Annotated[Optional[str], "the raw trace, as torch wrote it"]
    tensorboard_trace: Annotated[Optional[str], "the copy TensorBoard reads"]


class PassRecordFailed(PassRecord):
    analysis_error: str


class Perturbation(TypedDict):
    """Step time of each pass and its ratio to the bare pass (what the profiler costs)."""

    clock: Optional[str]
    light_pass: Annotated[Literal["cuda", "lean", "full"],
                          "the light pass's recipe (--light-pass; lean where the torch is too old for cuda)"]
    light_activities: Annotated[List[Literal["CPU", "CUDA"]], "what the light pass's profiler recorded"]
    bare_ms_per_step: OptMs
    light_ms_per_step: OptMs
    light_vs_bare: Optional[float]
    detail_ms_per_step: OptMs
    detail_vs_bare: Optional[float]


class LightOps(TypedDict):
    """The light trace's ops and scopes, when it recorded CUDA activity only: the detailed pass's,
    copied through the runtime calls of each step (syncscan.trace.graft)."""

    source: Annotated[Literal["detail"], "the pass the ops come from"]
    steps: Annotated[int, "light steps given ops"]
    exact_steps: Annotated[int, "of them, paired with a detailed step that made the same CUDA calls"]
    calls: Annotated[int, "CUDA runtime calls in the light steps"]
    anchored_calls: Annotated[int, "of them, paired with a call of the detailed step"]
    ops: int
    scopes: int


class SourceSite(TypedDict, total=False):
    """One sync seen by the detailed pass's run-time hooks (the sync debug mode, or the op
    recorder on a CPU run): its exact call line."""

    op: Optional[str]
    file: Optional[str]
    line: Optional[int]
    function: Optional[str]
    code: Optional[str]
    step: Optional[int]
    order: int
    time_ns: int
    thread: str
    frames: List[CallFrame]
    exact_op: Annotated[bool, "the op is the dispatcher's name for it (CPU runs), not read off Python"]


class SyncSummary(TypedDict):
    measured: bool
    sites: int
    per_step: float
    gpu_idle_ms_per_step: OptMs
    any: bool


class PerSiteSaving(TypedDict):
    rule: Optional[str]
    op: Optional[str]
    file: Optional[str]
    line: Optional[int]
    saving_syncs_ms: OptMs
    saving_rewrite_ms: OptMs


class Prediction(TypedDict):
    """What removing the syncs should save per step, at the bare pass's speed."""

    regime: Literal["GPU-bound", "host-bound"]
    gpu_idle_from_syncs_ms_per_step: float
    cpu_blocked_in_syncs_ms_per_step: float
    host_ms_in_syncing_ops_per_step: OptMs
    gpu_ms_in_syncing_ops_per_step: OptMs
    host_speed_bare_over_light: Optional[float]
    method: Literal["replay", "gpu idle"]
    saving_ms_per_step: float
    saving_syncs_ms_per_step: float
    saving_ms_per_step_range: List[float]
    basis: str


class PredictionReplay(Prediction):
    speedup: Optional[float]
    speedup_syncs: Optional[float]
    step_ms: OptMs
    host_scale: Optional[float]
    calibrated: Optional[bool]
    per_site: List[PerSiteSaving]


class Comparison(TypedDict):
    """`--compare FIXED.py`: the measured saving beside the predicted one."""

    rewritten: str
    original_ms_per_step: float
    rewritten_ms_per_step: float
    measured_saving_ms_per_step: float
    runs: int
    spread_ms: float
    resolved: bool
    original_runs_ms: List[float]
    rewritten_runs_ms: List[float]
    predicted_saving_ms_per_step: Optional[float]
    prediction_error: Optional[float]


class TensorBoardInfo(TypedDict):
    logdir: str
    compatible_copy: bool
    command: str
    syncscan_tb: str


class ProfileFields(TypedDict):
    """What a profiled run reports besides the analysis (syncscan.runtime.report)."""

    syncscan: Annotated[str, "syncscan's version"]
    command: List[str]
    script: Optional[str]
    argv: List[str]
    started: str
    environment: Union[EnvironmentGpu, Environment]
    schedule: Schedule
    outcome: Outcome
    passes: Dict[str, Union[PassRecordFailed, PassRecord]]
    perturbation: Perturbation
    timing_from: Annotated[Optional[Literal["light", "detail"]], "the pass the timings come from; null: none traced"]
    attribution_from: Optional[Literal["light", "detail"]]
    source_sites: List[SourceSite]
    light_ops: Annotated[Optional[LightOps], "null: the light pass recorded its own ops, or no detailed pass ran"]
    sync_summary: SyncSummary
    prediction: Optional[Union[PredictionReplay, Prediction]]
    fail_on_sync: bool
    run_dir: str
    report_json: str
    tensorboard: TensorBoardInfo
    join: Annotated[Optional[JoinReport], "null: --no-lint, nothing traced, or no readable source file"]
    comparison: Optional[Comparison]
    html: Annotated[Optional[str], "the HTML report written, if any"]


class ProfileReport(ProfileFields, AnalysisFields):
    """`syncscan profile` (report.json, --format json) and `syncscan.profile().report`."""


# ------------------------------------------------------------------------------------------
# what the HTML report draws (kept beside the report, not in report.json)


class StreamBars(TypedDict):
    kernels: List[List[float]]
    copies: List[List[float]]


class TimelineSync(TypedDict):
    start: Annotated[float, "ms from the step's start"]
    end: float
    idle: Optional[List[float]]
    gpu_idle_ms: float
    op: Optional[str]
    site: Annotated[Optional[int], "index of its site in the report's syncs"]


class TimelineStep(TypedDict):
    name: str
    duration_ms: Ms
    streams: Dict[str, StreamBars]
    syncs: List[TimelineSync]


# ------------------------------------------------------------------------------------------
# the JSON Schema, generated from the types above

REPORTS = (ProfileReport, AnalyzeReport, AnalyzeReportList)
# records whose keys belong to another part of syncscan: more keys may appear
OPEN_RECORDS = (LintFinding,)


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__")


def _schema_of(tp: Any, defs: Dict[str, Any]) -> Dict[str, Any]:
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        out = dict(_schema_of(args[0], defs))
        text = [a for a in args[1:] if isinstance(a, str)]
        if text:
            out["description"] = "; ".join(text)
        return out
    if tp is Any:
        return {}
    if tp is type(None):
        return {"type": "null"}
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if tp in simple:
        return {"type": simple[tp]}
    if origin is Union:
        parts = [_schema_of(a, defs) for a in args]
        if all(set(p) == {"type"} and isinstance(p["type"], str) for p in parts):
            return {"type": [p["type"] for p in parts]}
        return {"anyOf": parts}
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (list, List):
        return {"type": "array", "items": _schema_of(args[0], defs)}
    if origin in (dict, Dict):
        return {"type": "object", "additionalProperties": _schema_of(args[1], defs)}
    if _is_typeddict(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # placeholder: recursion stops here
            hints = get_type_hints(tp, include_extras=True)
            props = {k: _schema_of(v, defs) for k, v in hints.items()}
            rec: Dict[str, Any] = {"type": "object"}
            if tp.__doc__:
                rec["description"] = " ".join(tp.__doc__.split())
            rec["properties"] = props
            rec["required"] = sorted(tp.__required_keys__)
            rec["additionalProperties"] = tp in OPEN_RECORDS
            defs[name] = rec
        return {"$ref": f"#/$defs/{name}"}
    raise TypeError(f"no JSON Schema for {tp!r}")


def json_schema() -> Dict[str, Any]:
    """The JSON Schema of report.json (all three shapes), from the types of this module."""
    defs: Dict[str, Any] = {}
    roots = [_schema_of(r, defs) for r in REPORTS]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "syncscan report",
        "description": " ".join((__doc__ or "").split("\n\n")[1].split()),
        "oneOf": roots,
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2) + "\n"


def read_report(path: str) -> Dict[str, Any]:
    """A report.json (profile or analyze) read back, e.g. for `syncscan lint --costs`; a
    one-line UserError for a file that is not one."""
    from syncscan.errors import UserError

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a folder, not a syncscan JSON report") from None
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: not a syncscan JSON report ({type(e).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("syncs"), list):
        raise UserError(f"{path}: not a syncscan profile/analyze JSON report (no 'syncs' list)")
    return data


def check(report: Any) -> None:
    """Validate a report against the schema when CHECK_ENV is set (tests set it). Raises
    AssertionError naming the first key that does not fit."""
    if not os.environ.get(CHECK_ENV):
        return
    import jsonschema

    data = json.loads(json.dumps(report))  # what a reader of the file sees
    validator = _validator(jsonschema)
    errors = sorted(validator.iter_errors(data), key=lambda e: len(list(e.absolute_path)))
    if errors:
        # oneOf reports the root; the closest sub-error names the key
        best = jsonschema.exceptions.best_match(errors)
        where = "/".join(str(p) for p in best.absolute_path) or "(root)"
        raise AssertionError(f"report does not fit docs/report.schema.json at {where}: {best.message[:300]}")


_VALIDATOR = None


def _validator(jsonschema):
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = jsonschema.Draft202012Validator(json_schema())
    return _VALIDATOR


if __name__ == "__main__":
    sys.stdout.write(schema_text())
