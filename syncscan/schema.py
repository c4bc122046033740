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


class LoaderTrace(TypedDict):
    """Batches the steps took from DataLoaders, as the trace shows them (torch's
    `enumerate(DataLoader)#...__next__` scope around each `next(iterator)`)."""

    fetches: Annotated[int, "batches taken in the steps"]
    kind: Literal["multiprocess", "single process", "mixed"]
    step_ms: Annotated[float, "mean step duration in the trace"]
    fetch_ms_per_step: Annotated[float, "host time in __next__ per step (receiving and waiting)"]
    receive_ms: Annotated[Optional[float], "the fastest worker-fed fetch: taking a batch that was ready"]
    wait_ms_per_step: Annotated[Optional[float], "worker-fed fetch time beyond receive_ms, per step: waiting for data"]
    fetch_ms: Annotated[List[float], "host time in __next__, one per entry of steps"]


class HostToDevice(TypedDict):
    """Host-to-device copies in the steps, and whether they overlap the GPU's compute."""

    copies_per_step: float
    mb_per_step: float
    ms_per_step: Annotated[float, "GPU time of the copies"]
    pinned_share: Annotated[float, "share of the bytes copied from pinned memory"]
    blocking_per_step: Annotated[float, "copies the host waited for (pageable, or without non_blocking)"]
    hidden_share: Annotated[float, "share of the copy time during which kernels ran"]
    streams: List[int]
    own_stream: Annotated[bool, "copied on a stream other than the one with the most kernel time"]


class DataLoading(TypedDict):
    """The input pipeline as the trace shows it (syncscan.trace.loader)."""

    loader: Optional[LoaderTrace]
    h2d: Optional[HostToDevice]


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
    loader_source: Annotated[Optional[Literal["trace", "bare pass"]],
                             "where the input pipeline's figures come from; null: not modelled"]
    loader_wait_ms: Annotated[Optional[float], "waiting for data per step, held at each fetch (not scaled)"]
    compute_ms: Annotated[Optional[float], "replayed step time with data at hand: what host and GPU need"]
    loader_period_ms: Annotated[Optional[float], "the loader delivers one batch per this, at best; null: unknown"]
    input_bound: Annotated[bool, "the loader sets the pace: savings are bounded by loader_period_ms"]
    unbounded_saving_syncs_ms: Annotated[Optional[float], "saving_syncs_ms if data were at hand"]
    unbounded_saving_rewrites_ms: Annotated[Optional[float], "saving_rewrites_ms if data were at hand"]
    saving_pin_memory_ms: Annotated[Optional[float],
                                    "pageable batch copies made pinned and asynchronous (SYN204/SYN205); null: none"]
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


class FixPath(TypedDict):
    """What a fix leaves on its step path (syncscan.lint.steppath): it removes `removes` of the `of`
    syncs there; `left` are the others as [line, code]."""

    removes: int
    of: int
    left: List[List[Union[int, str]]]
    note: str


class _LintFixRequired(TypedDict):
    applicability: str
    message: str
    assumption: str
    imports: List[str]
    edits: List[FixEdit]


class LintFix(_LintFixRequired, total=False):
    group: Annotated[str, "fixes of one file with the same group are applied together or not at all"]
    covers: Annotated[List[List[int]], "[line, column] of other findings whose syncs this fix removes too"]
    path: FixPath


class LintCompile(TypedDict):
    """What torch.compile makes of a lint finding in compiled code (syncscan.lint.compiled)."""

    effect: Literal["graph-break", "dynamic-shape", "cudagraph-skip", "traced", "unverified"]
    graph_break: Annotated[bool, "whether it breaks the graph with torch's default config"]
    why: str
    cudagraphs: Annotated[Optional[str], "why mode='reduce-overhead' gets no CUDA graph for the graph holding it"]
    options: Annotated[List[str], "compile-specific options next to the sync-free rewrite"]
    compiled_by: Annotated[str, "the torch.compile (or decorator) reaching it: file:line and its text"]


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
    compile: Annotated[Optional[LintCompile], "null outside code torch.compile traces"]


class SiteCostWait(TypedDict, total=False):
    host_wait_ms_per_step: Annotated[float, "a blocking torch.distributed call (several ranks): milliseconds "
                                            "it held the host per step, mean over the ranks"]


