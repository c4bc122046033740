"""`syncscan profile [options] script.py [args...]` / `syncscan profile [options] -m module [args...]`.

Runs the script once, in this process, and measures it in consecutive step ranges (see
syncscan/runtime/schedule.py): bare step time, a light profiler pass, a detailed pass. Then it
analyses the traces, writes the run folder (TensorBoard traces + report.json) and reports.
The script's own arguments pass through untouched: everything after the script (or -m NAME)
belongs to it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from syncscan.commands._output import check_output_path, report_json, write_html
from syncscan.errors import UserError
from syncscan.present.profile_text import render_profile
from syncscan.runtime.distributed import LAUNCH_OPTIONS

# --fail-on-sync: distinct from the small statuses scripts and tools use (1, 2, 3; python's 2 for
# usage, pytest's 1-5), and said on stderr; a script's own non-zero status wins
EXIT_SYNC_FOUND = 8


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "syncscan profile [options] (script.py | -m module) [script args...]"
    parser.epilog = ("Schedule: after --wait steps, each pass (bare: no profiler; light: profiler "
                     "recording CUDA activity only (--light-pass); detail: stacks and the sync-debug hook) "
                     "gets --warmup steps, then --steps measured steps. "
                     "Exit status: the script's own (1 when it raises, 130 when interrupted); "
                     f"{EXIT_SYNC_FOUND} with --fail-on-sync (or fail-on-sync = true in [tool.syncscan]) when a "
                     "profiled step made the host wait; "
                     "2 for a usage error.")
    parser.add_argument("-m", dest="module", metavar="MODULE", nargs=argparse.REMAINDER,
                        help="-m MODULE [args...]: run a module as `python -m MODULE` would; what "
                             "follows is its own arguments")
    parser.add_argument("script", nargs=argparse.REMAINDER,
                        help="the training script, then its own arguments")
    g = parser.add_argument_group("schedule (steps are counted at each optimizer.step())")
    g.add_argument("--wait", type=int, default=1, help="steps to let pass first (default 1)")
    g.add_argument("--warmup", type=int, default=2, help="warm-up steps before each pass (default 2)")
    g.add_argument("--steps", type=int, default=8, help="measured steps per pass (default 8)")
    g.add_argument("--passes", default="bare,light,detail",
                   help="which passes to run, of bare,light,detail (default: all three)")
    g.add_argument("--quick", action="store_true", help="the detailed pass only (--passes detail)")
    g.add_argument("--light-pass", choices=("cuda", "lean", "full"), default="cuda",
                   help="what the light pass records on a GPU: cuda (default) CUDA activity only, no CPU "
                        "ops (the least perturbation; its ops come from the detailed pass); lean CPU ops "
                        "too, without the ids that link each kernel to its op; full torch's defaults "
                        "(TensorBoard links kernels to ops in the light trace)")
    g.add_argument("--step-on", metavar="FUNC",
                   help="end a step after each call of FUNC (module.func or Class.method) "
                        "instead of at each optimizer.step()")
    g.add_argument("--drain-steps", type=int, default=None, metavar="N",
                   help="lengthen the bare pass by up to N steps while the DataLoader's workers still hand out "
                        "batches they prefetched, so that it times the steady state (default 64; 0: never)")
    g.add_argument("--run-to-end", action="store_true",
                   help="let the script finish instead of stopping it after the last pass")
    o = parser.add_argument_group("output")
    o.add_argument("--format", choices=("text", "json"), default="text",
                   help="report format on standard output (json: the script's own output goes to "
                        "standard error)")
    o.add_argument("--output", metavar="FILE", help="also write the JSON report to FILE")
    o.add_argument("--logdir", metavar="DIR",
                   help="run folder for traces and report.json (default ./syncscan-runs/<script>-<time>/)")
    o.add_argument("--no-tensorboard-copy", action="store_true",
                   help="write torch's traces as they are, without the copy TensorBoard's plugin needs")
    o.add_argument("--html", metavar="FILE",
                   help="also write a self-contained HTML report: timeline per step, ranked sites, streams")
    o.add_argument("--compare", metavar="SCRIPT",
                   help="also time SCRIPT (the rewritten script; it gets the same arguments) against the "
                        "profiled one, bare pass only, in alternating processes: the measured saving "
                        "beside the predicted one")
    o.add_argument("--compare-runs", type=int, default=3, metavar="N",
                   help="alternating runs of each script for --compare (default 3; medians)")
    o.add_argument("--no-lint", action="store_true",
                   help="do not lint the source files the syncs point to (no `join` in the report)")
    o.add_argument("--fail-on-sync", action=argparse.BooleanOptionalAction, default=None,
                   help=f"exit {EXIT_SYNC_FOUND} when a profiled step makes the host wait for the GPU (without a GPU: "
                        "when it runs an op that would); default: fail-on-sync in [tool.syncscan] of the "
                        "nearest pyproject.toml (from the script's folder, else the current one), else off")
    d = parser.add_argument_group(
        "several ranks (torchrun)", "Launch the script on several ranks through torch.distributed.run (torchrun) "
        "with the same schedule on every rank, or wrap a torchrun command: syncscan profile [options] -- "
        "torchrun [torchrun options] script.py [args]. One report: every rank's syncs and steps, the time each "
        "waits in collectives, the straggler, the syncs only some ranks run.")
    d.add_argument("--nproc-per-node", metavar="N", help="ranks on this node (torchrun's --nproc-per-node)")
    d.add_argument("--nnodes", metavar="N[:M]", help="nodes (torchrun's --nnodes); with --rdzv-endpoint")
    d.add_argument("--node-rank", metavar="R", help="this node's rank for --rdzv-backend static")
    d.add_argument("--rdzv-backend", metavar="NAME", help="torchrun's rendezvous backend (c10d, static)")
    d.add_argument("--rdzv-endpoint", metavar="HOST:PORT", help="torchrun's rendezvous endpoint")
    d.add_argument("--rdzv-id", metavar="ID", help="torchrun's job id (the same on every node)")
    d.add_argument("--master-addr", metavar="HOST", help="torchrun's --master-addr (static rendezvous)")
    d.add_argument("--master-port", metavar="PORT", help="torchrun's --master-port (static rendezvous)")
    parser.set_defaults(_accepts_extra=True, _forwarded=_forwardable(parser))


# options every rank gets from the launcher as they were given (the launch options stay with it)
_NOT_FORWARDED = {"module", "script", "logdir", "compare", "compare_runs", "help",
                  *(dest for dest, _ in LAUNCH_OPTIONS)}
_PATH_OPTIONS = {"output", "html"}


def _forwardable(parser: argparse.ArgumentParser) -> list:
    """(dest, option string, kind, default) of the options a rank must get as given."""
    out = []
    for a in parser._actions:
        if not a.option_strings or a.dest in _NOT_FORWARDED or a.dest.startswith("_"):
            continue
        if isinstance(a, argparse.BooleanOptionalAction):
            kind = "bool"
        elif a.nargs == 0:
            kind = "flag"
        else:
            kind = "value"
        out.append((a.dest, a.option_strings[0], kind, a.default))
    return out


def forward_options(args) -> list[str]:
    """The options of this `syncscan profile` that differ from their defaults, as arguments for
    the `syncscan profile` every rank runs (paths made absolute: a rank may start elsewhere)."""
    out: list[str] = []
    for dest, flag, kind, default in getattr(args, "_forwarded", []):
        value = getattr(args, dest, default)
        if value == default:
            continue
        if kind == "bool":
            out.append(flag if value else "--no-" + flag[2:])
        elif kind == "flag":
            out.append(flag)
        else:
            out += [flag, os.path.abspath(value) if dest in _PATH_OPTIONS else str(value)]
    return out


def _target(args):
    from syncscan.runtime.runner import Target

    # argparse puts options the script shares with us (e.g. --steps after script.py) into the
    # REMAINDER list; options of ours that only argparse knows about end up in args.extra
    if args.module:
        name, *rest = args.module
        if name.startswith("-"):
            raise UserError(f"-m needs a module name, got {name!r}")
        if args.script:
            raise UserError("give a script or -m MODULE, not both")
        return Target(None, name, [*rest, *args.extra])
    if not args.script:
        raise UserError("no script given: syncscan profile [options] script.py [args...]")
    script, *rest = args.script
    if script == "--" and rest:  # `syncscan profile [options] -- script.py ...`
        script, *rest = rest
    if script.startswith("-"):
        raise UserError(f"unknown option {script!r} (options go before the script)")
    return Target(script, None, [*rest, *args.extra])


def _run_dir(args, target, rank_ctx=None) -> Path:
    if args.logdir:
        return Path(args.logdir)
    if rank_ctx is not None:  # every rank must pick the same folder
        return Path("syncscan-runs") / rank_ctx.default_run_name(target.short_name)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = Path("syncscan-runs") / f"{target.short_name}-{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


# ------------------------------------------------------------------------------ several ranks


def launch_options_given(args) -> bool:
    return any(getattr(args, dest, None) is not None for dest, _ in LAUNCH_OPTIONS)


def _wrapped_torchrun(args) -> list[str] | None:
    """`syncscan profile [options] -- torchrun ...`: the torchrun command (None otherwise)."""
    from syncscan.runtime.distributed import split_wrapped

    words = list(args.script or [])
    if len(words) < 2 or words[0] != "--":
        return None
    head = os.path.basename(words[1])
    if head.startswith("torchrun") or (head.startswith("python") and words[2:4] == ["-m", "torch.distributed.run"]):
        return split_wrapped([*words[1:], *args.extra])
    return None


def _launch(args, wrapped: list[str] | None) -> int:
    """Run the script on every rank through torchrun; rank 0 writes the merged report."""
    from syncscan.runtime import distributed

    if wrapped is not None and launch_options_given(args):
        raise UserError("give the torchrun options inside the wrapped command, not also to syncscan profile")
    if args.compare is not None:
        raise UserError("--compare times one process: it does not combine with several ranks")
    if args.output and Path(args.output).is_dir():
        raise UserError(f"--output {args.output}: is a folder")
    if args.html:
        check_output_path(args.html, "--html")
    if wrapped is None:
        target = _target(args)
        head = ["-m", target.module] if target.module else [target.script]
        ns = distributed.parse_launch([*distributed.launch_options(args), *head, *target.args])
    else:
        ns = distributed.parse_launch(wrapped)
    from syncscan.runtime.runner import Target

    words = distributed.target_of(ns)
    target = Target(None, words[1], words[2:]) if words[0] == "-m" else Target(words[0], None, words[1:])
    target.check()
    if args.step_on:
        from syncscan.runtime.steps import FunctionBoundary

        FunctionBoundary.check(args.step_on)
    _import_torch()
    run_dir = _run_dir(args, target)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--logdir {run_dir}: cannot create ({exc.strerror or exc})") from None
    torchrun = ["torchrun", *(wrapped if wrapped is not None else [*distributed.launch_options(args), *words])]
    os.environ[distributed.LAUNCHER_ENV] = json.dumps(torchrun)
    worker = ["profile", *forward_options(args), "--logdir", str(run_dir.resolve()), *words]
    rc = distributed.launch(ns, worker)
    if not (run_dir / "report.json").exists():
        print(f"syncscan: no merged report: rank 0 ended before writing it (exit {rc}); the ranks' own "
              f"reports and traces are in {run_dir} (syncscan analyze {run_dir} merges the traces)",
              file=sys.stderr)
    return rc


class _RankView:
    """What one rank keeps of its traces for the cross-rank analysis: the timing pass's timeline
    and the detailed pass's collective calls (it has the Python stacks)."""

    def __init__(self):
        self.timelines: dict = {}
        self.calls = None

    def see(self, name, trace, analysis) -> None:
        from syncscan.trace.ranks import blocking_call_groups, timeline

        self.timelines[name] = timeline(trace, analysis)
        if name == "detail":
            self.calls = blocking_call_groups(trace)

    def timeline(self, timing_from):
        from syncscan.trace.ranks import empty_timeline

        tl = self.timelines.get(timing_from) or empty_timeline()
        if self.calls is not None:
            tl = {**tl, "calls": self.calls}
        return tl


