"""`syncscan server` driven by a real LSP client (pytest-lsp starts it as a subprocess and speaks
JSON-RPC to it over stdio, as an editor does): initialize, open, diagnostics at the right lines,
code actions returning workspace edits, changes, saves, hover, measured costs, shutdown and exit."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from conftest import FIXTURES  # noqa: E402 - after the skips: without pygls there is nothing to test
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from syncscan.cli import main  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "lsp"
TIMEOUT = 60  # seconds for one diagnostics round (a busy CI machine; it takes well under one)

TRAIN = """\
import torch
from torch.utils.data import DataLoader

from helpers import scaled


def train(model, data, optimizer, device):
    loader = DataLoader(data, batch_size=32)
    for x, y in loader:
        x = x.to(device)
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        total = scaled(loss)
"""

HELPERS = """\
import torch


def scaled(loss):
    return loss.item() * 2.0
"""


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pyproject.toml").write_text('[tool.syncscan]\nselect = ["SYN"]\n')
    (ws / "train.py").write_text(TRAIN)
    (ws / "helpers.py").write_text(HELPERS)
    shutil.copyfile(FIXTURES / "masked_loss_naive.py", ws / "masked_loss_naive.py")
    (ws / "_common.py").write_text("")
    return ws


def _options(request) -> dict:
    marker = request.node.get_closest_marker("settings")
    return marker.args[0] if marker else {}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "syncscan", "server"]))
async def client(lsp_client: LanguageClient, request, workspace):
    callspec = getattr(request.node, "callspec", None)
    name = callspec.params.get("client_name") if callspec is not None else None
    marker = request.node.get_closest_marker("client")
    caps = client_capabilities(name or (marker.args[0] if marker else "visual-studio-code"))
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        initialization_options=_options(request)))
    yield
    await lsp_client.shutdown_session()


async def diagnostics_where(client: LanguageClient, uri: str, check, timeout: float = TIMEOUT):
    """Wait until the diagnostics published for `uri` satisfy `check`; return them."""
    async def wait():
        while True:
            got = client.diagnostics.get(uri)
            if got is not None and check(got):
                return got
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), timeout)


def open_file(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text() if text is None else text)))
    return uri


async def open_at(client: LanguageClient, path: Path, code: str):
    """Open a file and wait for its diagnostics to hold one of `code`: (uri, all of them, that one)."""
    uri = open_file(client, path)
    diags = await diagnostics_where(client, uri, lambda d: any(x.code == code for x in d))
    return uri, diags, next(d for d in diags if d.code == code)


def change(client: LanguageClient, uri: str, version: int, start, end, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(*start), types.Position(*end)), text=text)]))


async def code_actions(client: LanguageClient, uri: str, diagnostic=None, only=None) -> list[types.CodeAction]:
    """textDocument/codeAction at a diagnostic (or at the file's start), as an editor asks."""
    rng = diagnostic.range if diagnostic is not None else types.Range(types.Position(line=0, character=0),
                                                                      types.Position(line=0, character=0))
    got = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
        context=types.CodeActionContext(diagnostics=[diagnostic] if diagnostic is not None else [], only=only)))
    return list(got or [])


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 columns; the tests' texts are ASCII) to a text."""
    lines = text.splitlines(True)

    def off(p):
        return sum(len(x) for x in lines[:p.line]) + p.character

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:off(e.range.start)] + e.new_text + text[off(e.range.end):]
        lines = text.splitlines(True)
    return text


def cli_findings(path: Path, *flags: str) -> list[dict]:
    out = path.parent / "out.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["lint", "--format", "json", "--no-cache", "--exit-zero", *flags, str(path)])
    out.write_text(buf.getvalue())
    return json.loads(buf.getvalue())


def line_of(text: str, needle: str) -> int:
    """0-based line of the first line holding `needle`."""
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


# ------------------------------------------------------------------------------ the exchange


@pytest.mark.asyncio
async def test_initialize_advertises_what_the_server_does(client: LanguageClient):
    caps = client.init_result.capabilities
    assert client.init_result.server_info.name == "syncscan"
    assert caps.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert caps.text_document_sync.save.include_text is True
    assert caps.hover_provider
    kinds = set(caps.code_action_provider.code_action_kinds)
    assert {"quickfix", "quickfix.unsafe", "source.fixAll.syncscan"} <= kinds
    assert caps.code_action_provider.resolve_provider is True


