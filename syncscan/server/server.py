"""`syncscan server`: the language server (pygls + lsprotocol, over stdio).

The LSP side only: documents in and out, scheduling, and turning `Session` results into
notifications and replies. Each change is linted after `debounceMs` (changes that arrive while a
lint runs are merged into the next one); once typing pauses for `fullLintDelayMs`, and on save,
the whole file is linted again in a worker process and the result replaces the fast one where it
differs. Hot, epoch and cold come from the project context `syncscan lint` uses; its index is made
in the worker process first (the server then loads it warm). On save, and when files change on
disk, the project scans them, and the other open files are settled again (a helper's caller may
have become hot).
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from syncscan import __version__
from syncscan.server import actions, adapter
from syncscan.server.diagnostics import diagnostics, shown_at
from syncscan.server.session import Doc, Session
from syncscan.server.settings import Settings
from syncscan.server.text import UTF8, UTF16, UTF32, Pos, apply_change
from syncscan.server.worker import Worker, WorkerError

_ENCODINGS = {"utf-8": UTF8, "utf-16": UTF16, "utf-32": UTF32}  # LSP's PositionEncodingKind values
_LEVELS = {"error": types.MessageType.Error, "warning": types.MessageType.Warning,
           "info": types.MessageType.Info, "log": types.MessageType.Log}


class SyncscanServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("syncscan", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.session = Session(log=self._log)
        self.encoding = UTF16
        self.cpu = ThreadPoolExecutor(1, thread_name_prefix="syncscan-lint")  # in-process lints, in order
        self.waits = ThreadPoolExecutor(2, thread_name_prefix="syncscan-wait")  # waiting on the workers
        self.linter = Worker()  # whole-file lints in the background
        self.indexer = Worker()  # the projects' indexes
        self.published: dict[str, list[dict]] = {}
        self._fast: dict[str, asyncio.TimerHandle] = {}
        self._full: dict[str, asyncio.TimerHandle] = {}
        self._running: set[str] = set()
        self._again: set[str] = set()
        self._indexing: set[str] = set()
        self.resolve_edits = False  # the client resolves code actions' edits lazily

    # -- messages --------------------------------------------------------------------------------
    def _log(self, message: str, level: str = "info") -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=_LEVELS.get(level, types.MessageType.Info),
                                                           message=message))
        except Exception:  # noqa: BLE001, S110 - no client yet, or it went away: nowhere to say it
            pass

    def publish(self, doc: Doc, shown) -> None:
        diags = diagnostics(shown, doc.shown_lines, self.encoding, self.session.settings)
        if self.published.get(doc.uri) == diags:
            return
        self.published[doc.uri] = diags
        self.send_diagnostics(doc.uri, diags, doc.version)

    def send_diagnostics(self, uri: str, diags: list[dict], version: int | None) -> None:
        """publishDiagnostics, built as JSON: pygls would structure and unstructure a few thousand
        objects per keystroke otherwise."""
        params = {"uri": uri, "diagnostics": diags, **({"version": version} if version is not None else {})}
        send = getattr(self.protocol, "_send_data", None)
        if send is None:  # another pygls: the typed way
            self.text_document_publish_diagnostics(self.protocol._converter.structure(
                params, types.PublishDiagnosticsParams))
            return
        send({"jsonrpc": "2.0", "method": types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, "params": params})

    # -- scheduling ----------------------------------------------------------------------------------
    def _later(self, table: dict, uri: str, delay_ms: int, coro_fn) -> None:
        old = table.pop(uri, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        table[uri] = loop.call_later(delay_ms / 1000, lambda: loop.create_task(coro_fn()))

    def lint_soon(self, doc: Doc) -> None:
        self._later(self._fast, doc.uri, self.session.settings.debounce_ms, lambda: self.lint_now(doc))

    async def lint_now(self, doc: Doc) -> None:
        """The fast lint, one at a time per document; changes that arrive meanwhile are linted next."""
        if doc.uri in self._running:
            self._again.add(doc.uri)
            return
        self._running.add(doc.uri)
        loop = asyncio.get_running_loop()
        try:
            while not doc.closed:
                self._again.discard(doc.uri)
                version = doc.version
                try:
                    shown = await loop.run_in_executor(self.cpu, self.session.fast, doc)
                except Exception as e:  # noqa: BLE001 - a bug on one buffer: one line, and the server goes on
                    self._internal_error(doc, e)
                    return
                if not doc.closed and doc.version == version:
                    self.publish(doc, shown)
                if doc.uri not in self._again and doc.version == version:
                    break
        finally:
            self._running.discard(doc.uri)
        if not doc.closed:
            self._later(self._full, doc.uri, self.session.settings.full_lint_delay_ms, lambda: self.lint_whole(doc))

    async def lint_whole(self, doc: Doc, saved: bool = False) -> None:
        """The whole file, in the worker process; it replaces the fast result where they differ."""
        if doc.closed:
            return
        loop = asyncio.get_running_loop()
        text, version = doc.text, doc.version
        try:
            try:
                summary = await loop.run_in_executor(self.waits, self.linter.call, "lint_text", doc.path, text, None)
            except WorkerError as e:
                self.session.say(f"syncscan: background lint failed ({e}); linting in the server", "warning")
                summary = await loop.run_in_executor(self.cpu, self.session.lint_here, doc.path, text)
            shown = await loop.run_in_executor(self.cpu, self.session.apply_full, doc, text, summary)
            if shown is None or doc.closed:
                return
            if doc.version == version:
                self.publish(doc, shown)
            if saved and await loop.run_in_executor(self.cpu, self.session.saved, doc):
                await self.refresh_all(exclude=doc.uri)
        except Exception as e:  # noqa: BLE001 - as in lint_now
            self._internal_error(doc, e)

    def _internal_error(self, doc: Doc, e: Exception) -> None:
        msg = " ".join(f"{type(e).__name__}: {e}".split())[:300]
        self.session.say(f"syncscan: {doc.path}: internal error: {msg} (please report it)", "error")

    async def refresh_all(self, exclude: str | None = None) -> None:
        """Settle every open document again (the repository index or the settings changed)."""
        loop = asyncio.get_running_loop()
        for doc in list(self.session.docs.values()):
            if doc.uri == exclude or doc.closed:
                continue
            version = doc.version
            try:
                shown = await loop.run_in_executor(self.cpu, self.session.refresh, doc)
            except Exception as e:  # noqa: BLE001 - as in lint_now
                self._internal_error(doc, e)
                continue
            if shown is not None and doc.version == version and not doc.closed:
                self.publish(doc, shown)

    async def index(self, path: str) -> None:
        """Make the index of the project holding `path` (a file or a folder) in the indexer process,
        once, then load it here and settle the open documents again."""
        loop = asyncio.get_running_loop()
        root = await loop.run_in_executor(self.cpu, adapter.project_root_of, path)
        if root is None or root in self.session.indexed or root in self._indexing:
            return
        self._indexing.add(root)
        try:
            await loop.run_in_executor(self.waits, self.indexer.call, "index_project", root)
            files = await loop.run_in_executor(self.cpu, self.session.indexed_at, root)
        except WorkerError as e:
            self.session.say(f"syncscan: could not index {root} ({e}); hot paths from each file alone", "warning")
            return
        finally:
            self._indexing.discard(root)
        self._log(f"syncscan: indexed {files} files under {root}", "log")
        await self.refresh_all()

    async def current(self, doc: Doc) -> None:
        """Make sure `doc.shown` belongs to the buffer as it is (a request right after a change)."""
        if doc.shown_text != doc.text:
            await asyncio.get_running_loop().run_in_executor(self.cpu, self.session.fast, doc)

    def stop_workers(self) -> None:
        for w in (self.linter, self.indexer):
            w.stop()


server = SyncscanServer()


def _doc(uri: str) -> Doc | None:
    return server.session.docs.get(uri)


@server.feature(types.INITIALIZE)
def initialize(params: types.InitializeParams) -> None:
    chosen = ServerCapabilitiesBuilder.choose_position_encoding(params.capabilities)
    server.encoding = _ENCODINGS.get(str(getattr(chosen, "value", chosen)), UTF16)
    roots = [to_fs_path(f.uri) for f in params.workspace_folders or []]
    if not roots and params.root_uri:
        roots = [to_fs_path(params.root_uri)]
    elif not roots and params.root_path:
        roots = [params.root_path]
    server.session.roots = [os.path.abspath(r) for r in roots if r]
    settings, problems = Settings.parse(params.initialization_options)
    server.session.settings = settings
    for p in problems:
        server.session.say(f"syncscan: {p}", "warning")
    td = params.capabilities.text_document
    ca = td.code_action if td is not None else None
    server.resolve_edits = bool(ca and ca.resolve_support and "edit" in ca.resolve_support.properties)


@server.feature(types.INITIALIZED)
async def initialized(params: types.InitializedParams) -> None:
    for root in server.session.roots:
        asyncio.get_running_loop().create_task(server.index(root))


@server.feature(types.SHUTDOWN)
def shutdown(params=None) -> None:
    server.stop_workers()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(params: types.DidOpenTextDocumentParams) -> None:
    td = params.text_document
    path = to_fs_path(td.uri) or td.uri
    if td.uri.startswith("vscode-notebook-cell:") or not (path.endswith((".py", ".pyi")) or td.language_id == "python"):
        return  # (notebooks: not yet; a cell alone is not the module it runs in)
    doc = Doc(td.uri, os.path.abspath(path), td.version, td.text)
    server.session.docs[td.uri] = doc
    await server.lint_now(doc)
    asyncio.get_running_loop().create_task(server.index(doc.path))


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(params: types.DidChangeTextDocumentParams) -> None:
    doc = _doc(params.text_document.uri)
    if doc is None:
        return
    text = doc.text
    for change in params.content_changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            r = change.range
            text = apply_change(text, Pos(r.start.line, r.start.character), Pos(r.end.line, r.end.character),
                                change.text, server.encoding)
        else:
            text = change.text
    doc.text, doc.version = text, params.text_document.version
    timer = server._full.pop(doc.uri, None)
    if timer is not None:
        timer.cancel()
    server.lint_soon(doc)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=True))
async def did_save(params: types.DidSaveTextDocumentParams) -> None:
    doc = _doc(params.text_document.uri)
    if doc is None:
        return
    if params.text is not None and params.text != doc.text:
        doc.text = params.text
    server.session.forget_configs()  # the pyproject.toml may be what was saved
    await server.lint_whole(doc, saved=True)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(params: types.DidCloseTextDocumentParams) -> None:
    doc = server.session.docs.pop(params.text_document.uri, None)
    if doc is None:
        return
    doc.closed = True
    for table in (server._fast, server._full):
        t = table.pop(doc.uri, None)
        if t is not None:
            t.cancel()
    server.published.pop(doc.uri, None)
    server.send_diagnostics(doc.uri, [], None)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
    settings, problems = Settings.parse(params.settings, server.session.settings)
    server.session.settings = settings
    server.session.forget_configs()
    for p in problems:
        server.session.say(f"syncscan: {p}", "warning")
    server.published.clear()
    await server.refresh_all()


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(params: types.DidChangeWatchedFilesParams) -> None:
    """Files changed on disk (a checkout, another editor): their projects scan them now (rather
    than at the next look, a second later at most) and the open files are settled again."""
    paths = [p for p in (to_fs_path(c.uri) for c in params.changes) if p and p.endswith((".py", ".pyi"))]
    loop = asyncio.get_running_loop()
    changed = False
    if paths:
        try:
            changed = await loop.run_in_executor(server.cpu, server.session.rescan, paths)
        except Exception as e:  # noqa: BLE001 - as in lint_now: one line, and the server goes on
            server.session.say(f"syncscan: rescanning changed files: {type(e).__name__}: {e}", "warning")
    if changed or any(c.uri.endswith("report.json") for c in params.changes):
        await server.refresh_all()


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(params: types.HoverParams) -> types.Hover | None:
    doc = _doc(params.text_document.uri)
    if doc is None:
        return None
    await server.current(doc)
    here = actions.at(doc.shown, doc.shown_lines, server.encoding, params.position)
    if not here:
        return None
    text = actions.hover_markdown(here, server.session.settings.docs_url)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, actions.UNSAFE, actions.FIX_ALL], resolve_provider=True))
async def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
    doc = _doc(params.text_document.uri)
    if doc is None:
        return None
    await server.current(doc)
    text = doc.shown_text or ""
    lines = doc.shown_lines
    only = [getattr(k, "value", k) for k in params.context.only] if params.context.only else None
    settings = server.session.settings
    diags = {(d.range.start.line, d.range.start.character, str(d.code)): d
             for d in params.context.diagnostics if d.source == "syncscan"}
    out: list[types.CodeAction] = []
    for s in actions.overlapping(doc.shown, lines, server.encoding, params.range):
        diag = diags.get((*actions.start_of(lines, s, server.encoding), s.finding.code))
        findings = doc.summary.findings if doc.summary is not None else [x.finding for x in doc.shown]
        for a in (actions.fix_action(doc.uri, doc.path, text, s, findings, diag, settings.unsafe_fixes, only,
                                     server.encoding),
                  actions.noqa_action(doc.uri, text, s, diag, only, server.encoding)):
            if a is not None:
                out.append(a)
    if actions.wants(only, actions.FIX_ALL) and (only is not None or out):
        eager = not server.resolve_edits
        loop = asyncio.get_running_loop()
        if eager:
            edit = await loop.run_in_executor(server.cpu, _fix_all_edit, doc, text)
            a = actions.fix_all_action(doc.uri, doc.shown, True, lambda: edit)
        else:
            a = actions.fix_all_action(doc.uri, doc.shown, False, None)
        if a is not None:
            out.append(a)
    return out or None


@server.feature(types.CODE_ACTION_RESOLVE)
async def code_action_resolve(action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    doc = _doc(data.get("uri", ""))
    if doc is None or data.get("action") != "fixAll" or action.edit is not None:
        return action
    await server.current(doc)
    edit = await asyncio.get_running_loop().run_in_executor(server.cpu, _fix_all_edit, doc, doc.shown_text or "")
    if edit is not None:
        action.edit = edit
    return action


def _fix_all_edit(doc: Doc, text: str) -> types.WorkspaceEdit | None:
    """`syncscan lint --fix` on the buffer: the safe fixes of the findings the editor shows (see
    diagnostics.severity_key: cold and low-confidence ones only while cold findings are shown), hot and
    cold as the project settles them."""
    freqs = server.session.frequencies(doc)
    settings = server.session.settings
    cfg = server.session.config(doc.path)

    def select(f) -> bool:
        return adapter.shown_by_config(f, cfg) and shown_at(f, adapter.context_of(f, freqs), settings)

    new, n, error = adapter.fix_all(doc.path, text, cfg, False, select)
    if error:
        server.session.say(f"syncscan: fix all: {doc.path}: {error}", "warning")
        return None
    if not n or new == text:
        return None
    return types.WorkspaceEdit(changes={doc.uri: actions.text_edits(text, new, server.encoding)})


def run() -> int:
    try:
        server.start_io()
    finally:
        server.stop_workers()
        server.cpu.shutdown(wait=False, cancel_futures=True)
        server.waits.shutdown(wait=False, cancel_futures=True)
    return 0 if getattr(server.protocol, "_shutdown", False) else 1
