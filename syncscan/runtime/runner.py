"""Run a training script in this process as `python script.py args` or `python -m module args` would.

`__name__` is "__main__", `sys.argv` is the script and its own arguments, `sys.path[0]` is the
script's folder (the current folder for -m). Everything is put back afterwards. The outcome says
how the script ended and which exit status `python` would have given.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import os
import runpy
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path

from syncscan.errors import UserError
from syncscan.runtime.session import StopScript

_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_RUNPY = os.path.abspath(runpy.__file__)


@dataclass
class Target:
    """A script path or a module name (`-m`), with the arguments it gets."""

    script: str | None
    module: str | None
    args: list

    @property
    def file(self) -> str:
        """The script's path ("" for a module, or for syncscan.profile() in an interactive session)."""
        return self.script or ""

    @property
    def label(self) -> str:
        return self.module or self.script or "python"

    @property
    def main_module(self) -> str:
        """The name the script would have if imported (for --step-on train.step)."""
        return self.module if self.module else Path(self.file).stem

    @property
    def short_name(self) -> str:
        return self.module.rsplit(".", 1)[-1] if self.module else Path(self.file).stem

    def path_entry(self) -> str:
        if self.module:
            return os.getcwd()
        return os.path.dirname(os.path.realpath(self.file))

    def check(self) -> None:
        """Fail as `python` would before running anything, but with one line."""
        if self.module:
            with _sys_path(self.path_entry()):
                try:
                    spec = importlib.util.find_spec(self.module)
                except (ImportError, ValueError) as exc:
                    raise UserError(f"-m {self.module}: {exc}") from None
            if spec is None:
                raise UserError(f"-m {self.module}: no module named {self.module!r}")
        else:
            if not os.path.exists(self.file):
                raise UserError(f"{self.script}: no such file")
            if os.path.isdir(self.file) and not os.path.exists(os.path.join(self.file, "__main__.py")):
                raise UserError(f"{self.script}: a folder without __main__.py")


@dataclass
class Outcome:
    kind: str  # finished | stopped | exit | os_exit | exception | interrupted
    exit_code: int
    exc: BaseException | None = None
    exit_message: str | None = None  # sys.exit("text"): python prints it
    exc_name: str | None = None  # kept after `release()` drops the exception itself

    def __post_init__(self):
        if self.exc is not None and self.exc_name is None:
            self.exc_name = type(self.exc).__name__

    def traceback_text(self) -> str:
        """The script's traceback as python would print it, without syncscan's frames."""
        if self.exc is None:
            return ""
        tb = self.exc.__traceback__
        while tb is not None and _is_ours(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        return "".join(traceback.format_exception(type(self.exc), self.exc, tb))


def _is_ours(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_OWN_DIR) or path == _RUNPY or filename.startswith("<frozen runpy")


@contextlib.contextmanager
def _sys_path(entry: str):
    saved = sys.path[:]
    sys.path[:1] = [entry] if sys.path else [entry]
    try:
        yield
    finally:
        sys.path[:] = saved


def _exit_status(code) -> tuple[int, str | None]:
    """SystemExit's code -> (status, message), as the interpreter maps it."""
    if code is None:
        return 0, None
    if isinstance(code, bool):
        return int(code), None
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256, None
    return 1, str(code)


class HardExit(BaseException):
    """The script called os._exit(code) in its main thread: unwound like SystemExit, so that
    what was measured is reported; the command then ends the process as os._exit would."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def _os_exit_reported():
    """os._exit ends a process on the spot: no exception, no atexit, so syncscan (running the
    script in its own process) would end with the script's status and no report. While the
    script runs, os._exit in its main thread raises HardExit instead; in another thread it says
    why there is no report and ends the process with a non-zero status; in a forked child
    (DataLoader workers) it is the real one."""
    real = os._exit
    pid = os.getpid()

    def _exit(code):
        if os.getpid() != pid or not isinstance(code, int):
            real(code)  # a child's own exit; or the real one's TypeError
        if threading.current_thread() is threading.main_thread():
            raise HardExit(code)
        try:
            os.write(2, f"syncscan: error: the script called os._exit({code}) outside its main thread: the "
                        f"process ends now, without syncscan's report\n".encode())
        finally:
            real(code if code else 1)

    os._exit = _exit
    try:
        yield
    finally:
        os._exit = real


def run(target: Target) -> Outcome:
    """Run the target to its end (or to StopScript); never raises for the script's own errors."""
    saved_argv = sys.argv[:]
    saved_main = sys.modules.get("__main__")
    outcome: Outcome
    try:
        with _sys_path(target.path_entry()), _os_exit_reported():
            try:
                if target.module:
                    sys.argv = [target.module, *target.args]  # runpy puts the file in argv[0]
                    runpy.run_module(target.module, run_name="__main__", alter_sys=True)
                else:
                    sys.argv = [target.file, *target.args]
                    runpy.run_path(target.file, run_name="__main__")
                outcome = Outcome("finished", 0)
            except StopScript:
                outcome = Outcome("stopped", 0)
            except HardExit as exc:
                outcome = Outcome("os_exit", _exit_status(exc.code)[0])
            except SystemExit as exc:
                code, message = _exit_status(exc.code)
                outcome = Outcome("exit", code, exit_message=message)
            except KeyboardInterrupt:
                outcome = Outcome("interrupted", 130)
            except BaseException as exc:  # the script's own error: reported as python would
                outcome = Outcome("exception", 1, exc=exc)
    finally:
        sys.argv = saved_argv
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
    # The script's frames (and what they hold: DataLoader iterators with worker processes, CUDA
    # tensors) die with the traceback; collect now so workers shut down before we report.
    if outcome.exc is None:
        gc.collect()
    return outcome


def release(outcome: Outcome) -> None:
    """Drop the script's exception and frames once its traceback has been printed."""
    if outcome.exc is not None:
        outcome.exc.__traceback__ = None
        outcome.exc = None
        gc.collect()
