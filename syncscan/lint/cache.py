"""Results cached per file: an unchanged file is not linted again, nor even read.

Layout, under the cache folder (`.syncscan_cache/` at the project root unless `cache-dir` says):

    v3-<engine>/files/<ab>/<cdef...>.marshal     one shard per file, named by a hash of its resolved path
    v3-<engine>/projects/<hash>.marshal          a project's index (see project.py): its files, folders,
    v3-<engine>/projects/<hash>.graph.marshal    and its merged call graph (read only when something changed)

Each file is one `marshal` dump of plain values (dicts, lists, tuples, strings, numbers): marshal
reads a project index several times faster than json, and is built in (importing json imports re,
a few ms of a warm run). Nothing read back is run or trusted before its shape is checked.

`<engine>` is a hash of syncscan's version and of the engine's and the rules' source files, so a
new syncscan or an edited rule starts afresh. A shard holds the file's resolved path, the config
fingerprint it was linted with (hot-function patterns), a hash of its text, its settled stat,
the summary other files need (callgraph.Summary) and the result (None for a file only scanned for
its summary, as the files around a linted file are). A lookup by a path as typed, relative or
absolute, or through a symlink, finds the same shard.

Reading a shard is one small file, whatever the size of the project: a one-file lint does not
load the cache of the others. Writes are atomic (a temporary file renamed over the shard), so a
reader never sees half a shard, and concurrent runs only ever replace a whole shard with another
valid one. A shard or index that cannot be read as what it should be (corrupt, truncated, of
another shape) is ignored, counted for a one-line warning, and rewritten by the run.

Eviction: a shard used by a run has its mtime refreshed (at most once a day); a sweep, at most
once a day, deletes shards unused for `MAX_AGE_DAYS` that no recent project index refers to,
the folders of other engines and formats unused for an hour, and the cache files of the old
one-file format.
A project index drops the shards of its files that are gone when it sees them go.

Skipping the read (the stat shortcut): a shard also keeps the file's (size, mtime_ns, ctime_ns,
inode, device) when they were *settled* at the time it was read: both timestamps more than
`SETTLE_NS` in the past. A later run that finds exactly the same five values trusts the shard
without reading or hashing the file (git's "racily clean" rule: a file written within a
timestamp tick of being read could change again without its stat changing, so such a shard is
only trusted after its content hash has been checked once more, later). Any write to a file
moves its ctime to "now" (even when the writer restores mtime, as `cp -p` / `rsync -t` / tar
do), so an edited file always misses and is hashed. Off on Windows, where st_ctime is the
creation time.
"""

from __future__ import annotations

import marshal
import os
import time

import syncscan
from syncscan.lint.callgraph import Summary, blake2b

SETTLE_NS = 2_000_000_000  # coarser than any local file system's timestamp tick (FAT: 2 s)
STAT_SHORTCUT = os.name != "nt"
# v3: marshal (v2 was JSON): reading a 3,000-file project's index takes a fraction of json's time,
# and json's import (with re) is not paid by a warm run
FORMAT = "v3"
SUFFIX = ".marshal"
MARSHAL_VERSION = 4  # (stable since Python 3.4)
MAX_AGE_DAYS = 30
_DAY = 86400


def _hash_py_files(h, directory: str) -> None:
    """Each .py file's name, size and mtime (not its text: a warm one-file run must not read every
    source of syncscan; an edit, a checkout or a reinstall moves the mtime)."""
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        if entry.name.endswith(".py"):
            st = entry.stat()
            h.update(f"{entry.name}:{st.st_size}:{st.st_mtime_ns};".encode())


def rules_signature() -> str:
    """A hash of every .py file of the rules package (rules and their shared helpers), looked at on
    disk without importing the rules; falls back to the registry's signature when the package
    is not a plain folder (a zip)."""
    from syncscan.lint.registry import rules_package

    pkg = rules_package()

    h = blake2b(digest_size=8)
    try:
        for d in pkg.__path__:
            _hash_py_files(h, d)
    except OSError:
        from syncscan.lint.registry import signature

        return signature()
    return h.hexdigest()


def engine_signature(rules_sig: str) -> str:
    h = blake2b(digest_size=8)
    h.update(syncscan.__version__.encode())
    h.update(rules_sig.encode())
    _hash_py_files(h, os.path.dirname(os.path.abspath(__file__)))
    return h.hexdigest()


def config_fingerprint(hot_patterns) -> str:
    """What of the config a file's result depends on (the rule selection is applied afterwards)."""
    return blake2b(repr(sorted(hot_patterns)).encode(), digest_size=8).hexdigest()


