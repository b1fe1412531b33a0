"""The model's context window: the user's setting, the provider's model metadata, a table of known models.

With tokens counted, the request budget is the window minus a reserve for the answer; the
character budget (``contextMaxChars``) is only the fallback for when tokens cannot be counted
(tech spec 5-17, section 7). Everything here is plain data: the settings page shows the same
resolution the tool loop uses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

WindowSource = Literal["setting", "provider", "known", "default"]

#: The built-in demo provider's model id (core/llm/demo.py, which this module does not import).
DEMO_MODEL = "crewagent-demo"
#: The window assumed for a model nobody knows: about what the character fallback gave (120,000
#: characters ~ 30,000 tokens), so an unknown model is never sent more than before.
DEFAULT_WINDOW = 32_768
#: Tokens kept free for the answer: a quarter of the window, at most this many.
MAX_ANSWER_RESERVE = 16_384
#: Windows outside this range in provider metadata are not believed (the model list is input).
MIN_WINDOW, MAX_WINDOW = 1_024, 100_000_000

#: Known models, matched by the longest prefix of the normalised id (see :func:`normalise_model`).
#: Values are the providers' published context windows in tokens.
KNOWN_WINDOWS: dict[str, int] = {
    # OpenAI
    "gpt-5": 400_000,
    "gpt-5-chat": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.5": 128_000,
    "gpt-4o": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-1106": 128_000,
    "gpt-4-0125": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-oss": 131_072,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "codex-mini": 200_000,
    # Anthropic, Google and others through OpenAI-compatible gateways
    "claude": 200_000,
    "gemini": 1_048_576,
    "gemini-1.5-pro": 2_097_152,
    "deepseek": 128_000,
    "qwen": 32_768,
    "qwen-plus": 131_072,
    "qwen-turbo": 1_000_000,
    "qwen-long": 10_000_000,
    "qwen3": 131_072,
    "qwen3-coder": 262_144,
    "qwq": 131_072,
    "llama-3.1": 131_072,
    "llama-3.2": 131_072,
    "llama-3.3": 131_072,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "llama-4": 131_072,
    "llama4": 131_072,
    "llama3": 8_192,
    "llama-3": 8_192,
    "llama2": 4_096,
    "mistral-large": 131_072,
    "mistral-medium": 131_072,
    "mistral-small": 32_768,
    "mistral-nemo": 131_072,
    "mistral": 32_768,
    "mixtral": 32_768,
    "codestral": 256_000,
    "phi-4": 16_384,
    "phi4": 16_384,
    "gemma3": 131_072,
    "gemma-3": 131_072,
    "glm-4": 128_000,
    "kimi": 131_072,
    "grok": 131_072,
    "command-r": 128_000,
    # The built-in demo provider (offline, its own answers).
    DEMO_MODEL: 128_000,
}
#: Keys of provider model metadata that give the context window (OpenRouter, Together, Groq,
#: vLLM, LM Studio, Mistral ...), in the order they are believed.
METADATA_KEYS = ("context_length", "context_window", "max_model_len", "max_context_length", "contextLength", "max_input_tokens")
_SIZE_SUFFIX = re.compile(r"(?:^|[-_])(\d{1,4})k(?:$|[-_])")


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """A context window in tokens and where its size comes from."""

    tokens: int
    source: WindowSource
    #: The model id it was resolved for ("" when none is configured).
    model: str = ""
    #: The entry of :data:`KNOWN_WINDOWS` that matched (``source == "known"``).
    known_as: str = ""

    @property
    def reserve(self) -> int:
        """Tokens kept free for the answer."""
        return min(MAX_ANSWER_RESERVE, self.tokens // 4)

    @property
    def input_tokens(self) -> int:
        """The token budget of a request: the window minus the answer's reserve."""
        return self.tokens - self.reserve

    def describe(self) -> str:
        """``known model gpt-4o``, ``from the provider``, ``your setting`` or ``default for unknown models``."""
        return {
            "setting": "your setting",
            "provider": "from the provider",
            "known": f"known model {self.known_as}",
            "default": "default for unknown models",
        }[self.source]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "source": self.source,
            "describe": self.describe(),
            "model": self.model,
            "reserveForAnswer": self.reserve,
            "inputTokens": self.input_tokens,
        }


def normalise_model(model: str) -> str:
    """Lower case, without a vendor path (``openai/``, ``meta-llama/``) or an Ollama tag (``:8b``)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    return name.split(":", 1)[0]


def known_window(model: str) -> tuple[str, int] | None:
    """The table entry (key, window) for ``model``: the longest matching prefix, else a ``-128k`` suffix."""
    name = normalise_model(model)
    if not name:
        return None
    matches = [key for key in KNOWN_WINDOWS if name.startswith(key)]
    if matches:
        key = max(matches, key=len)
        return key, KNOWN_WINDOWS[key]
    size = _SIZE_SUFFIX.search(name)
    if size is not None and 4 <= int(size.group(1)) <= 10_000:
        return f"{size.group(1)}k", int(size.group(1)) * 1024
    return None


def metadata_window(entry: Mapping[str, Any]) -> int | None:
    """The context window a ``/v1/models`` entry reports, if any (and believable)."""
    candidates: list[Any] = [entry.get(key) for key in METADATA_KEYS]
    top = entry.get("top_provider")  # OpenRouter
    if isinstance(top, Mapping):
        candidates.append(top.get("context_length"))
    for value in candidates:
        if isinstance(value, bool):
            continue
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, int | float) and MIN_WINDOW <= value <= MAX_WINDOW:
            return int(value)
    return None


def resolve_window(
    model: str, *, setting: int | None = None, reported: int | None = None, listed: tuple[str, int] | None = None
) -> ContextWindow:
    """The window of ``model``: the user's setting, else what the provider reported, else the
    provider preset's model table (``listed``: its id and window; core/providers.py), else the table."""
    if setting:
        return ContextWindow(setting, "setting", model)
    if reported:
        return ContextWindow(reported, "provider", model)
    if listed is not None:
        return ContextWindow(listed[1], "known", model, listed[0])
    known = known_window(model)
    if known is not None:
        return ContextWindow(known[1], "known", model, known[0])
    return ContextWindow(DEFAULT_WINDOW, "default", model)
