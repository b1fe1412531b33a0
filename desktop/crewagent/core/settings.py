"""User settings (settings.json in the config folder), merged with defaults on load; never holds secrets."""

from __future__ import annotations

import errno
import logging
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crewagent.core import paths
from crewagent.core.errors import SetupError, StoreReadError
from crewagent.core.jsonparse import parse_json
from crewagent.core.store._fsutil import atomic_write_json

log = logging.getLogger(__name__)

SETTINGS_NAME = "settings.json"
#: Keys that must never be written to settings.json (they belong in the keyring).
SECRET_KEYS = frozenset({"apiKey", "api_key", "OPENAI_API_KEY", "token", "password"})

ProviderName = Literal["demo", "openai", "openai-compatible"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=True)


class ProviderProfile(_Section):
    """What the user last set for one provider, so that switching providers does not carry it over."""

    baseUrl: str = ""
    model: str = ""


#: A provider's profile before the user chose anything for it (empty base URL: the provider's own).
PROVIDER_DEFAULTS: dict[str, ProviderProfile] = {
    "demo": ProviderProfile(),
    "openai": ProviderProfile(model="gpt-4o-mini"),
    "openai-compatible": ProviderProfile(),
}


class LlmSettings(_Section):
    provider: ProviderName = "demo"
    #: The active provider's base URL and model (what a turn uses).
    baseUrl: str = ""
    model: str = ""
    #: Provider name -> its last base URL and model; absent in files written before it existed.
    providers: dict[str, ProviderProfile] = Field(default_factory=dict)
    timeoutSeconds: float = Field(default=120.0, gt=0)
    stream: bool = True
    sendReasoning: bool = False
    #: Merge the system prefix into one system message for providers that need it.
    mergeSystemMessages: bool = False
    contextMaxMessages: int = Field(default=80, ge=1)
    contextMaxChars: int = Field(default=120_000, ge=1000)
    contextMaxTokens: int | None = Field(default=None, ge=256)
    #: The model's context window in tokens; None: from the provider's model list, else the
    #: table of known models (core/context/window.py). With tokens counted, a request gets the
    #: window minus a reserve for the answer; contextMaxChars is only the fallback.
    contextWindow: int | None = Field(default=None, ge=1024)
    includeToolResultsInContext: bool = True
    includeCollapsedUiEventsInContext: bool = False

    def profile(self, provider: str) -> ProviderProfile:
        """The base URL and model to show for ``provider``: the active one's own fields, else what
        was last saved for it, else its defaults."""
        if provider == self.provider:
            return ProviderProfile(baseUrl=self.baseUrl, model=self.model)
        stored = self.providers.get(provider)
        return stored.model_copy() if stored is not None else PROVIDER_DEFAULTS.get(provider, ProviderProfile()).model_copy()


class FsToolSettings(_Section):
    enabled: bool = True
    maxReadBytes: int = Field(default=1_000_000, ge=1)
    maxWriteBytes: int = Field(default=5_000_000, ge=1)


class ToolSettings(_Section):
    fs: FsToolSettings = Field(default_factory=FsToolSettings)
    timeoutSeconds: float = Field(default=300.0, gt=0)
    #: Tool names the user chose "always allow" for.
    alwaysAllow: list[str] = Field(default_factory=list)


class EngineSettings(_Section):
    maxTurns: int = Field(default=50, ge=1)


class AppearanceSettings(_Section):
    theme: Literal["system", "light", "dark"] = "system"
    language: Literal["en", "zh_CN"] = "en"


