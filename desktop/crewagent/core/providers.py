"""Provider presets (resources/providers.json): base URL, key, model listing, quirks and model table.

A preset is data. The file is checked against :class:`PresetFile` when it is loaded (once per
process): a damaged file is a bug in the build, so it raises :class:`PresetsError` naming the
field, rather than leaving the app with a half-known provider list. The ``demo`` provider is
built in and is not a preset.

Quirks a preset can switch on (each handled in code, each covered by a scripted-server test):

- ``toolCallIds: "alnum9"`` -- the provider accepts only 9-character alphanumeric tool-call ids
  (Mistral): ids are mapped on the wire and back (core/llm/callids.py);
- ``auth: "api-key"`` and ``apiVersion`` -- Azure OpenAI: the key goes in an ``api-key`` header and
  every request carries ``?api-version=``;
- ``attributionHeaders`` -- sent unless the user turns attribution off (OpenRouter);
- ``sendReasoning`` -- earlier turns' ``reasoning_content`` is sent back (off for DeepSeek, whose
  API rejects it).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crewagent.core.errors import CrewAgentError

PRESETS_FILE = "providers.json"
#: The built-in offline provider: not a preset (no URL, no key, no model list).
DEMO = "demo"


class PresetsError(CrewAgentError):
    """resources/providers.json does not match its schema (a defect of the build)."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelInfo(_Strict):
    """What a provider publishes about one model; prices are USD per 1M tokens."""

    contextWindow: int | None = Field(default=None, ge=1024)
    inputPrice: float | None = Field(default=None, ge=0)
    cachedInputPrice: float | None = Field(default=None, ge=0)
    outputPrice: float | None = Field(default=None, ge=0)
    vision: bool | None = None


class Preset(_Strict):
    """One named provider."""

    id: str = Field(pattern=r"^[a-z][a-z0-9-]{1,31}$")
    label: str = Field(min_length=1)
    #: The provider's own endpoint; "" when the user gives it (vLLM, llama.cpp, Azure, custom).
    baseUrl: str = ""
    #: The placeholder shown when the user gives the URL.
    urlHint: str = ""
    key: Literal["required", "optional", "none"] = "optional"
    #: The environment variable holding the key (used when set, over the keyring).
    keyEnv: str | None = None
    #: ``openai``: ``GET {baseUrl}/models``; ``none``: the provider has no listing at this URL.
    listModels: Literal["openai", "none"] = "openai"
    defaultModel: str = ""
    #: A local server worth probing when Settings opens (Ollama, LM Studio).
    local: bool = False
    headers: dict[str, str] = Field(default_factory=dict)
    attributionHeaders: dict[str, str] = Field(default_factory=dict)
    toolCallIds: Literal["any", "alnum9"] = "any"
    auth: Literal["bearer", "api-key"] = "bearer"
    apiVersion: str | None = None
    models: dict[str, ModelInfo] = Field(default_factory=dict)

    @property
    def needs_url(self) -> bool:
        """True when the user must give the base URL."""
        return not self.baseUrl

    def model_entry(self, model: str) -> tuple[str, ModelInfo] | None:
        """The table's id and entry for ``model``: exact id first, else the longest table id it
        starts with (``gpt-4o-mini-2024-07-18`` is ``gpt-4o-mini``)."""
        if model in self.models:
            return model, self.models[model]
        matches = [known for known in self.models if model.startswith(known)]
        if not matches:
            return None
        best = max(matches, key=len)
        return best, self.models[best]

    def model_info(self, model: str) -> ModelInfo | None:
        entry = self.model_entry(model)
        return entry[1] if entry is not None else None


class PresetFile(_Strict):
    schemaVersion: Literal[1]
    pricesAsOf: str
    priceUnit: Literal["USD per 1M tokens"]
    providers: list[Preset] = Field(min_length=1)


def parse_presets(raw: object, *, source: str = PRESETS_FILE) -> dict[str, Preset]:
    """The presets of a providers.json document, by id, in file order; raises :class:`PresetsError`."""
    try:
        document = PresetFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(part) for part in first["loc"])
        raise PresetsError(f"{source}: {where}: {first['msg']}") from exc
    out: dict[str, Preset] = {}
    for preset in document.providers:
        if preset.id in out or preset.id == DEMO:
            raise PresetsError(f"{source}: the provider id {preset.id!r} is used twice")
        out[preset.id] = preset
    return out


@lru_cache(maxsize=1)
def presets() -> dict[str, Preset]:
    """The shipped presets, by id, in the order the settings page lists them."""
    resource = files("crewagent.resources") / PRESETS_FILE
    try:
        raw = json.loads(resource.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PresetsError(f"resources/{PRESETS_FILE} cannot be read: {exc}") from exc
    return parse_presets(raw, source=f"resources/{PRESETS_FILE}")


def provider_names() -> tuple[str, ...]:
    """Every provider a setting or ``--provider`` may name: the demo, then the presets."""
    return (DEMO, *presets())


def preset(name: str) -> Preset | None:
    return presets().get(name)


def table_window(provider: str, model: str) -> tuple[str, int] | None:
    """``(table id, window)`` when the provider's preset lists ``model`` with a context window."""
    spec = preset(provider)
    entry = spec.model_entry(model) if spec is not None and model else None
    if entry is None or entry[1].contextWindow is None:
        return None
    return entry[0], entry[1].contextWindow


def local_presets() -> list[Preset]:
    """The presets of local servers worth probing (Ollama, LM Studio)."""
    return [p for p in presets().values() if p.local]


def accepts_images(provider: str, model: str, override: bool | None = None) -> bool:
    """Whether ``model`` of ``provider`` takes image parts (issue 17 item 4).

    ``override`` (the ``llm.vision`` setting) decides when set. Else the preset's model table;
    a model it does not list, or says nothing about, is assumed to accept images (local vision
    models such as llava are not in any table, and refusing them would be worse than a provider
    error). The demo provider accepts them (it answers without looking).
    """
    if override is not None:
        return override
    spec = preset(provider)
    info = spec.model_info(model) if spec is not None and model else None
    return True if info is None or info.vision is None else info.vision