def content_hash(text: str) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def stat_key(st: os.stat_result) -> list[int] | None:
    """The stat values a shard is trusted by, or None while the file is too fresh to trust."""
    if not STAT_SHORTCUT:
        return None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) <= SETTLE_NS:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def same_stat(key, st: os.stat_result) -> bool:
    return STAT_SHORTCUT and key is not None and key == [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
                                                          st.st_dev]


_REAL_DIRS: dict[str, str] = {}


def resolved(path: str) -> str:
    """The key of a file: its absolute path with symlinks resolved (its folder's resolved once,
    then one lstat per file: os.path.realpath would lstat every component of every path)."""
    folder, name = os.path.split(os.path.abspath(path))
    real = _REAL_DIRS.get(folder)
    if real is None:
        real = _REAL_DIRS[folder] = os.path.realpath(folder)
    out = os.path.join(real, name)
    try:
        if os.path.islink(out):
            return os.path.realpath(out)
    except OSError:
        pass
    return out


def _path_hash(text: str) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class Shard:
    """One file's entry (see the module's docstring)."""

    __slots__ = ("config", "hash", "path", "result", "stat", "summary")

    def __init__(self, path: str, config: str, digest: str | None, stat: list[int] | None, summary: Summary,
                 result: dict | None):
        self.path = path  # resolved
        self.config = config  # config_fingerprint the result was made with
        self.hash = digest  # content_hash of the text
        self.stat = stat  # stat_key when it was read
        self.summary = summary
        self.result = result  # FileResult.to_cache(); None when the file was only scanned for its summary

    def to_json(self) -> dict:
        return {"path": self.path, "config": self.config, "hash": self.hash, "stat": self.stat,
                "summary": self.summary.to_json(), "result": self.result}

    @classmethod
    def from_json(cls, d) -> Shard:
        if not isinstance(d, dict):
            raise TypeError("not a shard")
        path, config, digest, st, result = d.get("path"), d.get("config"), d.get("hash"), d.get("stat"), d.get("result")
        if not (isinstance(path, str) and isinstance(config, str) and (digest is None or isinstance(digest, str))
                and (st is None or isinstance(st, list) and len(st) == 5 and all(isinstance(x, int) for x in st))
                and (result is None or _result_shaped(result))):
            raise TypeError("not a shard")
        return cls(path, config, digest, st, Summary.from_json(d.get("summary")), result)


def _result_shaped(r) -> bool:
    """The shape `FileResult.from_cache` reads (checked here so that it never raises on a corrupt shard)."""
    return (isinstance(r, dict) and isinstance(r.get("findings"), list) and isinstance(r.get("functions"), list)
            and all(isinstance(f, dict) for f in r["findings"])
            and all(isinstance(row, list) and row and isinstance(row[0], str) for row in r["functions"])
            and isinstance(r.get("deps", []), list)
            and all(isinstance(d, list) and len(d) == 3 and isinstance(d[0], str) for d in r.get("deps", [])))