class SiteCost(SiteCostWait):
    """A runtime site's cost per profiled step, as the join shows it next to a finding."""

    measured: bool
    gpu_idle_ms_per_step: OptMs
    cpu_blocked_ms_per_step: OptMs
    syncs_per_step: float
    saving_syncs_ms_per_step: OptMs
    saving_rewrite_ms_per_step: OptMs
    op: Optional[str]
    outer_op: Optional[str]


class JoinSiteRanks(TypedDict, total=False):
    ranks: Annotated[List[int], "a report of several ranks: the ranks the site ran on"]


class JoinSite(JoinSiteRanks):
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
    data_loading: Annotated[Optional[DataLoading], "null: no DataLoader batch and no copy to the GPU in the steps"]
    ignored_syncs: int
    unmatched_source_sites: int
    notes: List[str]


# ------------------------------------------------------------------------------------------
# several ranks of one distributed run (syncscan.trace.cross_rank)


class RankStep(TypedDict):
    number: Optional[int]
    duration_ms: Ms
    gpu_busy_ms: OptMs
    gpu_idle_ms: Annotated[Optional[float], "milliseconds the GPU had no work in the step (duration less busy)"]
    syncs: int
    would_sync: Annotated[Optional[int], "without GPU activity: ops that would sync on a GPU"]
    collective_ms: Annotated[float, "milliseconds in collectives (waiting for the other ranks included)"]


class BlockingCallRecord(TypedDict):
    """Calls of a torch.distributed function that holds the host (barrier, object collectives:
    SYN504) from one user function, timed from the Python stack (the detailed pass)."""

    api: str
    rule: str
    file: Optional[str]
    line: Annotated[Optional[int], "the def line of the user's function around the call"]
    function: Optional[str]
    count: int
    host_ms: Annotated[float, "milliseconds the calls held the host, waiting for the other ranks included"]
    per_step: List[int]


class RankRecord(TypedDict):
    """One rank of a distributed run: its steps, syncs and GPU idle."""

    rank: int
    host: Optional[str]
    pid: Optional[int]
    trace: Annotated[Optional[str], "the trace analysed for this rank"]
    report: Annotated[Optional[str], "this rank's own report.json (syncscan profile)"]
    status: Annotated[Optional[str], "how the rank's script ended (syncscan profile)"]
    exit_code: Optional[int]
    bare_ms_per_step: Annotated[Optional[float], "milliseconds per step without the profiler (syncscan profile)"]
    ms_per_step: OptMs
    steps: List[RankStep]
    gpu_activity: bool
    gpu_utilization: Optional[float]
    gpu_idle_ms_per_step: OptMs
    gpu_idle_from_syncs_ms_per_step: OptMs
    total_syncs: int
    syncs: List[SyncSite]
    would_sync: List[WouldSyncSite]
    blocking_calls: List[BlockingCallRecord]


class CrossRankStep(TypedDict):
    """One step across the ranks; lists are in the order of `cross_rank.ranks`."""

    number: Optional[int]
    duration_ms: List[Optional[float]]
    collective_wait_ms: Annotated[List[Optional[float]], "time each rank waited in collectives for the others"]
    busy_ms: Annotated[List[Optional[float]], "step time less the collective waits"]
    skew_ms: Annotated[Optional[float], "busiest rank's busy time less the least busy rank's"]
    straggler: Annotated[Optional[int], "the busiest rank, when the skew is at least 5% of the step"]


class Straggler(TypedDict):
    rank: int
    steps: Annotated[int, "steps in which it was the straggler"]
    of_steps: int
    busy_ms_per_step: Ms
    others_busy_ms_per_step: Annotated[float, "milliseconds; median of the other ranks"]
    others_wait_ms_per_step: Annotated[float, "milliseconds the other ranks wait in collectives per step (mean)"]


class RankOnlySync(TypedDict):
    """A sync site that runs on some ranks only (a rank-0 `.item()` for logging), and what it
    costs the other ranks at the collective its rank reaches next."""

    op: Optional[str]
    outer_op: Optional[str]
    forward_op: Optional[str]
    phase: Optional[str]
    scope: Optional[str]
    file: Optional[str]
    line: Optional[int]
    function: Optional[str]
    line_kind: Optional[str]
    rule: Optional[str]
    rule_name: Optional[str]
    rewrite: Optional[str]
    measured: Annotated[bool, "false: an op that would sync on a GPU (a run without one)"]
    ranks: Annotated[List[int], "the ranks it runs on"]
    not_on: List[int]
    per_step: Annotated[float, "syncs per step on each rank it runs on"]
    next_collective: Annotated[Optional[str], "the collective its rank starts next"]
    others_wait_ms_per_step: Annotated[Optional[float], "milliseconds the other ranks wait at that collective"]
    own_gpu_idle_ms_per_step: Annotated[Optional[float], "milliseconds of GPU idle the sync causes on its own rank"]
    cost_to_others_ms_per_step: Annotated[Optional[float], "the others' wait, at most the delay the sync caused"]
    job_saving_ms_per_step: Annotated[Optional[float], "what removing it saves the job per step: its own GPU idle, "
                                      "at most the slack the other ranks wait for (the busiest rank sets the pace)"]


