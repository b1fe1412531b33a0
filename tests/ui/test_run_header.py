"""The Workflow header through the real window and worker on the demo provider: try the example workflow,
start it, watch it, stop it, resume it in a new window (issue 11's "Done when"), a package imported while
the window is open, a run whose package is gone."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QSettings, Qt, Slot
from PySide6.QtWidgets import QPushButton

from crewagent.core.packages import PackageStore
from crewagent.core.runs import RunIndex
from crewagent.core.runs.conversation import begin_run
from crewagent.core.runs.service import read_run_state
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.workflow_panel import WorkflowRole
from crewagent.worker import WorkerThread, start_worker
from crewagent.worker.turn_values import AskUserPrompt
from tests.core.run_helpers import install_notes, write_package
from tests.ui.conftest import ScriptedDialogs, open_project
from tests.ui.test_run_workspace import statuses
from tests.ui.test_conversation import ScriptedApprovals

EXAMPLE_STEPS = ("gather-goals", "draft-brief", "review", "end")


class Questions(QObject):
    """The ui.ask_user prompts, recorded on the GUI thread: after every signal the worker sent before
    each of them (``run_progress``...). ``list.append`` connected directly ran on the worker's thread,
    so a test could see the review's question before the progress report that preceded it."""

    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[AskUserPrompt] = []

    @Slot(object)
    def record(self, prompt: AskUserPrompt) -> None:
        self.prompts.append(prompt)


class DemoApp:
    """Windows on one data folder, each on a worker of its own (a new one is an app started again)."""

    def __init__(self, qtbot: Any, data: Path, state: Path, dialogs: ScriptedDialogs):
        self.qtbot, self.data, self.state, self.dialogs = qtbot, data, state, dialogs
        self.hosts: list[WorkerThread] = []
        self._questions = Questions()
        self.questions = self._questions.prompts
        self.approvals = ScriptedApprovals()
        self.approvals.answers = ["allow_conversation"] * 20

    def window(self) -> MainWindow:
        """A new worker (the demo provider: the settings' default) and a window on it."""
        host = start_worker(self.data)
        self.hosts.append(host)
        host.worker.turns.ask_user_requested.connect(self._questions.record)
        state = QSettings(str(self.state), QSettings.Format.IniFormat)
        main = MainWindow(host.worker, dialogs=self.dialogs, state=state, approvals=self.approvals)
        self.qtbot.addWidget(main)
        main.resize(1200, 800)
        main.show()
        return main

    def quit(self, main: MainWindow) -> None:
        main.close()
        self.qtbot.waitUntil(lambda: not main.isVisible(), timeout=10_000)
        self.hosts.pop().stop()


@pytest.fixture
def app(qtbot: Any, qapp: Any, isolated_dirs: dict[str, Path], dialogs: ScriptedDialogs, tmp_path: Path) -> Iterator[DemoApp]:
    running = DemoApp(qtbot, isolated_dirs["data"], tmp_path / "ui-state.ini", dialogs)
    try:
        yield running
    finally:
        for host in running.hosts:
            host.stop()


def answer_next_question(qtbot: Any, main: MainWindow, app: DemoApp, answered: int) -> None:
    """Submit the form of the ``answered``-th question (0-based) as the demo filled it in."""
    qtbot.waitUntil(lambda: len(app.questions) > answered, timeout=60_000)
    delegate = main.project_view.conversation.timeline.timeline_delegate
    key = f"tool:{app.questions[answered].call_id}"
    qtbot.waitUntil(lambda: delegate.editor_for(key) is not None, timeout=20_000)
    form = delegate.editor_for(key)
    assert form is not None
    submit = next(b for b in form.findChildren(QPushButton) if b.text() == "Submit")
    qtbot.mouseClick(submit, Qt.MouseButton.LeftButton)


def phase_of(main: MainWindow) -> str | None:
    active = main.project_view.conversation.runs.active
    return active.phase if active is not None else None


def try_a_workflow(qtbot: Any, main: MainWindow, folder: Path) -> None:
    open_project(qtbot, main, folder)
    works = main.project_view.works
    qtbot.waitUntil(works.try_workflow_button.isVisible)
    qtbot.mouseClick(works.try_workflow_button, Qt.MouseButton.LeftButton)
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: conversation.loaded and conversation.mode == "run")
    qtbot.waitUntil(lambda: conversation.header.workflow.selected_workflow() is not None)


