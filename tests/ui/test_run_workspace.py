"""The Run workspace through the real window, worker and demo provider: progress, graph, tool calls, artifacts, logs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QObject, QPoint, QSettings, Qt, Signal, Slot

from crewagent.core import paths
from crewagent.core.packages import PackageStore, ensure_builtin_packages
from crewagent.core.runs import create_run
from crewagent.core.runs.create import state_path
from crewagent.core.store._fsutil import atomic_write_bytes
from crewagent.core.tools import frontmatter
from crewagent.core.tools.audit import audit_path, read_audit
from crewagent.ui.file_tabs import FilePage
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.run_workspace.models import RunRole
from crewagent.worker import Worker, WorkerThread
from crewagent.worker.turn_values import AskUserPrompt
from tests.ui.conftest import ScriptedDialogs, open_project
from tests.ui.test_conversation import ScriptedApprovals

STEPS = ["gather-goals", "draft-brief", "review", "end"]


@pytest.fixture
def demo_host(qapp: Any, isolated_dirs: dict[str, Path], demo_llm: Any) -> Iterator[WorkerThread]:
    from crewagent.core.loop.factory import provider_config

    def demo(settings: Any, _url: str | None) -> Any:
        return provider_config(settings, None, provider="demo", demo_base_url=demo_llm.base_url)

    with WorkerThread(Worker(isolated_dirs["data"], provider_factory=demo)).start() as running:
        yield running


@pytest.fixture
def run_conversation(store: Any, project: Any, isolated_dirs: dict[str, Path]) -> tuple[str, str]:
    """A Workflow conversation whose active run is the example workflow, not started yet: (conversation id, run id)."""
    ensure_builtin_packages(isolated_dirs["data"])
    package = next(p for p in PackageStore(isolated_dirs["data"]).list() if p.workflow("project-brief"))
    meta = store.create_conversation(project.id, title="Brief", entry_type="run")
    store.update_conversation(project.id, meta.id, activeType="run")
    run = create_run(store, project, meta.id, package, "project-brief")
    return meta.id, run.runId


@pytest.fixture
def make_window(qtbot: Any, demo_host: WorkerThread, dialogs: ScriptedDialogs, tmp_path: Path) -> Callable[[], MainWindow]:
    def make() -> MainWindow:
        approvals = ScriptedApprovals()
        approvals.answers = ["allow_conversation"] * 10
        state = QSettings(str(tmp_path / "ui-state.ini"), QSettings.Format.IniFormat)
        main = MainWindow(demo_host.worker, dialogs=dialogs, state=state, approvals=approvals)
        qtbot.addWidget(main)
        main.resize(1300, 820)
        main.show()
        return main

    return make


def open_run(qtbot: Any, main: MainWindow, folder: Path, conversation_id: str, *, restored: bool = False) -> Any:
    """Open the project (``restored``: the window reopened it itself), select the run's conversation;
    the Run workspace shows its run."""
    if restored:
        qtbot.waitUntil(lambda: main.project_view.loaded and main.project_view.current_summary() is not None)
    else:
        open_project(qtbot, main, folder)
    assert main.project_view.select_conversation(conversation_id)
    view = main.project_view.conversation
    workspace = view.run_workspace
    qtbot.waitUntil(lambda: view.loaded and workspace.snapshot is not None, timeout=10_000)
    return workspace


def statuses(workspace: Any) -> list[tuple[str, str]]:
    model = workspace.progress_model
    return [(model.index(row, 0).data(RunRole.NODE_ID), model.index(row, 0).data(RunRole.STATUS)) for row in range(model.rowCount())]


class RunWatcher(QObject):
    """On the GUI thread (a lambda would run on the emitting thread): records what the panel shows
    at each reported state write, and submits every ui.ask_user form with its defaults, as a user
    pressing Submit would."""

    def __init__(self, main: MainWindow, workspace: Any):
        super().__init__()
        self.main, self.workspace = main, workspace
        self.seen: list[tuple[list[tuple[str, str]], str]] = []

    @Slot(str, object)
    def on_progress(self, _conversation_id: str, _progress: object) -> None:
        self.seen.append((statuses(self.workspace), self.workspace.graph.current_node()))

    @Slot(object)
    def on_ask_user(self, prompt: AskUserPrompt) -> None:
        fields = prompt.widget.get("fields") or []
        values = {f["name"]: f.get("default", "") for f in fields}
        self.main.project_view.conversation.ask_user_answered.emit(prompt.request_id, {"values": values})


def test_the_example_workflow_shows_progress_graph_tool_calls_and_artifacts_step_by_step(
    qtbot: Any, qtmodeltester: Any, make_window: Callable[[], MainWindow], demo_host: WorkerThread, project: Any,
    run_conversation: tuple[str, str],
) -> None:
    conversation_id, run_id = run_conversation
    main = make_window()
    workspace = open_run(qtbot, main, project.root, conversation_id)
    assert workspace.isVisible() and workspace.snapshot.run_id == run_id
    assert statuses(workspace) == [("gather-goals", "current"), ("draft-brief", "pending"), ("review", "pending"), ("end", "pending")]
    assert workspace.graph.current_node() == ""  # drawn when its tab shows
    workspace.tabs.setCurrentIndex(1)
    assert workspace.graph.current_node() == "gather-goals"
    # The graph draws every edge with its label.
    from crewagent.ui.run_workspace.graph_view import EdgeItem

    edges = sorted((i.edge.source, i.edge.target, i.label.text()) for i in workspace.graph.scene().items() if isinstance(i, EdgeItem))
    assert edges == [("draft-brief", "review", "next"), ("gather-goals", "draft-brief", "next"),
                     ("review", "draft-brief", "revise"), ("review", "end", "approve")]
    assert workspace.title.text() == "Project brief"
    # Each step with its title and its agent (the package's name for it), in graph order.
    progress = workspace.progress_model
    assert [[progress.index(r, c).data() for c in range(2)] for r in range(4)] == [
        ["Gather the goals", "Mira"], ["Draft the brief", "Mira"], ["Review the brief", "Theo"], ["Done", ""]
    ]
    assert progress.index(0, 0).data(Qt.ItemDataRole.DecorationRole) is not None  # the drawn status mark
    for model in (workspace.progress_model, workspace.decision_model, workspace.calls_model, workspace.artifacts_model):
        qtmodeltester.check(model)

    # What the panel shows at each state write, as the engine reports it (its slot runs first).
    watcher = RunWatcher(main, workspace)
    turns = demo_host.worker.turns
    turns.run_progress.connect(watcher.on_progress)
    turns.ask_user_requested.connect(watcher.on_ask_user)
    view = main.project_view.conversation
    view.composer.input.setPlainText("start")
    qtbot.keyClick(view.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.busy, timeout=5_000)
    qtbot.waitUntil(lambda: not view.busy, timeout=60_000)

    def expected(done: int) -> list[tuple[str, str]]:
        return [(node, "completed" if i < done else "current" if i == done else "pending") for i, node in enumerate(STEPS)]

    seen = watcher.seen
    assert [s for s, _graph in seen] == [expected(1), expected(2), expected(3), expected(4)]
    assert [graph for _s, graph in seen] == ["draft-brief", "review", "end", ""]
    qtbot.waitUntil(lambda: workspace.snapshot.phase == "completed", timeout=5_000)
    assert workspace.phase.text() == "completed"
    assert workspace.graph.node_item("end").status == "completed"

    # Decisions: the review took the approve edge.
    decisions = workspace.decision_model.values()
    assert [(d.source, d.target, d.label) for d in decisions] == [("review", "end", "approve")]

    # Tool Calls: the run's audit, every call, in order.
    audit = read_audit(audit_path(paths.state_dir(project.runtime_dir), run_id=run_id))
    calls = workspace.calls_model
    qtbot.waitUntil(lambda: calls.rowCount() == len(audit))
    assert [calls.index(r, 1).data() for r in range(calls.rowCount())] == [a["tool"] for a in audit]
    assert [calls.index(r, 3).data() for r in range(calls.rowCount())].count("ok") == len(audit)
    assert {"fs.read", "ui.ask_user", "fs.write", "fs.apply_patch"} <= {a["tool"] for a in audit}
    patch_row = next(r for r in range(calls.rowCount()) if calls.index(r, 1).data() == "fs.apply_patch")
    workspace.calls_view.setCurrentIndex(calls.index(patch_row, 0))
    details = workspace.call_details.toPlainText()
    assert details.startswith("fs.apply_patch") and "updateFrontmatter" in details

    # Artifacts: the brief is written; a double-click opens it in a file tab.
    artifacts = workspace.artifacts_model
    brief = project.root / "artifacts" / "brief.md"
    row = next(r for r in range(artifacts.rowCount()) if artifacts.index(r, 0).data() == "artifacts/brief.md")
    assert artifacts.index(row, 2).data() == "written" and artifacts.index(row, 0).data(RunRole.PATH) == str(brief)
    workspace.tabs.setCurrentIndex(3)
    rect = workspace.artifacts_view.visualRect(artifacts.index(row, 0))
    qtbot.mouseClick(workspace.artifacts_view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert main.project_view.file_tabs.page_of(str(brief)) is None  # one click selects
    qtbot.mouseDClick(workspace.artifacts_view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    tabs = main.project_view.file_tabs
    qtbot.waitUntil(lambda: tabs.page_of(str(brief)) is not None and tabs.page_of(str(brief)).kind == "markdown", timeout=5_000)
    page = tabs.page_of(str(brief))
    assert isinstance(page, FilePage) and "project brief" in page.markdown.toPlainText()
    assert main.project_view.tabs.currentWidget() is page

    # Graph: a click on a node opens its step file, read-only, in a tab.
    main.project_view.tabs.setCurrentIndex(0)
    workspace.tabs.setCurrentIndex(1)
    graph = workspace.graph
    item = graph.node_item("review")
    graph.centerOn(item)
    point = graph.mapFromScene(item.sceneBoundingRect().center())
    qtbot.mouseClick(graph.viewport(), Qt.MouseButton.LeftButton, pos=point)
    step_file = workspace.snapshot.step("review").step_file
    qtbot.waitUntil(lambda: tabs.page_of(step_file) is not None and tabs.page_of(step_file).kind == "markdown", timeout=5_000)
    assert step_file.endswith("steps/review.md") and tabs.page_of(step_file).markdown.isReadOnly()

    # The log saw the turn: tools, the state writes, the end.
    levels = [entry.level for entry in view.logs.model.entries()]
    texts = [entry.text for entry in view.logs.model.entries()]
    assert "tool" in levels and any("complete" in text for text in texts)
    for model in (workspace.progress_model, workspace.decision_model, workspace.calls_model, workspace.artifacts_model, view.logs.model):
        qtmodeltester.check(model)


def _rewrite_state(project: Any, run_id: str, *, in_place: bool = False, **changes: Any) -> None:
    path = state_path(project, run_id)
    document = frontmatter.parse(path.read_text(encoding="utf-8"))
    data = frontmatter.render(document, {**document.data, **changes}).encode("utf-8")
    if in_place:  # an editor that writes the file itself
        path.write_bytes(data)
    else:  # another process's atomic replace (a rename over the watched file)
        atomic_write_bytes(path, data)


def test_a_state_file_changed_on_disk_updates_progress_without_a_send(
    qtbot: Any, make_window: Callable[[], MainWindow], project: Any, run_conversation: tuple[str, str]
) -> None:
    conversation_id, run_id = run_conversation
    main = make_window()
    workspace = open_run(qtbot, main, project.root, conversation_id)
    workspace.tabs.setCurrentIndex(1)  # the Graph tab
    assert workspace.graph.current_node() == "gather-goals"

    _rewrite_state(project, run_id, currentNodeId="draft-brief", stepsCompleted=["gather-goals"])
    qtbot.waitUntil(lambda: workspace.graph.current_node() == "draft-brief", timeout=5_000)
    assert statuses(workspace)[:2] == [("gather-goals", "completed"), ("draft-brief", "current")]

    # Again after the rename: the watch follows the new file.
    _rewrite_state(project, run_id, currentNodeId="review", stepsCompleted=["gather-goals", "draft-brief"],
                   decisionLog=[{"from": "review", "to": "draft-brief", "label": "revise", "reason": "by hand"}])
    qtbot.waitUntil(lambda: workspace.graph.current_node() == "review", timeout=5_000)
    qtbot.waitUntil(lambda: workspace.decision_model.rowCount() == 1)

    _rewrite_state(project, run_id, in_place=True, currentNodeId="end", stepsCompleted=["gather-goals", "draft-brief", "review"])
    qtbot.waitUntil(lambda: workspace.graph.current_node() == "end", timeout=5_000)

    # A damaged state is reported in the panel, the steps stay as they were.
    state_path(project, run_id).write_text("---\n: [broken\n---\n", encoding="utf-8")
    qtbot.waitUntil(lambda: workspace.problem.isVisibleTo(workspace) and "damaged" in workspace.problem.text(), timeout=5_000)
    assert main.project_view.conversation.busy is False


def test_a_conversation_without_a_run_hides_the_panel_and_the_layout_is_remembered(
    qtbot: Any, make_window: Callable[[], MainWindow], project: Any, store: Any, run_conversation: tuple[str, str]
) -> None:
    conversation_id, _run_id = run_conversation
    chat = store.create_conversation(project.id, title="Chat")
    main = make_window()
    workspace = open_run(qtbot, main, project.root, conversation_id)
    layout = main.project_view.conversation.run_layout
    assert workspace.isVisible() and workspace.expanded

    # Widen the panel, collapse it to the rail, bring the logs in with Ctrl+L, close: all of it comes back.
    assert layout.panel_width != 450
    layout.columns.setSizes([sum(layout.columns.sizes()) - 450, 450])
    layout._remember_sizes()  # what the splitter's splitterMoved does when the user drags it
    assert layout.panel_width == 450
    qtbot.mouseClick(workspace.rail, Qt.MouseButton.LeftButton)
    assert not workspace.expanded and not workspace.tabs.isVisible() and workspace.rail.isVisible()
    view = main.project_view.conversation
    assert not view.logs.isVisible()
    view.timeline.setFocus()
    qtbot.keyClick(view.timeline, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert view.logs.isVisible()

    # In the window, Ctrl+K clears the log while the log has the focus (Ctrl+L gave it the focus),
    # and focuses the search box everywhere else, the log kept.
    search = main.project_view.works.search
    main.activateWindow()
    qtbot.waitUntil(main.isActiveWindow)
    view.logs.model.add("info", "one")
    view.logs.model.add("warn", "two")
    qtbot.waitUntil(view.logs.view.hasFocus)
    qtbot.keyClick(view.logs.view, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert view.logs.model.rowCount() == 0 and not search.hasFocus()
    view.logs.model.add("info", "three")
    view.timeline.setFocus()
    qtbot.waitUntil(view.timeline.hasFocus)
    qtbot.keyClick(view.timeline, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(search.hasFocus)
    assert view.logs.model.rowCount() == 1
    view.logs.view.setFocus()
    layout.root.setSizes([500, 220])
    layout._remember_sizes()
    assert layout.log_height == 220

    main.project_view.select_conversation(chat.id)
    qtbot.waitUntil(lambda: not workspace.isVisibleTo(view))  # no run: no panel
    main.close()

    again = make_window()
    workspace = open_run(qtbot, again, project.root, conversation_id, restored=True)
    view = again.project_view.conversation
    assert not workspace.expanded and view.logs.isVisible()
    assert view.run_layout.log_height == 220
    qtbot.mouseClick(workspace.rail, Qt.MouseButton.LeftButton)
    assert workspace.expanded and workspace.tabs.isVisible()
    sizes = view.run_layout.columns.sizes()
    assert sizes[1] == view.run_layout.panel_width == 450


def test_ctrl_k_clears_the_log_only_while_it_has_the_focus(qtbot: Any, qtmodeltester: Any) -> None:
    from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

    from crewagent.ui.run_workspace.logs import LogPanel

    window = QWidget()
    qtbot.addWidget(window)
    search = QLineEdit(window)
    panel = LogPanel(window)
    column = QVBoxLayout(window)
    column.addWidget(search)
    column.addWidget(panel)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    panel.show_conversation("c1")
    panel.on_turn_started("c1", "run")
    panel.on_turn_started("other", "run")  # another conversation's turn: not here
    panel.on_reasoning_chunk("c1", "Let me ")
    panel.on_reasoning_chunk("c1", "think.")
    panel.on_stream_ended("c1")
    panel.on_reasoning_chunk("c1", "Again.")
    assert [(e.level, e.text) for e in panel.model.entries()] == [
        ("info", "Turn started (run mode)"), ("thinking", "Let me think."), ("thinking", "Again.")
    ]
    qtmodeltester.check(panel.model)
    search.setFocus()
    qtbot.waitUntil(search.hasFocus)
    qtbot.keyClick(search, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert panel.model.rowCount() == 3  # Ctrl+K elsewhere is not for the log (issue 18: focus search)
    panel.view.setFocus()
    qtbot.waitUntil(panel.view.hasFocus)
    qtbot.keyClick(panel.view, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert panel.model.rowCount() == 0


def test_the_log_keeps_the_newest_thousand_entries(qtbot: Any, qtmodeltester: Any) -> None:
    from crewagent.ui.run_workspace.logs import MAX_ENTRIES, LogModel

    model = LogModel(limit=MAX_ENTRIES)
    for n in range(MAX_ENTRIES + 250):
        model.add("info", f"line {n}")
    assert model.rowCount() == MAX_ENTRIES
    assert model.index(0, 2).data() == "line 250" and model.index(MAX_ENTRIES - 1, 2).data() == f"line {MAX_ENTRIES + 249}"
    qtmodeltester.check(model)  # after filling: the tester re-checks every row on every change
    small = LogModel(limit=5)
    qtmodeltester.check(small)
    for n in range(12):  # the oldest rows leave as new ones come, under the tester's eye
        small.add("tool" if n % 2 else "info", f"entry {n}")
        small.add_thinking("…")
    assert [small.index(r, 2).data() for r in range(small.rowCount())][-1] == "…"
    assert small.rowCount() == 5 and model.rowCount(model.index(0, 0)) == 0


def test_zoom_and_pan_of_the_graph(qtbot: Any) -> None:
    from crewagent.core.runs.layout import layout_graph
    from crewagent.ui.run_workspace.graph_view import GraphView

    view = GraphView()
    qtbot.addWidget(view)
    view.resize(300, 200)
    view.show()
    ids = [f"n{i}" for i in range(30)]
    view.show_graph(layout_graph(ids, [(ids[i - 1], ids[i], "next", True) for i in range(1, 30)], roots=["n0"]), ())
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert view.zoom == pytest.approx(1.2)
    qtbot.keyClick(view, Qt.Key.Key_Minus)
    qtbot.keyClick(view, Qt.Key.Key_Minus)
    assert view.zoom == pytest.approx(1 / 1.2)
    bar = view.verticalScrollBar()
    before = bar.value()
    clicked: list[str] = []
    view.node_clicked.connect(clicked.append)
    start = QPoint(150, 150)
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(view.viewport(), QPoint(150, 60))
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(150, 60))
    assert bar.value() > before and clicked == []  # a drag pans and is not a click


def test_the_panel_and_the_logs_speak_simplified_chinese(qtbot: Any, qapp: Any) -> None:
    from crewagent.ui.i18n import LanguageManager
    from crewagent.ui.run_workspace import LogPanel, RunWorkspace

    workspace, logs = RunWorkspace(), LogPanel()
    for widget in (workspace, logs):
        qtbot.addWidget(widget)
    languages = LanguageManager(qapp)
    assert workspace.calls_model.headerData(3, Qt.Orientation.Horizontal) == "Result"  # read (and kept) in English first
    try:
        languages.set_language("zh_CN")
        qtbot.waitUntil(lambda: workspace.tabs.tabText(0) == "进度")  # LanguageChange is posted
        assert [workspace.tabs.tabText(i) for i in range(4)] == ["进度", "流程图", "工具调用", "产出文件"]
        assert workspace.calls_model.headerData(3, Qt.Orientation.Horizontal) == "结果"
        assert workspace.phase_name("waiting-user") == "等待你的输入" and logs.title.text() == "日志"
    finally:
        languages.set_language("en")
    qtbot.waitUntil(lambda: workspace.tabs.tabText(0) == "Progress")


def test_the_panel_appears_in_two_slices_the_tables_filled_in_the_second(
    qtbot: Any, qtmodeltester: Any, store: Any, project: Any, run_conversation: tuple[str, str], isolated_dirs: dict[str, Path]
) -> None:
    """The first snapshot of a run shows the panel (header, empty tables) in one pass of the event loop
    and fills the tables in the next: showing the panel and laying out its rows never add up in one
    stall (issue 11, "Performance"; docs/benchmarks.md, Run workspace, session 6)."""
    from PySide6.QtWidgets import QApplication

    from crewagent.ui.run_workspace import RunWorkspace
    from crewagent.worker.runs import RunLoader

    conversation_id, run_id = run_conversation
    loaded = RunLoader(lambda: store, lambda: PackageStore(isolated_dirs["data"]), None, None).read(project, conversation_id)  # type: ignore[arg-type]
    workspace = RunWorkspace()
    qtbot.addWidget(workspace)
    workspace.resize(420, 600)
    workspace.show_conversation(project.id, conversation_id)
    assert workspace.isHidden()
    workspace.on_run_loaded(loaded)
    # First slice: the panel with its header, the tables still empty.
    assert not workspace.isHidden() and workspace.title.text() == "Project brief" and run_id in workspace.subtitle.text()
    assert workspace.snapshot is None and workspace.progress_model.rowCount() == 0
    # Next slice: the tables.
    qtbot.waitUntil(lambda: workspace.snapshot is not None)
    assert statuses(workspace)[0] == ("gather-goals", "current") and workspace.progress_model.rowCount() == 4
    qtmodeltester.check(workspace.progress_model)
    # Once shown, a new snapshot of the run is applied at once; leaving the conversation drops a pending one.
    workspace.on_run_loaded(loaded)
    assert workspace.snapshot is loaded.snapshot
    workspace.show_conversation(project.id, "")
    workspace.show_conversation(project.id, conversation_id)
    workspace.on_run_loaded(loaded)
    workspace.show_conversation(project.id, "other")
    QApplication.processEvents()  # a zero-timer would fire here
    assert workspace.isHidden() and workspace.snapshot is None and workspace.progress_model.rowCount() == 0


def test_tool_calls_show_an_error_code_in_red_and_new_calls_are_appended(qtbot: Any, qtmodeltester: Any) -> None:
    from crewagent.core.runs.snapshot import SHORT_ARGS_CHARS, ToolCallView
    from crewagent.ui.run_workspace.models import ERROR_COLOR, ToolCallsModel

    ok = ToolCallView("2026-11-26T10:00:00+00:00", "fs.read", "c1", '{"path": "a.md"}', True, "", 12.4)
    failed = ToolCallView("2026-11-26T10:00:01+00:00", "fs.write", "c2", '{"path": "' + "x" * 200 + '"}', False, "E_PERMISSION", 3.0)
    model = ToolCallsModel()
    qtmodeltester.check(model)
    model.set_calls([ok])
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    model.set_calls([ok, failed])  # the audit grew: one row inserted, not a reset
    assert inserted == [(1, 1)]
    row = [model.index(1, column).data() for column in range(5)]
    assert row[1:] == ["fs.write", failed.short_arguments, "E_PERMISSION", "3 ms"]
    assert len(row[2]) == SHORT_ARGS_CHARS and model.index(1, 2).data(Qt.ItemDataRole.ToolTipRole) == failed.arguments
    assert model.index(1, 3).data(Qt.ItemDataRole.ForegroundRole).color() == ERROR_COLOR
    assert model.index(0, 3).data() == "ok" and model.index(0, 3).data(Qt.ItemDataRole.ForegroundRole) is None
    qtmodeltester.check(model)


def test_a_hidden_log_goes_to_its_newest_line_when_shown_not_on_every_line(qtbot: Any) -> None:
    """The log is closed by default but fed every turn: scrolling its hidden view laid it out
    again for every line. It scrolls once, when shown, and only if it was at its bottom."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from crewagent.ui.run_workspace.logs import LogPanel

    window = QWidget()
    qtbot.addWidget(window)
    panel = LogPanel(window)
    QVBoxLayout(window).addWidget(panel)
    window.resize(400, 200)
    window.show()
    panel.hide()  # as the Run workspace starts it
    panel.show_conversation("c1")
    bar = panel.view.verticalScrollBar()
    for step in range(60):
        panel.on_stream_started("c1", step, "demo")
    assert bar.value() == 0  # not scrolled while hidden
    panel.show()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    # Shown: each line follows at once.
    panel.on_stream_started("c1", 60, "demo")
    assert bar.value() == bar.maximum()
    # Scrolled up by the user, then hidden: new lines leave the place alone.
    bar.setValue(0)
    panel.hide()
    panel.on_stream_started("c1", 61, "demo")
    panel.show()
    assert bar.value() == 0


