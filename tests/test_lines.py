"""Lines are counted as Python's parser counts them: a form feed or U+2028 inside a line (legal in
source; str.splitlines splits there) must not shift the reported lines or the fix's edits."""

import subprocess
import sys

import pytest

from syncscan.lint.lines import line_starts, split_lines

SRC = """import torch
def loss(target):  # a separator in a comment: {sep}
    inds = torch.nonzero(target == 9, as_tuple=True)  # {sep} U+2028 in a comment
    target[inds] = -1
    return target.float().mean()
"""


@pytest.mark.parametrize("text", ["a\fb\nc\r\nd\re", "x\u2028y\n", "", "\n", "a\n\n"])
def test_split_lines_counts_only_newlines(text):
    assert split_lines(text) == text.replace("\r\n", "\n").replace("\r", "\n").split("\n")[:len(split_lines(text))]
    starts = line_starts(text)
    assert starts[0] == 0 and starts[-1] == len(text)
    # every start but the first follows a line end
    assert all(text[s - 1] in "\r\n" for s in starts[1:-1])


@pytest.mark.parametrize("sep", ["\f", "\u2028", "\x1c"])
def test_fix_after_a_form_feed_edits_the_right_lines(tmp_path, sep):
    p = tmp_path / "loss.py"
    p.write_text(SRC.format(sep=sep), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "syncscan", "lint", "--format", "json", str(p)],
                         capture_output=True, text=True)
    import json
    lines = sorted({(f["line"], f["code"]) for f in json.loads(out.stdout)})
    assert (3, "SYN301") in lines  # the nonzero line, not shifted by the separator
    subprocess.run([sys.executable, "-m", "syncscan", "lint", "--fix", str(p)], capture_output=True, text=True)
    fixed = p.read_text(encoding="utf-8")
    assert "torch.nonzero" not in fixed and "target.masked_fill_(target == 9, -1)" in fixed
    assert sep in fixed  # the separator survives untouched
    compile(fixed, str(p), "exec")