def _merge_ranks(ctx, args, report, view: _RankView, merged, outcome, run_dir: Path, roots, target):
    """Write this rank's report, hand its summary to rank 0; on rank 0, the merged report (None
    on the other ranks)."""
    from syncscan import multirank
    from syncscan.runtime import distributed

    rank_dir = run_dir / "ranks"
    rank_dir.mkdir(parents=True, exist_ok=True)
    own = rank_dir / f"rank-{ctx.rank}.json"
    own.write_text(report_json(report), encoding="utf-8")
    tl = view.timeline(merged.timing_from)
    timing = report["passes"].get(merged.timing_from or "", {})
    record = multirank.rank_record(
        ctx.rank, report, tl, host=report["environment"].get("host"), pid=report["environment"].get("pid"),
        trace=timing.get("trace"), report_path=str(own), status=outcome.kind, exit_code=outcome.exit_code,
        bare_ms_per_step=report["perturbation"].get("bare_ms_per_step"))
    exchange = distributed.exchange_for(ctx, run_dir)
    exchange.publish(ctx.rank, {"record": record, "timeline": tl})
    if not ctx.primary:
        return None
    got = exchange.collect(ctx.world_size, distributed.COLLECT_TIMEOUT_S)
    got.setdefault(ctx.rank, {"record": record, "timeline": tl})
    ranks = sorted(got)
    records = [got[r]["record"] for r in ranks]
    launcher = os.environ.get(distributed.LAUNCHER_ENV)
    out = multirank.merge(report, records, [(r, got[r]["timeline"]) for r in ranks], {
        "world_size": ctx.world_size, "backend": tl["info"].get("backend"),
        "launcher": json.loads(launcher) if launcher else None, "primary_rank": ctx.rank,
        "rank_reports": [rec["report"] for rec in records]})
    if not args.no_lint and merged.timing_from is not None:
        out["join"] = _join(_Merged(multirank.union_report(out, records)), roots, target)
    return out


