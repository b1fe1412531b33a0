"""The model side of a turn: provider config, the streaming adapter, its events and errors, the demo."""

from typing import TYPE_CHECKING

from crewagent.core.lazy import lazy_exports

if TYPE_CHECKING:
    from crewagent.core.llm.adapter import LlmAdapter, classify_error
    from crewagent.core.llm.config import PROVIDERS, LlmConfigError, ProviderConfig, config_from_env
    from crewagent.core.llm.errors import LLM_ERROR_CODES, LlmError, LlmErrorCode
    from crewagent.core.llm.events import (
        Completed,
        LlmEvent,
        LlmRequest,
        ReasoningDelta,
        RetryScheduled,
        StreamStarted,
        TextDelta,
        ToolCallDelta,
        Usage,
    )
    from crewagent.core.llm.retry import RetryPolicy
    from crewagent.core.llm.toolnames import ToolNameCodec

# Imported on first use (crewagent/core/lazy.py): a light submodule must not pull in the rest.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "adapter": ("LlmAdapter", "classify_error"),
        "config": ("PROVIDERS", "LlmConfigError", "ProviderConfig", "config_from_env"),
        "errors": ("LLM_ERROR_CODES", "LlmError", "LlmErrorCode"),
        "events": (
            "Completed",
            "LlmEvent",
            "LlmRequest",
            "ReasoningDelta",
            "RetryScheduled",
            "StreamStarted",
            "TextDelta",
            "ToolCallDelta",
            "Usage",
        ),
        "retry": ("RetryPolicy",),
        "toolnames": ("ToolNameCodec",),
    },
)

__all__ = [
    "LLM_ERROR_CODES",
    "PROVIDERS",
    "Completed",
    "LlmAdapter",
    "LlmConfigError",
    "LlmError",
    "LlmErrorCode",
    "LlmEvent",
    "LlmRequest",
    "ProviderConfig",
    "ReasoningDelta",
    "RetryPolicy",
    "RetryScheduled",
    "StreamStarted",
    "TextDelta",
    "ToolCallDelta",
    "ToolNameCodec",
    "Usage",
    "classify_error",
    "config_from_env",
]
