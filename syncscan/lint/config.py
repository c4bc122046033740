"""`[tool.syncscan]` of the nearest pyproject.toml, per file (as ruff finds its config), merged
with the command line.

Each file gets the config of the nearest pyproject.toml with a `[tool.syncscan]` table above it
(`Settings.for_path`), so a monorepo's packages keep their own settings and findings do not
depend on the order of the paths on the command line. `--config FILE` gives every file that
one config. A config file that is ours but broken is an error naming the file (and the key),
never a silent default.
"""

from __future__ import annotations

import os
from functools import lru_cache

from syncscan.errors import UserError
from syncscan.lint.records import Frozen, Record

TYPE_CHECKING = False  # (typing's, without importing typing: see records.py)
if TYPE_CHECKING:
    from pathlib import Path

SUFFIXES = (".py", ".pyi", ".ipynb")  # the files a folder contributes (files.py)

KEYS = {"select", "ignore", "per-file-ignores", "exclude", "extend-exclude", "hot-functions", "show-cold",
        "fail-on-sync", "cache-dir", "respect-gitignore",
        "profile-report"}


class Config(Record):
    _fields = ("select", "ignore", "per_file_ignores", "exclude", "hot_functions", "show_cold", "fail_on_sync",
               "root", "cache_dir", "respect_gitignore", "path", "profile_report")
    select: list[str]
    ignore: list[str]
    per_file_ignores: dict[str, list[str]]
    exclude: list[str]
    hot_functions: list[str]
    show_cold: bool
    fail_on_sync: bool
    root: Path | None  # folder of the pyproject.toml it came from
    cache_dir: str | None
    respect_gitignore: bool
    path: Path | None  # the file it came from
    profile_report: str | None  # syncscan server: the report.json to take measured costs from

    def __init__(self, select: list[str] | None = None, ignore: list[str] | None = None,
                 per_file_ignores: dict[str, list[str]] | None = None, exclude: list[str] | None = None,
                 hot_functions: list[str] | None = None, show_cold: bool = False, fail_on_sync: bool = False,
                 root: Path | None = None, cache_dir: str | None = None, respect_gitignore: bool = True,
                 path: Path | None = None, profile_report: str | None = None):
        self.select = ["SYN"] if select is None else select
        self.ignore = [] if ignore is None else ignore
        self.per_file_ignores = {} if per_file_ignores is None else per_file_ignores
        self.exclude = [] if exclude is None else exclude
        self.hot_functions = [] if hot_functions is None else hot_functions
        self.show_cold, self.fail_on_sync, self.root, self.cache_dir = show_cold, fail_on_sync, root, cache_dir
        self.respect_gitignore, self.path, self.profile_report = respect_gitignore, path, profile_report

    def for_path(self, path: str) -> Config:
        """One config for every file (`Settings.for_path` gives each file its own)."""
        return self


class Overrides(Frozen):
    """What the command line sets on top of every file's config."""

    _fields = ("select", "extend_select", "ignore", "respect_gitignore")
    select: tuple[str, ...]  # replaces the config's
    extend_select: tuple[str, ...]
    ignore: tuple[str, ...]  # added to the config's
    respect_gitignore: bool | None

    def __init__(self, select: tuple[str, ...] = (), extend_select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                 respect_gitignore: bool | None = None):
        self._set(select=select, extend_select=extend_select, ignore=ignore, respect_gitignore=respect_gitignore)

    def apply(self, cfg: Config) -> Config:
        select = list(self.select) if self.select else list(cfg.select)
        out = cfg.replace(select=select + list(self.extend_select), ignore=cfg.ignore + list(self.ignore))
        if self.respect_gitignore is not None:
            out.respect_gitignore = self.respect_gitignore
        return out


class Settings:
    """The config of each file: the nearest pyproject.toml with [tool.syncscan] above it, or the
    one given with --config, with the command line's overrides applied; looked up once per
    folder. `-` (stdin) takes the config of `stdin_name` (--stdin-filename), else the working
    folder's."""

    def __init__(self, config_path: str | None = None, overrides: Overrides | None = None,
                 stdin_name: str | None = None):
        self.overrides = overrides or Overrides()
        self.stdin_name = stdin_name
        self._fixed = self.overrides.apply(load(config_path, None)) if config_path else None
        self._by_file: dict[str | None, Config] = {}
        self._by_dir: dict[str, Config] = {}
        self._by_path: dict[str, Config] = {}
        self._pyproject_of: dict[str, str | None] = {}

    def for_path(self, path: str) -> Config:
        if self._fixed is not None:
            return self._fixed
        cfg = self._by_path.get(path)  # asked for every file, several times a run: no syscall then
        if cfg is not None:
            return cfg
        where = (self.stdin_name or ".") if path == "-" else path
        d = os.path.abspath(where)  # not resolve(): a symlink loop must not raise here
        if where.endswith(SUFFIXES) or not os.path.isdir(d):  # a source file's name: no stat
            d = os.path.dirname(d)
        cfg = self._by_dir.get(d)
        if cfg is None:
            pyproject = self._find(d)
            cfg = self._by_file.get(pyproject)
            if cfg is None:
                base = load(pyproject, None) if pyproject is not None else Config()
                cfg = self._by_file[pyproject] = self.overrides.apply(base)
            self._by_dir[d] = cfg
        self._by_path[path] = cfg
        return cfg

    def configs(self) -> list[Config]:
        """The configs in use so far (the one with --config)."""
        return [self._fixed] if self._fixed is not None else list(self._by_file.values())

    def _find(self, start: str) -> str | None:
        """find_pyproject (of an absolute folder), with the answer remembered for every folder on the
        way up."""
        memo = self._pyproject_of
        passed: list[str] = []
        found: str | None = None
        for d in _upwards(start):
            if d in memo:
                found = memo[d]
                break
            passed.append(d)
            found = _ours(os.path.join(d, "pyproject.toml"))
            if found is not None:
                break
        for key in passed:
            memo[key] = found
        return found


