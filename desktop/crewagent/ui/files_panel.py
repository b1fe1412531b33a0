"""The Files panel: the project folder as a tree, focused on ``artifacts/``, dot-files and runtime data hidden.

QFileSystemModel lists and watches folders on its own thread, so the tree never reads the disk
on the GUI thread; opening a file is a request (its content is read by the worker).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from PySide6.QtCore import (
    QDir,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSortFilterProxyModel,
    Qt,
    QUrl,
    Signal,
    Slot,
)
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QFileSystemModel,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QStackedLayout,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

_Index = QModelIndex | QPersistentModelIndex

#: Opens a file or folder with the desktop's default application (replaced in tests).
Opener = Callable[[QUrl], bool]


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root + os.sep) for root in roots)


class ProjectFilesFilter(QSortFilterProxyModel):
    """Hides the runtime data folders (when they lie inside the project) from the tree."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._excluded: tuple[str, ...] = ()
        self.setRecursiveFilteringEnabled(False)

    def set_excluded(self, roots: Iterable[str]) -> None:
        self.beginFilterChange()
        self._excluded = tuple(os.path.normpath(root) for root in roots if root)
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        if not self._excluded:
            return True
        source = self.sourceModel()
        assert isinstance(source, QFileSystemModel)
        path = os.path.normpath(source.filePath(source.index(source_row, 0, source_parent)))
        return not _inside(path, self._excluded)


class FilesPanel(QWidget):
    """A tree of the project folder. Double-click or Enter on a file asks for it to open in a tab;
    dragging a file onto the composer references it."""

    #: ``path``: open this file in a workspace tab (absolute path).
    file_open_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None, *, opener: Opener | None = None):
        super().__init__(parent)
        self.setObjectName("filesPanel")
        self._open_externally: Opener = opener or QDesktopServices.openUrl
        self._root = ""
        self._artifacts = ""

        self.fs_model = QFileSystemModel(self)
        # No Hidden: dot-files and dot-folders (.crewagent.json, .git) stay out of the tree.
        self.fs_model.setFilter(QDir.Filter.AllDirs | QDir.Filter.Files | QDir.Filter.NoDotAndDotDot)
        self.fs_model.setReadOnly(True)
        self.proxy = ProjectFilesFilter(self)
        self.proxy.setSourceModel(self.fs_model)

        self.artifacts_button = QToolButton(self)
        self.all_button = QToolButton(self)
        self._scope = QButtonGroup(self)
        for button in (self.artifacts_button, self.all_button):
            button.setObjectName("scopeButton")
            button.setCheckable(True)
            self._scope.addButton(button)
        self.artifacts_button.setChecked(True)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.artifacts_button)
        header.addWidget(self.all_button)
        header.addStretch(1)

        self.tree = QTreeView(self)
        self.tree.setObjectName("projectFiles")
        self.tree.setModel(self.proxy)
        self.tree.setHeaderHidden(True)
        for column in range(1, self.fs_model.columnCount()):
            self.tree.hideColumn(column)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.tree.setFrameShape(QFrame.Shape.NoFrame)
        self.tree.setAnimated(True)
        self.tree.setIndentation(16)
        self.tree.setUniformRowHeights(True)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # A file dragged out carries its file URL (QFileSystemModel.mimeData: text/uri-list);
        # the composer turns URLs inside the project into @project/... references.
        self.tree.setDragEnabled(True)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.empty_label = QLabel(self)
        self.empty_label.setObjectName("emptyState")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self._stack = QStackedLayout()
        self._stack.addWidget(self.tree)
        self._stack.addWidget(self.empty_label)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(header)
        layout.addLayout(self._stack, 1)

        self.tree.activated.connect(self._on_activated)
        self.tree.customContextMenuRequested.connect(self._show_context_menu)
        self._scope.buttonClicked.connect(self._apply_scope)
        self.fs_model.directoryLoaded.connect(self._update_empty_state)
        self.proxy.rowsInserted.connect(self._update_empty_state)
        self.proxy.rowsRemoved.connect(self._update_empty_state)
        self.retranslate_ui()

    # -- texts -------------------------------------------------------------------------------

    def retranslate_ui(self) -> None:
        self.artifacts_button.setText(self.tr("Artifacts"))
        self.artifacts_button.setToolTip(self.tr("What the model wrote: the project's artifacts/ folder"))
        self.all_button.setText(self.tr("All"))
        self.all_button.setToolTip(self.tr("The whole project folder"))
        self._update_empty_state()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    # -- the project -------------------------------------------------------------------------

    def show_project(self, root: str, artifacts_dir: str, excluded: Iterable[str] = ()) -> None:
        """Show ``root`` (starting in ``artifacts_dir``); ``excluded`` folders never appear."""
        self._root, self._artifacts = root, artifacts_dir
        self.proxy.set_excluded(excluded)
        self.fs_model.setRootPath(root)  # starts watching on the model's own thread
        self.artifacts_button.setChecked(True)
        self._apply_scope()

    def clear(self) -> None:
        self._root = self._artifacts = ""
        self.fs_model.setRootPath("")
        self.tree.setRootIndex(QModelIndex())

    @property
    def scope_root(self) -> str:
        """The folder the tree shows now."""
        return self._artifacts if self.artifacts_button.isChecked() and self._artifacts else self._root

    def index_of(self, path: str) -> QModelIndex:
        """The tree's index of ``path`` (invalid until the folder has been listed)."""
        return self.proxy.mapFromSource(self.fs_model.index(path))

    @Slot()
    def _apply_scope(self) -> None:
        if not self._root:
            return
        self.tree.setRootIndex(self.index_of(self.scope_root))
        self._update_empty_state()

    @Slot()
    def _update_empty_state(self) -> None:
        if self._root and self.tree.rootIndex().isValid() and self.proxy.rowCount(self.tree.rootIndex()) == 0:
            if self.artifacts_button.isChecked():
                self.empty_label.setText(self.tr("Nothing in artifacts/ yet.\nFiles the model writes will appear here."))
            else:
                self.empty_label.setText(self.tr("This folder is empty."))
            self._stack.setCurrentWidget(self.empty_label)
        else:
            self._stack.setCurrentWidget(self.tree)

    # -- opening -----------------------------------------------------------------------------

    def _path(self, index: QModelIndex) -> str:
        return self.fs_model.filePath(self.proxy.mapToSource(index))

    @Slot(QModelIndex)
    def _on_activated(self, index: QModelIndex) -> None:
        if self.fs_model.isDir(self.proxy.mapToSource(index)):
            self.tree.setExpanded(index, not self.tree.isExpanded(index))
            return
        self.file_open_requested.emit(self._path(index))

    def open_externally(self, path: str) -> None:
        self._open_externally(QUrl.fromLocalFile(path))

    @Slot(QPoint)
    def _show_context_menu(self, position: QPoint) -> None:
        index = self.tree.indexAt(position)
        if not index.isValid():
            return
        path = self._path(index)
        menu = QMenu(self)
        if not self.fs_model.isDir(self.proxy.mapToSource(index)):
            menu.addAction(self.tr("Open"), lambda: self.file_open_requested.emit(path))
        menu.addAction(self.tr("Open in System App"), lambda: self.open_externally(path))
        menu.popup(self.tree.viewport().mapToGlobal(position))
