"""Progress of a long lint on standard error, for a person at a terminal only.

`Linting: 1,204/2,395 files` is rewritten in place (a carriage return, no new lines), first
drawn after `delay` seconds so that a short run prints nothing, redrawn at most every
`interval` seconds, and erased when the run ends. Nothing is written when standard error is
not a terminal (CI logs, pipes, editors), or with --quiet.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False  # (typing's, without importing typing: see records.py)
if TYPE_CHECKING:
    from typing import Callable, TextIO


class Progress:
    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic, delay: float = 1.0,
                 interval: float = 0.1):
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.delay = delay
        self.interval = interval
        self.last = -1.0
        self.width = 0  # of what is on the line now

    @classmethod
    def on_terminal(cls, stream: TextIO, enabled: bool = True) -> Progress | None:
        """A Progress on `stream` when it is a terminal and progress is wanted, else None."""
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):  # no isatty, or a closed stream
            tty = False
        return cls(stream) if enabled and tty else None

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if now - self.start < self.delay or (now - self.last < self.interval and done < total):
            return
        self.last = now
        text = f"Linting: {done:,}/{total:,} files"
        self._draw(text + " " * max(0, self.width - len(text)))
        self.width = len(text)

    def close(self) -> None:
        """Erase the line (the report follows on a clean one)."""
        if self.width:
            self._draw(" " * self.width)
            self.stream.write("\r")
            self.stream.flush()
            self.width = 0

    def _draw(self, text: str) -> None:
        try:
            self.stream.write("\r" + text)
            self.stream.flush()
        except (OSError, ValueError):  # a terminal gone away must not fail the lint
            self.width = 0
