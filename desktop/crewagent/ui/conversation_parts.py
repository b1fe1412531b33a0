"""Two small parts of the Conversation tab: the page shown when no conversation is, and "↓ Latest"."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtWidgets import QFrame, QLabel, QToolButton, QVBoxLayout, QWidget

from crewagent.ui.timeline import TimelineModel, TimelineView


class EmptyConversation(QFrame):
    """How to begin: pick a conversation in the Works list, or start one."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("emptyConversation")
        self.title = QLabel(self)
        self.title.setObjectName("workspaceTitle")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.details = QLabel(self)
        self.details.setObjectName("workspaceDetails")
        self.details.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.details.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addStretch(2)
        layout.addWidget(self.title)
        layout.addWidget(self.details)
        layout.addStretch(3)
        self._has_conversations = False
        self.retranslate_ui()

    def show_hint(self, has_conversations: bool) -> None:
        self._has_conversations = has_conversations
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        has = self._has_conversations
        self.title.setText(self.tr("Pick a conversation") if has else self.tr("Start a conversation"))
        self.details.setText(
            self.tr("Select one in the Works list on the left.") if has else self.tr("Use “+ New” or press Ctrl+Shift+N: Chat, Agent or Workflow.")
        )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)


class JumpToLatest(QToolButton):
    """Shows below the timeline's rows while the user reads older messages; scrolls to the end.

    While it shows, the timeline keeps a strip free under its rows for it, so it never covers text.
    """

    #: Pixels above and below the pill inside the strip it has to itself.
    GAP = 6

    def __init__(self, timeline: TimelineView, model: TimelineModel):
        super().__init__(timeline)
        self.setObjectName("jumpToLatest")
        self.hide()
        self._timeline, self._model = timeline, model
        timeline.verticalScrollBar().valueChanged.connect(self.update_position)
        timeline.verticalScrollBar().rangeChanged.connect(self.update_position)
        model.modelReset.connect(self.update_position)  # another conversation: follow again
        self.clicked.connect(timeline.scroll_to_end)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        self.setText(self.tr("↓ Latest"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    @Slot()
    def update_position(self) -> None:
        show = not self._timeline.following and self._model.rowCount() > 0
        hint = self.sizeHint()
        self._timeline.reserve_bottom(hint.height() + 2 * self.GAP if show else 0)
        self.setVisible(show)
        if show:
            # The strip is the bottom of the timeline's contents (the viewport may not have moved yet).
            area = self._timeline.contentsRect()
            self.setGeometry(area.center().x() - hint.width() // 2, area.bottom() + 1 - self.GAP - hint.height(), hint.width(), hint.height())
            self.raise_()
