"""The OpenAI tool-call protocol: validation of messages[], log assembly and repair."""

from crewagent.core.protocol.chain import (
    INTERRUPTED_CODE,
    Chain,
    ChainReport,
    Unit,
    assemble,
    interrupted_result,
    is_summary,
)
from crewagent.core.protocol.presend import PROTOCOL_INVALID, presend_check, presend_error_message
from crewagent.core.protocol.repair import (
    RepairResult,
    interrupted_message,
    plan_repair,
    repair_conversation,
)
from crewagent.core.protocol.validator import (
    DOTTED_FUNCTION_NAME,
    OPENAI_FUNCTION_NAME,
    ProtocolError,
    first_error,
    validate_messages,
)

__all__ = [
    "DOTTED_FUNCTION_NAME",
    "INTERRUPTED_CODE",
    "OPENAI_FUNCTION_NAME",
    "PROTOCOL_INVALID",
    "Chain",
    "ChainReport",
    "ProtocolError",
    "RepairResult",
    "Unit",
    "assemble",
    "first_error",
    "interrupted_message",
    "interrupted_result",
    "is_summary",
    "plan_repair",
    "presend_check",
    "presend_error_message",
    "repair_conversation",
    "validate_messages",
]
