"""Inputs that are broken, odd or huge: each bad one gets one line on stderr naming the file,
the other files are still linted and reported, the exit code is 2, and never a traceback."""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path

import pytest

from syncscan.cli import main

GOOD = textwrap.dedent("""\
    import torch

    def forward(self, x):
        return torch.nonzero(x)
    """)  # one hot SYN301 at 4:12


def lint(capsys, *argv):
    rc = main(["lint", "--no-cache", "--format", "json", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    return rc, json.loads(out), [ln for ln in err.splitlines() if ln]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("good.py").write_text(GOOD)


def assert_bad(capsys, name, reason, *extra):
    """`name` fails with `reason` in one line; good.py is still linted."""
    rc, data, err = lint(capsys, name, "good.py", *extra)
    assert rc == 2
    assert [(f["path"], f["code"]) for f in data] == [("good.py", "SYN301")]
    assert len(err) == 1, err
    assert err[0].startswith(f"syncscan: error: {name}: ") and reason in err[0], err[0]


def test_syntax_error(capsys):
    Path("bad.py").write_text("import torch\n\ndef f(:\n    pass\n")
    assert_bad(capsys, "bad.py", "syntax error at line 3")


def test_syntax_error_in_a_file_without_torch(capsys):
    Path("bad.py").write_text("def f(:\n    pass\n")
    assert_bad(capsys, "bad.py", "syntax error at line 1")


def test_null_bytes_late_in_a_file(capsys):
    Path("bad.py").write_bytes(b"import torch\n" + b"x = 1\n" * 3000 + b"y = '\x00'\n")
    assert_bad(capsys, "bad.py", "null bytes")


def test_binary_file(capsys):
    Path("bin.py").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00torch")
    assert_bad(capsys, "bin.py", "binary file")


def test_not_utf8(capsys):
    Path("latin.py").write_bytes("import torch\nname = 'caf\xe9'\n".encode("latin-1"))
    assert_bad(capsys, "latin.py", "not valid UTF-8")


def test_declared_encoding_is_honoured(capsys):
    source = "# -*- coding: latin-1 -*-\n" + GOOD.replace("nonzero(x)", "nonzero(x)  # caf\xe9")
    Path("latin.py").write_bytes(source.encode("latin-1"))
    rc, data, err = lint(capsys, "latin.py")
    assert rc == 1 and not err and [(f["line"], f["code"]) for f in data] == [(5, "SYN301")]


def test_crlf_and_form_feed_files_lint_at_the_right_lines(capsys):
    Path("crlf.py").write_bytes(GOOD.replace("\n", "\r\n").replace("def forward", "\x0c\r\ndef forward").encode())
    rc, data, err = lint(capsys, "crlf.py")
    assert rc == 1 and not err and [(f["line"], f["column"]) for f in data] == [(5, 12)]


def test_missing_path(capsys):
    assert_bad(capsys, "missing.py", "no such file or directory")
    assert_bad(capsys, "missing_dir/", "no such file or directory")


def test_empty_file_is_valid(capsys):
    Path("empty.py").write_text("")
    rc, data, err = lint(capsys, "empty.py")
    assert (rc, data, err) == (0, [], [])


def test_folder_without_python_files(capsys):
    os.makedirs("docs/img")
    Path("docs/readme.md").write_text("torch.nonzero(x)\n")
    rc = main(["lint", "--no-cache", "docs"])
    out, err = capsys.readouterr()
    assert rc == 0 and not err and "0 files" in out


def test_unreadable_file(capsys):
    p = Path("secret.py")
    p.write_text(GOOD)
    p.chmod(0)
    try:
        try:
            p.open("rb").close()
            pytest.skip("running as a user who can read any file (root)")
        except PermissionError:
            pass
        assert_bad(capsys, "secret.py", "permission denied")
    finally:
        p.chmod(0o644)


def test_symlink_loop(capsys):
    os.symlink("loop_b.py", "loop_a.py")
    os.symlink("loop_a.py", "loop_b.py")
    assert_bad(capsys, "loop_a.py", "symbolic link loop")


def test_broken_symlink_in_a_folder(capsys):
    os.makedirs("pkg")
    Path("pkg/ok.py").write_text(GOOD)
    os.symlink("gone.py", "pkg/dangling.py")
    rc, data, err = lint(capsys, "pkg")
    assert rc == 2 and [f["path"] for f in data] == ["pkg/ok.py"]
    assert err == ["syncscan: error: pkg/dangling.py: broken symbolic link"]


def test_folder_symlink_cycle_is_not_followed(capsys):
    os.makedirs("pkg/sub")
    Path("pkg/sub/ok.py").write_text(GOOD)
    os.symlink("..", "pkg/sub/up")
    rc, data, err = lint(capsys, "pkg")
    assert rc == 1 and not err and [f["path"] for f in data] == ["pkg/sub/ok.py"]


def test_notebook_that_is_not_json(capsys):
    Path("nb.ipynb").write_text("{ not json")
    assert_bad(capsys, "nb.ipynb", "not a valid Jupyter notebook")


def test_notebook_json_without_cells(capsys):
    Path("nb.ipynb").write_text('{"metadata": {}}')
    assert_bad(capsys, "nb.ipynb", "not a valid Jupyter notebook")
    Path("nb.ipynb").write_text('{"cells": [{"cell_type": "code", "source": 3}]}')
    assert_bad(capsys, "nb.ipynb", "cell 1")


@pytest.mark.parametrize("text", ["", "\n", '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'])
def test_empty_notebook_is_valid(capsys, text):
    Path("nb.ipynb").write_text(text)
    rc, data, err = lint(capsys, "nb.ipynb", "good.py")
    assert rc == 1 and not err and [f["path"] for f in data] == ["good.py"]


def test_several_bad_files_each_get_their_line(capsys):
    Path("a.py").write_text("import torch\nx = (\n")
    Path("b.py").write_bytes(b"\x00\x00")
    rc, data, err = lint(capsys, "a.py", "b.py", "c.py", "good.py")
    assert rc == 2 and len(data) == 1
    assert sorted(e.split(":")[2].strip() for e in err) == ["a.py", "b.py", "c.py"]


# -- size and depth -----------------------------------------------------------------------------

def test_fifty_thousand_lines(capsys):
    body = "".join(f"def helper_{i}(x):\n    y = x + {i}\n    return y * 2\n\n\n" for i in range(10_000))
    Path("big.py").write_text("import torch\n\n\n" + body + "def forward(self, x):\n    return torch.nonzero(x)\n")
    assert len(Path("big.py").read_text().splitlines()) > 50_000
    t = time.perf_counter()
    rc, data, err = lint(capsys, "big.py", "good.py")
    elapsed = time.perf_counter() - t
    assert rc == 1 and not err
    assert sorted((f["path"], f["code"]) for f in data) == [("big.py", "SYN301"), ("good.py", "SYN301")]
    assert elapsed < 60, f"50k lines took {elapsed:.1f}s"


@pytest.mark.parametrize("name,source,reason", [
    ("ifs.py", "import torch\nx = 1\n" + "".join("    " * i + "if x:\n" for i in range(200)) + "    " * 200 + "pass\n",
     "too many levels of indentation"),
    ("parens.py", "import torch\nx = " + "(" * 1000 + "1" + ")" * 1000 + "\n", "too many nested parentheses"),
    ("chain.py", "import torch\na = 1\nx = " + " + ".join(["a"] * 10_000) + "\n", "too deeply nested"),
])
def test_too_deep_for_python(capsys, name, source, reason):
    """Code Python itself refuses to compile: one line each, no crash."""
    Path(name).write_text(source)
    assert_bad(capsys, name, reason)


def test_deep_but_valid_code_is_linted(capsys):
    nested = "".join("    " * (i + 1) + "if x:\n" for i in range(90)) + "    " * 91 + "y = torch.nonzero(x)\n"
    chain = "    z = " + " + ".join(["x"] * 2000) + "\n"
    Path("deep.py").write_text("import torch\n\ndef forward(self, x):\n" + chain + nested)
    rc, data, err = lint(capsys, "--select", "SYN301", "deep.py")
    assert rc == 1 and not err and [(f["line"], f["code"]) for f in data] == [(95, "SYN301")]


# -- issue 14: inputs at the edges --------------------------------------------------------------

FIXABLE = textwrap.dedent("""\
    import torch

    def compute_loss(pred, target):
        zero = torch.tensor(0.0, device=pred.device)
        return torch.maximum((pred - target).mean(), zero)
    """)  # SYN202, hot, with a safe fix
FIXED = FIXABLE.replace("torch.tensor(0.0, device=pred.device)", "torch.full((), 0.0, device=pred.device)")


def notebook(*sources, metadata=None) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
              "source": s} for i, s in enumerate(sources)]
    return json.dumps({"cells": cells, "metadata": {} if metadata is None else metadata,
                       "nbformat": 4, "nbformat_minor": 5}, indent=1)