def write_atomic(path: str, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and a rename."""
    import tempfile  # only when writing: a fully warm run does not need it

    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


class Store:
    """The cache folder of one engine: shards per file and project indexes. Every method is safe
    to call from several processes at once; an OSError (read-only tree, full disk) only turns the
    cache off for what failed."""

    def __init__(self, directory: str | os.PathLike, engine: str):
        self.directory = os.fspath(directory)  # (strings, not Paths: pathlib's import costs a warm run ms)
        self.base = os.path.join(self.directory, f"{FORMAT}-{engine}")
        self.engine = engine
        self._files = os.path.join(self.base, "files")
        self.corrupt: list[str] = []  # cache files that could not be read as what they should be
        self._ready = False

    # -- shards --------------------------------------------------------------------------------
    def shard_file(self, key: str) -> str:
        h = _path_hash(key)
        return f"{self._files}{os.sep}{h[:2]}{os.sep}{h[2:]}{SUFFIX}"

    def load(self, key: str) -> Shard | None:
        """The shard of a resolved path, or None (absent, unreadable, corrupt, another path's)."""
        f = self.shard_file(key)
        data = self.load_data(f)
        if data is None:
            return None
        try:
            shard = Shard.from_json(data)
        except (TypeError, ValueError, AttributeError):
            self.corrupt.append(f)
            return None
        return shard if shard.path == key else None

    def save(self, shard: Shard) -> None:
        self.save_data(self.shard_file(shard.path), shard.to_json())

    def touch(self, key: str) -> None:
        """Mark a shard used (for eviction): its mtime, refreshed at most once a day."""
        f = self.shard_file(key)
        try:
            if time.time() - os.stat(f).st_mtime > _DAY:
                os.utime(f)
        except OSError:
            pass

    def drop(self, key: str) -> None:
        _unlink(self.shard_file(key))

    # -- project indexes (their content is project.py's) -----------------------------------------
    def index_file(self, root: str, suffix: str = "") -> str:
        return os.path.join(self.base, "projects", _path_hash(root) + suffix + SUFFIX)

    def load_data(self, f: str):
        """A cache file's content, or None (absent or unreadable; corrupt ones are counted)."""
        try:
            with open(f, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        try:
            return marshal.loads(data)
        except (EOFError, ValueError, TypeError):  # (truncated, or not marshal data)
            self.corrupt.append(f)
            return None

    def save_data(self, f: str, data) -> None:
        self._prepare()
        try:
            write_atomic(f, marshal.dumps(data, MARSHAL_VERSION))
        except (OSError, ValueError):
            pass  # a read-only tree still lints, just without a cache (ValueError: a value marshal cannot hold)

    # -- housekeeping ----------------------------------------------------------------------------
    def _prepare(self) -> None:
        """On the first write of a run: the folder's .gitignore and CACHEDIR.TAG, and the sweep."""
        if self._ready:
            return
        self._ready = True
        try:
            os.makedirs(self.base, exist_ok=True)
            for name, text in ((".gitignore", "*\n"),
                               ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                                                "# This file is a cache directory tag created by syncscan.\n")):
                f = os.path.join(self.directory, name)
                if not os.path.exists(f):
                    with open(f, "w", encoding="utf-8") as fh:
                        fh.write(text)
            stamp = os.path.join(self.directory, ".swept")
            if not os.path.exists(stamp) or time.time() - os.stat(stamp).st_mtime > _DAY:
                with open(stamp, "a"):
                    pass
                os.utime(stamp)
                self.sweep()
        except OSError:
            pass

    def sweep(self, now: float | None = None) -> None:
        """Delete what no run needs any more (see the module's docstring)."""
        import shutil

        now = time.time() if now is None else now
        for entry in os.scandir(self.directory):
            if entry.name.startswith("lint-") and entry.name.endswith(".json"):  # the old one-file format
                _unlink(entry.path)
            elif entry.is_dir() and _engine_folder(entry.name) and entry.path != self.base:
                try:  # another engine's, or another format's (v2: json)
                    if now - _newest_mtime(entry.path) > 3600:
                        shutil.rmtree(entry.path, ignore_errors=True)
                except OSError:
                    pass
        live = self._indexed_paths(now)
        files = os.path.join(self.base, "files")
        for sub in (os.scandir(files) if os.path.isdir(files) else ()):
            if not sub.is_dir():
                continue
            for e in os.scandir(sub.path):
                try:
                    if now - e.stat().st_mtime > MAX_AGE_DAYS * _DAY:
                        shard = self._peek(e.path)
                        if shard is None or shard not in live:
                            _unlink(e.path)
                except OSError:
                    pass

    def _indexed_paths(self, now: float) -> set[str]:
        """The resolved paths the recently used project indexes list (their shards are kept)."""
        out: set[str] = set()
        projects = os.path.join(self.base, "projects")
        for e in (os.scandir(projects) if os.path.isdir(projects) else ()):
            if e.name.endswith(".graph" + SUFFIX) or not e.name.endswith(SUFFIX):
                continue
            try:
                if now - e.stat().st_mtime > MAX_AGE_DAYS * _DAY:
                    _unlink(e.path)
                    continue
            except OSError:
                continue
            data = self.load_data(e.path)
            if isinstance(data, dict) and isinstance(data.get("root"), str) and isinstance(data.get("files"), dict):
                out.update(os.path.join(data["root"], rel) for rel in data["files"])
        return out

    def _peek(self, f: str) -> str | None:
        try:
            with open(f, "rb") as fh:
                d = marshal.loads(fh.read())
            return d.get("path") if isinstance(d, dict) else None
        except (OSError, EOFError, ValueError, TypeError):
            return None

    def warning(self) -> str | None:
        """One line about the corrupt cache files this run met, or None."""
        if not self.corrupt:
            return None
        n = len(set(self.corrupt))
        first = self.corrupt[0]
        more = f" and {n - 1} more" if n > 1 else ""
        return f"ignored a corrupt cache file ({first}{more}); it is rewritten"


def _engine_folder(name: str) -> bool:
    """A folder of some engine, of this format or another: `v<digits>-<engine>`."""
    version, dash, _ = name.partition("-")
    return bool(dash) and version[:1] == "v" and version[1:].isdigit()


def _newest_mtime(folder: str) -> float:
    newest = os.stat(folder).st_mtime
    for root, dirs, _ in os.walk(folder):
        for d in dirs:
            try:
                newest = max(newest, os.stat(os.path.join(root, d)).st_mtime)
            except OSError:
                pass
    return newest


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
