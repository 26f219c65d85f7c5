"""A count of work done on stderr, for a command that would otherwise be silent for seconds (obs test).

Shown on a terminal only, and only once the work has taken `after` seconds: a quick run, a pipe and a CI
log stay exactly as they were. The line is rewritten in place and cleared when the work ends, so stdout
(the report) never shares a line with it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

AFTER = 2.0  # seconds of silence a person waits before wondering whether anything is happening
EVERY = 0.25  # seconds between redraws


class Progress:
    def __init__(
        self,
        label: str,
        total: int,
        stream: TextIO,
        *,
        shown: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.total, self.stream, self.clock = label, total, stream, clock
        self.shown = stream.isatty() if shown is None else shown
        self.start = self.last = clock()
        self.width = 0

    def done(self, count: int) -> None:
        """`count` of `total` are done."""
        now = self.clock()
        if not self.shown or now - self.start < AFTER or (self.width and now - self.last < EVERY):
            return
        line = f"{self.label}: {count} of {self.total} done, {now - self.start:.0f} s"
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width, self.last = len(line), now

    def close(self) -> None:
        """Clears the line, if one was drawn."""
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
