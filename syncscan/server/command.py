"""`syncscan server`: the language server over stdio (needs the `lsp` extra: pygls, lsprotocol)."""

from __future__ import annotations

from syncscan.errors import UserError


def add_arguments(p) -> None:
    p.add_argument("--stdio", action="store_true",
                   help="talk LSP over standard input and output (the default and only transport; "
                        "accepted because editors pass it)")


def run(args) -> int:
    try:
        import lsprotocol  # noqa: F401 - only whether it is installed
        import pygls  # noqa: F401
    except ImportError:
        raise UserError("syncscan server needs the lsp extra: pip install 'syncscan[lsp]'") from None
    from syncscan.server.server import run as serve

    return serve()
