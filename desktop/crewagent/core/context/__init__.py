"""The unified context builder: system prefix per mode, budgeted history, compression."""

from typing import TYPE_CHECKING

from crewagent.core.lazy import lazy_exports

if TYPE_CHECKING:
    from crewagent.core.context.budget import ContextBudget, usage_status
    from crewagent.core.context.builder import (
        CONTEXT_PROTOCOL_INVALID,
        CONTEXT_STILL_TOO_LARGE,
        ContextError,
        ContextResult,
        build_llm_messages,
    )
    from crewagent.core.context.prompts import RunContext, Transition, render_persona, system_prefix
    from crewagent.core.context.tokens import EstimateCounter, TokenCounter, default_counter

# Imported on first use (crewagent/core/lazy.py): a light submodule must not pull in the rest.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "budget": ("ContextBudget", "usage_status"),
        "builder": (
            "CONTEXT_PROTOCOL_INVALID",
            "CONTEXT_STILL_TOO_LARGE",
            "ContextError",
            "ContextResult",
            "build_llm_messages",
        ),
        "prompts": ("RunContext", "Transition", "render_persona", "system_prefix"),
        "tokens": ("EstimateCounter", "TokenCounter", "default_counter"),
    },
)

__all__ = [
    "CONTEXT_PROTOCOL_INVALID",
    "CONTEXT_STILL_TOO_LARGE",
    "ContextBudget",
    "ContextError",
    "ContextResult",
    "EstimateCounter",
    "RunContext",
    "TokenCounter",
    "Transition",
    "build_llm_messages",
    "default_counter",
    "render_persona",
    "system_prefix",
    "usage_status",
]
