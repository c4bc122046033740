"""Exact source lines of host syncs, from torch's sync debug mode.

`torch.cuda.set_sync_debug_mode("warn")` issues a warning each time c10 makes the host wait
(copies to the host, `nonzero`, boolean masks, stream syncs). The warning itself points into
torch or at a C call, so the hook walks the Python stack up to the first frame outside torch and
syncscan: that is the user's line, even for `x[m]` or `if t:` which have no Python call of
their own in a trace. Warnings raised in backward are replayed by autograd in the thread that
called `backward()`, so they land on that line.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import threading
import time
import warnings

# c10's text for the "warn" mode (torch 2.0 to 2.14)
SYNC_WARNING = re.compile(r"called a synchronizing CUDA operation")

_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../syncscan


def _library_dirs() -> tuple[str, ...]:
    dirs = [_OWN_DIR + os.sep]
    for name in ("torch", "torchvision", "torchaudio"):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__file__", None):
            dirs.append(os.path.dirname(os.path.abspath(mod.__file__)) + os.sep)
    dirs.append(os.path.dirname(os.path.abspath(warnings.__file__)) + os.sep + "warnings.py")
    return tuple(dirs)


def user_frame(frame, internal: tuple[str, ...] | None = None):
    """The first frame, walking outwards, whose file is not torch's, syncscan's or `warnings`."""
    internal = internal or _library_dirs()
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<") and not os.path.abspath(filename).startswith(internal):
            return frame
        frame = frame.f_back
    return None


def display_path(filename: str) -> str:
    """Relative to the current folder when under it (as the user typed it), else absolute."""
    path = os.path.abspath(filename)
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


class SiteRecorder:
    """Collects one site per sync warning while installed; `step_of()` tells which step is on."""

    def __init__(self, step_of):
        self.step_of = step_of
        self.sites: list[dict] = []
        self._order: dict[int, int] = {}
        self._previous = None
        self._filters = None
        self._internal: tuple[str, ...] = ()

    def install(self) -> None:
        self._internal = _library_dirs()
        self._previous = warnings.showwarning
        self._filters = warnings.filters[:]
        # "always": the default filter would show a warning once per location only
        warnings.filterwarnings("always", message=SYNC_WARNING.pattern)
        warnings.showwarning = self._showwarning

    def uninstall(self) -> None:
        if self._previous is not None:
            warnings.showwarning = self._previous
            warnings.filters[:] = self._filters
            # invalidates the per-module "once" caches, as warnings.filterwarnings itself does
            getattr(warnings, "_filters_mutated", lambda: None)()
            self._previous = None

    def _showwarning(self, message, category, filename, lineno, file=None, line=None):
        if not SYNC_WARNING.search(str(message)):
            return self._previous(message, category, filename, lineno, file, line)
        frame = user_frame(sys._getframe(1), self._internal)
        step = self.step_of()
        order = self._order.get(step, 0)
        self._order[step] = order + 1
        site = {"op": None, "file": None, "line": None, "function": None, "step": step,
                "order": order, "time_ns": time.time_ns(), "thread": threading.current_thread().name}
        if frame is not None:
            site.update(file=display_path(frame.f_code.co_filename), line=frame.f_lineno,
                        function=getattr(frame.f_code, "co_qualname", frame.f_code.co_name),
                        code=linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip() or None)
        else:  # no Python frame outside torch: keep torch's own location
            site.update(file=filename, line=lineno)
        self.sites.append(site)
        return None
