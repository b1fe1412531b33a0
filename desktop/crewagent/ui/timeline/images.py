"""The images of MCP tool parts (issue 12): asked for when an opened part is painted, shown once the worker has them.

An opened tool part whose result names images (``@state/mcp/...``) draws "Loading image…" and
tells the delegate which images it wants; this asks the turn worker for them once per part
(``requested``), which reads and scales them off the GUI thread and answers with thumbnails
(``on_loaded``). The part is measured again with them. A click on a thumbnail opens the full
image in the desktop's viewer.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QPersistentModelIndex, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices

from crewagent.ui.timeline.delegate import TimelineDelegate
from crewagent.ui.timeline.model import TimelineModel
from crewagent.ui.timeline.state import TimelineViewState
from crewagent.worker.tool_images import ToolImages


class TimelineImages(QObject):
    """See the module docstring. ``ids`` gives the (project id, conversation id) shown, or None."""

    #: ``(project_id, conversation_id, key, paths)``: read these images (``TurnWorker.load_tool_images``).
    requested = Signal(str, str, str, object)

    #: ``(path)``: a thumbnail was clicked; its full image was handed to the desktop.
    opened = Signal(str)

    def __init__(self, delegate: TimelineDelegate, state: TimelineViewState, model: Callable[[], TimelineModel | None], parent: QObject | None = None):
        super().__init__(parent)
        self._delegate = delegate
        self._state = state
        self._model = model
        self.ids: Callable[[], tuple[str, str] | None] = lambda: None
        delegate.images_wanted.connect(self._wanted)
        delegate.image_activated.connect(self._open)

    @Slot(str, object)
    def _wanted(self, key: str, paths: object) -> None:
        ids = self.ids()
        if ids is None or key in self._state.images_asked:
            return
        self._state.images_asked.add(key)
        self.requested.emit(ids[0], ids[1], key, tuple(paths) if isinstance(paths, tuple | list) else ())

    @Slot(object)
    def on_loaded(self, loaded: ToolImages) -> None:
        """The worker's thumbnails: the part shows them (a thumbnail each, or a one-line note)."""
        ids = self.ids()
        if ids is None or ids[1] != loaded.conversation_id or loaded.key not in self._state.images_asked:
            return  # another conversation's, or asked before the view was reset
        self._state.images[loaded.key] = loaded.images
        model = self._model()
        index = model.index_of_key(loaded.key) if model is not None else None
        if index is not None and index.isValid():
            self._delegate.height_changed.emit(QPersistentModelIndex(index))

    @Slot(str, int)
    def _open(self, key: str, number: int) -> None:
        images = self._state.images.get(key, ())
        if 0 <= number < len(images) and images[number].path:
            QDesktopServices.openUrl(QUrl.fromLocalFile(images[number].path))
            self.opened.emit(images[number].path)