def test_try_a_workflow_from_the_empty_works_list_picks_the_example(qtbot: Any, app: DemoApp, project: Any) -> None:
    main = app.window()
    try_a_workflow(qtbot, main, project.root)
    header = main.project_view.conversation.header
    assert header.details.currentWidget() is header.workflow and header.workflow.isVisible()
    package_id, workflow_id = header.workflow.selected_workflow()  # type: ignore[misc]
    assert workflow_id == "project-brief" and package_id.startswith("project-brief")
    assert "Project brief — project-brief 1.0.0" == header.workflow.picker.currentText()
    assert "brief.md" in header.workflow.description.toolTip()
    assert header.workflow.start_button.isEnabled() and not header.workflow.resume_button.isEnabled()
    assert not main.project_view.works.try_workflow_button.isVisible()  # the list is no longer empty
    assert main.status_run.isHidden()  # no run yet


class ProgressSeen(QObject):
    """What the Run workspace shows at each state write the engine reports (a slot on the GUI thread,
    run after the workspace's own): the steps' statuses and the graph's highlighted node."""

    def __init__(self, main: MainWindow, host: WorkerThread):
        super().__init__()
        self.workspace = main.project_view.conversation.run_workspace
        self.seen: list[tuple[list[tuple[str, str]], str]] = []
        host.worker.turns.run_progress.connect(self.on_progress)

    @Slot(str, object)
    def on_progress(self, _conversation_id: str, _progress: object) -> None:
        self.seen.append((statuses(self.workspace), self.workspace.graph.current_node()))


def expected_steps(done: int) -> list[tuple[str, str]]:
    return [(node, "completed" if i < done else "current" if i == done else "pending") for i, node in enumerate(EXAMPLE_STEPS)]


