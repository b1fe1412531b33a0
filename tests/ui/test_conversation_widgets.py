"""The conversation's smaller widgets on their own: the approval dialog, the composer, the ask-user form."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QUrl
from PySide6.QtWidgets import QCheckBox, QLineEdit, QWidget

from crewagent.ui.approval import ApprovalController, ApprovalDialog, DialogPrompter
from crewagent.ui.ask_user import AskUserForm, answer_lines
from crewagent.ui.composer import Composer, meter_text, project_reference
from crewagent.ui.conversation_view import ConversationView
from crewagent.worker.turn_values import ApprovalPrompt, ContextUsage, LoadedConversation, TurnError, TurnRequest, frozen_json
from crewagent.worker.values import ConversationSummary, ProjectRef


def prompt(request_id: str = "approval_1") -> ApprovalPrompt:
    return ApprovalPrompt(request_id, "conv_1", "fs.write", "fs.write @project/a.md (1 byte)", frozen_json({"path": "@project/a.md"}))


def test_the_approval_dialog_offers_four_answers(qtbot: Any) -> None:
    for button, decision in (("once_button", "allow_once"), ("conversation_button", "allow_conversation"),
                             ("always_button", "allow_always"), ("deny_button", "deny")):
        dialog = ApprovalDialog(prompt())
        qtbot.addWidget(dialog)
        dialog.open()
        with qtbot.waitSignal(dialog.decided) as decided:
            getattr(dialog, button).click()
        assert decided.args == [decision]
    dialog = ApprovalDialog(prompt())
    qtbot.addWidget(dialog)
    dialog.open()
    with qtbot.waitSignal(dialog.decided) as decided:
        dialog.reject()  # Esc or the window's close button
    assert decided.args == ["deny"]


def test_the_controller_answers_once_and_withdraws_an_open_question(qtbot: Any) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    controller = ApprovalController(parent, DialogPrompter())
    answers: list[tuple[str, str]] = []
    controller.answered.connect(lambda rid, decision: answers.append((rid, decision)))
    controller.ask(prompt("approval_1"))
    dialog = parent.findChild(ApprovalDialog)
    assert dialog is not None and dialog.isVisible()
    dialog.once_button.click()
    assert answers == [("approval_1", "allow_once")]

    controller.ask(prompt("approval_2"))
    controller.withdraw("approval_2")  # the turn was stopped
    qtbot.waitUntil(lambda: not any(d.isVisible() for d in parent.findChildren(ApprovalDialog)))
    assert answers == [("approval_1", "allow_once")] and controller.pending == []


def test_the_context_meter_shows_cells_percent_and_status(qtbot: Any) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    assert meter_text(ContextUsage(450, 1000, 45.0, "normal")) == "[●●○○○] 45%"
    assert meter_text(ContextUsage(5, 1000, 0.5, "normal")) == "[●○○○○] 0%"
    composer.set_usage(ContextUsage(850, 1000, 85.0, "critical"))
    assert composer.meter.text() == "[●●●●○] 85%" and composer.meter.property("status") == "critical"
    composer.set_usage(ContextUsage(500, 1000, 50.0, "compressing"))
    assert composer.meter.property("status") == "compressing"


def test_a_project_file_dropped_on_the_composer_becomes_a_reference(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "plan.md").write_text("x", encoding="utf-8")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x", encoding="utf-8")
    assert project_reference(str(root / "docs" / "plan.md"), str(root)) == "@project/docs/plan.md"
    assert project_reference(str(outside), str(root)) is None

    composer = Composer()
    qtbot.addWidget(composer)
    composer.set_project_root(str(root))
    composer.input.setPlainText("look at")
    composer.input.moveCursor(composer.input.textCursor().MoveOperation.End)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(root / "docs" / "plan.md"))])
    assert composer.input.canInsertFromMimeData(mime)
    composer.input.insertFromMimeData(mime)
    assert composer.input.toPlainText() == "look at @project/docs/plan.md "
    foreign = QMimeData()
    foreign.setUrls([QUrl.fromLocalFile(str(outside))])
    assert not composer.input.canInsertFromMimeData(foreign)


def test_busy_turns_send_into_stop_and_back(qtbot: Any) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    composer.set_busy(True)
    assert composer.stop_button.isVisible() and not composer.send_button.isVisible()
    with qtbot.waitSignal(composer.stop_requested):
        composer.stop_button.click()
    composer.input.setPlainText("not while busy")
    with qtbot.assertNotEmitted(composer.submitted):
        composer.submit()
    composer.set_busy(False)
    assert composer.send_button.isVisible() and composer.stop_button.isHidden()


def test_a_form_widget_submits_its_values(qtbot: Any) -> None:
    widget = {"type": "form", "title": "Details", "fields": [
        {"name": "name", "label": "Name", "type": "text", "required": True},
        {"name": "ok", "label": "Agree", "type": "boolean"},
    ]}
    form = AskUserForm(widget)
    qtbot.addWidget(form)
    with qtbot.assertNotEmitted(form.submitted):
        form.submit_button.click()  # the required field is empty
    form.findChildren(QLineEdit)[0].setText("Ada")
    form.findChildren(QCheckBox)[0].setChecked(True)
    with qtbot.waitSignal(form.submitted) as submitted:
        form.submit_button.click()
    payload = submitted.args[0]
    assert payload == {"type": "WIDGET_SUBMIT", "widgetType": "form", "values": {"name": "Ada", "ok": True}}
    assert not form.isEnabled()  # read-only once answered
    assert answer_lines(widget, payload) == ["Name: Ada", "Agree: yes"]


def test_a_failed_send_frees_the_composer_of_its_own_conversation_only(qtbot: Any) -> None:
    """A send's error names its conversation: one failing elsewhere (or a set_agent) changes nothing here."""
    view = ConversationView()
    qtbot.addWidget(view)
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    view.show_conversation(ProjectRef("proj", "Project", "/tmp/p", "/tmp/p/artifacts"), ConversationSummary("conv_a", "A", "chat", "chat", now, now, 0))
    view.on_loaded(LoadedConversation("proj", "conv_a", ()))
    with qtbot.waitSignal(view.send_requested):
        view.composer.input.setPlainText("hello")
        view.composer.submit()
    assert view.busy and view.header.switcher.buttons["chat"].isEnabled() is False

    view.on_worker_error(TurnError(TurnRequest.SEND, "conv_b", "This conversation is still answering."))
    view.on_worker_error(TurnError(TurnRequest.SET_AGENT, "conv_a", "There is no agent 'x'."))
    assert view.busy and not view.composer.send_button.isVisible()

    view.on_worker_error(TurnError(TurnRequest.CONTINUE, "conv_a", "No provider is configured."))
    assert not view.busy and view.header.switcher.buttons["chat"].isEnabled()