@pytest.mark.asyncio
async def test_open_change_code_action_hover_as_an_editor_drives_it(client: LanguageClient, workspace):
    path = workspace / "masked_loss_naive.py"
    text = path.read_text()
    uri = open_file(client, path)
    diags = await diagnostics_where(client, uri, lambda d: len(d) >= 4)
    # the same findings as `syncscan lint --all`, at the same places (0-based lines, UTF-16 columns)
    expected = {(f["code"], f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"] - 1)
                for f in cli_findings(path, "--all")}
    got = {(d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
           for d in diags}
    assert got == expected
    nonzero = next(d for d in diags if d.code == "SYN301")
    assert nonzero.range.start.line == line_of(text, "torch.nonzero(")
    assert nonzero.message.startswith("[hot] torch.nonzero syncs")
    assert "rewrite: `target.masked_fill_(" in nonzero.message
    assert nonzero.source == "syncscan" and nonzero.severity == types.DiagnosticSeverity.Warning
    assert nonzero.code_description.href == "https://github.com/syncscan/syncscan/blob/main/docs/rules.md#syn301"

    # code action on the nonzero line: its safe fix, as a workspace edit, and the noqa action
    actions = await code_actions(client, uri, nonzero)
    titles = [a.title for a in actions]
    fix = next(a for a in actions if a.title.startswith("Fix SYN301"))
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred and list(fix.diagnostics) == [nonzero]
    fixed = apply(text, fix.edit.changes[uri])
    assert "target.masked_fill_(target == self.num_classes - 1, self.ignore_val)" in fixed
    assert "torch.nonzero(" not in fixed
    assert any(t.startswith("Ignore SYN301 on this line") for t in titles)
    # the unsafe fixes (SYN207 on the next line, SYN306) are not offered unless asked for
    unique = next(d for d in diags if d.code == "SYN305")
    actions = await code_actions(client, uri, unique)
    assert not any(a.title.startswith("Fix SYN305") for a in actions)

    # didChange: apply the fix as the editor would; the nonzero finding goes, the others stay put
    version = 2
    for e in sorted(fix.edit.changes[uri], key=lambda e: e.range.start.line, reverse=True):
        change(client, uri, version, (e.range.start.line, e.range.start.character),
               (e.range.end.line, e.range.end.character), e.new_text)
        version += 1
    diags = await diagnostics_where(client, uri, lambda d: not any(x.code == "SYN301" for x in d))
    assert {d.code for d in diags} == {"SYN305", "SYN306"}  # SYN207 went with the index assignment
    assert next(d for d in diags if d.code == "SYN305").range.start.line == line_of(fixed, "torch.unique(")

    # a new sync typed into the loss: found at its line, in the hot context of `forward`
    at = line_of(fixed, "return loss")
    change(client, uri, version, (at, 0), (at, 0), "            print(loss.item())\n")
    diags = await diagnostics_where(client, uri, lambda d: any(x.code == "SYN101" for x in d))
    item = next(d for d in diags if d.code == "SYN101")
    assert item.range.start.line == at and item.message.startswith("[hot]")

    # hover on it: the rule's why and use-instead, and the link
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=item.range.start))
    md = hover.contents.value
    assert "**SYN101 `item`**" in md and "**Why is this bad?**" in md and "**Use instead:**" in md
    assert "docs/rules.md#syn101" in md
    # and nothing to say away from findings
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0))) is None


@pytest.mark.asyncio
async def test_noqa_action_silences_the_finding(client: LanguageClient, workspace):
    path = workspace / "helpers.py"
    uri, _diags, item = await open_at(client, path, "SYN101")
    actions = await code_actions(client, uri, item)
    noqa = next(a for a in actions if a.title.startswith("Ignore SYN101"))
    new = apply(path.read_text(), noqa.edit.changes[uri])
    assert "    return loss.item() * 2.0  # noqa: SYN101\n" in new
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)]))
    await diagnostics_where(client, uri, lambda d: not d)


@pytest.mark.asyncio
async def test_fix_all_safe_resolves_to_what_lint_fix_writes(client: LanguageClient, workspace, tmp_path):
    path = workspace / "train.py"
    text = path.read_text()
    uri = open_file(client, path)
    diags = await diagnostics_where(client, uri, lambda d: {"SYN204", "SYN205"} <= {x.code for x in d})
    actions = await code_actions(client, uri, only=["source.fixAll.syncscan"])
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.syncscan" and fix_all.edit is None  # VS Code resolves it
    resolved = await client.code_action_resolve_async(fix_all)
    fixed = apply(text, resolved.edit.changes[uri])
    expected = tmp_path / "copy" / "train.py"
    shutil.copytree(workspace, expected.parent)
    main(["lint", "--fix", "--all", "--no-cache", "--quiet", "--exit-zero", str(expected)])
    assert fixed == expected.read_text() != text
    assert "non_blocking=True" in fixed and "pin_memory=torch.cuda.is_available()" in fixed
    assert {d.code for d in diags} >= {"SYN204", "SYN205"}


