"""What the commands share: checking an output path before any work, writing text files and
the HTML report (atomically), and report.json."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from syncscan.errors import UserError


def check_output_path(path: str, option: str) -> None:
    """Fail before any work when `option PATH` cannot be written where asked."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{option} {path}: is a folder")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"{option} {path}: no such folder {str(parent)!r}")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UserError(f"{option} {path}: not writable")


def write_atomic(path: str, text: str, option: str, mode: int = 0o644) -> None:
    """Write via a temporary file in the same folder, so a failed write never leaves half a file."""
    d = os.path.dirname(os.path.abspath(path)) or "."
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".syncscan-", suffix=Path(path).suffix)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, mode)  # mkstemp makes it private; a report is meant to be shared
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write ({exc.strerror or exc})") from None


def write_html(path: str, report, timeline, join=None, search_roots=()) -> None:
    """The HTML report (syncscan.present.html) of an analysis, written atomically."""
    from syncscan.present.html import render_html

    write_atomic(path, render_html(report, timeline, join, search_roots), "--html")


def report_json(report) -> str:
    return json.dumps(report, indent=2) + "\n"
