"""Search in the window (issue 18): the open conversation stays open, a hit opens at its message
with the text marked, snippets are readable text, and Ctrl+K focuses the search box."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QVBoxLayout, QWidget

from crewagent.core.messages import ConversationMessage
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.shortcuts import PanelKey
from crewagent.ui.timeline import TimelineRole
from crewagent.ui.works_panel import SNIPPET_ROLE
from tests.ui.conftest import open_project


def titles(main: MainWindow) -> list[str]:
    proxy = main.project_view.works.proxy
    return [proxy.index(row, 0).data() for row in range(proxy.rowCount())]


def select(main: MainWindow, title: str) -> None:
    works = main.project_view.works
    works.view.setCurrentIndex(works.proxy.index(titles(main).index(title), 0))


def search(qtbot: Any, main: MainWindow, text: str, hits: int) -> None:
    works = main.project_view.works
    works.search.setText(text)
    qtbot.waitUntil(lambda: works.search_status.text() != "Searching messages…" and works.proxy.text_hits == hits, timeout=15_000)


def tool_call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "fs.read", "arguments": '{"path": "@project/plan.md"}'}}


def test_searching_keeps_the_open_conversation_open_and_clearing_selects_it_again(
    qtbot: Any, store: Any, project: Any, window: MainWindow
) -> None:
    notes = store.create_conversation(project.id, title="Notes")
    store.append_message(project.id, notes.id, ConversationMessage.new("user", "hello there"))
    other = store.create_conversation(project.id, title="Zebra facts")
    store.append_message(project.id, other.id, ConversationMessage.new("user", "zebras have stripes"))
    open_project(qtbot, window, project.root)
    view, works = window.project_view.conversation, window.project_view.works
    select(window, "Notes")
    qtbot.waitUntil(lambda: view.loaded and view.conversation_id == notes.id)
    opened: list[str] = []
    view.open_requested.connect(lambda _project, conversation: opened.append(conversation))

    search(qtbot, window, "zebra", hits=1)
    assert titles(window) == ["Zebra facts"]  # the open conversation's row is hidden ...
    assert view.conversation_id == notes.id and view.pages.currentWidget() is not view.empty  # ... it stays open
    assert window.project_view.current_summary().id == notes.id
    assert not works.view.currentIndex().isValid()  # and no other row looks open

    works.search.clear()
    assert view.conversation_id == notes.id
    assert works.current_summary().id == notes.id
    assert works.view.currentIndex().data() == "Notes"  # selected in the list again
    assert opened == []  # nothing was closed, reloaded or opened meanwhile


def test_a_hit_opens_at_its_message_with_the_text_marked(qtbot: Any, store: Any, project: Any, window: MainWindow) -> None:
    long = store.create_conversation(project.id, title="Long history")
    messages = [ConversationMessage.new("user" if n % 2 == 0 else "assistant", f"message number {n} about nothing") for n in range(400)]
    messages[30] = ConversationMessage.new("user", "Where is the Kilimanjaro summit log kept?")
    store.append_messages(project.id, long.id, messages)
    store.create_conversation(project.id, title="Other")
    open_project(qtbot, window, project.root)
    view, works, timeline = window.project_view.conversation, window.project_view.works, window.project_view.conversation.timeline
    select(window, "Other")
    qtbot.waitUntil(lambda: view.loaded)

    search(qtbot, window, "kilimanjaro", hits=1)
    row = titles(window).index("Long history")
    snippet = works.proxy.index(row, 0).data(SNIPPET_ROLE)
    assert "Kilimanjaro summit" in snippet
    select(window, "Long history")
    target = messages[30].id
    qtbot.waitUntil(lambda: view.conversation_id == long.id and timeline.model().index_of_key(target).isValid(), timeout=15_000)
    index = timeline.model().index_of_key(target)
    assert index.data(TimelineRole.HIGHLIGHT) == "kilimanjaro"
    assert not timeline.following

    def on_screen() -> bool:
        rect = timeline.visualRect(timeline.model().index_of_key(target))
        return rect.isValid() and timeline.viewport().rect().intersects(rect)

    qtbot.waitUntil(on_screen)  # the hit, not the end of the conversation
    last = timeline.model().index(timeline.model().rowCount() - 1, 0)
    assert not timeline.viewport().rect().intersects(timeline.visualRect(last))
    # Only that row is marked, and the mark is painted: its laid-out text carries the highlight.
    marked = [timeline.model().index(n, 0) for n in range(timeline.model().rowCount())]
    assert [i.data(TimelineRole.KEY) for i in marked if i.data(TimelineRole.HIGHLIGHT)] == [target]
    timeline.viewport().grab()
    assert any("marked" in key and "kilimanjaro" in key for key in timeline.timeline_delegate.documents._docs)
    rows_before = timeline.model().rowCount()

    works.search.clear()  # clearing the search unmarks the row
    assert not timeline.model().index_of_key(target).data(TimelineRole.HIGHLIGHT)
    assert timeline.model().rowCount() == rows_before and view.conversation_id == long.id


def test_a_tool_result_hit_is_opened_and_its_snippet_is_readable_text(
    qtbot: Any, store: Any, project: Any, window: MainWindow, qtmodeltester: Any
) -> None:
    conversation = store.create_conversation(project.id, title="Tools")
    store.append_message(project.id, conversation.id, ConversationMessage.new("user", "read the plan"))
    store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", "", tool_calls=[tool_call("call_1")]))
    result = ConversationMessage.new("tool", json.dumps({"ok": True, "path": "@project/plan.md", "content": "Step one\nThe launch window opens on Friday.\n"}))
    result.tool_call_id = "call_1"
    store.append_message(project.id, conversation.id, result)
    store.append_message(project.id, conversation.id, ConversationMessage.new("assistant", "Done."))
    open_project(qtbot, window, project.root)
    view, works, timeline = window.project_view.conversation, window.project_view.works, window.project_view.conversation.timeline

    search(qtbot, window, "launch window", hits=1)
    snippet = works.proxy.index(0, 0).data(SNIPPET_ROLE)
    assert "The launch window opens on Friday." in snippet
    assert "{" not in snippet and '"content"' not in snippet and "\\n" not in snippet
    select(window, "Tools")
    qtbot.waitUntil(lambda: view.loaded and bool(timeline.model().index_of_key(result.id).data(TimelineRole.HIGHLIGHT)), timeout=15_000)
    part = timeline.model().index_of_key(result.id)
    assert part.data(TimelineRole.KIND) == "tool"
    assert part.data(TimelineRole.KEY) in timeline.view_state.expanded_tools  # the result is shown
    qtmodeltester.check(timeline.model())

    # Clicking the row again jumps again (after the user scrolled away).
    timeline.scroll_to_end()
    works.view.clicked.emit(works.view.currentIndex())
    assert not timeline.following


def test_ctrl_k_focuses_search_from_anywhere_but_a_panel_that_claims_it(qtbot: Any, store: Any, project: Any, window: MainWindow) -> None:
    conversation = store.create_conversation(project.id, title="Notes")
    open_project(qtbot, window, project.root)
    select(window, "Notes")
    view, works = window.project_view.conversation, window.project_view.works
    qtbot.waitUntil(lambda: view.loaded and view.conversation_id == conversation.id)
    window.activateWindow()
    window.project_view.sidebar_switch.setCurrentIndex(1)  # the Files page is showing
    composer = view.composer.findChild(QPlainTextEdit)
    composer.setFocus()
    qtbot.waitUntil(composer.hasFocus)
    works.search.setText("abc")
    qtbot.keyClick(composer, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(works.search.hasFocus)
    assert window.project_view.sidebar_switch.currentIndex() == 0
    assert works.search.selectedText() == "abc"  # typing replaces the old query

    # A panel that wants Ctrl+K for itself (a Logs panel clearing its log) claims it while it has
    # the focus; the window's Ctrl+K is not ambiguous there and still works everywhere else.
    panel = QWidget(window.project_view)
    log_view = QPlainTextEdit(panel)
    QVBoxLayout(panel).addWidget(log_view)
    panel.setGeometry(QRect(0, 0, 200, 100))
    panel.show()
    cleared: list[bool] = []
    PanelKey("Ctrl+K", panel).activated.connect(lambda: cleared.append(True))
    log_view.setFocus()
    qtbot.waitUntil(log_view.hasFocus)
    qtbot.keyClick(log_view, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert cleared == [True] and log_view.hasFocus()
    composer.setFocus()
    qtbot.waitUntil(composer.hasFocus)
    qtbot.keyClick(composer, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(works.search.hasFocus)
    assert cleared == [True]
    QApplication.processEvents()
