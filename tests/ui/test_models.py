"""The item models keep their order and pass Qt's model tester through every change."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from crewagent.ui.models import ConversationListModel, ConversationRole, RecentProjectRole, RecentProjectsModel
from crewagent.worker import ConversationSummary, RecentProjectEntry

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def summary(conversation_id: str, minutes: int, title: str | None = None, **fields: Any) -> ConversationSummary:
    return ConversationSummary(
        id=conversation_id,
        title=title or conversation_id,
        entry_type=fields.pop("entry_type", "chat"),
        active_type=fields.pop("active_type", "chat"),
        created_at=T0,
        last_active_at=T0 + timedelta(minutes=minutes),
        message_count=fields.pop("message_count", 0),
        **fields,
    )


def titles(model: ConversationListModel) -> list[str]:
    return [model.index(row).data() for row in range(model.rowCount())]


def test_conversations_sorted_most_recent_first_with_roles(qtmodeltester: Any) -> None:
    model = ConversationListModel()
    model.set_conversations([summary("a", 1), summary("c", 3, entry_type="agent", active_type="run", message_count=7), summary("b", 2)])
    qtmodeltester.check(model)

    assert titles(model) == ["c", "b", "a"]
    top = model.index(0)
    assert top.data(ConversationRole.CONVERSATION_ID) == "c"
    assert top.data(ConversationRole.ENTRY_TYPE) == "agent"
    assert top.data(ConversationRole.ACTIVE_TYPE) == "run"
    assert top.data(ConversationRole.MESSAGE_COUNT) == 7
    assert top.data(ConversationRole.LAST_ACTIVE_AT) == T0 + timedelta(minutes=3)
    assert top.data(ConversationRole.SUMMARY).id == "c"
    assert ConversationRole.SUMMARY == Qt.ItemDataRole.UserRole.value


def test_upsert_inserts_moves_and_updates_in_place(qtmodeltester: Any, qtbot: Any) -> None:
    model = ConversationListModel()
    model.set_conversations([summary("a", 1), summary("b", 2), summary("c", 3)])

    with qtbot.waitSignal(model.rowsInserted):
        assert model.upsert(summary("new", 3)) == 0  # a tie goes to the top
    qtmodeltester.check(model)
    assert titles(model) == ["new", "c", "b", "a"]

    with qtbot.waitSignal(model.rowsMoved):
        assert model.upsert(summary("a", 10, message_count=1)) == 0  # became active: moves up
    qtmodeltester.check(model)
    assert titles(model) == ["a", "new", "c", "b"]

    with qtbot.waitSignal(model.rowsMoved):
        assert model.upsert(summary("new", -5)) == 3  # moves down
    assert titles(model) == ["a", "c", "b", "new"]

    with qtbot.assertNotEmitted(model.modelReset), qtbot.waitSignal(model.dataChanged) as changed:
        model.upsert(replace(model.summary(1), title="c renamed"))
    assert changed.args[0].row() == 1
    qtmodeltester.check(model)
    assert titles(model) == ["a", "c renamed", "b", "new"]

    model.remove("b")
    model.remove("missing")  # nothing happens
    qtmodeltester.check(model)
    assert titles(model) == ["a", "c renamed", "new"]
    assert model.row_of("new") == 2 and model.row_of("b") is None


def test_recent_projects_model_exposes_the_missing_flag(qtmodeltester: Any) -> None:
    model = RecentProjectsModel()
    model.set_entries(
        [
            RecentProjectEntry("p1", "Alpha", "/work/alpha", T0, True),
            RecentProjectEntry("p2", "Gone", "/work/gone", T0, False),
        ]
    )
    qtmodeltester.check(model)
    assert model.rowCount() == 2
    assert model.rowCount(model.index(0)) == 0
    assert model.index(0).data() == "Alpha"
    assert model.index(1).data(RecentProjectRole.EXISTS) is False
    assert "missing" in model.index(1).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(0).data(RecentProjectRole.ROOT) == "/work/alpha"
    assert model.data(QModelIndex()) is None


def test_a_reload_merges_in_place_keeps_the_selection_and_signals_only_what_changed(qtmodeltester: Any, qtbot: Any) -> None:
    """The index watcher reloads the list about once a second while a turn runs: a reset would drop
    the selection (closing the open conversation) and a dataChanged on every row would reset an open
    rename editor."""
    from PySide6.QtCore import QItemSelectionModel

    model = ConversationListModel()
    model.set_conversations([summary("a", 1), summary("b", 2), summary("c", 3)])
    qtmodeltester.check(model)
    selection = QItemSelectionModel(model)
    selection.setCurrentIndex(model.index(model.row_of("b") or 0), QItemSelectionModel.SelectionFlag.ClearAndSelect)

    changed: list[int] = []
    model.dataChanged.connect(lambda top, _bottom, *_: changed.append(top.row()))
    with qtbot.assertNotEmitted(model.modelReset):
        model.merge([summary("a", 1), summary("b", 2), summary("c", 3)])
        assert changed == []  # nothing new: no signal at all
        # Another process added "d", deleted "a" and wrote to "b" (which moves to the top).
        model.merge([summary("b", 9, message_count=2), summary("c", 3), summary("d", 4)])
    assert titles(model) == ["b", "d", "c"]
    assert changed == [0]
    assert selection.currentIndex().data(ConversationRole.CONVERSATION_ID) == "b"
    assert selection.currentIndex().data(ConversationRole.MESSAGE_COUNT) == 2


def test_a_reload_older_than_a_running_turn_does_not_take_its_count_back(qtmodeltester: Any) -> None:
    model = ConversationListModel()
    model.set_conversations([summary("a", 1, message_count=4)])
    model.on_turn_started("a", "chat")
    model.on_message_persisted("a", object())  # the user's message: 5
    model.merge([summary("a", 1, message_count=4)])  # index read before that message
    model.on_counted("p", summary("a", 1, message_count=4))  # so was the count sent on open
    assert model.index(0).data(ConversationRole.MESSAGE_COUNT) == 5
    model.on_turn_finished("a", "completed", None)
    model.merge([summary("a", 1, message_count=3)])  # no turn runs: the log is what counts (a rebuilt index)
    assert model.index(0).data(ConversationRole.MESSAGE_COUNT) == 3
    qtmodeltester.check(model)
