"""The Works panel through the real worker thread: New by type, inline rename, delete with confirmation, search."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QMessageBox

from crewagent.core.messages import ConversationMessage
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.models import ConversationRole
from crewagent.ui import works_panel
from crewagent.ui.works_panel import SNIPPET_ROLE, WorksPanel
from crewagent.worker import ConversationSummary
from tests.ui.conftest import open_project


def titles(main: MainWindow) -> list[str]:
    proxy = main.project_view.works.proxy
    return [proxy.index(row, 0).data() for row in range(proxy.rowCount())]


def select(main: MainWindow, title: str) -> None:
    works = main.project_view.works
    row = titles(main).index(title)
    works.view.setCurrentIndex(works.proxy.index(row, 0))


def rename_in_place(qtbot: Any, main: MainWindow, text: str) -> None:
    works = main.project_view.works
    works.view.setFocus()
    qtbot.keyClick(works.view, Qt.Key.Key_F2)
    editor = works.view.findChild(QLineEdit, "renameEditor")
    assert editor is not None and editor.isVisible()
    editor.setText(text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)


def test_new_asks_for_the_type(qtbot: Any, project: Any, window: MainWindow) -> None:
    open_project(qtbot, window, project.root)
    works = window.project_view.works
    assert works.new_button.popupMode() == works.new_button.ToolButtonPopupMode.InstantPopup
    workflow = next(action for action in works.type_menu.actions() if action.data() == "run")
    assert "workflow" in workflow.toolTip().lower()
    workflow.trigger()
    qtbot.waitUntil(lambda: works.model.rowCount() == 1)
    assert works.current_summary() is not None and works.current_summary().entry_type == "run"


def test_rename_in_place_and_refuse_an_empty_name(
    qtbot: Any, store: Any, project: Any, window: MainWindow, qtmodeltester: Any
) -> None:
    first = store.create_conversation(project.id, title="Draft ideas")
    store.create_conversation(project.id, title="Other")
    open_project(qtbot, window, project.root)
    select(window, "Draft ideas")

    rename_in_place(qtbot, window, "  Launch   plan ")
    qtbot.waitUntil(lambda: "Launch plan" in titles(window))
    assert store.get_conversation(project.id, first.id).title == "Launch plan"
    assert window.project_view.current_summary().title == "Launch plan"  # still selected
    qtmodeltester.check(window.project_view.works.model)

    rename_in_place(qtbot, window, "   ")
    qtbot.waitUntil(window.message_bar.isVisible)
    assert "needs a name" in window.message_bar.text
    assert store.get_conversation(project.id, first.id).title == "Launch plan"


def test_delete_asks_first_then_removes_messages_outputs_and_sidechains(
    qtbot: Any, store: Any, project: Any, window: MainWindow, isolated_dirs: dict[str, Path], qtmodeltester: Any
) -> None:
    doomed = store.create_conversation(project.id, title="Doomed")
    store.create_conversation(project.id, title="Kept")
    store.append_message(project.id, doomed.id, ConversationMessage.new("user", "hello"))
    folder = store.log_path(project.id, doomed.id).parent
    (folder / "agents").mkdir()
    (folder / "agents" / "agent_a1.jsonl").write_text("{}\n", encoding="utf-8")
    offloaded = store.state_dir(project.id) / "logs" / "tool-results" / doomed.id
    offloaded.mkdir(parents=True)
    (offloaded / "msg_1.json").write_text("{}", encoding="utf-8")
    open_project(qtbot, window, project.root)
    works = window.project_view.works

    select(window, "Doomed")
    works.delete_current()
    box = works.delete_box
    assert isinstance(box, QMessageBox) and box.isVisible() and "Doomed" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: works.delete_box is None)
    assert sorted(titles(window)) == ["Doomed", "Kept"] and folder.is_dir()

    select(window, "Doomed")
    works.delete_current()
    box = works.delete_box
    assert box is not None
    delete = next(button for button in box.buttons() if button.text() == "Delete")
    delete.click()
    # The index entry goes first, then the files (store.delete_conversation): the list, which
    # follows index.json, can show the removal while the worker still removes the folder.
    # A hang guard, not a pace: it ends when the condition holds (5 s ran out once at load ~10).
    qtbot.waitUntil(lambda: titles(window) == ["Kept"] and not folder.exists() and not offloaded.exists(), timeout=30_000)
    assert [meta.title for meta in store.list_conversations(project.id)] == ["Kept"]
    qtmodeltester.check(works.model)


@pytest.fixture
def quick_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """The panel asks the worker 250 ms after the last key (for a person typing); 20 ms in the test.
    Request it before ``window``: the panel reads the interval when it is built."""
    monkeypatch.setattr(works_panel, "SEARCH_DEBOUNCE_MS", 20)


def test_search_filters_titles_at_once_and_message_text_through_the_worker(
    qtbot: Any, store: Any, project: Any, quick_search: None, window: MainWindow, qtmodeltester: Any
) -> None:
    fox = store.create_conversation(project.id, title="Animals")
    store.append_message(project.id, fox.id, ConversationMessage.new("user", "Tell me about the quick brown fox, please."))
    store.append_message(project.id, fox.id, ConversationMessage.new("assistant", "Foxes are small omnivores."))
    other = store.create_conversation(project.id, title="Fox tracking plan")
    store.append_message(project.id, other.id, ConversationMessage.new("user", "nothing to see"))
    store.create_conversation(project.id, title="Budget")
    open_project(qtbot, window, project.root)
    works = window.project_view.works

    works.search.setText("fox")
    assert titles(window) == ["Fox tracking plan"]  # titles filter at once, before the worker answers
    assert works.search_status.text() == "Searching messages…"
    qtbot.waitUntil(lambda: sorted(titles(window)) == ["Animals", "Fox tracking plan"])
    proxy = works.proxy
    snippet = proxy.index(titles(window).index("Animals"), 0).data(SNIPPET_ROLE)
    assert "quick brown fox" in snippet
    assert "1 conversation" in works.search_status.text()
    qtmodeltester.check(proxy)
    works.view.grab()  # the delegate draws the snippet line

    works.search.setText("zebra")
    qtbot.waitUntil(lambda: works.search_status.text() == "No message contains this text")
    assert titles(window) == [] and works.empty_label.isVisible()
    assert "zebra" in works.empty_label.text()

    works.search.clear()
    assert sorted(titles(window)) == ["Animals", "Budget", "Fox tracking plan"]
    assert not works.search_status.isVisible()
    assert proxy.index(0, 0).data(ConversationRole.CONVERSATION_ID)


def _panel(qtbot: Any, *items: ConversationSummary) -> WorksPanel:
    panel = WorksPanel()
    qtbot.addWidget(panel)
    panel.reset(has_project=True)
    panel.set_conversations(items)
    panel.show()
    return panel


def _conversation(conversation_id: str, title: str, minutes: int = 0, count: int = 0) -> ConversationSummary:
    moment = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=minutes)
    return ConversationSummary(conversation_id, title, "chat", "chat", moment, moment, count)


def test_a_row_that_changes_while_its_title_is_edited_keeps_what_the_user_typed(qtbot: Any) -> None:
    """A running turn's count, the count on open or a reload changes the row under the rename editor:
    Qt then asks the delegate to fill the editor again, which threw the typed title away."""
    panel = _panel(qtbot, _conversation("a", "Draft ideas"), _conversation("b", "Other", minutes=1))
    assert panel.select("a")
    renamed: list[tuple[str, str]] = []
    panel.rename_requested.connect(lambda cid, title: renamed.append((cid, title)))
    panel.view.setFocus()
    qtbot.keyClick(panel.view, Qt.Key.Key_F2)
    editor = panel.view.findChild(QLineEdit, "renameEditor")
    assert editor is not None and editor.text() == "Draft ideas"
    qtbot.keyClicks(editor, "Launch plan")

    panel.model.upsert(_conversation("a", "Draft ideas", count=3))  # its row changes in place
    panel.set_conversations([_conversation("a", "Draft ideas", minutes=5, count=4), _conversation("b", "Other", minutes=1)])
    assert editor.text() == "Launch plan"
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the delegate commits on the next turn of the event loop
    qtbot.waitUntil(lambda: renamed == [("a", "Launch plan")])
    # The reload held while editing is applied once the editor has closed; the row stays selected.
    qtbot.waitUntil(lambda: panel.model.summary(0).message_count == 4)
    current = panel.current_summary()
    assert current is not None and current.id == "a"
