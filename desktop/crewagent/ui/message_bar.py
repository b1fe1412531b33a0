"""An inline, non-modal bar for errors and notices at the top of the window."""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from crewagent.ui.core_texts import translate_core

log = logging.getLogger(__name__)


class MessageBar(QFrame):
    """Shows one message until it is dismissed or replaced; never blocks the event loop.

    A message box would stop the user (and the tests) until clicked; errors here are things
    like "this folder is not a project", which the user reads and then simply tries again.
    """

    #: The bar was closed by the user.
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("messageBar")
        self._icon = QLabel(self)
        self._icon.setObjectName("messageBarIcon")
        self._text = QLabel(self)
        self._text.setObjectName("messageBarText")
        self._text.setWordWrap(True)
        self._text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setObjectName("messageBarClose")
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self._dismiss)
        self._close = close
        layout = QHBoxLayout(self)
        layout.setContentsMargins(14, 8, 8, 8)
        layout.addWidget(self._icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self._text, 1)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self._close.setToolTip(self.tr("Dismiss"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    @property
    def text(self) -> str:
        return self._text.text()

    @Slot(str)
    def show_error(self, message: str) -> None:
        log.info("Shown to the user: %s", message)
        self._show("error", "⚠", message)

    @Slot(str)
    def show_info(self, message: str) -> None:
        self._show("info", "ℹ", message)

    @Slot()
    def clear(self) -> None:
        self._text.clear()
        self.hide()

    def _show(self, kind: str, icon: str, message: str) -> None:
        self.setProperty("kind", kind)
        self.style().unpolish(self)
        self.style().polish(self)
        self._icon.setText(icon)
        self._text.setText(translate_core(message))
        self.show()

    @Slot()
    def _dismiss(self) -> None:
        self.clear()
        self.dismissed.emit()
