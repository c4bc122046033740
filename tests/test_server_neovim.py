"""End to end with a real editor: headless Neovim (Debian's `neovim`) starts `syncscan server`
through its built-in LSP client, opens a file, and reads the diagnostics back; then types a new
sync into the buffer and reads them again. Skipped when nvim is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls")
NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="needs Neovim (apt-get install neovim)")
REPO = Path(__file__).resolve().parents[1]

# vim.lsp.start_client exists from Neovim 0.5 on (Debian 12 ships 0.7); newer versions have
# vim.lsp.start / vim.lsp.enable, which editors/README.md shows
INIT = textwrap.dedent("""\
    local out = {}
    local function dump(tag)
      local items = {}
      for _, d in ipairs(vim.diagnostic.get(0)) do
        local lsp = (d.user_data or {}).lsp or {}
        table.insert(items, {lnum = d.lnum, col = d.col, severity = d.severity, message = d.message,
                             code = d.code or lsp.code, source = d.source,
                             href = (lsp.codeDescription or {}).href})
      end
      out[tag] = items
    end
    local id = vim.lsp.start_client({
      name = "syncscan",
      cmd = {vim.env.SYNCSCAN_PYTHON, "-m", "syncscan", "server"},
      root_dir = vim.env.SYNCSCAN_ROOT,
    })
    vim.cmd("edit " .. vim.fn.fnameescape(vim.env.SYNCSCAN_FILE))
    vim.lsp.buf_attach_client(0, id)
    out.attached = vim.wait(60000, function() return #vim.diagnostic.get(0) >= 4 end, 50)
    dump("opened")
    -- type a new sync at the end of MaskedLoss.forward (before `return loss`)
    local row = vim.fn.search("return loss$") - 1
    vim.api.nvim_buf_set_lines(0, row, row, false, {"            print(loss.item())"})
    out.changed = vim.wait(60000, function()
      for _, d in ipairs(vim.diagnostic.get(0)) do
        if d.lnum == row and string.find(d.message, "item", 1, true) then return true end
      end
      return false
    end, 50)
    out.row = row
    dump("edited")
    vim.lsp.stop_client(id)
    vim.fn.writefile({vim.fn.json_encode(out)}, vim.env.SYNCSCAN_OUT)
    vim.cmd("qall!")
""")


def test_neovim_reads_the_diagnostics_and_their_updates(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pyproject.toml").write_text("[tool.syncscan]\n")
    target = ws / "masked_loss_naive.py"
    shutil.copyfile(REPO / "fixtures" / "masked_loss_naive.py", target)
    (tmp_path / "init.lua").write_text(INIT)
    out = tmp_path / "out.json"
    env = dict(os.environ, SYNCSCAN_PYTHON=sys.executable, SYNCSCAN_ROOT=str(ws), SYNCSCAN_FILE=str(target),
               SYNCSCAN_OUT=str(out), XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_STATE_HOME=str(tmp_path / "state"))
    p = subprocess.run([NVIM, "--headless", "--clean", "-u", str(tmp_path / "init.lua")], env=env, cwd=ws,
                       capture_output=True, text=True, timeout=240, check=False)
    assert out.exists(), p.stdout + p.stderr
    got = json.loads(out.read_text())
    assert got["attached"] and got["changed"], got
    text = target.read_text().splitlines()
    opened = {(d["code"], d["lnum"]) for d in got["opened"]}
    line = next(i for i, s in enumerate(text) if "torch.nonzero(" in s)
    assert ("SYN301", line) in opened and {c for c, _ in opened} == {"SYN301", "SYN207", "SYN305", "SYN306"}
    nonzero = next(d for d in got["opened"] if d["code"] == "SYN301")
    assert nonzero["message"].startswith("[hot] torch.nonzero syncs") and nonzero["severity"] == 2  # WARN
    assert nonzero["source"] == "syncscan"
    # the typed line: a new finding at that row; the findings above it stay where they were
    edited = {(d["code"], d["lnum"]) for d in got["edited"]}
    assert ("SYN101", got["row"]) in edited and ("SYN301", line) in edited
    unique = next(i for i, s in enumerate(text) if "torch.unique(" in s)
    assert ("SYN305", unique) in edited
