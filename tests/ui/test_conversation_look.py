"""The Conversation tab follows the theme and the language live, like the rest of the window."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QFrame, QWidget

from crewagent.ui.approval import ApprovalDialog
from crewagent.ui.ask_user import AskUserForm, answer_lines
from crewagent.ui.conversation_view import ConversationView
from crewagent.ui.i18n import LanguageManager
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.theme import DARK, LIGHT, ThemeManager
from crewagent.ui.timeline.delegate import state_label
from crewagent.ui.timeline.model import RUNNING
from crewagent.worker import WorkerThread
from crewagent.worker.turn_values import (
    ApprovalPrompt,
    ContextUsage,
    LoadedConversation,
    TimelineMessage,
    ToolCallRef,
    frozen_json,
)
from crewagent.worker.values import ConversationSummary, ProjectRef
from tests.ui.conftest import ScriptedDialogs

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
PROJECT = ProjectRef("proj", "Project", "/tmp/project", "/tmp/project/artifacts")


def summary(mode: str = "chat") -> ConversationSummary:
    return ConversationSummary("conv", "Colours", mode, mode, NOW, NOW, 4)  # type: ignore[arg-type]


def messages() -> tuple[TimelineMessage, ...]:
    return (
        TimelineMessage("m1", "user", "2026-01-01T00:00:00.000Z", "list the files"),
        TimelineMessage("m2", "assistant", "2026-01-01T00:00:01.000Z", "", tool_calls=(ToolCallRef("c1", "fs.list", "{}"),)),
        TimelineMessage("m3", "tool", "2026-01-01T00:00:02.000Z", json.dumps({"ok": True}), tool_call_id="c1",
                        tool_name="fs.list", part_type="tool_result", duration_ms=3.0),
        TimelineMessage("m4", "assistant", "2026-01-01T00:00:03.000Z", "Half an answer", part_type="error",
                        error=frozen_json({"code": "LLM_HTTP_ERROR", "message": "dropped", "partialText": "Half"})),
    )


@pytest.fixture
def shown(qtbot: Any) -> ConversationView:
    """A Conversation tab showing a loaded conversation: a user bubble, a tool part and an error part."""
    view = ConversationView()
    qtbot.addWidget(view)
    view.resize(900, 640)
    view.show()
    view.show_conversation(PROJECT, summary())
    view.on_loaded(LoadedConversation("proj", "conv", messages()))
    view.composer.set_usage(ContextUsage(450, 1000, 45.0, "normal"))
    qtbot.waitUntil(lambda: view.loaded)
    return view


@pytest.fixture
def themes(qapp: QApplication) -> Iterator[ThemeManager]:
    """A theme manager on the application; the application's look is restored afterwards."""
    style, palette, sheet = qapp.style().name(), qapp.palette(), qapp.styleSheet()
    manager = ThemeManager(qapp)
    yield manager
    qapp.setStyleSheet(sheet)
    qapp.setStyle(style)
    qapp.setPalette(palette)


@pytest.fixture
def languages(qapp: QApplication) -> Iterator[LanguageManager]:
    manager = LanguageManager(qapp)
    yield manager
    manager.set_language("en")


def colours(widget: QWidget, rect: QRect | None = None, step: int = 3) -> set[str]:
    """The colours drawn in ``widget`` (or a part of it), sampled on a grid."""
    image = widget.grab(rect or QRect()).toImage()
    return {image.pixelColor(x, y).name() for x in range(0, image.width(), step) for y in range(0, image.height(), step)}


