"""A user's conversation through the real window and worker, against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtGui import QFontInfo
from PySide6.QtWidgets import QPushButton, QRadioButton, QWidget

from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.timeline import TimelineRole
from crewagent.worker import WorkerThread
from crewagent.worker.turn_values import ApprovalPrompt
from tests.fakes.scripted_server import ScriptedServer, call, drop, held_text, text, tool_calls
from tests.ui.conftest import ScriptedDialogs, open_project
from tests.worker.turns_support import scripted_worker


class ScriptedApprovals:
    """Answers approval prompts from a list instead of opening a dialog (no modal blocking)."""

    def __init__(self) -> None:
        self.answers: list[str] = []
        self.asked: list[ApprovalPrompt] = []
        self.hold = False  # True: keep the question open (for Stop while it waits)
        self.withdrawn: list[str] = []

    def ask(self, parent: QWidget, prompt: ApprovalPrompt, answer: Callable[[str], None]) -> Callable[[], None]:
        self.asked.append(prompt)
        if not self.hold:
            answer(self.answers.pop(0))
        return lambda: self.withdrawn.append(prompt.request_id)


@pytest.fixture
def approvals() -> ScriptedApprovals:
    return ScriptedApprovals()


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    with scripted_worker(isolated_dirs["data"], scripted_llm) as running:
        yield running


@pytest.fixture
def make_window(qtbot: Any, host: WorkerThread, dialogs: ScriptedDialogs, approvals: ScriptedApprovals, tmp_path: Path) -> Callable[[], MainWindow]:
    def make() -> MainWindow:
        state = QSettings(str(tmp_path / "ui-state.ini"), QSettings.Format.IniFormat)
        main = MainWindow(host.worker, dialogs=dialogs, state=state, approvals=approvals)
        qtbot.addWidget(main)
        main.resize(1100, 800)
        main.show()
        return main

    return make


def open_conversation(qtbot: Any, main: MainWindow, folder: Path) -> None:
    """Open the project and start a new Chat conversation in it, shown and loaded."""
    open_project(qtbot, main, folder)
    main.project_view.new_chat()
    conversation = main.project_view.conversation
    qtbot.waitUntil(lambda: conversation.loaded and bool(conversation.conversation_id))


def say(qtbot: Any, main: MainWindow, message: str, *, wait: bool = True) -> None:
    conversation = main.project_view.conversation
    conversation.composer.input.setPlainText(message)
    qtbot.keyClick(conversation.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: conversation.busy)
    if wait:
        qtbot.waitUntil(lambda: not conversation.busy, timeout=10_000)


def rows(main: MainWindow) -> list[tuple[str, str]]:
    """(kind, text or tool state) of every row and part, in order."""
    model = main.project_view.conversation.model
    out: list[tuple[str, str]] = []
    for top in model.iter_top():
        out.append((top.data(TimelineRole.KIND), top.data(TimelineRole.TEXT)))
        for row in range(model.rowCount(top)):
            part = model.index(row, 0, top)
            out.append((f"tool {part.data(TimelineRole.TOOL_NAME)}", part.data(TimelineRole.TOOL_STATE)))
    return out


def test_a_scripted_turn_shows_bubble_tool_part_and_answer_and_survives_a_restart(
    qtbot: Any, qtmodeltester: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    (project.root / "notes.md").write_text("hi", encoding="utf-8")
    scripted_llm.script(
        tool_calls(call("call_1", "fs_list", '{"path": "@project"}'), reasoning=["Looking ", "around."]),
        text("Found ", "**notes.md**."),
    )
    main = make_window()
    open_conversation(qtbot, main, project.root)
    say(qtbot, main, "list the files")

    expected = [("user", "list the files"), ("assistant", ""), ("tool fs.list", "ok"), ("assistant", "Found **notes.md**.")]
    assert rows(main) == expected
    conversation = main.project_view.conversation
    qtmodeltester.check(conversation.model)
    view = conversation.timeline
    part = conversation.model.index_of_call("call_1")
    collapsed = view.visualRect(part).height()
    assert 0 < collapsed < 50

    click = view.visualRect(part).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=click)
    qtbot.waitUntil(lambda: view.visualRect(conversation.model.index_of_call("call_1")).height() > collapsed + 60)
    assert json.loads(part.data(TimelineRole.TOOL_ARGUMENTS)) == {"path": "@project"}
    result = json.loads(part.data(TimelineRole.TOOL_RESULT))
    assert result["ok"] is True and "notes.md" in json.dumps(result)
    view.grab()  # the expanded part paints (arguments and result documents)
    assert conversation.composer.meter.text().startswith("[")

    # Close and open a new window on the same data folder: the same conversation comes back.
    cid = conversation.conversation_id
    main.close()
    again = make_window()
    qtbot.waitUntil(lambda: again.project_view.conversation.conversation_id == cid and again.project_view.conversation.loaded)
    assert rows(again) == expected
    assert again.stack.currentWidget() is again.project_view


def test_switching_mode_keeps_the_rows_and_changes_the_next_system_prefix(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(text("One."), text("Two."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    say(qtbot, main, "first")
    conversation = main.project_view.conversation
    before = rows(main)

    qtbot.mouseClick(conversation.header.switcher.buttons["agent"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: main.project_view.current_summary() is not None and main.project_view.current_summary().active_type == "agent")
    assert rows(main) == before  # the history stays
    assert conversation.header.details.currentWidget() is conversation.header.agent_selector.parentWidget()
    say(qtbot, main, "second")

    def banner(body: dict[str, Any]) -> str:
        return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")

    assert "- active: chat" in banner(scripted_llm.bodies[0])
    assert "- active: agent" in banner(scripted_llm.bodies[1])
    assert rows(main)[:2] == before


def test_enter_sends_and_shift_enter_breaks_the_line(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(text("Got both lines."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    composer = main.project_view.conversation.composer
    composer.input.setFocus()
    qtbot.keyClicks(composer.input, "line one")
    qtbot.keyClick(composer.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(composer.input, "line two")
    assert composer.input.toPlainText() == "line one\nline two"
    with qtbot.waitSignal(composer.submitted) as sent:
        qtbot.keyClick(composer.input, Qt.Key.Key_Return)
    assert sent.args == ["line one\nline two"]
    assert composer.input.toPlainText() == ""
    qtbot.waitUntil(lambda: not main.project_view.conversation.busy, timeout=10_000)
    assert scripted_llm.bodies[-1]["messages"][-1]["content"] == "line one\nline two"


def test_stop_mid_stream_with_escape_keeps_the_partial_text_as_interrupted_then_continue(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    # The answer holds after its first words until Esc stops it (it never ends on its own).
    scripted_llm.script(held_text(threading.Event(), "word0 word1 word2 word3 "), text("…and the rest."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    say(qtbot, main, "tell me a story", wait=False)
    qtbot.waitUntil(lambda: conversation.model.streaming and "word3" in rows(main)[-1][1], timeout=10_000)
    assert conversation.composer.stop_button.isVisible()
    qtbot.keyClick(conversation.composer.input, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not conversation.busy, timeout=5_000)

    last = conversation.model.index(conversation.model.rowCount() - 1, 0)
    assert last.data(TimelineRole.INTERRUPTED) and last.data(TimelineRole.TEXT).startswith("word0 word1")
    assert conversation.composer.send_button.isVisible()

    conversation.continue_conversation()
    qtbot.waitUntil(lambda: not conversation.busy and rows(main)[-1] == ("assistant", "…and the rest."), timeout=10_000)
    assert scripted_llm.bodies[-1]["messages"][-1] == {"role": "user", "content": "continue"}


def test_an_error_part_offers_retry_and_continue_as_buttons(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(drop("Half "), text("Whole answer."), drop("Again half "), text("Went on."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    say(qtbot, main, "explain")
    error_row = conversation.model.index(conversation.model.rowCount() - 1, 0)
    assert error_row.data(TimelineRole.IS_ERROR)

    def click_button(label: str) -> None:
        view = conversation.timeline
        index = conversation.model.index(conversation.model.rowCount() - 1, 0)
        rect = view.visualRect(index)
        for y in range(rect.bottom() - 4, rect.top(), -4):
            for x in range(rect.left() + 40, rect.left() + 400, 10):
                layout_hits = view.timeline_delegate._layout(_option(view, index), index, None).hits
                hit = next((h for h in layout_hits if h.name == label and h.rect.contains(QPoint(x, y).toPointF())), None)
                if hit is not None:
                    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, y))
                    return
        raise AssertionError(f"no {label} button on the last row")

    click_button("retry")
    qtbot.waitUntil(lambda: not conversation.busy and rows(main)[-1] == ("assistant", "Whole answer."), timeout=10_000)
    # Retry runs the failed turn again: the user's message is neither stored nor sent twice.
    assert [m["content"] for m in scripted_llm.bodies[1]["messages"] if m["role"] == "user"] == ["explain"]
    assert [text for kind, text in rows(main) if kind == "user"] == ["explain"]

    say(qtbot, main, "more")
    click_button("continue")
    qtbot.waitUntil(lambda: not conversation.busy and rows(main)[-1] == ("assistant", "Went on."), timeout=10_000)


def _option(view: Any, index: Any) -> Any:
    from PySide6.QtWidgets import QStyleOptionViewItem

    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(index)
    return option


def test_a_write_asks_for_approval_and_always_is_remembered(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow], approvals: ScriptedApprovals
) -> None:
    args = json.dumps({"path": "@project/a.md", "content": "A"})
    args2 = json.dumps({"path": "@project/b.md", "content": "B"})
    scripted_llm.script(
        tool_calls(call("call_w1", "fs_write", args)), text("Wrote a."),
        tool_calls(call("call_w2", "fs_write", args2)), text("Wrote b."),
    )
    approvals.answers = ["allow_always"]
    main = make_window()
    open_conversation(qtbot, main, project.root)
    say(qtbot, main, "write a")
    say(qtbot, main, "write b")
    assert [p.tool for p in approvals.asked] == ["fs.write"]  # "always" is not asked again
    assert (project.root / "a.md").read_text(encoding="utf-8") == "A"
    assert (project.root / "b.md").read_text(encoding="utf-8") == "B"
    assert [state for kind, state in rows(main) if kind.startswith("tool")] == ["ok", "ok"]


def test_stop_while_a_write_waits_for_approval_interrupts_the_tool_part(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow], approvals: ScriptedApprovals
) -> None:
    scripted_llm.script(tool_calls(call("call_w", "fs_write", json.dumps({"path": "@project/x.md", "content": "x"}))))
    approvals.hold = True
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    say(qtbot, main, "write", wait=False)
    qtbot.waitUntil(lambda: bool(approvals.asked), timeout=10_000)
    assert rows(main)[-1] == ("tool fs.write", "running")
    conversation.composer.stop_button.click()
    qtbot.waitUntil(lambda: not conversation.busy, timeout=5_000)
    assert approvals.withdrawn == [approvals.asked[0].request_id]
    assert rows(main)[-1] == ("tool fs.write", "interrupted")
    assert not (project.root / "x.md").exists()


def test_ask_user_renders_inline_submits_and_turns_read_only(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    widget = {"type": "selection", "title": "Which colour?", "options": ["red", "blue"]}
    scripted_llm.script(tool_calls(call("call_q", "ui_ask_user", json.dumps(widget))), text("Blue it is."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    say(qtbot, main, "pick one", wait=False)
    key = "tool:call_q"
    delegate = conversation.timeline.timeline_delegate
    qtbot.waitUntil(lambda: delegate.editor_for(key) is not None, timeout=10_000)
    form = delegate.editor_for(key)
    assert form is not None and form.isVisible()
    blue = [b for b in form.findChildren(QRadioButton) if b.text() == "blue"][0]
    blue.click()
    submit = [b for b in form.findChildren(QPushButton) if b.text() == "Submit"][0]
    qtbot.mouseClick(submit, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not conversation.busy, timeout=10_000)

    assert delegate.editor_for(key) is None  # read-only now
    part = conversation.model.index_of_call("call_q")
    response = json.loads(part.data(TimelineRole.TOOL_RESULT))["response"]
    assert response == {"type": "WIDGET_SUBMIT", "widgetType": "selection", "selected": "blue"}
    assert rows(main)[-1] == ("assistant", "Blue it is.")
    conversation.timeline.grab()


def test_closing_mid_stream_stops_the_turn_and_the_next_window_shows_it_interrupted(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow], host: WorkerThread
) -> None:
    scripted_llm.script(held_text(threading.Event(), "w0 w1 w2 "), text("Resumed."))  # held until the close stops it
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    say(qtbot, main, "go", wait=False)
    qtbot.waitUntil(lambda: len(rows(main)) > 1 and "w2" in rows(main)[-1][1], timeout=10_000)
    cid = conversation.conversation_id
    main.close()
    assert main.isVisible()  # the window waits until the stopped turn has persisted what it stopped
    qtbot.waitUntil(lambda: not main.isVisible(), timeout=6_000)
    assert not host.worker.turns.running

    again = make_window()
    reopened = again.project_view.conversation
    qtbot.waitUntil(lambda: reopened.conversation_id == cid and reopened.loaded)
    last = reopened.model.index(reopened.model.rowCount() - 1, 0)
    assert last.data(TimelineRole.INTERRUPTED) and last.data(TimelineRole.TEXT).startswith("w0 w1")
    reopened.continue_conversation()
    qtbot.waitUntil(lambda: not reopened.busy and rows(again)[-1] == ("assistant", "Resumed."), timeout=10_000)


def test_status_bar_names_the_provider(qtbot: Any, make_window: Callable[[], MainWindow], scripted_llm: ScriptedServer) -> None:
    main = make_window()
    qtbot.waitUntil(lambda: bool(main.status_provider.text()))
    assert "scripted-model" in main.status_provider.text()


def test_open_full_output_shows_the_whole_decoded_text_in_a_viewer_and_saves_it(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow], dialogs: ScriptedDialogs,
    tmp_path: Path,
) -> None:
    """A 132 KB result used to show ~17 KB, then "… 114242 more characters", with its newlines as literal \\n."""
    big = "".join(f"line {n:06d} of a large file\n" for n in range(4800))  # ~134 KB: offloaded
    (project.root / "big.txt").write_text(big, encoding="utf-8")
    scripted_llm.script(tool_calls(call("call_r", "fs_read", '{"path": "@project/big.txt"}')), text("Read it."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    say(qtbot, main, "read big.txt")
    part = conversation.model.index_of_call("call_r")
    size = part.data(TimelineRole.FULL_OUTPUT_BYTES)
    assert isinstance(size, int) and size > 130_000
    preview = part.data(TimelineRole.TOOL_RESULT)
    assert len(preview) < size and "line 004799" not in preview

    view = conversation.timeline
    view.set_tool_expanded("tool:call_r", True)
    message_id = part.data(TimelineRole.RESULT_MESSAGE_ID)
    with qtbot.waitSignal(conversation.full_output_requested) as requested:
        view.action_requested.emit("open_output", "tool:call_r", message_id)
    assert requested.args[2] == message_id
    viewer = conversation.outputs.viewer(conversation.conversation_id, message_id)
    assert viewer is not None and viewer.isVisible() and viewer.isWindow()
    qtbot.waitUntil(lambda: not viewer.loading, timeout=10_000)
    shown = viewer.editor.toPlainText()
    assert big in shown  # the whole file, with real line breaks
    assert "more characters" not in shown and "\\n" not in shown
    assert QFontInfo(viewer.editor.font()).fixedPitch()  # monospace

    # Asked again: the same window comes forward, nothing is loaded twice.
    with qtbot.assertNotEmitted(conversation.full_output_requested):
        view.action_requested.emit("open_output", "tool:call_r", message_id)
    assert conversation.outputs.viewer(conversation.conversation_id, message_id) is viewer

    # Save as…: asked through the dialogs, written by the worker (off the GUI thread).
    target = tmp_path / "saved" / "out.txt"
    target.parent.mkdir()
    dialogs.save_path = str(target)
    viewer.save_button.click()
    assert dialogs.asked[-1] == "save_path:fs.read-output.txt"
    qtbot.waitUntil(lambda: viewer.save_button.isEnabled(), timeout=10_000)
    assert target.read_text(encoding="utf-8") == viewer.text and big in viewer.text
    assert str(target) in viewer.status_label.text()

    # A place that cannot be written: one line saying why, and the viewer stays usable.
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    dialogs.save_path = str(blocker / "out.txt")
    viewer.save_button.click()
    qtbot.waitUntil(lambda: viewer.save_button.isEnabled(), timeout=10_000)
    assert "a-file" in viewer.status_label.text() and not (blocker / "out.txt").exists()
    viewer.close()
