"""`syncscan server`: findings, fixes and measured costs in the editor, over the Language Server
Protocol. Only `command` is imported by the CLI; pygls and lsprotocol load when the server runs.

Modules: adapter (the one door into the lint engine, fixer, registry and profile join), text (LSP
lines and positions), incremental (re-lint only what an edit can change), project (the
repository's call graph around a file), costs (measured costs from a profile report), settings,
session (documents and the lint steps, no LSP), diagnostics and actions (renderers), worker (the
background process), server (the LSP wiring).
"""