@pytest.mark.asyncio
@pytest.mark.client("emacs")  # eglot: no lazy code action edits
async def test_fix_all_without_resolve_support_carries_its_edit(client: LanguageClient, workspace):
    path = workspace / "train.py"
    uri = open_file(client, path)
    await diagnostics_where(client, uri, lambda d: {"SYN204", "SYN205"} <= {x.code for x in d})
    actions = await code_actions(client, uri, only=["source.fixAll"])
    (fix_all,) = actions
    assert "non_blocking=True" in apply(path.read_text(), fix_all.edit.changes[uri])


@pytest.mark.asyncio
async def test_unsafe_fixes_only_when_asked(client: LanguageClient, workspace):
    path = workspace / "masked_loss_naive.py"
    uri, _diags, unique = await open_at(client, path, "SYN305")
    actions = await code_actions(client, uri, unique, only=["quickfix.unsafe"])
    (fix,) = actions
    assert fix.kind == "quickfix.unsafe" and not fix.is_preferred
    assert fix.title.startswith("Fix SYN305") and "(unsafe: assumes" in fix.title
    assert "sort()" in apply(path.read_text(), fix.edit.changes[uri])


@pytest.mark.asyncio
@pytest.mark.settings({"syncscan": {"unsafeFixes": True, "docsUrl": "https://example.org/rules.html",
                                    "severity": {"hot": "error"}}})
async def test_settings_unsafe_fixes_docs_url_and_severity(client: LanguageClient, workspace):
    path = workspace / "masked_loss_naive.py"
    uri, _diags, unique = await open_at(client, path, "SYN305")
    assert unique.code_description.href == "https://example.org/rules.html#syn305"
    assert unique.severity == types.DiagnosticSeverity.Error
    actions = await code_actions(client, uri, unique)
    assert any(a.kind == "quickfix.unsafe" and a.title.startswith("Fix SYN305") for a in actions)
    # settings change at run time: hot findings back to warnings
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"syncscan": {"severity": {"hot": "warning"}}}))
    await diagnostics_where(client, uri, lambda d: d and all(x.severity == types.DiagnosticSeverity.Warning
                                                            for x in d))


UNICODE = """\
import torch


def loss_fn(pred, target):
    label = "é😀"; n = pred.sum().item()
    return n
"""


@pytest.mark.asyncio
@pytest.mark.parametrize("client_name, column, label_end",
                         [("visual-studio-code", 23, 19), ("neovim@v0.11", 26, 22), ("emacs", 22, 18)])
async def test_columns_in_the_position_encoding_the_client_chose(client_name, column, label_end,
                                                                 client: LanguageClient, workspace):
    """`pred.sum().item()` after `label = "é😀"; `: column 22 in code points, 23 in UTF-16 units
    (the emoji is two), 26 in UTF-8 bytes. VS Code speaks UTF-16, Neovim 0.11 prefers UTF-8,
    Emacs (eglot) UTF-32."""
    path = workspace / "uni.py"
    path.write_text(UNICODE, encoding="utf-8")
    uri, _diags, item = await open_at(client, path, "SYN101")
    assert (item.range.start.line, item.range.start.character) == (4, column)
    # an edit in the same encoding lands where it should: delete the label statement
    change(client, uri, 2, (4, 4), (4, label_end), "")
    await diagnostics_where(client, uri, lambda d: any(x.code == "SYN101" and x.range.start.character == 8
                                                                for x in d))


# ------------------------------------------------------------------- the repository around


@pytest.mark.asyncio
async def test_helper_is_hot_from_the_training_loop_in_another_file(client: LanguageClient, workspace):
    """helpers.py alone has no loop: its `.item()` is hot only because train.py (never opened)
    calls it every step. train.py changed on disk (a checkout: didChangeWatchedFiles) without the
    call: cold. train.py opened, the call typed back and saved: hot again."""
    uri = open_file(client, workspace / "helpers.py")
    diags = await diagnostics_where(client, uri, lambda d: any(x.message.startswith("[hot]") for x in d))
    assert next(d for d in diags if d.code == "SYN101").severity == types.DiagnosticSeverity.Warning
    train = workspace / "train.py"
    with_call = train.read_text()
    train.write_text(with_call.replace("        total = scaled(loss)\n", ""))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=train.as_uri(), type=types.FileChangeType.Changed)]))
    diags = await diagnostics_where(client, uri, lambda d: d and all(x.message.startswith("[cold]") for x in d))
    assert next(d for d in diags if d.code == "SYN101").severity == types.DiagnosticSeverity.Hint
    turi = open_file(client, train)
    await diagnostics_where(client, turi, lambda d: bool(d))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=turi, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=with_call)]))
    train.write_text(with_call)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=turi), text=with_call))
    await diagnostics_where(client, uri, lambda d: any(x.message.startswith("[hot]") for x in d))


# ------------------------------------------------------------------------- measured costs


