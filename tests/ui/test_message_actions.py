"""Per-message actions (issue 18 item 12) through the real window and worker, against the scripted server:
Copy on hover, mouse selection and Ctrl+C, Edit and resend, Regenerate."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QGuiApplication, QImage, QMouseEvent
from PySide6.QtWidgets import QApplication

from crewagent.core.export import export_conversation
from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.timeline import TimelineRole, TimelineView
from tests.fakes.scripted_server import ScriptedServer, text
from tests.ui.test_conversation import _option, approvals, host, make_window, open_conversation, rows, say  # noqa: F401

_BUTTONS = Qt.MouseButton.NoButton


def _mouse(view: TimelineView, kind: QEvent.Type, pos: QPoint, button: Qt.MouseButton = _BUTTONS, held: Qt.MouseButton = _BUTTONS) -> None:
    """A mouse event delivered to the timeline's viewport at once (no window system in between)."""
    point = QPointF(pos)
    event = QMouseEvent(kind, point, point, view.viewport().mapToGlobal(point), button, held, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(view.viewport(), event)


def _row_of(main: MainWindow, kind: str, number: int = 0) -> Any:
    model = main.project_view.conversation.model
    return [index for index in model.iter_top() if index.data(TimelineRole.KIND) == kind][number]


def _hit(view: TimelineView, index: Any, name: str) -> QRect:
    layout = view.timeline_delegate._layout(_option(view, index), index, None)
    found = [hit.rect.toAlignedRect() for hit in layout.hits if hit.name == name]
    assert found, f"no {name} on the row ({[h.name for h in layout.hits]})"
    return found[0]


def _click_action(qtbot: Any, view: TimelineView, index: Any, name: str) -> None:
    rect = _hit(view, index, name)
    _mouse(view, QEvent.Type.MouseMove, rect.center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _pixels(view: TimelineView, rect: QRect) -> QImage:
    return view.viewport().grab(rect).toImage()


def test_hover_shows_copy_on_every_message_and_copy_puts_its_text_on_the_clipboard(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(text("Hello **world**, this is the answer."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    say(qtbot, main, "say hello")
    view = main.project_view.conversation.timeline
    for kind, expected in (("user", "say hello"), ("assistant", "Hello **world**, this is the answer.")):
        index = _row_of(main, kind)
        link = _hit(view, index, "copy_message")
        _mouse(view, QEvent.Type.MouseMove, view.visualRect(_row_of(main, "user" if kind == "assistant" else "assistant")).center())
        hidden = _pixels(view, link)
        _mouse(view, QEvent.Type.MouseMove, view.visualRect(index).center())
        qtbot.waitUntil(lambda: _pixels(view, link) != hidden)  # the link is drawn on the hovered row only
        QGuiApplication.clipboard().clear()
        _click_action(qtbot, view, index, "copy_message")
        assert QGuiApplication.clipboard().text() == expected
    # The mouse leaves the timeline: the links go with it.
    QApplication.sendEvent(view.viewport(), QEvent(QEvent.Type.Leave))
    assert view.timeline_delegate.hover_row is None


def test_selecting_text_with_the_mouse_and_ctrl_c_copies_it(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(text("Alpha beta gamma delta."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    say(qtbot, main, "words please")
    view = main.project_view.conversation.timeline
    index = _row_of(main, "assistant")
    layout = view.timeline_delegate._layout(_option(view, index), index, None)
    doc = layout.docs[0]
    left, top = doc.origin.x(), doc.origin.y()
    start = QPoint(round(left + 1), round(top + doc.laid.height / 2))
    end = QPoint(round(left + doc.laid.document.idealWidth() + 30), round(top + doc.laid.height / 2))
    before = _pixels(view, view.visualRect(index))
    _mouse(view, QEvent.Type.MouseButtonPress, start, Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)
    _mouse(view, QEvent.Type.MouseMove, end, held=Qt.MouseButton.LeftButton)
    _mouse(view, QEvent.Type.MouseButtonRelease, end, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _pixels(view, view.visualRect(index)) != before)  # the selection is painted
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "Alpha beta gamma delta."
    # Typing goes on in the composer (the timeline only took the keyboard for the copy).
    qtbot.keyClick(view, Qt.Key.Key_A)
    composer = main.project_view.conversation.composer.input
    assert composer.toPlainText() == "a"
    composer.clear()
    # A drag over part of the text copies that part; a click elsewhere clears the selection.
    middle = QPoint(round(left + doc.laid.document.idealWidth() / 2), start.y())
    _mouse(view, QEvent.Type.MouseButtonPress, start, Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)
    _mouse(view, QEvent.Type.MouseMove, middle, held=Qt.MouseButton.LeftButton)
    _mouse(view, QEvent.Type.MouseButtonRelease, middle, Qt.MouseButton.LeftButton)
    part = view.timeline_delegate.selection.text()
    assert 0 < len(part) < len("Alpha beta gamma delta.") and "Alpha beta gamma delta.".startswith(part)
    _mouse(view, QEvent.Type.MouseButtonPress, QPoint(2, 2), Qt.MouseButton.LeftButton, Qt.MouseButton.LeftButton)
    assert view.timeline_delegate.selection.text() == ""


def test_edit_resends_as_a_new_branch_and_regenerate_replaces_the_last_answer(
    qtbot: Any, qtmodeltester: Any, scripted_llm: ScriptedServer, store: Any, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(text("Four."), text("Six."), text("Ten."), text("Ten, again."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    view = conversation.timeline
    say(qtbot, main, "2+2?")
    say(qtbot, main, "3+3?")

    # Edit the first question: its text goes to the composer, Send replaces it and what followed.
    _click_action(qtbot, view, _row_of(main, "user"), "edit_message")
    assert conversation.composer.input.toPlainText() == "2+2?"
    assert "Esc" in conversation.composer.hint.text()
    conversation.composer.input.setPlainText("5+5?")
    qtbot.keyClick(conversation.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not conversation.busy and rows(main) == [("user", "5+5?"), ("assistant", "Ten.")], timeout=10_000)
    qtmodeltester.check(conversation.model)
    asked = [(m["role"], m["content"]) for m in scripted_llm.bodies[-1]["messages"] if m["role"] != "system"]
    assert asked == [("user", "5+5?")]

    # Regenerate the last answer: the same question asked again, the new answer in place of the old.
    _click_action(qtbot, view, _row_of(main, "assistant"), "regenerate")
    qtbot.waitUntil(lambda: not conversation.busy and rows(main) == [("user", "5+5?"), ("assistant", "Ten, again.")], timeout=10_000)
    asked = [(m["role"], m["content"]) for m in scripted_llm.bodies[-1]["messages"] if m["role"] != "system"]
    assert asked == [("user", "5+5?")]

    # Nothing was lost: the log holds every branch; the OpenAI export (as `crewagent export`) holds the current one.
    pid, cid = project.id, conversation.conversation_id
    logged = [m.text for m in store.load_messages(pid, cid).messages if m.role in ("user", "assistant")]
    assert logged == ["2+2?", "Four.", "3+3?", "Six.", "5+5?", "Ten.", "5+5?", "Ten, again."]
    exported = json.loads(export_conversation(store, pid, cid, "openai").text)
    assert [(m["role"], m["content"]) for m in exported] == [("user", "5+5?"), ("assistant", "Ten, again.")]
    assert "Four." in export_conversation(store, pid, cid, "jsonl").text

    # A new window shows the current branch.
    main.close()
    again = make_window()
    qtbot.waitUntil(lambda: again.project_view.conversation.conversation_id == cid and again.project_view.conversation.loaded)
    assert rows(again) == [("user", "5+5?"), ("assistant", "Ten, again.")]


def test_esc_gives_up_an_edit_and_the_next_send_is_a_new_message(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]
) -> None:
    scripted_llm.script(text("One."), text("Two."))
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    say(qtbot, main, "first")
    _click_action(qtbot, conversation.timeline, _row_of(main, "user"), "edit_message")
    qtbot.keyClick(conversation.composer.input, Qt.Key.Key_Escape)
    assert conversation.composer.input.toPlainText() == "" and conversation.message_edit.message_id is None
    say(qtbot, main, "second")
    assert rows(main) == [("user", "first"), ("assistant", "One."), ("user", "second"), ("assistant", "Two.")]


def test_the_model_drops_the_replaced_row_and_those_after_it_wherever_the_window_is(qtmodeltester: Any) -> None:
    from crewagent.ui.timeline import TimelineModel
    from crewagent.ui.timeline.window import OPEN_ROWS
    from crewagent.worker.turn_values import LoadedConversation, TimelineMessage, ToolCallRef

    def message(n: int, **fields: Any) -> TimelineMessage:
        return TimelineMessage(f"m{n}", "user" if n % 2 == 0 else "assistant", "t", f"text {n}", **fields)

    count = OPEN_ROWS + 60
    calls = (ToolCallRef("c1", "fs.list", "{}"),)
    history = [message(n) if n != 5 else message(5, tool_calls=calls) for n in range(count)]
    history.insert(6, TimelineMessage("r1", "tool", "t", '{"ok": true}', tool_call_id="c1"))
    model = TimelineModel()
    model.load(LoadedConversation("p", "c", tuple(history)))
    assert model.older_count == count - OPEN_ROWS  # m4 is above the window
    # A question above the window is edited: everything from it on goes, the rows before it stay.
    model.add_message(TimelineMessage("e1", "user", "t", "edited", replaces="m4"))
    qtmodeltester.check(model)
    assert model.keys()[-1] == "e1" and "m4" not in model.keys() and "tool:c1" not in model.keys()
    assert model.older_count + model.rowCount() == 5  # m0..m3 and the edited question
    assert model.index(model.rowCount() - 1, 0).data(TimelineRole.IS_LAST)
    # Regenerate of the last question, in the window: its answer goes, the copy of the question comes.
    model.add_message(TimelineMessage("a1", "assistant", "t", "answer"))
    model.add_message(TimelineMessage("e2", "user", "t", "edited", replaces="e1"))
    qtmodeltester.check(model)
    assert model.keys()[-1] == "e2" and "a1" not in model.keys() and "e1" not in model.keys()
