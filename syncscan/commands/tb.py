"""`syncscan tb [LOGDIR]`: TensorBoard with the PyTorch profiler plugin on syncscan's runs.

Serves LOGDIR (default ./syncscan-runs, where `syncscan profile` writes) on 127.0.0.1 and a
free port, prints the URL on stdout, and stops cleanly on Ctrl-C (exit 0). `syncscan profile`
already writes traces the plugin reads fully; `--compat` serves a converted copy of traces
recorded some other way (raw torch 2.x traces, in which the plugin shows no device time).
"""

from __future__ import annotations

import argparse
import atexit
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

from syncscan.errors import UserError

DEFAULT_LOGDIR = "syncscan-runs"
INSTALL_HINT = "pip install 'syncscan[profile]'"
TRACE_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logdir", nargs="?", default=DEFAULT_LOGDIR, metavar="LOGDIR",
                        help=f"folder of profiler runs (default ./{DEFAULT_LOGDIR}, where "
                             "`syncscan profile` writes)")
    parser.add_argument("--port", type=int, default=0, help="port to serve on (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to serve on (default 127.0.0.1: this machine only)")
    parser.add_argument("--compat", action="store_true",
                        help="serve a converted copy of each trace so that the plugin shows device "
                             "time for raw torch 2.x traces (not needed for `syncscan profile` runs)")


def find_traces(logdir: Path) -> list[Path]:
    return sorted(p for p in logdir.rglob("*") if p.name.endswith(TRACE_SUFFIXES) and p.is_file())


def compatible_copy(logdir: Path, traces: list[Path], dest: Path) -> None:
    """Mirror each trace under `dest`, at the same path relative to `logdir`, converted by
    syncscan.runtime.tbcompat so that the plugin links kernels to the ops that launched them."""
    from syncscan.runtime.tbcompat import make_compatible

    for trace in traces:
        try:
            make_compatible(trace, dest / trace.relative_to(logdir))
        except (OSError, ValueError) as exc:  # ValueError: bad JSON or gzip content
            raise UserError(f"{trace}: cannot convert this trace: {exc}") from exc


def _load_tensorboard():
    """(tensorboard.program, the plugin list) or a UserError naming what to install."""
    try:
        from tensorboard import default, program
    except ImportError as exc:
        raise UserError(f"TensorBoard is not installed ({exc}); install the profile extra: "
                        f"{INSTALL_HINT}") from exc
    try:
        from torch_tb_profiler.plugin import TorchProfilerPlugin
    except ImportError as exc:
        raise UserError("the PyTorch profiler plugin for TensorBoard (torch-tb-profiler) is not "
                        f"installed ({exc}); install the profile extra: {INSTALL_HINT}") from exc
    plugins = list(default.get_plugins())
    if TorchProfilerPlugin not in plugins:  # installed without its entry point
        plugins.append(TorchProfilerPlugin)
    return program, plugins


def _check_args(args) -> Path:
    logdir = Path(args.logdir)
    if not logdir.exists():
        hint = " (`syncscan profile SCRIPT` writes its runs there)" if args.logdir == DEFAULT_LOGDIR else ""
        raise UserError(f"{logdir}: no such folder{hint}")
    if not logdir.is_dir():
        raise UserError(f"{logdir}: not a folder (give the folder that holds the runs)")
    if not 0 <= args.port <= 65535:
        raise UserError(f"--port {args.port}: must be between 0 (a free port) and 65535")
    return logdir


def _start(program, plugins, serve_dir: Path, host: str, port: int):
    tb = program.TensorBoard(plugins=plugins)
    # load_fast=false: no separate data-server process; the profiler plugin reads the files itself
    tb.configure(argv=[None, "--logdir", str(serve_dir), "--host", host, "--port", str(port),
                       "--load_fast", "false"])
    try:
        server = tb._make_server()  # (launch() would give no handle to stop the server)
    except program.TensorBoardServerException as exc:
        raise UserError(f"TensorBoard could not start: {exc.msg}") from exc
    except OSError as exc:
        raise UserError(f"TensorBoard could not serve on {host}:{port}: {exc}") from exc
    thread = threading.Thread(target=server.serve_forever, name="TensorBoard", daemon=True)
    thread.start()
    return server, thread


def _loads_in_progress() -> bool:
    main = threading.main_thread()
    return any(t.is_alive() and not t.daemon and t is not main for t in threading.enumerate())


def _stop(server, temp_dir: str | None) -> None:
    server.shutdown()
    server.server_close()
    if temp_dir:
        shutil.rmtree(temp_dir, ignore_errors=True)
    if _loads_in_progress():
        # The plugin still parses a trace in non-daemon threads and processes; waiting for them
        # could take minutes. End its workers, run the exit handlers, and leave now.
        for child in multiprocessing.active_children():
            child.terminate()
        sys.stdout.flush()
        sys.stderr.flush()
        atexit._run_exitfuncs()
        os._exit(0)


def _sigterm_as_interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args) -> int:
    logdir = _check_args(args)
    program, plugins = _load_tensorboard()
    traces = find_traces(logdir)
    temp_dir = None
    serve_dir = logdir.resolve()
    if args.compat and traces:
        temp_dir = tempfile.mkdtemp(prefix="syncscan-tb-")
        try:
            compatible_copy(logdir, traces, Path(temp_dir))
        except BaseException:
            shutil.rmtree(temp_dir, ignore_errors=True)
            raise
        serve_dir = Path(temp_dir)
    if not traces:
        print(f"syncscan: no *.pt.trace.json[.gz] under {logdir} yet; TensorBoard shows runs as "
              "they appear", file=sys.stderr)

    try:
        server, thread = _start(program, plugins, serve_dir, args.host, args.port)
    except BaseException:
        if temp_dir:
            shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    url = server.get_url()
    print(f"{url}#pytorch_profiler", flush=True)
    print(f"syncscan: TensorBoard with the PyTorch profiler plugin on {logdir}"
          f"{' (converted copy)' if temp_dir else ''}; Ctrl-C to stop", file=sys.stderr, flush=True)
    previous = signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    # Ctrl-C stops it even where SIGINT came in ignored: a shell starts background jobs (`syncscan tb
    # runs &`, a script's `nohup ... &`) with SIGINT ignored, and Python then installs no handler, so
    # `kill -INT` would do nothing
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        while thread.is_alive():
            thread.join(0.5)
    except KeyboardInterrupt:
        print("syncscan: stopping TensorBoard", file=sys.stderr, flush=True)
        _stop(server, temp_dir)
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
    # the server thread ended by itself: an error inside TensorBoard
    _stop(server, temp_dir)
    raise UserError("TensorBoard stopped unexpectedly (see the messages above)")
