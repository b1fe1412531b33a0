"""The full-output viewer: find with a match count, wrap, Copy, and a large text shown piece by piece."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from crewagent.ui.output_viewer import FEED_CHUNK, OutputViewer
from crewagent.worker.turn_values import FullOutput
from tests.ui.conftest import ScriptedDialogs

TEXT = "alpha one\nbeta Alpha two\ngamma\nthe last ALPHA\n"


@pytest.fixture
def viewer(qtbot: Any) -> OutputViewer:
    shown = OutputViewer("fs.read", ScriptedDialogs())
    qtbot.addWidget(shown)
    shown.show()
    qtbot.waitExposed(shown)
    return shown


def load(qtbot: Any, viewer: OutputViewer, text: str) -> None:
    with qtbot.waitSignal(viewer.finished_loading, timeout=60_000):
        viewer.show_output(FullOutput("conv", "msg", text))


def selected(viewer: OutputViewer) -> str:
    return viewer.editor.textCursor().selectedText()


def test_ctrl_f_finds_every_match_with_next_previous_and_a_count(qtbot: Any, viewer: OutputViewer) -> None:
    load(qtbot, viewer, TEXT)
    viewer.activateWindow()
    viewer.editor.setFocus()
    qtbot.keyClick(viewer.editor, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(viewer.find_field.hasFocus)
    qtbot.keyClicks(viewer.find_field, "alpha")
    qtbot.waitUntil(lambda: viewer.match_label.text() == "1 of 3")
    assert selected(viewer) == "alpha"
    qtbot.keyClick(viewer.find_field, Qt.Key.Key_Return)
    assert viewer.match_label.text() == "2 of 3" and selected(viewer) == "Alpha"
    viewer.next_button.click()
    assert viewer.match_label.text() == "3 of 3" and selected(viewer) == "ALPHA"
    viewer.next_button.click()  # wraps to the first
    assert viewer.match_label.text() == "1 of 3" and viewer.editor.textCursor().selectionStart() == 0
    qtbot.keyClick(viewer.find_field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # back, wrapping to the last
    assert viewer.match_label.text() == "3 of 3" and selected(viewer) == "ALPHA"

    viewer.find_field.setText("nowhere")
    qtbot.waitUntil(lambda: viewer.match_label.text() == "No matches")
    assert not viewer.next_button.isEnabled() and not viewer.previous_button.isEnabled()


def test_wrap_turns_on_and_off(qtbot: Any, viewer: OutputViewer) -> None:
    load(qtbot, viewer, "x" * 5000)
    assert viewer.editor.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    viewer.wrap_box.click()
    assert viewer.editor.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap
    assert viewer.editor.horizontalScrollBar().maximum() > 0  # one long line, scrolled sideways


def test_copy_takes_the_selection_or_else_the_whole_output(qtbot: Any, viewer: OutputViewer) -> None:
    load(qtbot, viewer, TEXT)
    viewer.copy_button.click()
    assert QGuiApplication.clipboard().text() == TEXT
    cursor = viewer.editor.textCursor()
    cursor.setPosition(0)
    cursor.setPosition(len("alpha one\nbeta"), QTextCursor.MoveMode.KeepAnchor)
    viewer.editor.setTextCursor(cursor)
    viewer.copy_button.click()
    assert QGuiApplication.clipboard().text() == "alpha one\nbeta"


def test_a_large_output_is_shown_piece_by_piece_and_whole_in_the_end(qtbot: Any, viewer: OutputViewer) -> None:
    """Setting megabytes into the editor at once froze the window; the beginning shows first, the rest follows."""
    text = "".join(f"line {n:07d} of a large output\n" for n in range(60_000))  # ~1.8 MB: 110 pieces of FEED_CHUNK
    viewer.show_output(FullOutput("conv", "msg", text))
    assert viewer.loading
    assert viewer.editor.document().characterCount() < FEED_CHUNK  # nothing appended inside the call
    ticks: list[int] = []
    viewer.editor.document().contentsChanged.connect(lambda: ticks.append(viewer.editor.document().characterCount()))
    qtbot.waitUntil(lambda: bool(ticks) and 0 < ticks[-1] < len(text), timeout=10_000)
    assert "Loading" in viewer.status_label.text()  # shown while the rest comes in
    qtbot.waitUntil(lambda: not viewer.loading, timeout=120_000)
    assert viewer.editor.toPlainText() == text
    assert viewer.editor.document().blockCount() == 60_001
    assert "60,001 lines" in viewer.status_label.text()


def test_an_output_that_cannot_be_read_says_why(qtbot: Any, viewer: OutputViewer) -> None:
    viewer.show_output(FullOutput("conv", "msg", "", "The full output of tool result m1 is missing"))
    assert not viewer.loading and viewer.status_label.text().startswith("The full output of tool result m1 is missing")