def test_the_conversation_tab_switches_to_dark_and_back_live(qtbot: Any, shown: ConversationView, themes: ThemeManager) -> None:
    view = shown
    timeline = view.timeline
    user_row = QRect(timeline.visualRect(view.model.index(0, 0)))
    error_row = QRect(timeline.visualRect(view.model.index(view.model.rowCount() - 1, 0)))
    box = view.composer.findChild(QFrame, "composerBox")
    assert box is not None

    for name, tokens, other in (("dark", DARK, LIGHT), ("light", LIGHT, DARK)):
        themes.set_choice(name)
        qtbot.waitUntil(lambda tokens=tokens: timeline.timeline_delegate.colors.text == QColor(tokens["text"]))
        # The widgets are drawn by the application stylesheet, in this theme's tokens.
        assert view.header.grab().toImage().pixelColor(4, 4) == QColor(tokens["surface"])
        assert timeline.viewport().grab().toImage().pixelColor(4, timeline.viewport().height() - 4) == QColor(tokens["canvas"])
        assert box.grab().toImage().pixelColor(box.width() // 2, 4) == QColor(tokens["input_bg"])
        # The delegate paints bubbles and error cards in them too (nothing of the other theme left).
        drawn = colours(timeline.viewport(), user_row) | colours(timeline.viewport(), error_row)
        assert {tokens["user_bubble"], tokens["error_bg"], tokens["canvas"]} <= drawn
        assert not {other["user_bubble"], other["error_bg"], other["canvas"]} & drawn
        # The context meter's colour comes from the stylesheet as well.
        assert view.composer.meter.palette().color(QPalette.ColorRole.WindowText) == QColor(tokens["ok"])
        assert timeline.timeline_delegate.documents.code_theme == name


def test_the_conversation_tab_retranslates_when_the_language_changes(
    qtbot: Any, shown: ConversationView, languages: LanguageManager
) -> None:
    view = shown
    header, composer = view.header, view.composer
    assert header.switcher.buttons["agent"].text() == "Agent" and composer.send_button.text() == "Send"
    assert state_label(RUNNING) == "running"

    languages.set_language("zh_CN")
    qtbot.waitUntil(lambda: composer.send_button.text() == "发送")
    assert [header.switcher.buttons[m].text() for m in ("agent", "run", "chat")] == ["智能体", "工作流", "聊天"]
    assert header.chat_note.text() == "与模型直接聊天，可使用项目工具。"
    assert header.agent_label.text() == "智能体："
    assert composer.input.placeholderText().startswith("给助手发消息")
    assert "正常" in composer.meter.toolTip()
    assert view.jump_button.text() == "↓ 最新"
    # The timeline's texts are translated as they are painted: its labels follow at once.
    assert state_label(RUNNING) == "运行中"
    view.timeline.grab()

    view.show_summary(None, has_conversations=True)
    assert view.empty_title.text() == "选择一个会话"
    languages.set_language("en")
    qtbot.waitUntil(lambda: composer.send_button.text() == "Send")
    assert view.empty_title.text() == "Pick a conversation" and header.chat_note.text().startswith("Plain chat")


def test_the_approval_dialog_and_the_ask_user_form_retranslate(qtbot: Any, languages: LanguageManager) -> None:
    dialog = ApprovalDialog(ApprovalPrompt("a1", "conv", "fs.write", "fs.write @project/a.md", frozen_json({"path": "a.md"})))
    form = AskUserForm({"type": "confirmation", "title": ""})
    for widget in (dialog, form):
        qtbot.addWidget(widget)
    assert dialog.deny_button.text() == "Deny" and form.submit_button.text() == "Confirm"

    languages.set_language("zh_CN")
    qtbot.waitUntil(lambda: dialog.deny_button.text() != "Deny")
    assert dialog.once_button.text() == "允许一次" and dialog.windowTitle() == "允许 fs.write？"
    assert form.submit_button.text() == "确认" and form.title.text() == "助手提问"
    assert answer_lines({"type": "confirmation"}, {"confirmed": True}) == ["✓ 已确认"]


def test_the_status_bar_names_the_demo_provider_in_the_ui_language(
    qtbot: Any, worker_thread: WorkerThread, dialogs: ScriptedDialogs, languages: LanguageManager
) -> None:
    window = MainWindow(worker_thread.worker, dialogs=dialogs, languages=languages)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.status_provider.text() == "Demo (offline script)", timeout=10_000)
    languages.set_language("zh_CN")
    qtbot.waitUntil(lambda: window.status_provider.text() == "演示（离线脚本）")
    languages.set_language("en")
    qtbot.waitUntil(lambda: window.status_provider.text() == "Demo (offline script)")
    window.close()
