"""Regenerate the language server's measured-costs test data from a recorded H100 trace.

`masked_loss_report.json` is `syncscan analyze --format json` of
../shared/traces/masked_loss_v0_b16_64px (the naive masked loss on an H100, torch 2.11, batch
16, 64x64) with the sync sites given the lines of fixtures/masked_loss_naive.py in the order the
sync-debug hook records them (as tests/test_join.py does), and paths made relative to the
repository. When the fixture's lines move, a test says to run this again. To use a fresh GPU
profile of the fixture instead:

    syncscan profile --steps 8 --logdir runs/ml fixtures/masked_loss_naive.py --batch 16 --size 64
    cp runs/ml/report.json tests/data/lsp/masked_loss_report.json

(the tests copy the report into a workspace's syncscan-runs/<run>/report.json, where `syncscan
profile` writes it; that folder name is gitignored, hence the flat name here).

Run from the repository root: python tests/data/lsp/regenerate.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
TRACE_DIR = REPO.parent / "shared" / "traces" / "masked_loss_v0_b16_64px"


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def site_lines(text: str) -> list[int]:
    """The lines the sync-debug hook records for the naive loss, per step, in host order: nonzero,
    the index assignment, unique, the two masks, and the masks' backward (on `loss.backward()`)."""
    return [_line(text, "torch.nonzero("), _line(text, "target[inds] ="), _line(text, "torch.unique("),
            _line(text, "pred[mask]"), _line(text, "pred[mask]"), _line(text, "loss.backward()")]


def main() -> int:
    fixture = REPO / "fixtures" / "masked_loss_naive.py"
    lines = site_lines(fixture.read_text())
    sites = [{"op": None, "file": str(fixture), "line": ln, "function": "f", "step": step, "order": i}
             for step in (2, 3, 4) for i, ln in enumerate(lines)]
    trace = next(TRACE_DIR.glob("*.pt.trace.json.gz"))
    with tempfile.TemporaryDirectory() as tmp:
        sites_file = Path(tmp) / "sites.json"
        sites_file.write_text(json.dumps(sites))
        out = Path(tmp) / "report.json"
        subprocess.run([sys.executable, "-m", "syncscan", "analyze", str(trace), "--source-sites", str(sites_file),
                        "--format", "json", "-o", str(out)], check=True, cwd=tmp)
        report = out.read_text()
    # paths relative to this folder (the join matches files by their trailing path parts)
    report = report.replace(str(REPO) + "/", "").replace(str(REPO.parent) + "/", "")
    dest = HERE / "masked_loss_report.json"
    dest.write_text(report)
    print(f"wrote {dest.relative_to(REPO)} ({len(json.loads(report)['syncs'])} sync sites)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
