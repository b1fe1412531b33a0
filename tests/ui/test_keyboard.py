"""Keyboard first (issue 18 item 18): the composer has the keyboard when a conversation opens, Up in an
empty composer recalls the last user message, and Ctrl+/ shows a sheet of every shortcut."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QTableWidget

from crewagent.core.messages import ConversationMessage
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.shortcut_sheet import ShortcutSheet
from tests.ui.conftest import open_project


def _select(main: MainWindow, title: str) -> None:
    works = main.project_view.works
    proxy = works.proxy
    row = [proxy.index(r, 0).data() for r in range(proxy.rowCount())].index(title)
    works.view.setCurrentIndex(proxy.index(row, 0))


def test_opening_a_conversation_puts_the_keyboard_in_the_composer(qtbot: Any, store: Any, project: Any, window: MainWindow) -> None:
    notes = store.create_conversation(project.id, title="Notes")
    store.append_message(project.id, notes.id, ConversationMessage.new("user", "hello"))
    store.create_conversation(project.id, title="Other")
    open_project(qtbot, window, project.root)
    view = window.project_view.conversation
    window.project_view.works.view.setFocus()  # the user clicked the row in the Works list
    _select(window, "Notes")
    qtbot.waitUntil(lambda: view.loaded and view.conversation_id == notes.id)
    qtbot.waitUntil(lambda: window.focusWidget() is view.composer.input)


def test_creating_a_conversation_puts_the_keyboard_in_the_composer(qtbot: Any, store: Any, project: Any, window: MainWindow) -> None:
    open_project(qtbot, window, project.root)
    view = window.project_view.conversation
    window.project_view.works.view.setFocus()
    window.project_view.new_chat()
    qtbot.waitUntil(lambda: view.loaded and bool(view.conversation_id))
    qtbot.waitUntil(lambda: window.focusWidget() is view.composer.input)


def test_up_in_an_empty_composer_recalls_the_last_user_message(qtbot: Any, store: Any, project: Any, window: MainWindow) -> None:
    notes = store.create_conversation(project.id, title="Notes")
    store.append_messages(
        project.id,
        notes.id,
        [
            ConversationMessage.new("user", "first question"),
            ConversationMessage.new("assistant", "an answer"),
            ConversationMessage.new("user", "second question\nwith two lines"),
            ConversationMessage.new("assistant", "another answer"),
        ],
    )
    open_project(qtbot, window, project.root)
    view = window.project_view.conversation
    _select(window, "Notes")
    qtbot.waitUntil(lambda: view.loaded and view.conversation_id == notes.id and view.composer.isEnabled())
    field = view.composer.input
    field.setFocus()

    qtbot.keyClick(field, Qt.Key.Key_Up)
    assert field.toPlainText() == "second question\nwith two lines"
    assert field.textCursor().position() == len(field.toPlainText())  # the cursor at the end, ready to edit

    # In a non-empty composer Up moves the cursor as usual: nothing is replaced.
    qtbot.keyClick(field, Qt.Key.Key_Up)
    assert field.toPlainText() == "second question\nwith two lines"
    assert field.textCursor().blockNumber() == 0


def test_up_in_an_empty_composer_of_a_new_conversation_does_nothing(qtbot: Any, store: Any, project: Any, window: MainWindow) -> None:
    store.create_conversation(project.id, title="Empty")
    open_project(qtbot, window, project.root)
    view = window.project_view.conversation
    _select(window, "Empty")
    qtbot.waitUntil(lambda: view.loaded and view.composer.isEnabled())
    qtbot.keyClick(view.composer.input, Qt.Key.Key_Up)
    assert view.composer.input.toPlainText() == ""


def _registered(window: MainWindow) -> set[str]:
    """Every shortcut a QAction or QShortcut of the window (dialogs and panels included) answers to."""
    keys: set[str] = set()
    for action in window.findChildren(QAction):
        keys.update(seq.toString(QKeySequence.SequenceFormat.PortableText) for seq in action.shortcuts() if not seq.isEmpty())
    for shortcut in window.findChildren(QShortcut):
        keys.update(seq.toString(QKeySequence.SequenceFormat.PortableText) for seq in shortcut.keys() if not seq.isEmpty())
    return keys


def test_the_sheet_lists_every_shortcut_registered_on_the_window(qtbot: Any, project: Any, window: MainWindow) -> None:
    open_project(qtbot, window, project.root)  # the project view's panels are built and shown
    listed = {key.toString(QKeySequence.SequenceFormat.PortableText) for key, _ in ShortcutSheet.entries()}
    registered = _registered(window)
    assert "Ctrl+/" in registered and "Ctrl+K" in registered
    missing = registered - listed
    assert not missing, f"shortcuts missing from the shortcuts sheet: {sorted(missing)}"


def test_ctrl_slash_opens_the_sheet_with_a_two_column_table(qtbot: Any, window: MainWindow) -> None:
    qtbot.keyClick(window, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.shortcut_sheet.sheet is not None and window.shortcut_sheet.sheet.isVisible())
    sheet = window.shortcut_sheet.sheet
    assert sheet is not None
    table = sheet.findChild(QTableWidget)
    assert table is not None and table.columnCount() == 2
    keys = [table.item(row, 0).text() for row in range(table.rowCount())]
    assert QKeySequence("Ctrl+K").toString(QKeySequence.SequenceFormat.NativeText) in keys
    assert any("Enter" in key for key in keys) and any("Esc" in key for key in keys) and "F2" in keys
    assert all(table.item(row, 1).text() for row in range(table.rowCount()))
    sheet.close()


def test_opening_a_search_hit_leaves_the_keyboard_in_the_search_box(qtbot: Any, store: Any, project: Any, window: MainWindow) -> None:
    """The composer does not take the keyboard from someone typing a search (they may type on)."""
    found = store.create_conversation(project.id, title="Zebra facts")
    store.append_message(project.id, found.id, ConversationMessage.new("user", "zebras have stripes"))
    store.create_conversation(project.id, title="Other")
    open_project(qtbot, window, project.root)
    view, works = window.project_view.conversation, window.project_view.works
    _select(window, "Other")
    qtbot.waitUntil(lambda: view.loaded)
    works.search.setFocus()
    works.search.setText("zebra")
    qtbot.waitUntil(lambda: works.proxy.text_hits == 1, timeout=15_000)
    _select(window, "Zebra facts")
    qtbot.waitUntil(lambda: view.loaded and view.conversation_id == found.id)
    qtbot.wait(50)
    assert window.focusWidget() is works.search


def test_arrow_keys_browse_the_works_list_and_enter_hands_the_keyboard_to_the_composer(
    qtbot: Any, store: Any, project: Any, window: MainWindow
) -> None:
    """Each Up/Down opens the conversation under it; the keyboard used to jump to the composer after
    every step, so the next arrow moved the composer's cursor instead of the list."""
    ids = {title: store.create_conversation(project.id, title=title).id for title in ("Third", "Second", "First")}
    open_project(qtbot, window, project.root)  # "First", the most recent, is the top row
    view, works = window.project_view.conversation, window.project_view.works
    _select(window, "First")
    qtbot.waitUntil(lambda: view.loaded and window.focusWidget() is view.composer.input)
    works.view.setFocus()

    for key, title in ((Qt.Key.Key_Down, "Second"), (Qt.Key.Key_Down, "Third"), (Qt.Key.Key_Up, "Second")):
        qtbot.keyClick(works.view, key)
        qtbot.waitUntil(lambda: view.loaded and view.conversation_id == ids[title])
        assert window.focusWidget() is works.view, title  # still browsing

    qtbot.keyClick(works.view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.focusWidget() is view.composer.input)
    assert view.conversation_id == ids["Second"]