def _upwards(folder: str) -> list[str]:
    """An absolute folder and its parents (as Path.parents: lexically, the root last)."""
    out = [folder]
    while True:
        parent = os.path.dirname(folder)
        if parent == folder:
            return out
        out.append(parent)
        folder = parent


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.syncscan] table, from `start` upwards."""
    from pathlib import Path

    start = Path(os.path.abspath(start))  # not resolve(): a symlink loop must not raise here
    if not start.is_dir():
        start = start.parent
    for d in _upwards(str(start)):
        p = _ours(os.path.join(d, "pyproject.toml"))
        if p is not None:
            return Path(p)
    return None


def _display(p: Path | str) -> str:
    """A config file as messages name it: relative to the working folder when inside it."""
    absolute = os.path.abspath(p)
    cwd = os.getcwd()
    return os.path.relpath(absolute, cwd) if absolute.startswith(cwd + os.sep) else str(p)


def _toml():
    """tomllib, imported on first use (a project without [tool.syncscan] never needs it)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib


def _ours(p: str) -> str | None:
    """`p` when it is a pyproject.toml with a [tool.syncscan] table; None when there is none or
    it is someone else's. One that may be ours and cannot be read is an error naming it: a
    broken file that mentions syncscan, or one that is not UTF-8 (TOML must be; we cannot tell)."""
    try:
        if not os.path.isfile(p):
            return None
        with open(p, "rb") as fh:
            data = fh.read()
    except OSError:
        return None  # unreadable (permissions): as if absent, like any unreadable folder above
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{_display(p)}: cannot read config: not UTF-8 text (TOML files are UTF-8)") from None
    if not may_define_ours(text):  # cannot hold [tool.syncscan]: not parsed (nor tomllib imported)
        return None
    tomllib = _toml()
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        if "syncscan" in text:  # it is ours: say so rather than ignore it
            raise UserError(f"{_display(p)}: cannot read config: {e}") from None
        return None
    tool = parsed.get("tool")
    if not isinstance(tool, dict):  # `tool = 1`: no [tool.syncscan] in it
        return None
    return p if "syncscan" in tool else None


def may_define_ours(text: str) -> bool:
    """False when a TOML text surely has no [tool.syncscan] table, told without parsing it (tomllib,
    with the re, typing and datetime it imports, is a third of a warm one-file lint; and a project
    that only lists syncscan among its dependencies, or syncscan's own pyproject.toml, has no table
    of ours). TOML can make the key `tool.syncscan` only as `tool` `.` `syncscan` (a table header or
    a dotted key, with blanks or quotes around the dot), under a `[tool]` table, inside an inline
    `tool = {...}`, or spelled with \\u escapes in a quoted key: any of those, True (then tomllib
    decides). (A text without the word `syncscan` at all is not read, as it never was.)"""
    if "syncscan" not in text:
        return False
    if "\\u" in text or "\\U" in text:
        return True
    blanks = " \t"
    at = text.find("syncscan")
    while at >= 0:
        k = at
        if k and text[k - 1] in "\"'":
            k -= 1
        while k and text[k - 1] in blanks:
            k -= 1
        if k and text[k - 1] == ".":
            k -= 1
            while k and text[k - 1] in blanks:
                k -= 1
            if k and text[k - 1] in "\"'":
                k -= 1
            if text[max(0, k - 4):k] == "tool":
                return True
        at = text.find("syncscan", at + 1)
    for line in text.splitlines():  # `[tool]` (or `[[tool]]`, `[ "tool" ]`), or `tool = {`
        s = line.strip()
        if s.startswith("["):
            key = s.lstrip("[").split("]", 1)[0]
        elif "=" in s:
            key = s.split("=", 1)[0]
        else:
            continue
        if key.replace(" ", "").replace("\t", "").replace('"', "").replace("'", "") == "tool":
            return True
    return False