def test_the_log_has_tool_info_warn_and_error_lines_for_its_conversation_only(qtbot: Any) -> None:
    from crewagent.core.loop.events import RunProgress
    from crewagent.ui.run_workspace.logs import LogPanel
    from crewagent.worker.turn_values import ToolCallRef, ToolFinish

    panel = LogPanel()
    qtbot.addWidget(panel)
    panel.show_conversation("c1")
    panel.on_tool_started("c1", ToolCallRef("t1", "fs.read", '{"path": "' + "p" * 300 + '"}'))
    panel.on_tool_finished("c1", ToolFinish("t1", "fs.read", True, 4.2, None, {}))
    panel.on_tool_finished("c1", ToolFinish("t2", "fs.write", False, 1.0, "E_PERMISSION", {}))
    panel.on_tool_finished("c2", ToolFinish("t3", "fs.write", False, 1.0, "E_OTHER", {}))  # another conversation
    panel.on_run_progress("c1", RunProgress(run_id="r1", current_node_id="review", steps_completed=("a", "b"), complete=False))
    panel.on_turn_finished("c1", "error", {"message": "The provider is down."})
    panel.on_turn_finished("c1", "stopped", None)
    entries = [(e.level, e.text) for e in panel.model.entries()]
    assert [level for level, _ in entries] == ["tool", "tool", "warn", "info", "error", "warn"]
    assert entries[0][1].startswith("→ fs.read ") and entries[0][1].endswith("…") and len(entries[0][1]) < 140
    assert entries[1][1] == "✓ fs.read ok (4 ms)" and entries[2][1] == "✗ fs.write failed: E_PERMISSION"
    assert "review" in entries[3][1] and "2 step(s)" in entries[3][1]
    assert entries[4][1] == "Turn failed: The provider is down." and entries[5][1] == "Turn stopped."
    # The error line is drawn in the error colour.
    from crewagent.ui.run_workspace.logs import LEVEL_COLORS

    assert panel.model.index(4, 2).data(Qt.ItemDataRole.ForegroundRole).color() == LEVEL_COLORS["error"]


