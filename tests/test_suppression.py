"""Suppression comments as a user writes them: `# noqa`, `# syncscan: ignore[...]`, on the
finding's line (first or last line of a multi-line one), and `# syncscan: skip-file`."""

from __future__ import annotations

import json
import textwrap

import pytest

from syncscan.cli import main

LOOP = textwrap.dedent("""\
    import torch

    def train(model, loader, opt):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
            idx = torch.nonzero(y).item(){comment}
    """)  # line 8: SYN301 (torch.nonzero) and SYN101 (.item()), both hot


def codes(capsys, tmp_path, source: str) -> list[str]:
    (tmp_path / "m.py").write_text(source)
    rc = main(["lint", "--format", "json", "--no-cache", "--all", str(tmp_path / "m.py")])
    out, err = capsys.readouterr()
    assert not err
    data = json.loads(out)
    assert rc == (1 if data else 0)
    return sorted(f["code"] for f in data)


@pytest.mark.parametrize("comment,left", [
    ("", ["SYN101", "SYN301"]),
    ("  # noqa", []),
    ("  # NOQA", []),
    ("  # noqa: SYN301", ["SYN101"]),
    ("  # noqa:SYN101", ["SYN301"]),
    ("  # noqa: SYN101, SYN301", []),
    ("  # noqa: SYN3", ["SYN101"]),  # a prefix
    ("  # noqa: E501", ["SYN101", "SYN301"]),  # another tool's code suppresses nothing of ours
    ("  # syncscan: ignore", []),
    ("  # syncscan: ignore[SYN301]", ["SYN101"]),
    ("  # syncscan: ignore[SYN101,SYN301]", []),
    ("  # syncscan: ignore[SYN101, SYN301]", []),
    ("  # type: ignore  # syncscan: ignore[SYN101]", ["SYN301"]),
])
def test_line_comments(capsys, tmp_path, comment, left):
    assert codes(capsys, tmp_path, LOOP.format(comment=comment)) == left


def test_comment_on_another_line_does_not_suppress(capsys, tmp_path):
    src = LOOP.format(comment="").replace("            opt.step()\n", "            opt.step()  # noqa\n")
    assert codes(capsys, tmp_path, src) == ["SYN101", "SYN301"]


def test_multi_line_finding_suppressed_on_its_last_line(capsys, tmp_path):
    src = textwrap.dedent("""\
        import torch

        def forward(self, x):
            return torch.nonzero(
                x
            )  # syncscan: ignore[SYN301]
        """)
    assert codes(capsys, tmp_path, src) == []
    assert codes(capsys, tmp_path, src.replace("  # syncscan: ignore[SYN301]", "")) == ["SYN301"]


def test_skip_file(capsys, tmp_path):
    src = "# syncscan: skip-file\n" + LOOP.format(comment="")
    assert codes(capsys, tmp_path, src) == []
    # anywhere in the file, on a line of its own
    assert codes(capsys, tmp_path, LOOP.format(comment="") + "# syncscan: skip-file\n") == []
    # not when it is part of a string or follows code
    assert codes(capsys, tmp_path, LOOP.format(comment="  # syncscan: skip-file")) == ["SYN101", "SYN301"]

