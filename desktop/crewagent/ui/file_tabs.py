"""File tabs of the workspace: Markdown as a preview, text as text, anything else "Open in System App".

The tabs live after the fixed Conversation tab in ProjectView's tab widget; :class:`FileTabs`
adds, fills and closes them. A tab opens at once with "Loading…"; the content is read by the
worker (size-capped) and arrives as a ``FilePreview``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices, QFontDatabase
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTabBar,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from crewagent.ui.core_texts import translate_core
from crewagent.worker.values import FilePreview

Opener = Callable[[QUrl], bool]


class FilePage(QWidget):
    """One file: a header with its path and a preview, a text view or a notice."""

    #: ``path``: the user wants the file opened by the desktop's default application.
    open_externally_requested = Signal(str)

    def __init__(self, path: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("filePage")
        self.path = path
        self.preview: FilePreview | None = None
        self.header = QLabel(path, self)
        self.header.setObjectName("filePath")
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stack = QStackedWidget(self)
        self.loading = QLabel(self)
        self.loading.setObjectName("emptyState")
        self.loading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.markdown = QTextBrowser(self)
        self.markdown.setObjectName("markdownView")
        self.markdown.setOpenExternalLinks(True)
        self.markdown.document().setDocumentMargin(16)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("textView")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.notice = QWidget(self)
        self.notice_text = QLabel(self.notice)
        self.notice_text.setObjectName("fileNotice")
        self.notice_text.setWordWrap(True)
        self.notice_text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.open_button = QPushButton(self.notice)
        self.open_button.setObjectName("primaryButton")
        notice_layout = QVBoxLayout(self.notice)
        notice_layout.addStretch(2)
        notice_layout.addWidget(self.notice_text)
        notice_layout.addSpacing(12)
        notice_layout.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignHCenter)
        notice_layout.addStretch(3)
        for page in (self.loading, self.markdown, self.text, self.notice):
            self.stack.addWidget(page)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(self.stack, 1)
        self.open_button.clicked.connect(lambda: self.open_externally_requested.emit(self.path))
        self.retranslate_ui()

    @property
    def kind(self) -> str:
        """``loading`` until the content arrives, then the preview's kind."""
        return self.preview.kind if self.preview else "loading"

    def show_preview(self, preview: FilePreview) -> None:
        self.preview = preview
        if preview.kind == "markdown":
            self.markdown.setMarkdown(preview.text)
            self.stack.setCurrentWidget(self.markdown)
        elif preview.kind == "text":
            self.text.setPlainText(preview.text)
            self.stack.setCurrentWidget(self.text)
        else:
            self.stack.setCurrentWidget(self.notice)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.loading.setText(self.tr("Loading…"))
        self.open_button.setText(self.tr("Open in System App"))
        preview = self.preview
        if preview is None or preview.kind in ("markdown", "text"):
            return
        name = os.path.basename(self.path)
        messages = {
            "too_large": self.tr("{name} is too large to preview here ({size:.1f} MB)."),
            "binary": self.tr("{name} is not a text file."),
        }
        template = messages.get(preview.kind)
        self.notice_text.setText(
            template.format(name=name, size=preview.size / 1_048_576) if template else translate_core(preview.message)
        )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)


class FileTabs(QObject):
    """Opens project files as closable tabs of ``tabs``; the tabs ``tabs`` had when this was made
    (the Conversation tab) stay and keep no close button. Every later tab closes on its close
    button, a file's or not (a subagent's conversation, see ``subagent_view``)."""

    #: ``path``: read this file for its tab (``Worker.read_project_file``).
    read_requested = Signal(str)

    def __init__(self, tabs: QTabWidget, *, opener: Opener | None = None):
        super().__init__(tabs)
        self.tabs = tabs
        self._open_externally: Opener = opener or QDesktopServices.openUrl
        tabs.setTabsClosable(True)
        tabs.setMovable(False)
        self._fixed = [tabs.widget(index) for index in range(tabs.count())]
        for index in range(tabs.count()):
            self._make_fixed(index)
        tabs.tabCloseRequested.connect(self.close_tab)

    def _make_fixed(self, index: int) -> None:
        bar = self.tabs.tabBar()
        for side in (QTabBar.ButtonPosition.RightSide, QTabBar.ButtonPosition.LeftSide):
            if bar.tabButton(index, side) is not None:
                bar.setTabButton(index, side, None)  # None removes it

    def pages(self) -> list[FilePage]:
        return [page for i in range(self.tabs.count()) if isinstance(page := self.tabs.widget(i), FilePage)]

    def page_of(self, path: str) -> FilePage | None:
        return next((page for page in self.pages() if page.path == path), None)

    @Slot(str)
    def open_file(self, path: str) -> None:
        """Show ``path`` in its tab (a new one, loading, or the one already open)."""
        page = self.page_of(path)
        if page is None:
            page = FilePage(path, self.tabs)
            page.open_externally_requested.connect(self.open_externally)
            index = self.tabs.addTab(page, os.path.basename(path))
            self.tabs.setTabToolTip(index, path)
            self.read_requested.emit(path)
        self.tabs.setCurrentWidget(page)

    @Slot(object)
    def show_preview(self, preview: FilePreview) -> None:
        page = self.page_of(preview.path)
        if page is not None:
            page.show_preview(preview)

    @Slot(int)
    def close_tab(self, index: int) -> None:
        page = self.tabs.widget(index)
        if page is not None and page not in self._fixed:
            self.tabs.removeTab(index)
            page.deleteLater()

    def close_all(self) -> None:
        for page in self.pages():
            self.close_tab(self.tabs.indexOf(page))

    @Slot(str)
    def open_externally(self, path: str) -> None:
        self._open_externally(QUrl.fromLocalFile(path))