class _Merged:
    """The `report` attribute `_join` reads, for a merged report."""

    def __init__(self, report):
        self.report = report


def _other_rank_synced(report) -> bool:
    return any(r["total_syncs"] or r["would_sync"] for r in report.get("ranks") or [])


def _end_rank(outcome) -> None:
    """The script was stopped mid-run: end its process group here, so that the process exits
    cleanly instead of waiting in a collective nobody joins."""
    if outcome.kind != "stopped":
        return
    with contextlib.suppress(Exception):
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()


def resolve_fail_on_sync(option: bool | None, target) -> bool:
    """--fail-on-sync / --no-fail-on-sync, else `fail-on-sync` in [tool.syncscan] of the nearest
    pyproject.toml, looked for from the script's folder upwards, then from the current folder."""
    from syncscan.lint import config as config_mod

    if option is not None:
        return option
    for start in dict.fromkeys([target.path_entry(), os.getcwd()]):
        path = config_mod.find_pyproject(Path(start))
        if path is not None:
            return config_mod.load(str(path), None).fail_on_sync
    return False


def _source_roots(source_sites, target) -> list[str]:
    """Where the relative paths of a trace's Python frames may lie: the script's folder, here,
    and the folders of the exact sites the run-time hooks recorded."""
    roots = [target.path_entry(), os.getcwd()]
    roots += [os.path.dirname(os.path.abspath(s["file"])) for s in source_sites or []
              if isinstance(s, dict) and isinstance(s.get("file"), str)]
    return list(dict.fromkeys(roots))


