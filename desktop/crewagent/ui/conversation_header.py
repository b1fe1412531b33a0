"""The Conversation tab's header: the title, the Agent / Workflow / Chat switcher, and what each mode offers."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal, Slot
from PySide6.QtGui import QFontDatabase, QFontMetrics
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from crewagent.ui import formatting
from crewagent.ui.model_picker import ModelPicker
from crewagent.ui.narrow import PICKER_MIN, TITLE_MIN, shrinkable
from crewagent.ui.workflow_panel import WorkflowPanel

#: The switcher's segments, in order (``run`` is shown as Workflow).
SWITCHER_MODES = ("agent", "run", "chat")



class ModeSwitcher(QFrame):
    """Segmented Agent / Workflow / Chat buttons."""

    #: ``(mode)``: the user picked a mode (chat, agent or run); not emitted by ``set_mode``.
    mode_selected = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("modeSwitcher")
        self._group = QButtonGroup(self)
        self._group.setExclusive(True)
        self.buttons: dict[str, QToolButton] = {}
        row = QHBoxLayout(self)
        row.setContentsMargins(3, 3, 3, 3)
        row.setSpacing(2)
        for mode in SWITCHER_MODES:
            button = QToolButton(self)
            button.setCheckable(True)
            button.setObjectName(f"mode-{mode}")
            self._group.addButton(button)
            self.buttons[mode] = button
            row.addWidget(button)
            button.clicked.connect(lambda _checked=False, m=mode: self.mode_selected.emit(m))
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        for mode, button in self.buttons.items():
            button.setText(formatting.mode_label(mode))
            button.setToolTip(self.tr("Switch this conversation to {mode}; its history stays").format(mode=formatting.mode_label(mode)))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def set_mode(self, mode: str) -> None:
        button = self.buttons.get(mode)
        if button is not None:
            button.setChecked(True)

    def set_enabled_modes(self, enabled: bool) -> None:
        """Offer the mode buttons, or not (while a turn runs)."""
        for button in self.buttons.values():
            button.setEnabled(enabled)

    def mode(self) -> str:
        return next((mode for mode, button in self.buttons.items() if button.isChecked()), "chat")


class ConversationHeader(QFrame):
    """Title, mode switcher, and what the mode offers: an agent picker or the workflows."""

    #: ``(agent_id)``: the user picked an agent (not emitted by ``show_agent``).
    agent_selected = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("conversationHeader")
        self.title = QLabel(self)
        self.title.setObjectName("conversationTitle")
        self.switcher = ModeSwitcher(self)

        self.details = QStackedWidget(self)
        self.details.setObjectName("modeDetails")
        agent_panel = QWidget(self.details)
        agent_row = QHBoxLayout(agent_panel)
        agent_row.setContentsMargins(0, 0, 0, 0)
        self.agent_selector = QComboBox(agent_panel)
        self.agent_selector.setObjectName("agentSelector")
        self.agent_label = QLabel(agent_panel)
        self.agent_description = QLabel(agent_panel)
        self.agent_description.setObjectName("hint")
        agent_row.addWidget(self.agent_label)
        agent_row.addWidget(self.agent_selector)
        agent_row.addWidget(self.agent_description, 1)
        #: Workflow mode: the workflow picker, Start Workflow, the conversation's runs and Resume.
        self.workflow = WorkflowPanel(self.details)
        self.chat_note = QLabel(self.details)
        self.chat_note.setObjectName("hint")
        shrinkable(self.agent_selector, minimum=PICKER_MIN)  # issue 18 item 17: 800 px wide
        shrinkable(self.agent_description, self.chat_note)
        shrinkable(self.title, minimum=TITLE_MIN)
        self._panels = {"agent": agent_panel, "run": self.workflow, "chat": self.chat_note}
        for panel in self._panels.values():
            self.details.addWidget(panel)

        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        self.model_picker = ModelPicker(self)  # issue 18 item 13: the model of the next turn
        top.addWidget(self.model_picker, 0)
        top.addWidget(self.switcher, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 10, 20, 8)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.details)
        self._descriptions: dict[str, str] = {}
        self._title_facts: tuple[int, datetime] | None = None  # message count, created (the tooltip)
        self.agent_selector.activated.connect(self._on_agent_activated)
        self.agent_selector.currentIndexChanged.connect(self._show_description)
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        """Every text the header sets itself; called again on a language switch."""
        self.agent_selector.setPlaceholderText(self.tr("No agents available yet"))
        self.agent_selector.setToolTip(self.tr("The agent persona Agent mode answers with; saved with the conversation"))
        self.agent_label.setText(self.tr("Agent:"))
        self.chat_note.setText(self.tr("Plain chat with the model and the project's tools."))
        self._show_title_facts()

    def _show_title_facts(self) -> None:
        if self._title_facts is not None:
            count, created = self._title_facts
            self.title.setToolTip(
                self.tr("{count} · created {created}").format(count=formatting.message_count(count), created=formatting.full_time(created))
            )

    def show_title(self, title: str, message_count: int, created_at: datetime) -> None:
        """The conversation's title, with its size and age in the tooltip (called at every message a
        turn persists: only what changed is set)."""
        self.title.setText(title)
        if self._title_facts != (message_count, created_at):
            self._title_facts = (message_count, created_at)
            self._show_title_facts()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def set_modes_enabled(self, enabled: bool) -> None:
        """Let the user switch modes and start or resume a run, or not (while a turn runs)."""
        self.switcher.set_enabled_modes(enabled)
        self.workflow.set_busy(not enabled)

    def show_mode(self, mode: str) -> None:
        self.switcher.set_mode(mode)
        self.details.setCurrentWidget(self._panels.get(mode, self._panels["chat"]))

    def set_agents(self, agents: Iterable[Any]) -> None:
        """Fill the agent picker: items with ``id``, ``name``, ``title``, ``icon`` and ``description``
        (the worker's AgentSummary). The current choice is kept when it is still offered."""
        current = self.agent_id()
        self.agent_selector.blockSignals(True)
        try:
            self.agent_selector.clear()
            self._descriptions.clear()
            for agent in agents:
                agent_id = str(getattr(agent, "id", agent))
                name = str(getattr(agent, "name", agent))
                title = str(getattr(agent, "title", "") or "")
                icon = str(getattr(agent, "icon", "") or "")
                shown_icon = icon if icon and _can_draw(self.agent_selector.fontMetrics(), icon) else ""
                label = f"{shown_icon} {name}".strip() + (f" · {title}" if title else "")
                self.agent_selector.addItem(label, agent_id)
                self._descriptions[agent_id] = str(getattr(agent, "description", "") or "")
        finally:
            self.agent_selector.blockSignals(False)
        self.show_agent(current)

    def show_agent(self, agent_id: str | None) -> None:
        """Select the conversation's agent (the first one when it has none or an unknown one)."""
        index = self.agent_selector.findData(agent_id) if agent_id else -1
        self.agent_selector.setCurrentIndex(index if index >= 0 else (0 if self.agent_selector.count() else -1))
        self._show_description()

    def agent_id(self) -> str:
        data = self.agent_selector.currentData()
        return str(data) if data else ""

    @Slot()
    def _show_description(self) -> None:
        description = self._descriptions.get(self.agent_id(), "")
        metrics = self.agent_description.fontMetrics()
        self.agent_description.setText(metrics.elidedText(description, Qt.TextElideMode.ElideRight, 520))
        self.agent_description.setToolTip(description)

    @Slot(int)
    def _on_agent_activated(self, _index: int) -> None:
        if self.agent_id():
            self.agent_selected.emit(self.agent_id())


@lru_cache(maxsize=1)
def _emoji_font_installed() -> bool:
    return any("emoji" in family.lower() for family in QFontDatabase.families())


def _can_draw(metrics: QFontMetrics, text: str) -> bool:
    """True when ``text`` (an agent's icon, usually an emoji) will not come out as empty boxes."""
    return all(metrics.inFontUcs4(ord(ch)) for ch in text) or _emoji_font_installed()

