"""`[tool.syncscan]` in the nearest pyproject.toml, merged with the command line."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from syncscan.errors import UserError

KEYS = {"select", "ignore", "per-file-ignores", "exclude", "extend-exclude", "hot-functions", "show-cold",
        "fail-on-sync", "cache-dir"}


@dataclass
class Config:
    select: list[str] = field(default_factory=lambda: ["SYN"])
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    hot_functions: list[str] = field(default_factory=list)
    show_cold: bool = False
    fail_on_sync: bool = False
    root: Path | None = None  # folder of the pyproject.toml it came from
    cache_dir: str | None = None


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.syncscan] table, from `start` upwards."""
    start = Path(os.path.abspath(start))  # not resolve(): a symlink loop must not raise here
    if not start.is_dir():
        start = start.parent
    for d in [start, *start.parents]:
        p = d / "pyproject.toml"
        if p.is_file():
            try:
                text = p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as e:
                if "[tool.syncscan" in text:  # it is ours: say so rather than ignore it
                    raise UserError(f"{p}: cannot read config: {e}") from None
                continue
            if "syncscan" in data.get("tool", {}):
                return p
    return None


def _codes(value, key) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"[tool.syncscan] {key} must be a list of rule codes")
    return [v.strip().upper() for v in value]


def load(config_path: str | None, start: str | None) -> Config:
    path = Path(config_path) if config_path else find_pyproject(Path(start or "."))
    cfg = Config()
    if path is None:
        return cfg
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UserError(f"{path}: cannot read config: {e}") from None
    table = data.get("tool", {}).get("syncscan", {})
    if not isinstance(table, dict):
        raise UserError(f"{path}: [tool.syncscan] must be a table")
    unknown = set(table) - KEYS
    if unknown:
        raise UserError(f"{path}: unknown [tool.syncscan] key(s): {', '.join(sorted(unknown))}")
    cfg.root = path.parent.resolve()
    if "select" in table:
        cfg.select = _codes(table["select"], "select")
    cfg.ignore = _codes(table.get("ignore", []), "ignore")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise UserError(f"{path}: [tool.syncscan] per-file-ignores must be a table of glob = [codes]")
    cfg.per_file_ignores = {k: _codes(v, "per-file-ignores") for k, v in pfi.items()}
    for key in ("exclude", "extend-exclude", "hot-functions"):
        v = table.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise UserError(f"{path}: [tool.syncscan] {key} must be a list of strings")
    # a pattern with a slash names a path under the project root: anchor it there
    cfg.exclude = [_anchor(p, cfg.root) for p in table.get("exclude", []) + table.get("extend-exclude", [])]
    cfg.hot_functions = table.get("hot-functions", [])
    cfg.show_cold = bool(table.get("show-cold", False))
    cfg.fail_on_sync = table.get("fail-on-sync", False)
    if not isinstance(cfg.fail_on_sync, bool):  # "false" as a string must not turn it on
        raise UserError(f"{path}: [tool.syncscan] fail-on-sync must be true or false")
    cache_dir = table.get("cache-dir")
    if cache_dir is not None and not isinstance(cache_dir, str):
        raise UserError(f"{path}: [tool.syncscan] cache-dir must be a string")
    cfg.cache_dir = str(cfg.root / cache_dir) if cache_dir else None
    return cfg


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