class Settings(_Section):
    """The whole settings document; unknown sections and keys are kept."""

    schemaVersion: int = 1
    llm: LlmSettings = Field(default_factory=LlmSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    engine: EngineSettings = Field(default_factory=EngineSettings)
    appearance: AppearanceSettings = Field(default_factory=AppearanceSettings)


def _strip_secrets(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_secrets(v) for k, v in value.items() if k not in SECRET_KEYS}
    if isinstance(value, list):
        return [_strip_secrets(v) for v in value]
    return value


def _merge_valid(defaults: dict[str, Any], stored: Any, where: str, problems: list[str]) -> dict[str, Any]:
    """Stored values over defaults, key by key, so one bad value does not reset the rest."""
    if not isinstance(stored, dict):
        if stored is not None:
            problems.append(f"{where or 'settings'} is not an object; defaults used")
        return defaults
    merged = dict(defaults)
    for key, value in stored.items():
        if isinstance(defaults.get(key), dict):
            merged[key] = _merge_valid(defaults[key], value, f"{where}.{key}".lstrip("."), problems)
        else:
            merged[key] = value
    return merged


class SettingsStore:
    """Loads and saves settings.json atomically; a damaged file is kept aside and defaults are used."""

    def __init__(self, config_dir: str | Path | None = None):
        self.dir = paths.config_dir(config_dir)
        self.path = self.dir / SETTINGS_NAME
        self.problems: list[str] = []
        self._lock = threading.Lock()

    def load(self) -> Settings:
        """The settings; raises SetupError when the file or its folder cannot be read.

        Only content that is really damaged (not JSON) is set aside for defaults: a file that
        cannot be read (permission denied) is an error, and nothing on disk is changed.
        """
        self.problems = []
        data = self._read()
        if data is None:
            return Settings()
        try:
            raw = parse_json(data)
        except ValueError as exc:
            self.problems.append(f"{self.path} is damaged ({exc}); defaults are used and the file was kept aside")
            self._keep_aside()
            return Settings()
        return self._from_raw(raw)

    def load_if_whole(self) -> Settings | None:
        """Like :meth:`load`, but None while settings.json does not parse, and nothing on disk changes.

        For polling: another writer (a hand edit, a tool that writes in place) may be half-way
        through the file, and setting it aside then would lose what it is writing. The next look,
        or the next :meth:`load`, sees the whole file.
        """
        self.problems = []
        data = self._read()
        if data is None:
            return Settings()
        try:
            raw = parse_json(data)
        except ValueError:
            return None
        return self._from_raw(raw)

    def _read(self) -> bytes | None:
        """settings.json's bytes, None when there is none; SetupError when it cannot be read."""
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ENOTDIR and self.dir.is_file():
                raise SetupError(f"The settings folder {self.dir} is a file, not a folder.") from exc
            reason = StoreReadError.from_os_error(self.path, exc)
            raise SetupError(f"{reason} The settings were not changed.") from exc

    def _from_raw(self, raw: Any) -> Settings:
        merged = _merge_valid(Settings().model_dump(mode="json"), _strip_secrets(raw), "", self.problems)
        try:
            return Settings.model_validate(merged)
        except ValidationError as exc:
            return self._salvage(merged, exc)

    def _salvage(self, merged: dict[str, Any], exc: ValidationError) -> Settings:
        """Drop only the invalid values (reported), keep everything else the user set."""
        for error in exc.errors():
            loc = [str(part) for part in error["loc"]]
            self.problems.append(f"settings.{'.'.join(loc)}: {error['msg']}; default used")
            node: Any = merged
            for part in loc[:-1]:
                node = node.get(part, {}) if isinstance(node, dict) else {}
            if isinstance(node, dict):
                node.pop(loc[-1], None)
        try:
            return Settings.model_validate(merged)
        except ValidationError:
            return Settings()

    def save(self, settings: Settings) -> None:
        data = _strip_secrets(settings.model_dump(mode="json"))
        with self._lock:
            atomic_write_json(self.path, data)

    def update(self, **sections: dict[str, Any]) -> Settings:
        """Merge partial changes (``update(llm={"model": "x"})``), validate, save, return the result."""
        current = self.load().model_dump(mode="json")
        for name, changes in sections.items():
            if isinstance(current.get(name), dict):
                current[name] = {**current[name], **changes}
            else:
                current[name] = changes
        settings = Settings.model_validate(_strip_secrets(current))
        self.save(settings)
        return settings

    def _keep_aside(self) -> None:
        try:
            self.path.replace(self.path.with_name(SETTINGS_NAME + ".corrupt"))
        except OSError:
            log.warning("could not move damaged %s aside", self.path)