def _with_report(workspace: Path) -> Path:
    runs = workspace / "syncscan-runs" / "masked_loss"
    runs.mkdir(parents=True)
    shutil.copyfile(DATA / "masked_loss_report.json", runs / "report.json")
    # the file as profiled: older than the report
    os.utime(workspace / "masked_loss_naive.py", (1_700_000_000, 1_700_000_000))
    return runs / "report.json"


@pytest.fixture
def profiled(workspace):
    return _with_report(workspace)


@pytest.mark.asyncio
async def test_measured_costs_from_the_profile_report_inline(profiled, client: LanguageClient, workspace):
    path = workspace / "masked_loss_naive.py"
    text = path.read_text()
    report = json.loads(profiled.read_text())
    uri = open_file(client, path)
    diags = await diagnostics_where(client, uri, lambda d: any("measured:" in x.message for x in d))
    nonzero = next(d for d in diags if d.code == "SYN301")
    site = next(s for s in report["syncs"] if s["line"] == line_of(text, "torch.nonzero(") + 1)
    per_step = site["gpu_idle_ms"] / len(report["steps"])
    assert f"measured: {per_step:.3f} ms/step GPU idle, rewrite saves {site['saving_rewrite_ms']:.3f} ms/step" \
        in nonzero.message
    assert nonzero.severity == types.DiagnosticSeverity.Error
    # confirmed sites first, by the rewrite's predicted saving
    confirmed = [d for d in diags if "measured:" in d.message]
    assert list(diags[:len(confirmed)]) == confirmed and len(confirmed) == 4
    savings = [float(d.message.split("rewrite ")[1].split()[1]) * (-1 if "costs" in d.message.split("rewrite ")[1]
                                                                    else 1) for d in confirmed]
    assert savings == sorted(savings, reverse=True)
    assert "stale" not in nonzero.message
    # an unsaved edit above: the numbers are still shown, said to be stale
    change(client, uri, 2, (0, 0), (0, 0), "# edited\n")
    diags = await diagnostics_where(client, uri, lambda d: any("stale" in x.message for x in d))
    nonzero = next(d for d in diags if d.code == "SYN301")
    # joined on the lines the file had when profiled: the costs stay with their lines
    assert f"measured (stale: unsaved changes since the profile): {per_step:.3f} ms/step GPU idle" in nonzero.message


# ------------------------------------------------------------------------- lifecycle


@pytest.mark.asyncio
async def test_shutdown_and_exit_end_the_process_cleanly(client: LanguageClient, workspace):
    uri = open_file(client, workspace / "helpers.py")
    await diagnostics_where(client, uri, lambda d: bool(d))
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await diagnostics_where(client, uri, lambda d: not d)
    await client.shutdown_session()
    assert client._server.returncode == 0
    client.capabilities = None  # shut down already: the fixture must not do it again


def test_server_without_the_lsp_extra_says_how_to_install_it(tmp_path):
    import subprocess

    code = ("import builtins, sys\n"
            "real = builtins.__import__\n"
            "def fake(name, *a, **k):\n"
            "    if name.split('.')[0] in ('pygls', 'lsprotocol'):\n"
            "        raise ImportError(name)\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = fake\n"
            "from syncscan.cli import main\n"
            "sys.exit(main(['server']))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 2
    assert p.stderr.strip() == "syncscan: error: syncscan server needs the lsp extra: pip install 'syncscan[lsp]'"


def test_linting_does_not_import_the_server_libraries(tmp_path):
    import subprocess

    (tmp_path / "a.py").write_text(textwrap.dedent(HELPERS))
    code = ("import sys\nfrom syncscan.cli import main\nmain(['lint', '--no-cache', sys.argv[1]])\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'syncscan.server')]\n"
            "bad += [m for m in sys.modules if m.startswith('syncscan.server')]\n"
            "print('LOADED', bad)\n")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.py")], capture_output=True, text=True,
                       timeout=60, check=False)
    assert "LOADED []" in p.stdout, p.stdout + p.stderr


def test_stdio_flag_is_accepted_and_exit_without_shutdown_is_an_error():
    """`syncscan server --stdio` (editors pass it): initialize over stdin/stdout; `exit` without
    `shutdown` first ends the process with 1, as LSP says."""
    import subprocess

    def frame(msg: dict) -> bytes:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    data = frame({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None,
                                                               "capabilities": {}}})
    data += frame({"method": "initialized", "params": {}}) + frame({"method": "exit"})
    p = subprocess.run([sys.executable, "-m", "syncscan", "server", "--stdio"], input=data, capture_output=True,
                       timeout=120, check=False)
    assert b'"id": 1' in p.stdout or b'"id":1' in p.stdout
    assert b'"serverInfo"' in p.stdout and b'"syncscan"' in p.stdout
    assert p.returncode == 1