def test_every_replace_of_the_state_file_by_another_process_reaches_the_panel(
    qtbot: Any, make_window: Callable[[], MainWindow], project: Any, run_conversation: tuple[str, str]
) -> None:
    """The file watch survives atomic replaces: a rename drops the replaced file from the watch,
    the folder's watch reports it, and the file is watched again after the read (issue 11)."""
    conversation_id, run_id = run_conversation
    main = make_window()
    workspace = open_run(qtbot, main, project.root, conversation_id)
    state_file = str(state_path(project, run_id))
    qtbot.waitUntil(lambda: state_file in workspace.watcher.files())
    for n in range(6):
        node = STEPS[1 + n % 3]
        _rewrite_state(project, run_id, currentNodeId=node, stepsCompleted=STEPS[: 1 + n % 3])
        qtbot.waitUntil(lambda node=node: ("current" in dict(statuses(workspace)).get(node, "")), timeout=5_000)
        assert [s for s, status in statuses(workspace) if status == "current"] == [node]
        qtbot.waitUntil(lambda: state_file in workspace.watcher.files(), timeout=5_000)  # watched again, the new file


class _Queued(QObject):
    """A GUI-thread slot queued before the engine's progress (as the timeline's card of the same
    tool call is): records what the Progress tab shows when it runs."""

    ping = Signal()

    def __init__(self, workspace: Any):
        super().__init__()
        self.workspace = workspace
        self.seen: list[list[tuple[str, str]]] = []
        self.ping.connect(self.on_ping, Qt.ConnectionType.QueuedConnection)

    @Slot()
    def on_ping(self) -> None:
        self.seen.append(statuses(self.workspace))


