"""Tokens per turn in the window (issue 17): each answer shows its call's tokens, the composer the
conversation's total, right after every turn and after a restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crewagent.ui.mainwindow import MainWindow
from crewagent.ui.timeline.model import TimelineRole
from crewagent.worker.turn_values import TokenUsage
from tests.fakes.scripted_server import ScriptedServer, text
from tests.ui.test_conversation import approvals, host, make_window, open_conversation, say  # noqa: F401  (fixtures)


def _answers(main: MainWindow) -> list[Any]:
    model = main.project_view.conversation.model
    return [top.data(TimelineRole.USAGE) for top in model.iter_top() if top.data(TimelineRole.KIND) == "assistant"]


def test_each_answer_shows_its_tokens_and_the_composer_the_total_also_after_a_restart(
    qtbot: Any, scripted_llm: ScriptedServer, project: Any, make_window: Callable[[], MainWindow]  # noqa: F811
) -> None:
    scripted_llm.script(text("One."), text("Two."))  # each reports 11 prompt and 7 completion tokens
    main = make_window()
    open_conversation(qtbot, main, project.root)
    conversation = main.project_view.conversation
    assert not conversation.composer.tokens.isVisible()

    say(qtbot, main, "first")
    qtbot.waitUntil(lambda: conversation.composer.tokens.text() == "11 in · 7 out")
    say(qtbot, main, "second")
    qtbot.waitUntil(lambda: conversation.composer.tokens.text() == "22 in · 14 out")
    assert conversation.composer.tokens.isVisible()
    assert _answers(main) == [TokenUsage(11, 7), TokenUsage(11, 7)]
    conversation.timeline.grab()  # the answers' headers paint their tokens

    cid = conversation.conversation_id
    main.close()
    again = make_window()
    restored = again.project_view.conversation
    qtbot.waitUntil(lambda: restored.conversation_id == cid and restored.loaded)
    qtbot.waitUntil(lambda: restored.composer.tokens.text() == "22 in · 14 out")
