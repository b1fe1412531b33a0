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
from tests.worker.gui_thread import OnGuiThread


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


def test_opening_a_folder_that_is_not_a_project_offers_to_make_it_one(
    qtbot: Any, tmp_path: Path, window: MainWindow, dialogs: ScriptedDialogs
) -> None:
    """Open Project used to refuse a plain folder; the command line's --project makes it a project."""
    photos = tmp_path / "photos"
    photos.mkdir()
    dialogs.folder = str(photos)
    window.start_page.open_button.click()
    qtbot.waitUntil(lambda: f"make_project:{photos}" in dialogs.asked)
    # Declined: nothing is created, nothing more is said.
    qtbot.wait(50)
    assert window.stack.currentWidget() is window.start_page and not window.message_bar.isVisible()
    assert not (photos / ".crewagent.json").exists()

    dialogs.make_project = True
    window.start_page.open_button.click()
    qtbot.waitUntil(lambda: window.stack.currentWidget() is window.project_view)
    assert window.project_view.project is not None and window.project_view.project.name == "photos"
    assert (photos / ".crewagent.json").is_file()


def test_opening_a_folder_that_does_not_exist_says_so(
    qtbot: Any, tmp_path: Path, window: MainWindow, dialogs: ScriptedDialogs
) -> None:
    gone = tmp_path / "gone"
    dialogs.folder = str(gone)
    window.start_page.open_button.click()
    qtbot.waitUntil(lambda: window.message_bar.isVisible())
    assert window.message_bar.text == f"The folder {gone} does not exist."
    assert not any(entry.startswith("make_project") for entry in dialogs.asked)
    assert not gone.exists() and window.stack.currentWidget() is window.start_page


def test_a_restored_project_whose_file_was_removed_is_reported_not_offered(
    qtbot: Any, tmp_path: Path, window: MainWindow, dialogs: ScriptedDialogs
) -> None:
    """Only a folder the user just picked is offered to become a project; anything else is a message."""
    (tmp_path / "plain").mkdir()
    window.start_page.request_project(str(tmp_path / "plain"))
    qtbot.waitUntil(lambda: window.message_bar.isVisible())
    assert "is not a CrewAgent project" in window.message_bar.text and str(tmp_path / "plain") in window.message_bar.text
    assert not any(entry.startswith("make_project") for entry in dialogs.asked)


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


def test_new_reuses_the_empty_draft_instead_of_leaving_another_behind(
    qtbot: Any, store: Any, project: Any, window: MainWindow, worker_thread: WorkerThread
) -> None:
    """Every "+ New" used to leave an empty "New conversation" in the list: one draft at a time."""
    open_project(qtbot, window, project.root)
    view = window.project_view
    answers: list[str] = []
    # Counted on the GUI thread, after the window's own (earlier connected) handling of each answer.
    # A lambda connected with QueuedConnection has no receiver, so Qt would call it on the worker's
    # thread, before the window has seen the answer: the relay is a QObject on the GUI thread.
    created = OnGuiThread(worker_thread.worker.conversation_created)
    created.fired.connect(lambda: answers.append(created.args[1].entry_type))

    def ask(entry_type: str) -> None:
        count = len(answers)
        view.request_new_conversation(entry_type)
        qtbot.waitUntil(lambda: len(answers) == count + 1)

    ask("chat")
    draft = view.current_summary()
    assert draft is not None and view.model.rowCount() == 1
    ask("chat")
    assert answers == ["chat", "chat"]
    assert view.model.rowCount() == 1 and [meta.id for meta in store.list_conversations(project.id)] == [draft.id]
    reused = view.current_summary()
    assert reused is not None and reused.id == draft.id

    ask("agent")  # the empty Chat draft gives way to an Agent one: still one draft
    qtbot.waitUntil(lambda: view.model.rowCount() == 1 and view.model.index(0).data(ConversationRole.ENTRY_TYPE) == "agent")
    (agent_draft,) = store.list_conversations(project.id)
    assert agent_draft.entryType == "agent" and agent_draft.id != draft.id
    selected = view.current_summary()
    assert selected is not None and selected.id == agent_draft.id

    # Once it holds a message it is no draft: the next "+ New" starts another conversation.
    store.append_message(project.id, agent_draft.id, ConversationMessage.new("user", "hello"))
    ask("agent")
    qtbot.waitUntil(lambda: view.model.rowCount() == 2)
    newest = view.current_summary()
    assert newest is not None and newest.id != agent_draft.id


def test_new_project_dialog_fits_its_bold_button_and_starts_where_the_last_project_was_made(
    qtbot: Any, qapp: Any, tmp_path: Path
) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QFont, QFontMetrics
    from PySide6.QtWidgets import QApplication, QDialogButtonBox

    from crewagent.ui import theme
    from crewagent.ui.dialogs import NewProjectDialog, QtProjectDialogs

    before = qapp.styleSheet()
    qapp.setStyleSheet(theme.stylesheet("light"))  # the default button's text is bold there
    try:
        dialog = NewProjectDialog(location=str(tmp_path))
        qtbot.addWidget(dialog)
        dialog.show()
        create = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
        qtbot.waitUntil(create.isDefault)
        bold = QFont(create.font())
        bold.setWeight(QFont.Weight.DemiBold)
        padding = 2 * 16  # the stylesheet's horizontal padding
        assert create.width() >= QFontMetrics(bold).horizontalAdvance("Create Project") + padding  # was cut: "Create Projec"
    finally:
        qapp.setStyleSheet(before)

    state_file = tmp_path / "ui-state.ini"
    dialogs = QtProjectDialogs(QSettings(str(state_file), QSettings.Format.IniFormat))
    assert dialogs.last_location() == str(Path.home())
    (tmp_path / "work").mkdir()

    def answer() -> None:
        shown = QApplication.activeModalWidget()
        assert isinstance(shown, NewProjectDialog)
        shown._location.setText(str(tmp_path / "work"))
        shown._name.setText("alpha")
        shown.accept()

    QTimer.singleShot(0, answer)
    answered = dialogs.ask_new_project(None)  # type: ignore[arg-type]
    assert answered is not None and answered.folder == str(tmp_path / "work" / "alpha")
    # Remembered in the window state (ui-state.ini), so also by the next start of the app.
    dialogs._state.sync()  # type: ignore[union-attr]
    again = QtProjectDialogs(QSettings(str(state_file), QSettings.Format.IniFormat))
    assert again.last_location() == str(tmp_path / "work")
    dialog = NewProjectDialog(location=again.last_location())
    qtbot.addWidget(dialog)
    assert dialog._location.text() == str(tmp_path / "work")