def _join(merged, roots, target):
    """Lint the user files the syncs point to and join them with the syncs (None: nothing to lint)."""
    from syncscan.sources import lint_and_join

    try:
        return lint_and_join(merged.report, roots, config_start=target.path_entry())
    except UserError as exc:  # e.g. a broken [tool.syncscan] beside a profiled file: the run still counts
        print(f"syncscan: the profiled files were not linted: {exc}", file=sys.stderr)
        return None


def _lint_compiled(compiled, roots, target):
    """The compile summary with the lint findings of each graph break's and CUDA-graph skip's line
    (the files they point to are linted with the script, whose torch.compile calls say what is
    compiled); unchanged when they point to no readable user file."""
    from syncscan.sources import lint_compiled

    try:
        return lint_compiled(compiled, roots, [target.script] if target.script else [],
                             config_start=target.path_entry())
    except UserError as exc:
        print(f"syncscan: the files of the graph breaks were not linted: {exc}", file=sys.stderr)
        return compiled


def _import_torch():
    # Kineto logs its start/stop and CUPTI notes to stderr; keep them out of the user's output
    os.environ.setdefault("KINETO_LOG_LEVEL", "5")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UserError("syncscan profile needs PyTorch: pip install 'syncscan[profile]'") from None


@contextlib.contextmanager
def _stdout_to_stderr(enabled: bool):
    """With --format json, standard output carries the report alone: the script prints to stderr."""
    if not enabled:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def run(args) -> int:
    from syncscan.runtime import report as report_mod
    from syncscan.runtime.compile_events import CompileEvents
    from syncscan.runtime.distributed import RankContext
    from syncscan.runtime.input_pipeline import loader_model
    from syncscan.runtime.runner import release
    from syncscan.runtime.runner import run as run_target
    from syncscan.runtime.schedule import DRAIN_LIMIT, make_plan, parse_passes
    from syncscan.runtime.session import Session
    from syncscan.runtime.steps import FunctionBoundary, OptimizerBoundary
    from syncscan.trace.graph_breaks import summarize as summarize_compile

    wrapped = _wrapped_torchrun(args)
    if wrapped is not None or launch_options_given(args):
        return _launch(args, wrapped)
    rank_ctx = RankContext.from_env()
    target = _target(args)
    passes = parse_passes("detail" if args.quick else args.passes)
    drain = DRAIN_LIMIT if args.drain_steps is None else args.drain_steps
    plan = make_plan(args.wait, args.warmup, args.steps, passes, drain_limit=drain)
    if args.step_on:
        FunctionBoundary.check(args.step_on)
    target.check()
    if args.output and Path(args.output).is_dir():
        raise UserError(f"--output {args.output}: is a folder")
    if args.html:
        check_output_path(args.html, "--html")
    fail_on_sync = resolve_fail_on_sync(args.fail_on_sync, target)
    if args.compare is not None:
        if not Path(args.compare).is_file():
            raise UserError(f"--compare {args.compare}: no such file")
        if args.compare_runs < 1:
            raise UserError("--compare-runs must be at least 1")
    if rank_ctx is not None and args.compare is not None:
        raise UserError("--compare times one process: it does not run under torchrun")
    _import_torch()
    run_dir = _run_dir(args, target, rank_ctx)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--logdir {run_dir}: cannot create ({exc.strerror or exc})") from None

    session = Session(plan, run_dir, stop_script=not args.run_to_end,
                      tensorboard_copy=not args.no_tensorboard_copy, light_pass=args.light_pass,
                      rank=rank_ctx.rank if rank_ctx is not None else None)
    boundaries: list[FunctionBoundary | OptimizerBoundary] = []
    if args.step_on:
        boundaries.append(FunctionBoundary(args.step_on, target.main_module, session.boundary))
    else:
        optimizer_boundary = OptimizerBoundary(session.boundary)
        session.optimizer_boundary = optimizer_boundary
        boundaries.append(optimizer_boundary)

    started = time.time()
    compile_events = CompileEvents(step=lambda: session.steps_done)
    with _stdout_to_stderr(args.format == "json"):
        try:
            for b in boundaries:
                b.install()
            compile_events.install()
            session.start()
            outcome = run_target(target)
        finally:
            for b in boundaries:
                b.remove()
            results = session.finish()
            compile_events.remove()
        if outcome.exc is not None:
            sys.stdout.flush()
            print(outcome.traceback_text(), end="", file=sys.stderr, flush=True)
        elif outcome.exit_message:
            print(outcome.exit_message, file=sys.stderr, flush=True)
        release(outcome)

    inputs = report_mod.input_window(session, results)
    rank_view = _RankView() if rank_ctx is not None else None
    merged = report_mod.merge_passes(report_mod.analyze_passes(results, session.sites, loader=loader_model(inputs),
                                                               on_trace=rank_view.see if rank_view else None))
    roots = _source_roots(session.sites, target)
    # with several ranks, rank 0 joins every rank's sites (below)
    join = (_join(merged, roots, target) if not args.no_lint and merged.timing_from is not None
            and rank_ctx is None else None)
    compiled = summarize_compile(compile_events.records, [(w.start, w.end) for w in plan.windows])
    if not args.no_lint:
        compiled = _lint_compiled(compiled, roots, target)
    compared = None
    if args.compare is not None and not outcome.exit_code:
        from syncscan.runtime import compare

        schedule = ["--wait", str(args.wait), "--warmup", str(args.warmup), "--steps", str(args.steps),
                    "--drain-steps", str(drain)]
        if args.step_on:
            schedule += ["--step-on", args.step_on]
        original = ["-m", target.module, *target.args] if target.module else [target.script, *target.args]
        compared = (args.compare, compare.measure(original, [args.compare, *target.args], schedule,
                                                  args.compare_runs))
    html_error = None
    if args.html and merged.timing_from is None:
        html_error = f"--html {args.html}: no pass was traced, so there is no timeline to draw"
    report = report_mod.build(
        target=target, plan=plan, outcome=outcome, session=session, results=results, merged=merged,
        run_dir=run_dir, started=started, step_on=args.step_on,
        step_on_boundary=boundaries[0] if args.step_on else None,
        tensorboard_copy=not args.no_tensorboard_copy, fail_on_sync=fail_on_sync, join=join, compared=compared,
        html=args.html if args.html and not html_error else None, compiled=compiled,
        inputs=inputs)
    if rank_ctx is not None:
        assert rank_view is not None
        report = _merge_ranks(rank_ctx, args, report, rank_view, merged, outcome, run_dir, roots, target)
        if report is None:  # not rank 0: its report is in <run>/ranks/, rank 0 reports for all
            _end_rank(outcome)
            return outcome.exit_code
        join = report.get("join")
    if report["html"]:
        try:
            write_html(report["html"], report, merged.timeline, join, roots)
        except UserError as exc:  # said after the report, which the run still produced
            html_error = str(exc)
            report = {**report, "html": None}
    text = report_json(report)
    (run_dir / "report.json").write_text(text, encoding="utf-8")
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"--output {args.output}: cannot write ({exc.strerror or exc})") from None
    if args.format == "json":
        print(text, end="")
        if report.get("html"):
            print(f"HTML report: {report['html']}", file=sys.stderr)
    else:
        print(render_profile(report))
    if html_error:
        raise UserError(html_error)
    rc = outcome.exit_code
    if not rc and fail_on_sync and (report["sync_summary"]["any"] or _other_rank_synced(report)):
        summary = report["sync_summary"]
        where = f"{summary['sites']} sync site(s)" if summary["any"] else "a sync on another rank"
        print(f"syncscan: --fail-on-sync: {where} in the profiled steps "
              f"(exit {EXIT_SYNC_FOUND})", file=sys.stderr)
        rc = EXIT_SYNC_FOUND
    if rank_ctx is not None:
        _end_rank(outcome)
    if outcome.kind == "os_exit":  # as the script asked: end now, without the interpreter's cleanup
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    return rc
