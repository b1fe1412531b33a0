"""The pre-send check: the exact payload about to go upstream is validated; a failure is an error part."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from crewagent.core.messages import ConversationMessage, Mode
from crewagent.core.protocol.validator import OPENAI_FUNCTION_NAME, ProtocolError, first_error

PROTOCOL_INVALID = "PROTOCOL_INVALID"


def presend_check(
    payload: Sequence[Any], *, name_pattern: re.Pattern[str] | None = OPENAI_FUNCTION_NAME
) -> ProtocolError | None:
    """The first reason the provider would reject ``payload``; ``None`` when it may be sent.

    Run it on the messages exactly as they go to the provider, after the adapter has encoded
    tool names (hence OpenAI's name rule by default).
    """
    return first_error(list(payload), name_pattern=name_pattern)


def presend_error_message(error: ProtocolError, *, mode: Mode | None = None, run_id: str | None = None) -> ConversationMessage:
    """The error part the tool loop persists instead of sending an invalid request.

    It names the category so the user (and a bug report) can tell what was wrong; it is kept
    out of later contexts because it describes a request that never reached the model.
    """
    text = (
        "REQUEST_NOT_SENT\n"
        f"- code: {PROTOCOL_INVALID}\n"
        f"- category: {error.code}\n"
        f"- param: {error.param}\n"
        f"- message: {error.message}\n"
        "The request was checked before sending and would have been rejected by the provider; "
        "nothing was sent. Reopening the conversation repairs interrupted tool calls."
    )
    return ConversationMessage.new(
        "assistant",
        text,
        partType="error",
        includeInContext=False,
        error={"code": PROTOCOL_INVALID, "category": error.code, "envelope": error.envelope()},
        mode=mode,
        runId=run_id,
    )
