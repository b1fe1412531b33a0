"""What a user sees: the Start page, opening and creating projects, conversations, errors, exit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

from crewagent.core.messages import ConversationMessage
from crewagent.ui.dialogs import NewProjectAnswer
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.models import ConversationRole, RecentProjectRole
from crewagent.worker import WorkerThread
from tests.ui.conftest import ScriptedDialogs, open_project


def recent_names(main: MainWindow) -> list[str]:
    model = main.start_page.model
    return [model.index(row).data() for row in range(model.rowCount())]


def conversation_titles(main: MainWindow) -> list[str]:
    model = main.project_view.model
    return [model.index(row).data() for row in range(model.rowCount())]


def test_start_page_lists_recent_projects_and_marks_a_missing_folder(
    qtbot: Any, store: Any, tmp_path: Path, worker_thread: WorkerThread, dialogs: ScriptedDialogs
) -> None:
    store.create_project(tmp_path / "alpha", "Alpha")
    store.create_project(tmp_path / "gone", "Gone")
    (tmp_path / "gone" / ".crewagent.json").unlink()

    main = MainWindow(worker_thread.worker, dialogs=dialogs)
    qtbot.addWidget(main)
    main.show()
    qtbot.waitUntil(lambda: main.start_page.model.rowCount() == 2)

    page = main.start_page
    assert main.windowTitle() == "CrewAgent"
    assert page.view.isVisible() and not page.empty_label.isVisible()
    assert recent_names(main) == ["Gone", "Alpha"]
    assert [page.model.index(row).data(RecentProjectRole.EXISTS) for row in range(2)] == [False, True]
    page.view.grab()  # the delegate paints both kinds of row

    page.view.setCurrentIndex(page.model.index(0))
    assert not page.open_selected_button.isEnabled()  # a missing folder cannot be opened
    assert page.remove_button.isEnabled()
    with qtbot.assertNotEmitted(page.open_project_requested):
        page.view.activated.emit(page.model.index(0))  # double-click / Enter does nothing either
        page.open_selected()

    page.view.setCurrentIndex(page.model.index(1))
    assert page.open_selected_button.isEnabled()
    with qtbot.waitSignal(page.open_project_requested) as requested:
        page.open_selected_button.click()
    assert requested.args == [str(tmp_path / "alpha")]
    qtbot.waitUntil(lambda: main.stack.currentWidget() is main.project_view)


def test_remove_a_missing_project_from_the_list(
    qtbot: Any, store: Any, tmp_path: Path, isolated_dirs: dict[str, Path], worker_thread: WorkerThread, dialogs: ScriptedDialogs
) -> None:
    store.create_project(tmp_path / "alpha", "Alpha")
    store.create_project(tmp_path / "gone", "Gone")
    (tmp_path / "gone" / ".crewagent.json").unlink()
    main = MainWindow(worker_thread.worker, dialogs=dialogs)
    qtbot.addWidget(main)
    qtbot.waitUntil(lambda: main.start_page.model.rowCount() == 2)

    main.start_page.view.setCurrentIndex(main.start_page.model.index(0))
    main.start_page.remove_button.click()
    qtbot.waitUntil(lambda: recent_names(main) == ["Alpha"])

    saved = json.loads((isolated_dirs["data"] / "projects.json").read_text(encoding="utf-8"))
    assert [entry["name"] for entry in saved["projects"]] == ["Alpha"]
    assert (tmp_path / "gone").is_dir()  # only forgotten, never deleted


def test_empty_start_page_says_so(window: MainWindow) -> None:
    assert window.start_page.model.rowCount() == 0
    assert window.start_page.empty_label.isVisible()
    assert "No recent projects" in window.start_page.empty_label.text()
    assert not window.new_conversation_action.isEnabled()


def test_new_project_from_the_start_page_opens_it(
    qtbot: Any, tmp_path: Path, window: MainWindow, dialogs: ScriptedDialogs
) -> None:
    dialogs.new_project = NewProjectAnswer(folder=str(tmp_path / "launch"), name="Launch Plan")
    window.start_page.new_button.click()
    qtbot.waitUntil(lambda: window.stack.currentWidget() is window.project_view)

    assert window.windowTitle() == "Launch Plan — CrewAgent"
    assert window.project_view.project_name.text() == "Launch Plan"
    assert (tmp_path / "launch" / ".crewagent.json").is_file()
    assert (tmp_path / "launch" / "artifacts").is_dir()
    qtbot.waitUntil(lambda: window.project_view.loaded)
    assert window.project_view.empty_label.isVisible()
    assert "No conversations yet" in window.project_view.empty_label.text()
    assert window.new_conversation_action.isEnabled()
    qtbot.waitUntil(lambda: recent_names(window) == ["Launch Plan"])


def test_cancelling_the_new_project_dialog_changes_nothing(window: MainWindow, dialogs: ScriptedDialogs) -> None:
    dialogs.new_project = None
    window.new_project_action.trigger()
    assert dialogs.asked == ["new_project"]
    assert window.stack.currentWidget() is window.start_page


def test_open_project_shows_its_conversations_most_recent_first(
    qtbot: Any, store: Any, project: Any, window: MainWindow, dialogs: ScriptedDialogs, qtmodeltester: Any
) -> None:
    first = store.create_conversation(project.id, title="First idea", entry_type="chat")
    store.create_conversation(project.id, title="Code review", entry_type="agent")
    store.create_conversation(project.id, title="Release run", entry_type="run")
    for text in ("hello", "again"):
        store.append_message(project.id, first.id, ConversationMessage.new("user", text))

    dialogs.folder = str(project.root)
    window.open_project_action.trigger()  # Ctrl+O
    qtbot.waitUntil(lambda: window.project_view.loaded)

    assert window.stack.currentWidget() is window.project_view
    assert conversation_titles(window) == ["First idea", "Release run", "Code review"]
    model = window.project_view.model
    assert model.index(0).data(ConversationRole.MESSAGE_COUNT) == 2
    assert [model.index(row).data(ConversationRole.ENTRY_TYPE) for row in range(3)] == ["chat", "run", "agent"]
    qtmodeltester.check(model)
    window.project_view.view.grab()


def test_new_conversation_adds_a_selected_row_at_the_top(
    qtbot: Any, store: Any, project: Any, conversation: Any, window: MainWindow, qtmodeltester: Any
) -> None:
    open_project(qtbot, window, project.root)
    assert conversation_titles(window) == ["Test conversation"]

    window.new_conversation_action.trigger()  # Ctrl+Shift+N asks for the type in a popup
    menu = window.project_view.works.type_menu
    qtbot.waitUntil(menu.isVisible)
    assert [action.text() for action in menu.actions()] == ["Chat", "Agent", "Workflow"]
    next(action for action in menu.actions() if action.data() == "chat").trigger()
    menu.close()
    qtbot.waitUntil(lambda: window.project_view.model.rowCount() == 2)

    view = window.project_view
    assert conversation_titles(window) == ["New conversation", "Test conversation"]
    assert view.view.currentIndex().row() == 0
    assert view.current_summary() is not None and view.current_summary().entry_type == "chat"
    assert view.conversation.header.title.text() == "New conversation"
    qtmodeltester.check(view.model)
    assert [meta.title for meta in store.list_conversations(project.id)] == ["New conversation", "Test conversation"]


def test_new_conversation_of_another_type_from_the_menu(
    qtbot: Any, store: Any, project: Any, window: MainWindow
) -> None:
    open_project(qtbot, window, project.root)
    agent_action = next(a for a in window.project_view.new_button.menu().actions() if a.data() == "agent")
    agent_action.trigger()
    qtbot.waitUntil(lambda: window.project_view.model.rowCount() == 1)
    assert window.project_view.model.index(0).data(ConversationRole.ENTRY_TYPE) == "agent"


def test_opening_a_folder_that_is_not_a_project_shows_a_message(
    qtbot: Any, tmp_path: Path, window: MainWindow, dialogs: ScriptedDialogs
) -> None:
    (tmp_path / "photos").mkdir()
    dialogs.folder = str(tmp_path / "photos")
    window.start_page.open_button.click()
    qtbot.waitUntil(lambda: window.message_bar.isVisible())

    assert "is not a CrewAgent project" in window.message_bar.text
    assert str(tmp_path / "photos") in window.message_bar.text
    assert window.stack.currentWidget() is window.start_page
    assert not (tmp_path / "photos" / ".crewagent.json").exists()


def test_a_damaged_project_file_shows_a_message_and_opening_another_clears_it(
    qtbot: Any, tmp_path: Path, project: Any, window: MainWindow
) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / ".crewagent.json").write_text('{"projectName": 3}', encoding="utf-8")
    window.start_page.request_project(str(tmp_path / "broken"))
    qtbot.waitUntil(lambda: window.message_bar.isVisible())
    assert "damaged" in window.message_bar.text

    open_project(qtbot, window, project.root)
    assert not window.message_bar.isVisible()


def test_exit_project_returns_to_the_start_page(qtbot: Any, project: Any, conversation: Any, window: MainWindow) -> None:
    open_project(qtbot, window, project.root)
    window.project_view.exit_button.click()

    assert window.stack.currentWidget() is window.start_page
    assert window.windowTitle() == "CrewAgent"
    assert window.project_view.project is None and window.project_view.model.rowCount() == 0
    assert not window.exit_project_action.isEnabled()
    qtbot.waitUntil(lambda: recent_names(window) == ["My Project"])

    # Answers for the project just left are ignored.
    window.project_view.set_conversations(project.id, ())
    assert window.stack.currentWidget() is window.start_page


def test_answers_for_another_project_are_ignored(
    qtbot: Any, store: Any, tmp_path: Path, project: Any, conversation: Any, window: MainWindow
) -> None:
    other = store.create_project(tmp_path / "other", "Other")
    open_project(qtbot, window, project.root)
    stale = store.create_conversation(other.id, title="Elsewhere")
    from crewagent.worker import ConversationSummary

    window.project_view.add_conversation(other.id, ConversationSummary.from_meta(stale))
    window.project_view.set_conversations(other.id, ())
    assert conversation_titles(window) == ["Test conversation"]


def test_geometry_is_remembered(qtbot: Any, isolated_dirs: dict[str, Path], worker_thread: WorkerThread) -> None:
    state_file = str(isolated_dirs["config"] / "ui-state.ini")
    first = MainWindow(worker_thread.worker, state=QSettings(state_file, QSettings.Format.IniFormat))
    qtbot.addWidget(first)
    first.resize(640, 480)
    first.close()

    second = MainWindow(worker_thread.worker, state=QSettings(state_file, QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == (640, 480)
