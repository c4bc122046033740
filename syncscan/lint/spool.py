"""Each file's whole call graph (`FileResult.to_cache(graph=True)["graph"]`), set aside while a run
without a cache lints, for torch.compile's reach (runner._settle_compiled). Without it a run where
some file compiles something walks every file again; kept in memory, the graphs of a 3,000-file
tree would add about 7 MB to the main process. They go to an unlinked temporary file instead
(the page cache, not this process's memory) and are read back only when a file compiles something.
"""

from __future__ import annotations

import marshal
import os


class GraphSpool:
    """path -> its graph rows, written to a temporary file; `get` reads one back (None: not kept)."""

    def __init__(self) -> None:
        self._file = None
        self._where: dict[str, tuple[int, int]] = {}  # path -> (offset, length)
        self._end = 0
        self._broken = False

    def add(self, path: str, rows: list) -> None:
        if self._broken:
            return
        data = marshal.dumps(rows)
        try:
            if self._file is None:
                self._file = _temporary_file()
            self._file.seek(self._end)
            self._file.write(data)
        except (OSError, ValueError):  # (no room for it: those files are walked again, as without a spool)
            self._broken = True
            self._where.clear()
            self.close()
            return
        self._where[path] = (self._end, len(data))
        self._end += len(data)

    def get(self, path: str) -> list | None:
        where = self._where.get(path)
        if where is None or self._file is None:
            return None
        try:
            self._file.seek(where[0])
            rows = marshal.loads(self._file.read(where[1]))
        except (OSError, ValueError, EOFError, TypeError):
            return None
        return rows if isinstance(rows, list) else None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _temporary_file():
    """A file with no name, for reading and writing: straight from the system where it has O_TMPFILE
    (importing tempfile costs 0.8 MB of memory and 24 ms)."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is not None:
        try:
            return os.fdopen(os.open(os.environ.get("TMPDIR") or "/tmp", flag | os.O_RDWR, 0o600), "w+b")
        except OSError:  # (a file system without it)
            pass
    import tempfile

    return tempfile.TemporaryFile(prefix="syncscan-graphs-")
