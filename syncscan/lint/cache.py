"""Results cached by file content: an unchanged file is not parsed again.

One JSON file per project and engine version under `.syncscan_cache/`, written atomically.
The key of an entry is the file's path; the entry holds a hash of the file's text and the
result. The cache file's name carries a hash of the engine's and the rules' source files, so a
new syncscan or an edited rule (or rule helper) starts afresh.

Skipping the read (the stat shortcut): an entry also keeps the file's (size, mtime_ns,
ctime_ns, inode, device) when they were *settled* at the time it was read: both timestamps more
than `SETTLE_NS` in the past. A later run that finds exactly the same five values trusts the
entry without reading or hashing the file (git's "racily clean" rule: a file written within a
timestamp tick of being read could change again without its stat changing, so such an entry is
only trusted after its content hash has been checked once more, later). Any write to a file
moves its ctime to "now" (even when the writer restores mtime, as `cp -p` / `rsync -t` / tar
do), so an edited file always misses and is hashed. Off on Windows, where st_ctime is the
creation time.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import syncscan

SETTLE_NS = 2_000_000_000  # coarser than any local file system's timestamp tick (FAT: 2 s)
STAT_SHORTCUT = os.name != "nt"


def _hash_py_files(h, directory: Path) -> None:
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            h.update(name.encode())
            h.update((directory / name).read_bytes())


def rules_signature() -> str:
    """A hash of every .py file of the rules package (rules and their shared helpers), read from
    disk without importing the rules; falls back to the registry's signature when the package
    is not a plain folder (a zip)."""
    from syncscan.lint.registry import rules_package

    pkg = rules_package()

    h = hashlib.blake2b(digest_size=8)
    try:
        for d in pkg.__path__:
            _hash_py_files(h, Path(d))
    except OSError:
        from syncscan.lint.registry import signature

        return signature()
    return h.hexdigest()


def engine_signature(rules_sig: str, hot_patterns) -> str:
    h = hashlib.blake2b(digest_size=8)
    h.update(syncscan.__version__.encode())
    h.update(rules_sig.encode())
    h.update(repr(sorted(hot_patterns)).encode())
    _hash_py_files(h, Path(__file__).parent)
    return h.hexdigest()


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def stat_key(st: os.stat_result) -> list[int] | None:
    """The stat values an entry is trusted by, or None while the file is too fresh to trust."""
    if not STAT_SHORTCUT:
        return None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) <= SETTLE_NS:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


class Cache:
    def __init__(self, directory: Path, signature: str):
        self.file = directory / f"lint-{signature}.json"
        self.directory = directory
        self.entries: dict[str, dict] = {}
        self.dirty = False
        try:
            with open(self.file, "rb") as fh:
                data = json.loads(fh.read())
            if isinstance(data, dict):
                self.entries = data
        except (OSError, ValueError):
            pass

    def by_stat(self, path: str, st: os.stat_result) -> dict | None:
        """The cached result when the file's stat is exactly the settled one recorded, else None."""
        e = self.entries.get(path)
        if e is None or not STAT_SHORTCUT:
            return None
        s = e.get("stat")
        if s is None or s != [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]:
            return None
        return e["result"]

    def get(self, path: str, digest: str | None, st: os.stat_result | None = None) -> dict | None:
        """The cached result for this content; a hit refreshes the entry's stat (now settled)."""
        e = self.entries.get(path)
        if not e or digest is None or e.get("hash") != digest:
            return None
        if st is not None:
            key = stat_key(st)
            if key != e.get("stat"):
                e["stat"] = key
                self.dirty = True
        return e["result"]

    def put(self, path: str, digest: str | None, result: dict, st: os.stat_result | None = None) -> None:
        self.entries[path] = {"hash": digest, "stat": stat_key(st) if st is not None else None, "result": result}
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("*\n")
            for old in self.directory.glob("lint-*.json"):  # results of older engines are dead weight
                if old != self.file:
                    old.unlink(missing_ok=True)
            # json.dumps runs the C encoder; json.dump(obj, file) would run the pure-Python one
            import tempfile  # only when writing: a fully warm run does not need it

            data = json.dumps(self.entries, separators=(",", ":")).encode()
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, self.file)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass  # a read-only tree still lints, just without a cache
