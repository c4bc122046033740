"""Measured costs from a `syncscan profile` / `syncscan analyze` report of the workspace.

The report is the one named in the settings (`report`) or in `[tool.syncscan] profile-report`,
else the newest `syncscan-runs/*/report.json` under the project root (where `syncscan profile`
writes its run folders). Its sync sites are joined with the buffer's findings by the same join
as `syncscan lint --costs`; each confirmed finding gets a `CostNote`.

A report describes the code as it ran. When the buffer is not that code any more the note says
so: unsaved changes in the buffer, or a file written after the run started (the report records
no hash of the files it profiled). With unsaved changes the join runs on the lines the file had,
where the edit left them in place.
"""

from __future__ import annotations

import difflib
import glob
import os
import time
from dataclasses import dataclass

from syncscan.server import adapter

RUNS_FOLDER = "syncscan-runs"
RESCAN_S = 1.0  # how often the run folders are listed again (a new profile run appears)


@dataclass(frozen=True)
class CostNote:
    """What the profile says of one finding."""

    text: str  # "measured: 0.083 ms/step GPU idle, rewrite saves 0.171 ms/step"
    confirmed: bool  # the finding's statement synced in the profile
    rank: float  # larger first: the predicted saving, else the GPU idle measured
    stale: str | None = None  # why the numbers may not fit the buffer any more


@dataclass
class Report:
    path: str
    data: dict
    mtime: float
    files: list[str]  # the files its sites point to
    ran_at: float | None  # when the profiled sources were read


class Reports:
    """Finds, loads and caches the report of each project root."""

    def __init__(self) -> None:
        self._loaded: dict[str, Report] = {}
        self._found: dict[str, tuple[float, str | None]] = {}
        self.errors: dict[str, str] = {}  # report path -> why it could not be read (said once)

    def find(self, root: str, named: str | None) -> str | None:
        if named:
            return named if os.path.isabs(named) else os.path.join(root, named)
        now = time.monotonic()
        got = self._found.get(root)
        if got is not None and now - got[0] < RESCAN_S:
            return got[1]
        candidates = glob.glob(os.path.join(glob.escape(root), RUNS_FOLDER, "*", "report.json"))
        newest = None
        try:
            newest = max(candidates, key=os.path.getmtime) if candidates else None
        except OSError:  # a run folder removed while listing
            newest = None
        self._found[root] = (now, newest)
        return newest

    def load(self, path: str | None) -> Report | None:
        if path is None:
            return None
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            self._loaded.pop(path, None)
            if path not in self.errors:
                self.errors[path] = f"{path}: no such file"
            return None
        got = self._loaded.get(path)
        if got is not None and got.mtime == mtime:
            return got
        try:
            data = adapter.load_report(path)
        except adapter.config_error_type() as e:
            self.errors[path] = str(e)
            self._loaded.pop(path, None)
            return None
        self.errors.pop(path, None)
        rep = Report(path, data, mtime, adapter.report_files(data), adapter.report_time(data, path))
        self._loaded[path] = rep
        return rep


def covers(report: Report, path: str) -> bool:
    """Whether any of the report's sites points to `path`."""
    return any(adapter.same_file(f, path) for f in report.files)


def disk_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def staleness(report: Report, path: str, text: str, disk: str | None) -> str | None:
    """Why the report may not describe `text` (the buffer of `path`; `disk` is the file's text),
    or None."""
    if disk is None:
        return None
    if disk != text:
        return "unsaved changes since the profile"
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return None
    if report.ran_at is not None and mtime > report.ran_at + 1.0:  # report times are whole seconds
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(report.ran_at))
        return f"{os.path.basename(path)} changed since the profile of {when}"
    return None


def line_map(buffer: str, disk: str) -> dict[int, int]:
    """1-based buffer line -> the same line in the file on disk, for the lines an unsaved edit left
    as they were (the report's lines are the file's)."""
    a, b = buffer.splitlines(), disk.splitlines()
    out: dict[int, int] = {}
    for i, j, n in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        for k in range(n):
            out[i + k + 1] = j + k + 1
    return out


def notes(findings: list[adapter.Finding], report: Report, stale: str | None,
          lines: dict[int, int] | None = None) -> dict[int, CostNote]:
    """id(finding) -> its note, for the findings the report's join says something about. `lines`
    maps the buffer's lines to the lines the report saw (unsaved edits); findings on lines the
    edit changed are not joined."""
    if lines is not None:
        moved = {}
        for f in findings:
            a, b = lines.get(f.line), lines.get(f.end_line)
            if a is not None and b is not None:
                moved[id(f)] = f.replace(line=a, end_line=b, extra={})
        got = notes(list(moved.values()), report, stale)
        by_copy = {id(c): orig for orig, c in moved.items()}
        return {by_copy[k]: v for k, v in got.items()}
    adapter.annotate_costs(findings, report.data)
    out: dict[int, CostNote] = {}
    for f in findings:
        cost = f.extra.get("cost") or {}
        label = adapter.cost_label(cost)
        if not label:
            continue
        confirmed = cost.get("status") == "confirmed"
        saving = cost.get("saving_rewrite_ms_per_step")
        rank = saving if saving is not None else (cost.get("gpu_idle_ms_per_step") or 0.0)
        if confirmed and cost.get("measured") is False:
            text = f"profiled without a GPU: {label}"
        elif confirmed:
            text = f"measured: {label}"
        else:
            text = f"profile: {label}"
        out[id(f)] = CostNote(text, confirmed, float(rank or 0.0), stale)
    return out
