"""Asking the user to approve a write tool: allow once, for this conversation, always, or deny."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt, Signal, Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from crewagent.ui.core_texts import translate_core
from crewagent.worker.turn_values import ApprovalPrompt, thawed_json

ALLOW_ONCE, ALLOW_CONVERSATION, ALLOW_ALWAYS, DENY = "allow_once", "allow_conversation", "allow_always", "deny"
#: Characters of the arguments shown in the dialog.
MAX_ARGUMENT_CHARS = 4000


class ApprovalPrompter(Protocol):
    """Shows one approval question without blocking; tests inject one that answers from a script."""

    def ask(self, parent: QWidget, prompt: ApprovalPrompt, answer: Callable[[str], None]) -> Callable[[], None]:
        """Ask; call ``answer(decision)`` once. Returns a function that withdraws the question."""
        ...


class ApprovalDialog(QDialog):
    """The question for one tool call. Closing it without choosing denies."""

    #: The decision: allow_once, allow_conversation, allow_always or deny.
    decided = Signal(str)

    def __init__(self, prompt: ApprovalPrompt, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("approvalDialog")
        self.setMinimumWidth(520)
        self._tool = prompt.tool
        #: A command's grants cover its program only ("git"), and the buttons say so.
        self._scope = prompt.scope_label
        self.title = QLabel(self)
        self.title.setObjectName("approvalTitle")
        self._summary = prompt.summary
        self.summary = summary = QLabel(self)
        summary.setWordWrap(True)
        summary.setObjectName("hint")
        arguments = QPlainTextEdit(self)
        arguments.setReadOnly(True)
        arguments.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        text = json.dumps(thawed_json(prompt.arguments), indent=2, ensure_ascii=False)
        if len(text) > MAX_ARGUMENT_CHARS:
            text = text[:MAX_ARGUMENT_CHARS] + "\n…"
        arguments.setPlainText(text)
        arguments.setMaximumHeight(220)

        self.deny_button = QPushButton(self)
        self.once_button = QPushButton(self)
        self.once_button.setObjectName("primaryButton")
        self.conversation_button = QPushButton(self)
        self.always_button = QPushButton(self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.deny_button)
        buttons.addStretch(1)
        buttons.addWidget(self.always_button)
        buttons.addWidget(self.conversation_button)
        buttons.addWidget(self.once_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 18, 20, 16)
        layout.setSpacing(10)
        layout.addWidget(self.title)
        layout.addWidget(summary)
        layout.addWidget(arguments)
        layout.addLayout(buttons)

        self._decision = DENY
        for button, decision in (
            (self.deny_button, DENY),
            (self.once_button, ALLOW_ONCE),
            (self.conversation_button, ALLOW_CONVERSATION),
            (self.always_button, ALLOW_ALWAYS),
        ):
            button.clicked.connect(lambda _checked=False, d=decision: self._choose(d))
        self.once_button.setDefault(True)
        self.finished.connect(lambda _result: self.decided.emit(self._decision))
        self.retranslate_ui()

    def retranslate_ui(self) -> None:
        """Every text the dialog sets itself; called again on a language switch."""
        tool = self._tool
        self.setWindowTitle(self.tr("Allow {tool}?").format(tool=tool))
        self.title.setText(self.tr("The assistant wants to run <b>{tool}</b>").format(tool=tool))
        self.summary.setText(translate_core(self._summary))
        self.deny_button.setText(self.tr("Deny"))
        self.once_button.setText(self.tr("Allow once"))
        self.conversation_button.setText(self.tr("Allow in this conversation"))
        self.always_button.setText(self.tr("Always allow {tool}").format(tool=tool))
        if self._scope:
            self.conversation_button.setText(self.tr("Allow {program} in this conversation").format(program=self._scope))
            self.always_button.setText(self.tr("Always allow {tool}").format(tool=self._scope))
        self.always_button.setToolTip(self.tr("Saved in Settings → Tools; you can take it back there."))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate_ui()
        super().changeEvent(event)

    def _choose(self, decision: str) -> None:
        self._decision = decision
        self.accept() if decision != DENY else self.reject()


class DialogPrompter:
    """The real prompter: a window-modal dialog opened with ``open()`` (the event loop keeps running)."""

    def ask(self, parent: QWidget, prompt: ApprovalPrompt, answer: Callable[[str], None]) -> Callable[[], None]:
        dialog = ApprovalDialog(prompt, parent)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.decided.connect(answer)
        dialog.open()

        def withdraw() -> None:
            dialog.decided.disconnect(answer)
            dialog.reject()

        return withdraw


class ApprovalController(QObject):
    """Takes the worker's approval prompts, asks through a prompter, sends each answer back once."""

    #: ``(request_id, decision)``: the user's answer, for ``TurnWorker.answer_approval``.
    answered = Signal(str, str)

    def __init__(self, parent_widget: QWidget, prompter: ApprovalPrompter | None = None):
        super().__init__(parent_widget)
        self._parent_widget = parent_widget
        self._prompter: ApprovalPrompter = prompter or DialogPrompter()
        self._open: dict[str, Callable[[], None]] = {}

    @property
    def pending(self) -> list[str]:
        return list(self._open)

    @Slot(object)
    def ask(self, prompt: ApprovalPrompt) -> None:
        request_id = prompt.request_id

        def answer(decision: str) -> None:
            if self._open.pop(request_id, None) is not None:
                self.answered.emit(request_id, decision)

        self._open[request_id] = lambda: None  # answered synchronously: still counted once
        withdraw = self._prompter.ask(self._parent_widget, prompt, answer)
        if request_id in self._open:
            self._open[request_id] = withdraw

    @Slot(str)
    def withdraw(self, request_id: str) -> None:
        """The turn no longer waits (it was stopped): close the question without answering."""
        withdraw = self._open.pop(request_id, None)
        if withdraw is not None:
            withdraw()