def load(config_path: str | None, start: str | None) -> Config:
    """The config of `config_path`, or of the nearest pyproject.toml above `start`."""
    from pathlib import Path  # (only where there is a config to read: a warm run without one never needs it)

    path = Path(config_path) if config_path else find_pyproject(Path(start or "."))
    cfg = Config()
    if path is None:
        return cfg
    tomllib = _toml()
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise UserError(f"{_display(path)}: config file not found") from None
    except IsADirectoryError:
        raise UserError(f"{_display(path)}: is a folder, not a config file") from None
    except UnicodeDecodeError:
        raise UserError(f"{_display(path)}: cannot read config: not UTF-8 text (TOML files are UTF-8)") from None
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UserError(f"{_display(path)}: cannot read config: {getattr(e, 'strerror', None) or e}") from None
    tool = data.get("tool", {})
    table = tool.get("syncscan", {}) if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        raise UserError(f"{_display(path)}: [tool.syncscan] must be a table")
    return _from_table(table, path)


def _from_table(table: dict, path: Path) -> Config:
    def bad(key: str, what: str) -> UserError:
        return UserError(f"{_display(path)}: [tool.syncscan] {key} must be {what}")

    unknown = set(table) - KEYS
    if unknown:
        raise UserError(f"{_display(path)}: unknown [tool.syncscan] key(s): {', '.join(sorted(unknown))}")
    root = path.parent.resolve()
    cfg = Config(root=root, path=path)

    def codes(key: str, value) -> list[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(key, "a list of rule codes")
        out = [v.strip().upper() for v in value]
        unknown_code = next((c for c in out if not known_code(c)), None)
        if unknown_code is not None:
            raise UserError(f"{_display(path)}: [tool.syncscan] {key}: unknown rule code or prefix {unknown_code!r} "
                            "(syncscan rules lists them)")
        return out

    def flag(key: str, default: bool) -> bool:
        v = table.get(key, default)
        if not isinstance(v, bool):  # "false" as a string must not turn it on
            raise bad(key, f"true or false, not {v!r}")
        return v

    def strings(key: str) -> list[str]:
        v = table.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise bad(key, "a list of strings")
        return v

    if "select" in table:
        cfg.select = codes("select", table["select"])
    cfg.ignore = codes("ignore", table.get("ignore", []))
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise bad("per-file-ignores", "a table of glob = [codes]")
    cfg.per_file_ignores = {k: codes(f"per-file-ignores {k!r}", v) for k, v in pfi.items()}
    # a pattern with a slash names a path under the project root: anchor it there
    cfg.exclude = [_anchor(p, root) for p in strings("exclude") + strings("extend-exclude")]
    cfg.hot_functions = strings("hot-functions")
    cfg.show_cold = flag("show-cold", False)
    cfg.fail_on_sync = flag("fail-on-sync", False)
    cfg.respect_gitignore = flag("respect-gitignore", True)
    cache_dir = table.get("cache-dir")
    if cache_dir is not None and not isinstance(cache_dir, str):
        raise bad("cache-dir", "a string")
    cfg.cache_dir = str(root / cache_dir) if cache_dir else None
    report = table.get("profile-report")
    if report is not None and not isinstance(report, str):
        raise bad("profile-report", "a string (a path)")
    cfg.profile_report = str(root / report) if report else None
    return cfg


def known_code(code: str) -> bool:
    """A rule code or prefix of one (or ALL): what select, ignore and noqa may name."""
    # (every rule's code starts with SYN: a prefix of that needs no rule imported to know)
    return code == "ALL" or "SYN".startswith(code) or any(k.startswith(code) for k in _known_codes())


@lru_cache(maxsize=1)
def _known_codes() -> tuple[str, ...]:
    # (the generated catalog holds every rule's code, tests/test_catalog.py checks it: importing the
    # rules to ask them cost `--select SYN101` or a config's `ignore = ["SYN201"]` 100 ms of each run)
    from syncscan.catalog_data import RULE_NAMES

    return tuple(sorted(RULE_NAMES))


def _anchor(pattern: str, root: Path) -> str:
    """`tests/data`, `./scratch`: anchored at the project root (made absolute); `build`, `*_pb2.py`:
    any file or folder of that name."""
    p = pattern.strip()
    anchored = p.startswith("./")
    p = (p[2:] if anchored else p).rstrip("/") or p
    if not anchored and "/" not in p:
        return p
    return p if os.path.isabs(p) else (root / p).as_posix()


def selected(code: str, select: list[str], ignore: list[str]) -> bool:
    """ruff's rule: the most specific matching prefix wins; on a tie, ignore wins."""
    s = max((len(p) for p in select if code.startswith(p) or p == "ALL"), default=-1)
    i = max((len(p) for p in ignore if code.startswith(p) or p == "ALL"), default=-1)
    return s >= 0 and s > i
