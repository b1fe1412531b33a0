"""Watches the open project's conversation index, so conversations other processes write show up.

``crewagent chat`` or ``crewagent import`` in a terminal writes the same index.json while the
window is open. The store replaces that file atomically (a rename into the folder), which drops
the file from a QFileSystemWatcher: the folder is watched too and the file is added back after
every change. Changes are gathered for a moment and then announced once: the first change starts
the wait and later ones join it (restarting it on each would put the announcement off for as long
as a turn keeps writing). A change after the announcement starts the next wait, so the last one
is never missed. The worker does the reading (``load_conversations``), never the GUI thread.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot

from crewagent.worker.values import ProjectRef

#: Changes within this many milliseconds of the first are announced once (a burst of appends saves the index about once a second).
SETTLE_MS = 300


class IndexWatcher(QObject):
    """Emits ``changed(project_id)`` when the watched project's conversation index may have changed."""

    changed = Signal(str)

    def __init__(self, parent: QObject | None = None, *, settle_ms: int = SETTLE_MS):
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._on_change)
        self._watcher.directoryChanged.connect(self._on_change)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(settle_ms)
        self._timer.timeout.connect(self._announce)
        self._project_id = ""
        self._folders: list[str] = []
        self._index = ""

    @Slot(object)
    def watch_project(self, project: ProjectRef) -> None:
        """Watch ``project``'s index from now on (the previous project's is let go)."""
        self.stop()
        index = project.conversation_index
        if not index:
            return
        self._project_id = project.id
        # The conversations folder may not exist yet: its parent tells when it is made.
        folder = os.path.dirname(index)
        self._index = index
        self._folders = [os.path.dirname(folder), folder]
        self._rewatch()

    def stop(self) -> None:
        self._timer.stop()
        self._project_id = ""
        watched = self._watcher.files() + self._watcher.directories()
        if watched:
            self._watcher.removePaths(watched)

    def _rewatch(self) -> None:
        """Watch what exists of the folders and the index (a replaced or new file is not watched yet)."""
        if not self._folders:
            return
        index = self._index
        watched = set(self._watcher.files() + self._watcher.directories())
        missing = [path for path in (*self._folders, index) if path not in watched]
        if missing:
            self._watcher.addPaths(missing)  # a path that does not exist yet is left out (and tried again)

    @Slot(str)
    def _on_change(self, path: str) -> None:
        self._rewatch()
        if self._project_id and not self._timer.isActive():
            self._timer.start()

    def _announce(self) -> None:
        if self._project_id:
            self.changed.emit(self._project_id)
