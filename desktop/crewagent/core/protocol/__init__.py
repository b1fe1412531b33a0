"""The OpenAI tool-call protocol: validation of messages[], log assembly and repair."""

from crewagent.core.protocol.branches import REPLACES_FIELD, current_branch, split_branch
from crewagent.core.protocol.chain import (
    INTERRUPTED_CODE,
    Chain,
    ChainReport,
    Unit,
    assemble,
    interrupted_result,
    is_summary,
)
from crewagent.core.protocol.order import ANSWERS_FIELD, answers_message_id, log_order
from crewagent.core.protocol.presend import PROTOCOL_INVALID, presend_check, presend_error_message
from crewagent.core.protocol.repair import (
    RepairedChain,
    RepairResult,
    interrupted_message,
    plan_repair,
    repair_conversation,
    repaired_chain,
)
from crewagent.core.protocol.validator import (
    DOTTED_FUNCTION_NAME,
    OPENAI_FUNCTION_NAME,
    ProtocolError,
    first_error,
    validate_messages,
)

__all__ = [
    "ANSWERS_FIELD",
    "DOTTED_FUNCTION_NAME",
    "INTERRUPTED_CODE",
    "OPENAI_FUNCTION_NAME",
    "PROTOCOL_INVALID",
    "REPLACES_FIELD",
    "Chain",
    "ChainReport",
    "ProtocolError",
    "RepairResult",
    "RepairedChain",
    "Unit",
    "answers_message_id",
    "assemble",
    "current_branch",
    "first_error",
    "interrupted_message",
    "interrupted_result",
    "is_summary",
    "log_order",
    "plan_repair",
    "presend_check",
    "presend_error_message",
    "repair_conversation",
    "repaired_chain",
    "split_branch",
    "validate_messages",
]