class CrossRank(TypedDict):
    """Across the ranks: collective waits, skew, the straggler, syncs on some ranks only."""

    ranks: List[int]
    world_size: Optional[int]
    missing_ranks: List[int]
    collectives_on: Annotated[Optional[Literal["gpu", "host"]], "gpu: NCCL kernels; host: gloo's host threads"]
    method: str
    collectives_matched: int
    collectives_unmatched: int
    steps: List[CrossRankStep]
    wait_ms_per_step: Annotated[List[Optional[float]], "mean collective wait per step, per rank"]
    skew_ms_per_step: OptMs
    straggler: Optional[Straggler]
    rank_only_syncs: List[RankOnlySync]
    notes: List[str]


class DistributedRun(TypedDict):
    """How the ranks were launched and where their own reports are."""

    world_size: Optional[int]
    backend: Optional[str]
    launcher: Annotated[Optional[List[str]], "the torchrun command line the ranks ran under"]
    primary_rank: Annotated[int, "the rank whose analysis the report's top-level keys are"]
    rank_reports: List[str]


class MultiRank(TypedDict, total=False):
    """Keys of a report of several ranks (syncscan profile --nproc-per-node, syncscan analyze DIR)."""

    distributed: DistributedRun
    ranks: List[RankRecord]
    cross_rank: CrossRank


class AnalyzeReport(AnalysisFields, MultiRank, total=False):
    """`syncscan analyze TRACE --format json`; for a folder of several ranks' traces, rank 0's
    analysis with `ranks` and `cross_rank`."""

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
    drain_steps: Annotated[int, "steps the bare pass was lengthened by, until the DataLoader's prefetched "
                                "batches were used up"]
    drain_limit: Annotated[int, "the most it could be lengthened by (--drain-steps)"]


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

    regime: Literal["GPU-bound", "host-bound", "input-bound"]
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


class LoaderSettings(TypedDict):
    """A DataLoader iterator the script took batches from, as torch set it up."""

    kind: Literal["multiprocess", "single process"]
    workers: int
    prefetch_factor: Optional[int]
    pin_memory: bool
    persistent_workers: bool
    batch_size: Optional[int]
    batches_per_epoch: Optional[int]
    dataset: str
    transform: Annotated[Optional[str], "the dataset's `transform`, when it has one"]
    batches_taken: Annotated[int, "in the whole run"]
    first_batch_ms: Annotated[Optional[float],
                              "from the first `next()` to its batch: the workers' start-up; null: not seen"]


class WorkerTiming(TypedDict):
    """What making one batch costs, timed where it is made (DataLoader workers, or the main process)."""

    where: Literal["workers", "main process"]
    batches: Annotated[int, "batches timed (made during the bare pass's measured steps, else the whole run)"]
    batch_ms: Annotated[float, "one batch, one worker (mean)"]
    transform_ms: Annotated[Optional[float], "of batch_ms, in the dataset's transforms; null: no transform attribute"]
    collate_ms: Annotated[float, "of batch_ms, in collate_fn"]
    busy_share: Annotated[Optional[float], "share of the workers' time spent making batches during the bare pass"]
    capacity_ms: Annotated[float, "the loader can deliver one batch per this: batch_ms over the workers, or "
                                  "the pin-memory thread's time"]
    pin_ms: Annotated[Optional[float], "the pin-memory thread's copy of one batch (mean); null: not pinned"]
    cpus: Annotated[int, "CPU cores the process may run on"]


class SteadyState(TypedDict):
    """Whether the bare pass measured the loader's steady state, not the batches it prefetched."""

    status: Literal["steady", "drained", "not reached", "not checked"]
    drain_steps: int
    limit: int
    reason: str


