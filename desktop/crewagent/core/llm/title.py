"""A conversation title from its first exchange, asked of the provider in one short non-streaming call."""

from __future__ import annotations

import json
import re
import unicodedata

from crewagent.core.llm.adapter import classify_error
from crewagent.core.llm.config import NO_KEY, ProviderConfig
from crewagent.core.llm.errors import LlmError

#: The longest title, in characters (issue 18: "at most 30 characters").
TITLE_MAX_CHARS = 30
#: The system message of a title request; the demo provider recognises it by this text.
TITLE_INSTRUCTION = (
    "TITLE REQUEST\nWrite a short title (at most 30 characters) for the conversation below, in the "
    "language of the user. Answer with the title only: no quotes, no punctuation at the end."
)
#: How much of each message the request quotes: a title needs the gist, not the whole text.
_QUOTED_CHARS = 2000
#: Seconds a title may take; it is a convenience, never worth a long wait.
_TIMEOUT_S = 30.0

_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_PREFIX = re.compile(r"^\s*(?:title|标题)\s*[:：]\s*", re.IGNORECASE)
_EDGES = "\"'`*#_“”‘’「」《》 \t.。"


def title_request(user_text: str, answer_text: str) -> list[dict[str, str]]:
    """The messages[] of a title request for the first exchange."""
    quoted = f"User: {user_text.strip()[:_QUOTED_CHARS]}\n\nAssistant: {answer_text.strip()[:_QUOTED_CHARS]}"
    return [{"role": "system", "content": TITLE_INSTRUCTION}, {"role": "user", "content": quoted}]


def clean_title(text: str, limit: int = TITLE_MAX_CHARS) -> str:
    """The model's answer as a title: its first line, without markup, quotes or control characters,
    at most ``limit`` characters ("" when nothing usable is left). The model is untrusted input."""
    text = _THINKING.sub("", text)
    line = next((candidate for candidate in text.splitlines() if candidate.strip()), "")
    line = "".join(char for char in line if unicodedata.category(char)[0] != "C")
    line = " ".join(_PREFIX.sub("", line).split()).strip(_EDGES)
    if len(line) > limit:
        cut = line[: limit - 1]
        word_end = len(cut) if line[limit - 1] == " " else cut.rfind(" ")  # end on a whole word
        line = (cut[:word_end] if word_end >= limit // 2 else cut).rstrip() + "…"
    return line


async def ask_title(config: ProviderConfig, user_text: str, answer_text: str) -> str:
    """The provider's title for the exchange; raises :class:`LlmError` when the call fails or the
    answer holds no usable title."""
    import openai  # ~0.4 s of API types: not when the demo or the app starts (core/llm/adapter.py)

    from crewagent.core.llm._client import make_client

    client = make_client(
        base_url=config.base_url,
        api_key=config.api_key or NO_KEY,
        timeout=min(config.timeout, _TIMEOUT_S),
        headers=config.extra_headers,
    )
    try:
        completion = await client.chat.completions.create(
            model=config.model,
            messages=title_request(user_text, answer_text),  # type: ignore[arg-type]  # plain dicts are what the API takes
            stream=False,
        )
        choices = getattr(completion, "choices", None) or []
        content = getattr(choices[0].message, "content", None) if choices else None
    except (openai.OpenAIError, json.JSONDecodeError) as exc:
        raise classify_error(exc, base_url=config.base_url) from exc
    finally:
        await client.close()
    title = clean_title(content) if isinstance(content, str) else ""
    if not title:
        raise LlmError("LLM_BAD_RESPONSE", "The provider's answer held no title.")
    return title
