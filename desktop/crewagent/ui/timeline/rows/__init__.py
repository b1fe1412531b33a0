"""One painter per timeline row kind; each measures its row in one place, for estimating, layout and painting."""

from __future__ import annotations

from typing import Any

from crewagent.ui.timeline.model import SUBAGENT_NOTICE
from crewagent.ui.timeline.rows.ask_user import AskUserPainter
from crewagent.ui.timeline.rows.assistant import AssistantPainter
from crewagent.ui.timeline.rows.base import RowContext, RowPainter
from crewagent.ui.timeline.rows.notice import NoticePainter
from crewagent.ui.timeline.rows.subagent_notice import SubagentNoticePainter
from crewagent.ui.timeline.rows.tool import ToolPainter
from crewagent.ui.timeline.rows.user import UserPainter

ASSISTANT = AssistantPainter()
ASK_USER = AskUserPainter()
#: By the model's row kind (``TimelineRole.KIND``); any other kind is drawn as an assistant message.
PAINTERS: dict[str, RowPainter[Any, Any]] = {
    "user": UserPainter(),
    "assistant": ASSISTANT,
    "tool": ToolPainter(),
    "notice": NoticePainter(),
    SUBAGENT_NOTICE: SubagentNoticePainter(),
}

__all__ = ["ASK_USER", "ASSISTANT", "PAINTERS", "RowContext", "RowPainter"]