class Pace(TypedDict):
    """Which resource sets the step's pace, with the numbers behind it (bare pass, host clock)."""

    resource: Literal["input pipeline", "GPU", "host"]
    step_ms: Annotated[float, "bare pass"]
    wait_ms: Annotated[float, "waiting for the next batch, per step"]
    load_ms: Annotated[float, "loading in the main process (num_workers=0), per step"]
    compute_ms: Annotated[Optional[float], "what host and GPU need per step with data at hand"]
    gpu_ms: Annotated[Optional[float], "GPU busy per step (light trace)"]
    loader_period_ms: Annotated[Optional[float], "the loader delivers one batch per this: the step when it sets "
                                                 "the pace, else its capacity"]
    saving_bound_ms: Annotated[Optional[float], "the most a host or GPU saving can take off the step before the "
                                                "loader sets the pace"]


class Remedy(TypedDict):
    """A change to the input pipeline, with the step time it should give."""

    remedy: Literal["num_workers", "pin_memory", "persistent_workers", "prefetch_factor", "gpu_augmentation"]
    change: str
    step_ms: Annotated[Optional[float], "predicted bare step time; null: no figure"]
    saving_ms: Annotated[Optional[float], "per step"]
    basis: str


class InputPipeline(TypedDict):
    """The input pipeline in the profiled run (syncscan.runtime.input_pipeline)."""

    loaders: List[LoaderSettings]
    main: Annotated[Optional[int], "index in loaders of the one the steps take from; null: none"]
    fetches_per_step: float
    fetch_ms_per_step: Annotated[float, "host time in next(loader) per step, bare pass"]
    wait_ms_per_step: Annotated[float, "of which waiting for a batch that was not ready"]
    receive_ms: Optional[float]
    wait_ms: Annotated[List[float], "waiting per measured bare step"]
    workers: Optional[WorkerTiming]
    steady_state: SteadyState
    pace: Optional[Pace]
    remedies: List[Remedy]
    notes: List[str]


class TensorBoardInfo(TypedDict):
    logdir: str
    compatible_copy: bool
    command: str
    syncscan_tb: str


class CompileLintHit(TypedDict):
    """A lint finding on the line of a graph break or CUDA-graph skip."""

    path: str
    line: int
    code: str
    name: str
    suggestion: str
    compile: Optional[LintCompile]


class GraphBreak(TypedDict):
    """A graph break torch.compile reported (syncscan.trace.graph_breaks), at the user's line."""

    file: str
    line: int
    function: str
    reason: Annotated[str, "torch's break type and explanation"]
    count: Annotated[int, "times torch reported it: per frame traced through it, per recompilation"]
    frames: Optional[int]
    rule: Annotated[Optional[str], "the rule its reason names"]
    library_frame: Annotated[Optional[str], "file:line in library code where it happened, when not the user's"]
    lint: Annotated[Optional[List[CompileLintHit]], "the findings on that statement; null: not linted"]


class Recompilation(TypedDict):
    """A frame compiled again because a guard failed, at the first line of the recompiled code."""

    file: Optional[str]
    line: Optional[int]
    function: Optional[str]
    reason: Annotated[str, "the guard that failed (the first occurrence)"]
    count: int
    resumed_after_break: Annotated[bool, "the code after a graph break"]
    explanation: Optional[str]


class CudagraphSkip(TypedDict):
    """A graph mode='reduce-overhead' ran without CUDA graphs, and why."""

    reason: str
    file: Optional[str]
    line: Optional[int]
    function: Optional[str]
    count: int
    lint: Optional[List[CompileLintHit]]


class CompileFields(TypedDict):
    """What torch.compile did while the script ran (all empty when it did not compile)."""

    compilations: Annotated[int, "frames torch.compile compiled, recompilations included"]
    compiled_in_measured_steps: Annotated[List[int], "measured steps during which it compiled"]
    graph_breaks: List[GraphBreak]
    recompilations: List[Recompilation]
    cudagraph_skips: List[CudagraphSkip]


class ProfileFields(CompileFields):
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
    input_pipeline: Annotated[Optional[InputPipeline], "null: the steps took no batch from a DataLoader"]
    comparison: Optional[Comparison]
    html: Annotated[Optional[str], "the HTML report written, if any"]


class ProfileReport(ProfileFields, AnalysisFields, MultiRank):
    """`syncscan profile` (report.json, --format json) and `syncscan.profile().report`; with
    several ranks, rank 0's with `ranks` and `cross_rank`."""


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
