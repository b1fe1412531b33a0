"""The model side of a turn: provider config, the streaming adapter, its events and errors, the demo."""

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
