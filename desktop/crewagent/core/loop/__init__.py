"""The turn engine: the tool loop, its typed events, and the session that wires it to the store."""

from crewagent.core.loop.events import (
    ContextBuilt,
    LoopEvent,
    MessagePersisted,
    ReasoningDelta,
    RunProgress,
    StreamStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from crewagent.core.loop.session import ConversationSession, TurnSettings
from crewagent.core.loop.toolloop import LoopOptions, ToolLoop

__all__ = [
    "ContextBuilt",
    "ConversationSession",
    "LoopEvent",
    "LoopOptions",
    "MessagePersisted",
    "ReasoningDelta",
    "RunProgress",
    "StreamStarted",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallOutput",
    "ToolCallStarted",
    "ToolLoop",
    "TurnFinished",
    "TurnSettings",
    "TurnStarted",
]
