"""The Run workspace's watch on its run's files, and when the run is read again.

A ``QFileSystemWatcher`` watches the state file, the audit and their folders; it only reports:
the worker does every read (``reload_due`` asks for one), never the GUI thread. The state is
replaced atomically (a temp file renamed over it), which drops the replaced file from the watch:
the folder's watch reports the rename too, and the file is watched again as soon as its replace is
reported, so that the next write is reported by the file itself.

When to read:

- the watched file was **replaced** (renamed over, its old file gone from the watch) while no turn
  of the conversation runs: at once. The write is complete, and another process's write should
  reach the panel within 100 ms (issue 11): a timer started here fired 67 ms late on a busy GUI
  thread (bench_ui.py, section 4; docs/benchmarks.md, Run workspace, session 13);
- any **other** change (a file written in place, the folder's temp file made before a rename, a
  turn's events) starts a short wait that the later events of the burst join: one read for the
  burst. 10 ms when idle; 250 ms during a turn of the conversation, whose engine reports progress
  at once (``RunProgress``), so that each tool call's state and audit events cost one read. The
  first event starts the wait and later ones never put it off.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot

#: Milliseconds events are gathered before the run is read again (a burst of writes is one read).
RELOAD_DELAY_MS = 10
#: The same while a turn of this conversation runs (see the module docstring).
BUSY_RELOAD_DELAY_MS = 250


class RunFiles(QObject):
    """Watches the run's files and says when to read the run again (see the module docstring)."""

    #: Read the run now.
    reload_due = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        #: A turn of the conversation runs (set by the panel): changes wait longer.
        self.busy = False
        self.watcher = QFileSystemWatcher(self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.reload_due)
        self.watcher.fileChanged.connect(self._on_file_changed)
        self.watcher.directoryChanged.connect(self._on_folder_changed)

    def watch(self, files: list[str]) -> None:
        """Watch these files and their folders from now on (nothing else)."""
        wanted = set(files) | {os.path.dirname(path) for path in files}
        current = set(self.watcher.files()) | set(self.watcher.directories())
        stale = sorted(current - wanted)
        if stale:
            self.watcher.removePaths(stale)
        # addPaths only stats: files that do not exist yet (the audit before the first call) are
        # skipped and added after a later read, once their folder reported them.
        missing = sorted(wanted - current)
        if missing:
            self.watcher.addPaths(missing)

    def schedule(self, delay_ms: int | None = None) -> None:
        """Read the run again after ``delay_ms`` (default: short when idle, longer during a turn),
        or sooner if a read is already due sooner."""
        if delay_ms is None:
            delay_ms = BUSY_RELOAD_DELAY_MS if self.busy else RELOAD_DELAY_MS
        if self._timer.isActive() and self._timer.remainingTime() <= delay_ms:
            return
        self._timer.start(delay_ms)

    def cancel(self) -> None:
        """A read is being asked for now: the one waiting is not needed."""
        self._timer.stop()

    @Slot(str)
    def _on_file_changed(self, path: str) -> None:
        if path in self.watcher.files():  # written in place: more writes may follow
            self.schedule()
            return
        # Replaced or removed: watch the new file now (no file, no watch: the folder's tells).
        self.watcher.addPath(path)
        if self.busy:
            self.schedule()
        else:
            self._timer.stop()
            self.reload_due.emit()

    @Slot(str)
    def _on_folder_changed(self, _path: str) -> None:
        self.schedule()
