"""Command line: `syncscan lint|rules|profile|analyze|tb|server`.

Each command lives in its own module exposing `add_arguments(parser)` and `run(args) -> int`,
imported only when that command runs (so `syncscan lint` never imports torch).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from syncscan import __version__
from syncscan.errors import UserError

COMMANDS = {
    "lint": ("syncscan.lint.command", "find host-device syncs in Python files, folders and notebooks"),
    "rules": ("syncscan.lint.rules_command", "list the rules, or explain one (syncscan rules SYN301)"),
    "profile": ("syncscan.commands.profile", "run a training script under torch.profiler and report every sync"),
    "analyze": ("syncscan.commands.analyze", "analyse an existing torch.profiler trace"),
    "tb": ("syncscan.commands.tb", "open syncscan's profiler runs in TensorBoard"),
    "server": ("syncscan.server.command", "the language server for editors (LSP over stdio; the lsp extra)"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors: one line, exit 2 (argparse's own convention)
        self.print_usage(sys.stderr)
        print(f"syncscan: error: {message}", file=sys.stderr)
        sys.exit(2)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(prog="syncscan", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"syncscan {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if command == name:
            importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(command if command in COMMANDS else None)
    args, extra = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if extra and not getattr(args, "_accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        return int(module.run(args) or 0)
    except UserError as exc:
        print(f"syncscan: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("syncscan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # last resort: a bug in syncscan, still one line for the user
        print(f"syncscan: internal error: {type(exc).__name__}: {exc} "
              "(please report it; SYNCSCAN_DEBUG=1 shows the traceback)", file=sys.stderr)
        import os
        if os.environ.get("SYNCSCAN_DEBUG"):
            raise
        return 2


if __name__ == "__main__":
    sys.exit(main())
