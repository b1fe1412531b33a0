"""The turn engine: the tool loop, its typed events, and the session that wires it to the store."""

from typing import TYPE_CHECKING

from crewagent.core.lazy import lazy_exports

if TYPE_CHECKING:
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

# Imported on first use (crewagent/core/lazy.py): a light submodule must not pull in the rest.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "events": (
            "ContextBuilt",
            "LoopEvent",
            "MessagePersisted",
            "ReasoningDelta",
            "RunProgress",
            "StreamStarted",
            "TextDelta",
            "ToolCallFinished",
            "ToolCallOutput",
            "ToolCallStarted",
            "TurnFinished",
            "TurnStarted",
        ),
        "session": ("ConversationSession", "TurnSettings"),
        "toolloop": ("LoopOptions", "ToolLoop"),
    },
)

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
