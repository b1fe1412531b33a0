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
