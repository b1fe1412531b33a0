"""What a running turn's Works-row updates redo in the workspace (issue 5: the GUI thread at a send).

Every ``turn_started`` and ``message_persisted`` changes a Works row. Refreshing the open
conversation's header from it is dozens of calls into Qt, each waiting for the GIL while the turn
loads the log and builds its context (bench_ui 2a: 30-60 ms stalls between the send and the first
streamed text). Another conversation's row leaves the workspace alone; one more message in the
open one changes only the count its title shows.
"""

from __future__ import annotations

from typing import Any

import pytest

from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.project_view import ProjectView
from tests.ui.conftest import open_project


def _open(qtbot: Any, store: Any, project: Any, window: MainWindow) -> tuple[ProjectView, str, str]:
    other = store.create_conversation(project.id, title="Background work")
    shown = store.create_conversation(project.id, title="Open one")
    open_project(qtbot, window, project.root)
    view = window.project_view
    assert view.works.select(shown.id)
    qtbot.waitUntil(lambda: view.conversation.conversation_id == shown.id and view.conversation.loaded)
    return view, shown.id, other.id


def _spy(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[Any]:
    calls: list[Any] = []
    original = getattr(owner, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)
    return calls


def test_another_conversations_turn_leaves_the_open_workspace_alone(
    qtbot: Any, store: Any, project: Any, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    view, shown, other = _open(qtbot, store, project, window)
    refreshed = _spy(monkeypatch, view.conversation, "show_summary")
    rows = view.model

    rows.on_turn_started(other, "chat")
    rows.on_message_persisted(other, object())
    rows.on_turn_finished(other, "completed", None)
    assert refreshed == []
    assert rows.summary(rows.row_of(other)).message_count == 1  # its own row did change

    rows.on_turn_started(shown, "chat")  # the open conversation's row: the workspace follows it
    assert len(refreshed) == 1 and refreshed[0][0].id == shown


def test_one_more_message_in_the_open_conversation_updates_only_its_count(
    qtbot: Any, store: Any, project: Any, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    view, shown, _other = _open(qtbot, store, project, window)
    conversation = view.conversation
    rows = view.model
    rows.on_turn_started(shown, "chat")
    shown_runs = _spy(monkeypatch, conversation.run_controls, "show_runs")
    asked: list[tuple[str, str]] = []
    conversation.runs.load_requested.connect(lambda *ids: asked.append(ids))

    rows.on_message_persisted(shown, object())  # the user's message, as the turn stores it
    assert "1 message" in conversation.header.title.toolTip()
    assert conversation.mode == "chat" and conversation.header.title.text() == "Open one"
    assert shown_runs == []  # mode, agent and runs panel as they were: not laid out again
    assert len(asked) == 1  # the runs are asked for again, as at every change of the entry

    rows.on_message_persisted(shown, object())
    assert "2 messages" in conversation.header.title.toolTip()
    rows.on_turn_finished(shown, "completed", None)  # the running state goes: the whole header follows
    assert len(shown_runs) == 1
