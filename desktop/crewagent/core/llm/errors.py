"""LlmError: a failed model call, classified into the five LLM_ERROR codes the log stores.

Codes (the ``LLM_ERROR`` block of an assistant ``partType=error`` message):

- ``LLM_AUTH_FAILED``   401 or 403: a missing or wrong key, or no access to the model. Not retried.
- ``LLM_TIMEOUT``       connect or read timeout (a stall longer than the configured timeout).
- ``LLM_RATE_LIMITED``  429 after the retries ran out (or a 429 saying the quota is exhausted).
- ``LLM_HTTP_ERROR``    any other HTTP status (400, 404, 5xx ...) and network failures. A network
                        failure -- refused connection, connection dropped mid-stream, the stream
                        ending before the model finished -- has ``status=None``.
- ``LLM_BAD_RESPONSE``  the provider answered something that is not a chat completion: malformed
                        JSON in an SSE event, a chunk or response of the wrong shape. Not retried.

``partial_text`` / ``partial_reasoning`` hold what was already streamed to the caller, so that it
can be persisted with the error and a later "continue" has it in context.
"""

from __future__ import annotations

from typing import Any, Literal

from crewagent.core.errors import CrewAgentError
from crewagent.core.redact import redact

LlmErrorCode = Literal["LLM_AUTH_FAILED", "LLM_TIMEOUT", "LLM_RATE_LIMITED", "LLM_HTTP_ERROR", "LLM_BAD_RESPONSE"]

LLM_ERROR_CODES: tuple[LlmErrorCode, ...] = (
    "LLM_AUTH_FAILED",
    "LLM_TIMEOUT",
    "LLM_RATE_LIMITED",
    "LLM_HTTP_ERROR",
    "LLM_BAD_RESPONSE",
)


class LlmError(CrewAgentError):
    """A model call that failed after any retries; an environment problem, not a bug."""

    def __init__(
        self,
        code: LlmErrorCode,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        partial_text: str = "",
        partial_reasoning: str = "",
        attempts: int = 1,
        retry_after: float | None = None,
    ) -> None:
        message = redact(message)  # a base URL with credentials must not reach the log or the model
        super().__init__(message)
        self.code: LlmErrorCode = code
        self.message = message
        self.status = status
        self.retryable = retryable
        self.partial_text = partial_text
        self.partial_reasoning = partial_reasoning
        #: How many HTTP requests were made for this call (1 = no retry).
        self.attempts = attempts
        #: Seconds the provider asked to wait (Retry-After), when it said so.
        self.retry_after = retry_after

    def with_partial(self, text: str, reasoning: str, attempts: int) -> LlmError:
        """The same error carrying what was streamed before it."""
        return LlmError(
            self.code,
            self.message,
            status=self.status,
            retryable=self.retryable,
            partial_text=text,
            partial_reasoning=reasoning,
            attempts=attempts,
            retry_after=self.retry_after,
        )

    def to_block(self) -> dict[str, Any]:
        """The structured ``LLM_ERROR`` block: ``{code, message, status, retryable}``."""
        return {"code": self.code, "message": self.message, "status": self.status, "retryable": self.retryable}

    def __repr__(self) -> str:
        return (
            f"LlmError({self.code!r}, {self.message!r}, status={self.status!r}, retryable={self.retryable!r}, "
            f"partial_text={len(self.partial_text)} chars, attempts={self.attempts})"
        )