def run_cli(*argv, stdin=None, timeout=60):
    """The console entry point in a child process (a hang fails the test instead of the suite)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "syncscan", *argv], stdin=stdin, capture_output=True,
                          text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("mode", ["--fix", "--diff"])
def test_fix_of_a_notebook_with_an_unfixable_finding_still_fixes_the_later_files(capsys, mode):
    Path("m.ipynb").write_text(notebook("import torch\n\ndef forward(self, x):\n    return x.tolist()\n"))
    Path("z.py").write_text(FIXABLE)
    rc = main(["lint", "--no-cache", mode, "m.ipynb", "z.py"])
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err, err
    if mode == "--fix":
        assert Path("z.py").read_text() == FIXED
        assert "Fixed 1 sync in 1 file." in out and "SYN102" in out  # the notebook's finding is left
        assert rc == 1
    else:
        assert Path("z.py").read_text() == FIXABLE and "+    zero = torch.full((), 0.0" in out
        assert rc == 1 and "Would fix 1 sync in 1 file." in err


def test_fifo_named_on_the_command_line_is_not_read():
    os.mkfifo("pipe.py")
    p = run_cli("lint", "--no-cache", "pipe.py", "good.py")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == "syncscan: error: pipe.py: not a regular file (a FIFO): not read"
    assert "good.py:4:12: SYN301" in p.stdout


def test_fifo_and_socket_found_in_a_folder_are_skipped_with_a_message():
    import socket

    os.makedirs("d")
    Path("d/ok.py").write_text(GOOD)
    os.mkfifo("d/x.py")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind("d/s.py")
        p = run_cli("lint", "--no-cache", "--format", "json", "d")
    finally:
        sock.close()
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert sorted(p.stderr.splitlines()) == ["syncscan: error: d/s.py: not a regular file (a socket): not read",
                                             "syncscan: error: d/x.py: not a regular file (a FIFO): not read"]
    assert [f["path"] for f in json.loads(p.stdout)] == ["d/ok.py"]


def test_a_device_is_not_read(capsys):
    assert_bad(capsys, "/dev/null", "not a regular file (a character device)")  # (not /dev/zero: endless)


@pytest.mark.parametrize("metadata", [
    {"kernelspec": "python3"},
    {"language_info": ["python"]},
    {"kernelspec": {"language": ["python"]}, "language_info": "python"},
    {"kernelspec": None, "language_info": {"name": None}},
    "not an object",
])
def test_notebook_metadata_of_odd_shapes_is_linted_as_python(capsys, metadata):
    Path("nb.ipynb").write_text(notebook("import torch\n\ndef forward(self, x):\n    return torch.nonzero(x)\n",
                                         metadata=metadata))
    rc, data, err = lint(capsys, "nb.ipynb", "good.py")
    assert rc == 1 and not err
    assert sorted((f["path"], f["code"]) for f in data) == [("good.py", "SYN301"), ("nb.ipynb", "SYN301")]


def test_a_notebook_of_another_language_is_still_skipped(capsys):
    Path("nb.ipynb").write_text(notebook("x <- torch.nonzero(y)\n", metadata={"kernelspec": {"language": "R"}}))
    rc, data, err = lint(capsys, "nb.ipynb", "good.py")
    assert rc == 1 and not err and [f["path"] for f in data] == ["good.py"]


def test_notebook_on_stdin_with_stdin_filename(capsys, monkeypatch):
    import io
    import sys

    nb = notebook("import torch\n", "def forward(self, x):\n    return torch.nonzero(x)\n")

    class _Stdin:
        buffer = io.BytesIO(nb.encode())

    monkeypatch.setattr(sys, "stdin", _Stdin())
    rc, data, err = lint(capsys, "--stdin-filename", "nb.ipynb", "-")
    assert rc == 1 and not err
    assert [(f["path"], f["cell"], f["line"], f["code"]) for f in data] == [("nb.ipynb", 2, 2, "SYN301")]


def test_notebook_on_stdin_is_fixed_as_a_notebook(capsys, monkeypatch):
    import io
    import sys

    nb = notebook("import torch\n", FIXABLE)

    class _Stdin:
        buffer = io.BytesIO(nb.encode())

    monkeypatch.setattr(sys, "stdin", _Stdin())
    rc = main(["lint", "--no-cache", "--fix", "--stdin-filename", "nb.ipynb", "-"])
    out, err = capsys.readouterr()
    assert rc == 0 and not err
    cells = json.loads(out)["cells"]
    assert "".join(cells[1]["source"]) == FIXED


def test_fixed_is_not_claimed_when_the_write_fails(capsys, monkeypatch):
    from syncscan.lint import fixer

    Path("z.py").write_text(FIXABLE)

    def refuse(path, text):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(fixer, "write_atomic", refuse)
    rc = main(["lint", "--no-cache", "--fix", "z.py"])
    out, err = capsys.readouterr()
    assert rc == 2 and "Fixed" not in out
    assert "syncscan: error: z.py: cannot write the fix: Operation not permitted" in err
    assert Path("z.py").read_text() == FIXABLE


def test_stdin_closed():
    import subprocess
    import sys

    # `syncscan lint - <&-`: the child starts with file descriptor 0 closed
    p = subprocess.run(f"{sys.executable} -m syncscan lint --no-cache - <&-", shell=True, executable="/bin/bash",
                       capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == "syncscan: error: -: standard input is closed"


def test_stdin_named_twice_is_read_and_reported_once(capsys, monkeypatch):
    import io
    import sys

    class _Stdin:
        buffer = io.BytesIO(GOOD.encode())

    monkeypatch.setattr(sys, "stdin", _Stdin())
    rc, data, err = lint(capsys, "-", "-")
    assert rc == 1 and not err and [(f["path"], f["code"]) for f in data] == [("-", "SYN301")]
