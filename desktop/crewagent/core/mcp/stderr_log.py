"""A bounded log of one stdio server's stderr, read from a pipe by a small thread."""

from __future__ import annotations

import os
import threading
from collections import deque
from typing import IO, TextIO, cast

#: Lines kept per server, and characters kept per line: a chatty server cannot grow the app's memory.
MAX_LINES = 500
MAX_LINE_CHARS = 2000


class StderrLog:
    """The last :data:`MAX_LINES` lines a server wrote to stderr (plus the app's own notes on it)."""

    def __init__(self, max_lines: int = MAX_LINES):
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._lock = threading.Lock()

    def note(self, line: str) -> None:
        with self._lock:
            self._lines.append(line[:MAX_LINE_CHARS])

    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def text(self) -> str:
        return "\n".join(self.lines())

    def open_pipe(self) -> TextIO:
        """A writable file for the child's stderr; the lines it gets land here. The caller closes it
        once the child is started (the child keeps its own copy; EOF comes when the child ends)."""
        read_fd, write_fd = os.pipe()
        reader = os.fdopen(read_fd, "rb")
        thread = threading.Thread(target=self._pump, args=(reader,), name="mcp-stderr", daemon=True)
        thread.start()
        return cast(TextIO, os.fdopen(write_fd, "w"))

    def _pump(self, reader: IO[bytes]) -> None:
        with reader:
            while True:
                raw = reader.readline(MAX_LINE_CHARS * 4)  # bounded: a line without an end is read in pieces
                if not raw:
                    return
                self.note(raw.decode("utf-8", "replace").rstrip("\r\n"))
