"""File > Export Conversation… (Ctrl+Shift+E): asks where and in which format; the worker writes the file.

The worker writes exactly what ``crewagent export`` writes (the same core function), off the GUI thread.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QObject, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from crewagent.ui.core_texts import translate_core
from crewagent.ui.dialogs import ProjectDialogs
from crewagent.ui.message_bar import MessageBar
from crewagent.ui.project_view import ProjectView

SHORTCUT = "Ctrl+Shift+E"
_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f]+')


class ConversationExporter(QObject):
    """Owns the Export action; asks the dialogs for a file and reports the worker's answer."""

    #: ``(project_id, conversation_id, format, path)``: write the export (``Worker.export_conversation``).
    export_requested = Signal(str, str, str, str)

    def __init__(self, window: QWidget, project_view: ProjectView, dialogs: ProjectDialogs, message_bar: MessageBar):
        super().__init__(window)
        self._window, self._view, self._dialogs, self._bar = window, project_view, dialogs, message_bar
        self.action = QAction(window)
        self.action.setShortcut(QKeySequence(SHORTCUT))
        window.addAction(self.action)  # the shortcut works with the menu bar hidden
        self.action.triggered.connect(self.ask)
        window.installEventFilter(self)  # a language switch reaches the window, not this QObject
        self.retranslate_ui()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        return False

    def retranslate_ui(self) -> None:
        self.action.setText(self.tr("&Export Conversation…"))
        self.action.setToolTip(self.tr("Save the open conversation as Markdown, OpenAI JSON or JSON Lines"))

    @Slot()
    def ask(self) -> None:
        project, summary = self._view.project, self._view.current_summary()
        if project is None or summary is None:
            self._bar.show_info(self.tr("Open a conversation to export it."))
            return
        answer = self._dialogs.ask_export_file(self._window, " ".join(_UNSAFE.sub(" ", summary.title).split()) or summary.id)
        if answer is not None:
            self.export_requested.emit(project.id, summary.id, answer.format, answer.path)

    @Slot(str, object)
    def exported(self, path: str, warnings: tuple[str, ...]) -> None:
        if warnings:
            self._bar.show_error(self.tr("Exported to {path}, but: {problems}").format(path=path, problems="; ".join(translate_core(warning) for warning in warnings)))
        else:
            self._bar.show_info(self.tr("Exported to {path}.").format(path=path))
