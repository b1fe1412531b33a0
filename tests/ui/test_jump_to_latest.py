"""Issue 18 item 17: the "↓ Latest" pill never covers message text."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRect

from crewagent.ui.conversation_parts import JumpToLatest
from crewagent.ui.timeline import TimelineModel, TimelineView
from crewagent.worker.turn_values import LoadedConversation, TimelineMessage


def _visible_row_rects(view: TimelineView, model: TimelineModel) -> list[QRect]:
    """The on-screen part of every visible row, in the timeline's own coordinates (the pill's)."""
    viewport = view.viewport()
    rects = []
    for row in range(model.rowCount()):
        shown = view.visualRect(model.index(row, 0)).intersected(viewport.rect())
        if not shown.isEmpty():
            rects.append(shown.translated(viewport.geometry().topLeft()))
    return rects


def test_the_latest_pill_does_not_cover_the_last_visible_row(qtbot: Any) -> None:
    model = TimelineModel()
    texts = tuple(TimelineMessage(f"m{i}", "user", "2026-01-01T00:00:00.000Z", f"message {i} " * 30) for i in range(60))
    model.load(LoadedConversation("proj", "conv", texts))
    view = TimelineView()
    view.set_timeline(model)
    pill = JumpToLatest(view, model)
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    assert pill.isHidden()

    for position in (bar.maximum() // 2, bar.maximum() // 3, 0):  # the user scrolls up to read
        bar.setValue(position)
        qtbot.waitUntil(pill.isVisible)
        rows = _visible_row_rects(view, model)
        assert rows
        assert pill.geometry().intersects(view.rect())  # the pill is still on screen
        assert not [rect for rect in rows if rect.intersects(pill.geometry())]

    view.scroll_to_end()
    qtbot.waitUntil(pill.isHidden)
    assert view.viewportMargins().bottom() == 0  # the strip is given back to the rows
