"""A helper process for the server's slow work (whole-file lints in the background, making a
project's index in the cache): the server's own threads must not fork, and a long lint there would
hold the GIL while the user types.

Protocol: length-prefixed pickles on stdin / stdout, one request at a time: `(name, args)` in,
`(ok, result_or_message)` out. The process exits when its stdin closes, so it never outlives the
server. Started with `python -m syncscan.server.worker`.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
from typing import Any, Callable

_HEADER = struct.Struct("!Q")


def _read(stream, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _recv(stream):
    head = _read(stream, _HEADER.size)
    if head is None:
        return None
    body = _read(stream, _HEADER.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def _send(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _lint_text(path: str, text: str, config_path: str | None):
    from syncscan.server import adapter

    return adapter.lint_text(path, text, adapter.load_config(config_path or path))


def _index_project(path: str):
    from syncscan.server import adapter

    return adapter.index_project(path)  # (this process may fork: the project's files are scanned over workers)


TASKS: dict[str, Callable[..., Any]] = {"lint_text": _lint_text, "index_project": _index_project,
                                        "ping": lambda: os.getpid()}


def main() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies on the pipe
    while True:
        msg = _recv(stdin)
        if msg is None:
            return 0
        name, args = msg
        try:
            reply = (True, TASKS[name](*args))
        except Exception as e:  # noqa: BLE001 - the server shows it as one line
            reply = (False, f"{type(e).__name__}: {e}")
        try:
            _send(stdout, reply)
        except (BrokenPipeError, OSError):
            return 0


class WorkerError(Exception):
    """The task failed in the worker (its one-line message), or the worker died."""


class Worker:
    """The server's side: a started worker process and a lock for its one request at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen([sys.executable, "-m", "syncscan.server.worker"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._proc

    def call(self, name: str, *args):
        with self._lock:
            proc = self._start()
            try:
                _send(proc.stdin, (name, args))
                reply = _recv(proc.stdout)
            except (BrokenPipeError, OSError) as e:
                reply = None
                why = str(e)
            else:
                why = "it exited"
            if reply is None:
                self.stop()
                raise WorkerError(f"the worker process died ({why})")
            ok, value = reply
            if not ok:
                raise WorkerError(value)
            return value

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    sys.exit(main())