@pytest.mark.slow
def test_done_when_try_a_workflow_watch_it_open_the_artifact_quit_in_the_middle_reopen_resume_complete(
    qtbot: Any, app: DemoApp, project: Any, store: Any
) -> None:
    """Issue 11's "Done when", end to end on real widgets and the demo provider: the empty Works list's
    "Try a workflow", Start, Progress and the graph advancing, the artifact opened, Stop and quit in
    the middle, a new worker and window on the same data folder, Resume, completed with every step done."""
    main = app.window()
    try_a_workflow(qtbot, main, project.root)
    conversation = main.project_view.conversation
    panel, workspace = conversation.header.workflow, conversation.run_workspace
    workspace.tabs.setCurrentIndex(1)  # the Graph tab: drawn (and highlighted) on every update
    seen = ProgressSeen(main, app.hosts[-1])
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: phase_of(main) == "running", timeout=20_000)
    assert not panel.start_button.isEnabled() and main.status_run.isVisible()
    assert "project-brief 1.0.0 · run_" in main.status_run.text() and main.status_run.text().endswith("Running")
    qtbot.waitUntil(lambda: workspace.snapshot is not None, timeout=20_000)

    answer_next_question(qtbot, main, app, 0)  # the goals
    qtbot.waitUntil(lambda: len(app.questions) > 1, timeout=60_000)  # the review asks: the brief is written
    assert [statuses for statuses, _graph in seen.seen] == [expected_steps(1), expected_steps(2)]
    assert [graph for _statuses, graph in seen.seen] == ["draft-brief", "review"]
    assert workspace.graph.node_item("gather-goals").status == "completed"

    # The artifact: listed as written, a double-click opens it in a file tab.
    brief = project.root / "artifacts" / "brief.md"
    artifacts = workspace.artifacts_model

    def brief_row() -> int | None:
        return next((r for r in range(artifacts.rowCount()) if artifacts.index(r, 0).data() == "artifacts/brief.md"
                     and artifacts.index(r, 2).data() == "written"), None)

    qtbot.waitUntil(lambda: brief_row() is not None, timeout=20_000)
    workspace.tabs.setCurrentIndex(3)
    row = brief_row()
    assert row is not None
    rect = workspace.artifacts_view.visualRect(artifacts.index(row, 0))
    # The run waits for the review answer: the list stays as it is while the user clicks.
    qtbot.mouseClick(workspace.artifacts_view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(workspace.artifacts_view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    tabs = main.project_view.file_tabs
    qtbot.waitUntil(lambda: tabs.page_of(str(brief)) is not None and tabs.page_of(str(brief)).kind == "markdown", timeout=10_000)
    assert "project brief" in tabs.page_of(str(brief)).markdown.toPlainText()

    # Quit in the middle: Stop, then close the app.
    conversation.composer.stop_button.click()
    qtbot.waitUntil(lambda: not conversation.busy and phase_of(main) == "idle", timeout=20_000)
    cid, run_id = conversation.conversation_id, conversation.runs.active.run_id  # type: ignore[union-attr]
    (run,) = RunIndex(project.runtime_dir).list()
    assert read_run_state(project, run).steps_completed == ("gather-goals", "draft-brief")  # type: ignore[union-attr]
    app.quit(main)

    again = app.window()  # the app started again: the session reopens the conversation
    reopened = again.project_view.conversation
    qtbot.waitUntil(lambda: reopened.conversation_id == cid and reopened.loaded, timeout=20_000)
    panel, workspace = reopened.header.workflow, reopened.run_workspace
    qtbot.waitUntil(lambda: panel.resume_button.isEnabled() and workspace.snapshot is not None, timeout=20_000)
    assert panel.runs.currentData() == run_id and "Idle" in panel.runs.currentText()
    assert again.status_run.text() == f"project-brief 1.0.0 · {run_id} · Idle"
    assert statuses(workspace) == expected_steps(2)  # the Progress tab where the run stopped
    qtbot.mouseClick(panel.resume_button, Qt.MouseButton.LeftButton)
    answer_next_question(qtbot, again, app, 2)  # the review, asked again
    qtbot.waitUntil(lambda: phase_of(again) == "completed", timeout=60_000)

    (run,) = RunIndex(project.runtime_dir).list()
    assert run.phase == "completed"
    assert read_run_state(project, run).steps_completed == EXAMPLE_STEPS  # type: ignore[union-attr]
    # The Progress tab shows every step done.
    qtbot.waitUntil(lambda: workspace.snapshot is not None and workspace.snapshot.phase == "completed", timeout=20_000)
    assert statuses(workspace) == expected_steps(len(EXAMPLE_STEPS))
    assert workspace.phase.text() == "completed"
    users = [m.text for m in store.load_messages(project.id, cid).messages if m.role == "user"]
    assert users == ["start", "continue"]
    assert again.status_run.text() == f"project-brief 1.0.0 · {run_id} · Completed"
    assert not panel.resume_button.isEnabled() and panel.start_button.isEnabled()
    assert panel.runs.count() == 1 and "Completed" in panel.runs.currentText()
    assert panel.count.text() == "1 run started in this conversation"
    assert again.project_view.current_summary().title == "Run: Project brief"  # type: ignore[union-attr]


def test_the_picker_gains_a_workflow_when_a_package_is_imported(
    qtbot: Any, qtmodeltester: Any, app: DemoApp, project: Any, tmp_path: Path
) -> None:
    main = app.window()
    open_project(qtbot, main, project.root)
    main.project_view.request_new_conversation("run")
    panel = main.project_view.conversation.header.workflow
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    qtmodeltester.check(panel.model)

    main.import_package_requested.emit(str(write_package(tmp_path / "notes-src")))
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=20_000)
    qtmodeltester.check(panel.model)
    labels = [panel.model.index(row, 0).data() for row in range(2)]
    assert labels == ["Notes — notes 1.0.0", "Project brief — project-brief 1.0.0"]
    assert panel.selected_workflow()[1] == "project-brief"  # type: ignore[index]  # the choice is kept
    notes = panel.model.index(0, 0)
    assert (notes.data(WorkflowRole.WORKFLOW_ID), notes.data(WorkflowRole.PACKAGE_LABEL)) == ("notes", "notes 1.0.0")
    # Its agents join the agent picker, without a restart either.
    selector = main.project_view.conversation.header.agent_selector
    qtbot.waitUntil(lambda: all(any(name in selector.itemText(i) for i in range(selector.count())) for name in ("Wren", "Cato")), timeout=20_000)

    install_notes(app.data, tmp_path, version="1.1.0")  # installed by another process (the command line)
    main.load_packages_requested.emit()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3, timeout=20_000)
    assert panel.model.index(1, 0).data() == "Notes — notes 1.1.0"


