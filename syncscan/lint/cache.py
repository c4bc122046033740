"""Results cached by file content: an unchanged file is not parsed again.

One JSON file per project and engine version under `.syncscan_cache/`, written atomically.
The key of an entry is the file's path plus a hash of its bytes; the cache file's name carries a
hash of the engine and rule sources, so a new syncscan or an edited rule starts afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import syncscan


def engine_signature(rules_sig: str, hot_patterns) -> str:
    h = hashlib.blake2b(digest_size=8)
    h.update(syncscan.__version__.encode())
    h.update(rules_sig.encode())
    h.update(repr(sorted(hot_patterns)).encode())
    lint_dir = Path(__file__).parent
    for name in sorted(os.listdir(lint_dir)):
        if name.endswith(".py"):
            h.update((lint_dir / name).read_bytes())
    return h.hexdigest()


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class Cache:
    def __init__(self, directory: Path, signature: str):
        self.file = directory / f"lint-{signature}.json"
        self.directory = directory
        self.entries: dict[str, dict] = {}
        self.dirty = False
        try:
            with open(self.file, encoding="utf-8") as fh:
                data = json.load(fh)
            if isinstance(data, dict):
                self.entries = data
        except (OSError, ValueError):
            pass

    def get(self, path: str, digest: str) -> dict | None:
        e = self.entries.get(path)
        return e["result"] if e and e.get("hash") == digest else None

    def put(self, path: str, digest: str, result: dict) -> None:
        self.entries[path] = {"hash": digest, "result": result}
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
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.entries, fh, separators=(",", ":"))
            os.replace(tmp, self.file)
        except OSError:
            pass  # a read-only tree still lints, just without a cache