def test_the_engines_progress_is_shown_ahead_of_the_gui_work_queued_before_it(
    qtbot: Any, make_window: Callable[[], MainWindow], demo_host: WorkerThread, project: Any, run_conversation: tuple[str, str]
) -> None:
    """A tool call's end queues the timeline's work (the stream's end, the message, the card) on the
    GUI thread before the run's progress report; the report is handled first (UrgentRelay): the
    first state write of a run used to reach the Progress tab 50-112 ms late behind that work."""
    import threading

    from crewagent.core.loop.events import RunProgress

    conversation_id, run_id = run_conversation
    main = make_window()
    workspace = open_run(qtbot, main, project.root, conversation_id)
    queued = _Queued(workspace)

    def loop_thread() -> None:  # as the turns' loop emits, after the events of the same tool call
        queued.ping.emit()
        demo_host.worker.turns.run_progress.emit(conversation_id, RunProgress(run_id, "draft-brief", ("gather-goals",), False))

    thread = threading.Thread(target=loop_thread)
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: bool(queued.seen))
    assert queued.seen[0][:2] == [("gather-goals", "completed"), ("draft-brief", "current")]


def test_a_read_begun_before_the_engines_progress_does_not_show_the_older_state(
    qtbot: Any, make_window: Callable[[], MainWindow], project: Any, run_conversation: tuple[str, str]
) -> None:
    """The engine's progress jumps the GUI work queued before it, so the answer of a read that began
    before the state write can arrive after the progress: the newer steps stay. A read begun after
    the progress is shown as it is (another process may have written since)."""
    import time

    from crewagent.core.loop.events import RunProgress
    from crewagent.worker.runs import LoadedRun

    conversation_id, run_id = run_conversation
    main = make_window()
    workspace = open_run(qtbot, main, project.root, conversation_id)
    older, layout = workspace.snapshot, workspace._layout
    assert older is not None and statuses(workspace)[:2] == [("gather-goals", "current"), ("draft-brief", "pending")]
    project_id = workspace._project_id
    began = time.monotonic()

    workspace.on_run_progress(conversation_id, RunProgress(run_id, "draft-brief", ("gather-goals",), False))
    newer = [("gather-goals", "completed"), ("draft-brief", "current")]
    assert statuses(workspace)[:2] == newer
    workspace.on_run_loaded(LoadedRun(project_id, conversation_id, older, layout, read_at=began))
    assert statuses(workspace)[:2] == newer

    workspace.on_run_loaded(LoadedRun(project_id, conversation_id, older, layout, read_at=time.monotonic()))
    assert statuses(workspace)[:2] == [("gather-goals", "current"), ("draft-brief", "pending")]