def test_a_run_whose_package_is_gone_shows_the_card_and_re_import_brings_it_back(
    qtbot: Any, app: DemoApp, project: Any, store: Any, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    meta = store.create_conversation(project.id, title="Notes run", entry_type="run")
    run = begin_run(store, project, meta.id, package, "notes")
    PackageStore(isolated_dirs["data"]).remove(package.id)
    archive = tmp_path / "notes-1.0.0.bmad"
    with zipfile.ZipFile(archive, "w") as bmad:
        for file in sorted((tmp_path / "notes-src-1.0.0").rglob("*")):
            if file.is_file():
                bmad.write(file, file.relative_to(tmp_path / "notes-src-1.0.0").as_posix())

    main = app.window()
    open_project(qtbot, main, project.root)
    assert main.project_view.select_conversation(meta.id)
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: conversation.loaded and conversation.conversation_id == meta.id)
    card = conversation.missing_package
    qtbot.waitUntil(card.isVisible, timeout=20_000)
    assert "notes 1.0.0" in card.details.text() and run.runId in card.details.text()
    assert conversation.composer.isHidden()  # nothing to send that would fail
    assert not conversation.header.workflow.resume_button.isEnabled()

    qtbot.mouseClick(card.back_button, Qt.MouseButton.LeftButton)  # Back: out of Run mode, the run kept
    qtbot.waitUntil(lambda: main.project_view.current_summary().active_type == "agent")  # type: ignore[union-attr]
    assert store.get_conversation(project.id, meta.id).activeType == "agent"
    assert conversation.mode == "agent" and card.isHidden() and conversation.composer.isVisible()
    assert main.status_run.isHidden()
    qtbot.mouseClick(conversation.header.switcher.buttons["run"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: main.project_view.current_summary().active_type == "run" and card.isVisible())  # type: ignore[union-attr]

    app.dialogs.package_file = None  # the file dialog cancelled: nothing happens
    qtbot.mouseClick(card.reimport_button, Qt.MouseButton.LeftButton)
    assert app.dialogs.asked[-1] == "package_file notes 1.0.0" and card.isVisible()
    app.dialogs.package_file = str(archive)
    qtbot.mouseClick(card.reimport_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(card.isHidden, timeout=20_000)
    assert conversation.composer.isVisible() and conversation.header.workflow.resume_button.isEnabled()
    assert package.id in PackageStore(isolated_dirs["data"]).ids()


def test_an_agent_menu_workflow_item_switches_the_header_to_workflow_with_its_run(
    qtbot: Any, app: DemoApp, project: Any, store: Any
) -> None:
    main = app.window()
    open_project(qtbot, main, project.root)
    main.project_view.request_new_conversation("agent")
    conversation = main.project_view.conversation
    selector = conversation.header.agent_selector
    qtbot.waitUntil(lambda: conversation.loaded and any(str(selector.itemData(i)).endswith(":analyst") for i in range(selector.count())))
    analyst = next(i for i in range(selector.count()) if str(selector.itemData(i)).endswith(":analyst"))
    selector.setCurrentIndex(analyst)
    selector.activated.emit(analyst)
    qtbot.waitUntil(lambda: str(main.project_view.current_summary().agent_id).endswith(":analyst"))  # type: ignore[union-attr]

    conversation.composer.input.setPlainText("*brief")
    qtbot.keyClick(conversation.composer.input, Qt.Key.Key_Return)
    header = conversation.header
    qtbot.waitUntil(lambda: conversation.mode == "run" and header.details.currentWidget() is header.workflow, timeout=20_000)
    qtbot.waitUntil(lambda: header.workflow.runs.count() == 1, timeout=20_000)
    (run,) = RunIndex(project.runtime_dir).list()
    assert header.workflow.runs.currentData() == run.runId
    assert header.workflow.selected_workflow()[1] == "project-brief"  # type: ignore[index]
    qtbot.waitUntil(lambda: main.status_run.isVisible() and run.runId in main.status_run.text())
    qtbot.waitUntil(lambda: len(app.questions) > 0, timeout=60_000)  # the run's first step asks
    conversation.composer.stop_button.click()
    qtbot.waitUntil(lambda: not conversation.busy and phase_of(main) == "idle", timeout=20_000)
    assert header.workflow.resume_button.isEnabled()
