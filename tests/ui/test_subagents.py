"""Subagents in the real window: the Task part (type, status, summary, live), its read-only tab, notices, Stop, restart."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QSettings, Qt
from PySide6.QtWidgets import QStyleOptionViewItem

from crewagent.ui.composer import Composer
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.subagent_view import SubagentPage
from crewagent.ui.timeline import TimelineRole, TimelineView
from crewagent.ui.timeline.model import SUBAGENT_NOTICE
from crewagent.worker import WorkerThread
from crewagent.worker.turn_values import SubagentInfo
from tests.fakes.scripted_server import ScriptedServer, held_text, text
from tests.fakes.subagent_helpers import marker, sidechain_valid, task_step
from tests.ui.conftest import ScriptedDialogs, open_project
from tests.worker.turns_support import scripted_worker


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    with scripted_worker(isolated_dirs["data"], scripted_llm) as running:
        yield running


@pytest.fixture
def make_window(qtbot: Any, host: WorkerThread, dialogs: ScriptedDialogs, tmp_path: Path) -> Callable[[], MainWindow]:
    def make() -> MainWindow:
        state = QSettings(str(tmp_path / "ui-state.ini"), QSettings.Format.IniFormat)
        main = MainWindow(host.worker, dialogs=dialogs, state=state)
        qtbot.addWidget(main)
        main.resize(1100, 800)
        main.show()
        return main

    return make


def start(qtbot: Any, main: MainWindow, folder: Path, message: str) -> None:
    """Open the project, start a Chat, and send ``message`` (without waiting for the answer)."""
    open_project(qtbot, main, folder)
    main.project_view.new_chat()
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: conversation.loaded and bool(conversation.conversation_id))
    conversation.composer.input.setPlainText(message)
    qtbot.keyClick(conversation.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: conversation.busy)


def subagent_of(index: QModelIndex) -> SubagentInfo | None:
    info = index.data(TimelineRole.SUBAGENT)
    assert info is None or isinstance(info, SubagentInfo)
    return info


def hits(view: TimelineView, index: QModelIndex) -> dict[str, Any]:
    """The clickable areas the delegate lays out for a row (what is drawn is what is clickable)."""
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(index)
    return {hit.name: hit.rect for hit in view.timeline_delegate._layout(option, index, None).hits}


def click(qtbot: Any, view: TimelineView, index: QModelIndex, name: str) -> None:
    view.scrollTo(index)
    rect = hits(view, index)[name]
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint())


def current_page(main: MainWindow) -> SubagentPage:
    page = main.project_view.tabs.currentWidget()
    assert isinstance(page, SubagentPage)
    return page


def test_a_delegated_turn_shows_the_task_part_live_and_opens_the_child_read_only(
    qtbot: Any, qtmodeltester: Any, scripted_llm: ScriptedServer, store: Any, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(task_step("call_task", "child-U", prompt="Look around.", subagent_type="explore"), text("Parent: done."))
    child_may_end = threading.Event()  # the child's answer is held while the test looks at it running
    scripted_llm.script_for(marker("child-U"), held_text(child_may_end, "The child ", "looked ", "around."))
    main = make_window()
    start(qtbot, main, project.root, "delegate: look around")
    conversation = main.project_view.conversation
    model, view = conversation.model, conversation.timeline

    # while the child runs, its Task part says so (matched by the call id), and it can be opened
    qtbot.waitUntil(lambda: (info := subagent_of(model.index_of_call("call_task"))) is not None and info.running, timeout=10_000)
    part = model.index_of_call("call_task")
    info = subagent_of(part)
    assert info is not None and (info.subagent_type, info.description) == ("explore", "child-U")
    view.grab()  # the running Task part paints
    click(qtbot, view, part, "open_subagent")
    page = current_page(main)
    assert page.session_id == info.session_id
    qtbot.waitUntil(lambda: page.loaded, timeout=5_000)
    assert page.findChild(Composer) is None and page.timeline.view_state.read_only
    assert page.status.text() == "running" and page.stop_button.isVisible()
    child_may_end.set()

    # it follows the child live, and the part turns completed with the child's summary
    qtbot.waitUntil(lambda: not conversation.busy, timeout=10_000)
    qtbot.waitUntil(lambda: page.status.text() == "completed", timeout=5_000)
    part = model.index_of_call("call_task")
    info = subagent_of(part)
    assert info is not None and (info.status, info.summary) == ("completed", "The child looked around.")
    assert part.data(TimelineRole.TOOL_STATE) == "ok"
    child_rows = [(top.data(TimelineRole.KIND), top.data(TimelineRole.TEXT)) for top in page.model.iter_top()]
    assert child_rows == [("user", "Look around."), ("assistant", "The child looked around.")]
    assert not page.stop_button.isVisible()
    qtmodeltester.check(model)
    qtmodeltester.check(page.model)
    page.timeline.grab()
    last = page.model.index(page.model.rowCount() - 1, 0)
    assert "retry" not in hits(page.timeline, last)

    # the sidechain is never a conversation of its own in the Works list
    works = main.project_view.model
    assert works.rowCount() == 1 and works.summary(0).id == conversation.conversation_id
    session_id = info.session_id
    messages = sidechain_valid(store, project.id, conversation.conversation_id, session_id)
    assert [m.id for m in messages] == [top.data(TimelineRole.KEY) for top in page.model.iter_top()]

    # a second click on the link shows the same tab; closing it leaves the Conversation tab
    tabs = main.project_view.tabs
    tabs.setCurrentIndex(0)
    click(qtbot, view, model.index_of_call("call_task"), "open_subagent")
    assert current_page(main) is page and tabs.count() == 2
    tabs.tabCloseRequested.emit(tabs.indexOf(page))
    assert tabs.count() == 1 and tabs.widget(0) is conversation

    # a new window on the same data folder: the same Task part, with its link
    cid = conversation.conversation_id
    main.close()
    again = make_window()
    conversation = again.project_view.conversation
    qtbot.waitUntil(lambda: conversation.conversation_id == cid and conversation.loaded, timeout=5_000)
    part = conversation.model.index_of_call("call_task")
    info = subagent_of(part)
    assert info is not None and (info.session_id, info.status, info.subagent_type) == (session_id, "completed", "explore")
    assert info.description == "child-U"  # from the meta the load brings
    click(qtbot, conversation.timeline, part, "open_subagent")
    page = current_page(again)
    qtbot.waitUntil(lambda: page.loaded and page.status.text() == "completed", timeout=5_000)
    assert page.model.rowCount() == 2


def test_a_background_child_keeps_running_and_its_notice_appears_in_the_parent_timeline(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(task_step("call_bg", "bg-U", run_in_background=True, subagent_type="explore"), text("Started it."))
    child_may_end = threading.Event()  # the child is still running when the parent's turn has ended
    scripted_llm.script_for(marker("bg-U"), held_text(child_may_end, "background ", "work ", "finished."))
    main = make_window()
    start(qtbot, main, project.root, "delegate in the background: work")
    conversation = main.project_view.conversation
    model = conversation.model
    qtbot.waitUntil(lambda: not conversation.busy, timeout=10_000)
    assert not conversation.composer.input.isReadOnly()
    child_may_end.set()

    def notice() -> QModelIndex | None:
        return next((top for top in model.iter_top() if top.data(TimelineRole.KIND) == SUBAGENT_NOTICE), None)

    qtbot.waitUntil(lambda: notice() is not None, timeout=10_000)
    row = notice()
    assert row is not None
    info = subagent_of(row)
    assert info is not None and (info.status, info.summary) == ("completed", "background work finished.")
    assert row.row() == model.rowCount() - 1
    part = subagent_of(model.index_of_call("call_bg"))
    assert part is not None and part.status == "completed" and part.session_id == info.session_id
    conversation.timeline.grab()
    # the notice has its own, quieter look: no bubble, but a link to the child
    click(qtbot, conversation.timeline, row, "open_subagent")
    page = current_page(main)
    qtbot.waitUntil(lambda: page.loaded, timeout=5_000)
    assert page.session_id == info.session_id and page.status.text() == "completed"


def test_stop_cancels_the_child_and_its_tab_shows_the_cancelled_end(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(task_step("call_fg", "fg-U"))
    scripted_llm.script_for(marker("fg-U"), held_text(threading.Event(), "word0 word1 word2 word3 "))  # held until stopped
    main = make_window()
    start(qtbot, main, project.root, "delegate: a long job")
    conversation = main.project_view.conversation
    model = conversation.model
    qtbot.waitUntil(lambda: (info := subagent_of(model.index_of_call("call_fg"))) is not None and info.running, timeout=10_000)
    click(qtbot, conversation.timeline, model.index_of_call("call_fg"), "open_subagent")
    page = current_page(main)
    qtbot.waitUntil(lambda: page.loaded and page.model.streaming, timeout=10_000)
    qtbot.waitUntil(lambda: "word3" in str(page.model.index(page.model.rowCount() - 1, 0).data(TimelineRole.TEXT)), timeout=10_000)

    conversation.stop_requested.emit(conversation.conversation_id)
    qtbot.waitUntil(lambda: not conversation.busy, timeout=10_000)
    qtbot.waitUntil(lambda: page.status.text() == "cancelled", timeout=5_000)
    info = subagent_of(model.index_of_call("call_fg"))
    assert info is not None and info.status == "cancelled"
    assert model.index_of_call("call_fg").data(TimelineRole.TOOL_STATE) == "interrupted"
    last = page.model.index(page.model.rowCount() - 1, 0)
    assert last.data(TimelineRole.IS_ERROR) and last.data(TimelineRole.ERROR)["code"] == "SUBAGENT_CANCELLED"
    assert not page.model.streaming and not page.stop_button.isVisible()
    page.timeline.grab()
    assert "retry" not in hits(page.timeline, last) and "continue" not in hits(page.timeline, last)


def test_stop_subagent_in_its_tab_cancels_a_background_child(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(task_step("call_bg", "bg-V", run_in_background=True), text("Started it."))
    scripted_llm.script_for(marker("bg-V"), held_text(threading.Event(), "word0 word1 word2 word3 "))  # held until stopped
    main = make_window()
    start(qtbot, main, project.root, "delegate in the background: a long job")
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: not conversation.busy, timeout=10_000)
    click(qtbot, conversation.timeline, conversation.model.index_of_call("call_bg"), "open_subagent")
    page = current_page(main)
    qtbot.waitUntil(lambda: page.loaded and page.stop_button.isVisible(), timeout=10_000)
    assert "background" in page.note.text()

    qtbot.mouseClick(page.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.status.text() == "cancelled", timeout=10_000)
    qtbot.waitUntil(
        lambda: any(top.data(TimelineRole.KIND) == SUBAGENT_NOTICE for top in conversation.model.iter_top()), timeout=5_000
    )
    info = subagent_of(conversation.model.index_of_call("call_bg"))
    assert info is not None and info.status == "cancelled"


def test_with_the_demo_a_user_delegates_opens_the_child_and_both_logs_link_on_disk(
    qtbot: Any, demo_llm: Any, isolated_dirs: dict[str, Path], store: Any, project: Any, dialogs: ScriptedDialogs, tmp_path: Path
) -> None:
    """The issue's "done when", through the window: the demo delegates, the part and the tab show it."""
    from crewagent.core.loop.factory import provider_config
    from crewagent.worker import Worker

    (project.root / "README.md").write_text("# Hello\nA tiny project about subagents.\n", encoding="utf-8")

    def demo(settings: Any, _url: str | None) -> Any:
        return provider_config(settings, None, provider="demo", demo_base_url=demo_llm.base_url)

    with WorkerThread(Worker(isolated_dirs["data"], provider_factory=demo)).start() as running:
        main = MainWindow(running.worker, dialogs=dialogs, state=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(main)
        main.resize(1100, 800)
        main.show()
        start(qtbot, main, project.root, "delegate: summarise the README")
        conversation = main.project_view.conversation
        qtbot.waitUntil(lambda: not conversation.busy, timeout=15_000)
        model = conversation.model
        part = next(
            model.index(row, 0, top) for top in model.iter_top() for row in range(model.rowCount(top))
            if model.index(row, 0, top).data(TimelineRole.TOOL_NAME) == "task"
        )
        info = subagent_of(part)
        assert info is not None and (info.subagent_type, info.status) == ("explore", "completed")
        assert "# Hello" in info.summary
        click(qtbot, conversation.timeline, part, "open_subagent")
        page = current_page(main)
        qtbot.waitUntil(lambda: page.loaded, timeout=5_000)
        tools = [page.model.index(row, 0, top).data(TimelineRole.TOOL_NAME) for top in page.model.iter_top() for row in range(page.model.rowCount(top))]
        assert tools == ["fs.list", "fs.read"] and page.status.text() == "completed"
        main.close()

    # on disk: the parent's Task result names the sidechain, every sidechain line names the parent
    cid = conversation.conversation_id
    parent = store.load_messages(project.id, cid).messages
    link = next(m for m in parent if m.role == "tool").to_log_dict()
    assert link["subagentSessionId"] == info.session_id and link["subagentStatus"] == "completed"
    folder = store.log_path(project.id, cid).parent / "agents"
    assert (folder / f"{info.session_id}.jsonl").is_file() and (folder / f"{info.session_id}.meta.json").is_file()
    child = sidechain_valid(store, project.id, cid, info.session_id)
    assert {m.to_log_dict()["parentToolCallId"] for m in child} == {link["tool_call_id"]}
