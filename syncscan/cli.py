"""Command line: `syncscan lint|rules|profile|analyze|tb|server`.

Each command lives in its own module exposing `add_arguments(parser)` and `run(args) -> int`,
imported only when that command runs (so `syncscan lint` never imports torch).

A plain `syncscan lint` command line (its own options spelled out, its paths in one run) is read
without argparse (`quick_args`), from the same `add_arguments`: argparse, with the re, gettext,
locale and shutil it imports, is about a fifth of a one-file lint served from the cache. Anything
else (help, an abbreviation, an error) goes to argparse, which decides as always.
"""

from __future__ import annotations

import importlib
import sys

from syncscan import __version__
from syncscan.errors import UserError

TYPE_CHECKING = False  # (typing's, without importing typing: see lint/records.py)
if TYPE_CHECKING:
    import argparse

COMMANDS = {
    "lint": ("syncscan.lint.command", "find host-device syncs in Python files, folders and notebooks"),
    "rules": ("syncscan.lint.rules_command", "list the rules, or explain one (syncscan rules SYN301)"),
    "profile": ("syncscan.commands.profile", "run a training script under torch.profiler and report every sync"),
    "analyze": ("syncscan.commands.analyze", "analyse an existing torch.profiler trace"),
    "tb": ("syncscan.commands.tb", "open syncscan's profiler runs in TensorBoard"),
    "server": ("syncscan.server.command", "the language server for editors (LSP over stdio; the lsp extra)"),
}


QUICK_COMMANDS = ("lint",)  # the command whose start-up users wait on (pre-commit hooks, editors)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message):  # usage errors: one line, exit 2 (argparse's own convention)
            self.print_usage(sys.stderr)
            print(f"syncscan: error: {message}", file=sys.stderr)
            sys.exit(2)

    parser = _Parser(prog="syncscan", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"syncscan {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if command == name:
            importlib.import_module(module).add_arguments(p)
    return parser


class _Spec:
    """One add_argument call, as `quick_args` understands it (None: it does not)."""

    __slots__ = ("choices", "default", "dest", "flag", "names", "type")

    def __init__(self, names: tuple[str, ...], kw: dict):
        self.names = names
        self.type, self.choices = kw.get("type"), kw.get("choices")
        action = kw.get("action", "store")
        self.flag = {"store_true": True, "store_false": False}.get(action)  # the value a flag stores
        if names[0].startswith("-"):
            longs = [n for n in names if n.startswith("--")]
            self.dest = kw.get("dest") or (longs or list(names))[0].lstrip("-").replace("-", "_")
            self.default = kw.get("default", (not self.flag) if self.flag is not None else None)
        else:
            self.dest, self.default = names[0], kw.get("default")


class _Recorder:
    """Stands for the parser given to a command's `add_arguments`: keeps the calls; anything beyond
    plain options and one `nargs="*"` positional makes `ok` False (argparse then reads the line)."""

    KNOWN = frozenset({"action", "type", "choices", "default", "dest", "metavar", "help", "nargs"})

    def __init__(self) -> None:
        self.options: dict[str, _Spec] = {}
        self.specs: list[_Spec] = []
        self.positional: _Spec | None = None
        self.ok = True

    def add_argument(self, *names: str, **kw) -> None:
        spec = _Spec(names, kw)
        plain = set(kw) <= self.KNOWN and kw.get("action", "store") in ("store", "store_true", "store_false")
        if names[0].startswith("-"):
            plain = plain and "nargs" not in kw and not (spec.flag is not None and ("type" in kw or "choices" in kw))
            self.options.update((n, spec) for n in names)
        else:
            plain = plain and len(names) == 1 and kw.get("nargs") == "*" and self.positional is None \
                and "type" not in kw and "choices" not in kw
            self.positional = spec
        if isinstance(spec.default, str) and spec.type is not None:
            plain = False  # (argparse would convert it)
        self.ok = self.ok and plain
        self.specs.append(spec)


def quick_args(argv: list[str]):
    """The namespace argparse would give for `argv`, or None when the line is not a plain one
    (see the module's docstring): the command's own option strings exactly (`--opt VALUE` or
    `--opt=VALUE`, no value that starts with `-`), its positional arguments in one run, no `-`
    among them, no `--`, nothing argparse would refuse."""
    if not argv or argv[0] not in QUICK_COMMANDS:
        return None
    rec = _Recorder()
    importlib.import_module(COMMANDS[argv[0]][0]).add_arguments(rec)
    if not rec.ok or rec.positional is None:
        return None
    values = {spec.dest: spec.default for spec in rec.specs}
    positional: list[str] = []
    in_run = False  # the last token was a positional one
    i, n = 1, len(argv)
    while i < n:
        token = argv[i]
        i += 1
        if not token.startswith("-"):
            if positional and not in_run:  # a second run: argparse takes only the first
                return None
            positional.append(token)
            in_run = True
            continue
        in_run = False
        name, eq, value = token.partition("=")
        spec = rec.options.get(name if eq else token)
        if spec is None:
            return None
        if spec.flag is not None:
            if eq:
                return None
            values[spec.dest] = spec.flag
            continue
        if not eq:
            if i >= n or argv[i].startswith("-"):
                return None
            value = argv[i]
            i += 1
        try:
            got = spec.type(value) if spec.type is not None else value
        except Exception:  # noqa: BLE001 - whatever the type says no with: argparse reports it
            return None
        if spec.choices is not None and got not in spec.choices:
            return None
        values[spec.dest] = got
    values[rec.positional.dest] = positional if positional else (rec.positional.default
                                                                 if rec.positional.default is not None else [])
    from types import SimpleNamespace

    return SimpleNamespace(command=argv[0], **values)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = quick_args(argv)
    if args is not None:
        args.extra = []
    else:
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
