"""User settings (settings.json in the config folder), merged with defaults on load; never holds secrets."""

from __future__ import annotations

import errno
import logging
import threading
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from crewagent.core import paths
from crewagent.core.errors import SetupError, StoreReadError
from crewagent.core.jsonparse import parse_json
from crewagent.core.providers import provider_names
from crewagent.core.store._fsutil import atomic_write_json

log = logging.getLogger(__name__)

SETTINGS_NAME = "settings.json"
#: Keys that must never be written to settings.json (they belong in the keyring).
SECRET_KEYS = frozenset({"apiKey", "api_key", "OPENAI_API_KEY", "token", "password"})

#: ``demo`` or the id of a preset in resources/providers.json (core/providers.py).
ProviderName = str


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
    #: Whether the model takes images; None: the preset's model table (an unknown model: yes).
    vision: bool | None = None

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        if value not in provider_names():
            raise ValueError(f"unknown provider {value!r}; choose one of {', '.join(provider_names())}")
        return value

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


class TerminalToolSettings(_Section):
    """``terminal.run`` / ``shell.exec`` (core/tools/terminal.py); every command still asks first."""

    enabled: bool = True
    timeoutMs: int = Field(default=120_000, ge=1)
    #: Past these a stream is cut (head and tail kept) and kept whole under @state/logs/tool-results/;
    #: together under 50 KB, so that the store does not offload the result to a 500-character preview.
    maxStdoutBytes: int = Field(default=32_000, ge=1)
    maxStderrBytes: int = Field(default=8_000, ge=1)
    #: Where a command may run: ``@project[/sub]``, ``@state[/sub]`` or absolute folders.
    allowedRoots: list[str] = Field(default_factory=lambda: ["@project"])
    #: Scripts in a shell (``shell.exec``); off unless the user turns it on.
    allowShellExec: bool = False
    #: Variables of the app's environment a command inherits, on top of a minimal safe base;
    #: API keys and CREWAGENT_* never pass (core/tools/terminal_env.py).
    envAllowlist: list[str] = Field(default_factory=list)


class ToolSettings(_Section):
    fs: FsToolSettings = Field(default_factory=FsToolSettings)
    terminal: TerminalToolSettings = Field(default_factory=TerminalToolSettings)
    timeoutSeconds: float = Field(default=300.0, gt=0)
    #: Tool names the user chose "always allow" for.
    alwaysAllow: list[str] = Field(default_factory=list)


class EngineSettings(_Section):
    maxTurns: int = Field(default=50, ge=1)


class AppearanceSettings(_Section):
    theme: Literal["system", "light", "dark"] = "system"
    language: Literal["en", "zh_CN"] = "en"


#: An MCP server id: it is part of the tool names the model sees (``mcp__<id>__<tool>``), so it
#: keeps to the characters a provider accepts in a tool name and never holds the ``__`` separator.
MCP_SERVER_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"
McpTransport = Literal["stdio", "http", "sse"]


class McpServerSettings(_Section):
    """One MCP server (issue 12). The *values* of its environment variables and HTTP headers are
    secrets kept in the keyring (core/mcp/config.py); settings.json holds only their names."""

    id: str = Field(pattern=MCP_SERVER_ID_PATTERN, max_length=40)
    name: str = ""
    enabled: bool = True
    #: stdio: a command the app starts; http: streamable HTTP at ``url``; sse: the legacy HTTP+SSE transport.
    transport: McpTransport = "stdio"
    command: str = ""
    args: list[str] = Field(default_factory=list)
    cwd: str = ""
    url: str = ""
    #: Names of the environment variables (stdio) and headers (http, sse) whose values are in the keyring.
    envNames: list[str] = Field(default_factory=list)
    headerNames: list[str] = Field(default_factory=list)
    #: How long one tool call may take, and how long the server may take to start and answer ``initialize``.
    timeoutSeconds: float = Field(default=60.0, gt=0)
    #: 60 s: a first ``npx -y``/``uvx`` run downloads the server before it can answer.
    startTimeoutSeconds: float = Field(default=60.0, gt=0)
    #: Its tools run without asking (otherwise only tools declaring ``readOnlyHint`` do).
    trusted: bool = False

    @field_validator("id")
    @classmethod
    def _no_separator(cls, value: str) -> str:
        if "__" in value or value.endswith("_"):
            raise ValueError("an MCP server id cannot contain '__' or end with '_'")
        return value

    @property
    def label(self) -> str:
        return self.name or self.id


class McpSettings(_Section):
    """MCP servers as tools; ``enabled`` false: no server is started and MCP tool calls fail with MCP_DISABLED."""

    enabled: bool = True
    servers: list[McpServerSettings] = Field(default_factory=list)

    @field_validator("servers", mode="before")
    @classmethod
    def _valid_servers(cls, value: Any) -> Any:
        """Drop (and log) a server entry that is not valid or repeats an id, rather than letting it
        reset every other setting (SettingsStore._salvage can only drop whole values)."""
        if not isinstance(value, list):
            return value
        kept, seen = [], set()
        for entry in value:
            try:
                server = entry if isinstance(entry, McpServerSettings) else McpServerSettings.model_validate(entry)
            except ValidationError as exc:
                log.warning("settings.mcp.servers: an invalid server was ignored: %s", exc.errors()[0]["msg"])
                continue
            if server.id in seen:
                log.warning("settings.mcp.servers: a second server with the id %r was ignored", server.id)
                continue
            seen.add(server.id)
            kept.append(server)
        return kept

    def server(self, server_id: str) -> McpServerSettings | None:
        return next((server for server in self.servers if server.id == server_id), None)


class Settings(_Section):
    """The whole settings document; unknown sections and keys are kept."""

    schemaVersion: int = 1
    llm: LlmSettings = Field(default_factory=LlmSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    engine: EngineSettings = Field(default_factory=EngineSettings)
    appearance: AppearanceSettings = Field(default_factory=AppearanceSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)


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


#: How often, and how long apart, :meth:`SettingsStore.load` looks again at a settings.json that
#: does not parse before deciding it is damaged rather than being written (a few ms per look).
_SETTLE_LOOKS = 20
_SETTLE_SECONDS = 0.05


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
        look = self._look()
        for _ in range(_SETTLE_LOOKS):
            data = look[0]
            if data is None:
                return Settings()
            try:
                raw = parse_json(data)
            except ValueError as exc:
                error = exc
            else:
                return self._from_raw(raw)
            # Another writer (a hand edit saved in place, a tool) may be half-way through the file:
            # it is damaged only if it is unchanged a moment later (same bytes, same mtime, and not
            # empty: an editor truncates first). Setting aside a file that is being written would
            # lose what the writer is writing.
            time.sleep(_SETTLE_SECONDS)
            again = self._look()
            if again == look and data.strip():
                self.problems.append(f"{self.path} is damaged ({error}); defaults are used and the file was kept aside")
                self._keep_aside()
                return Settings()
            look = again
        self.problems.append(f"{self.path} kept changing while it was read; defaults are used this time")
        return Settings()

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

    def _look(self) -> tuple[bytes | None, int]:
        """settings.json's bytes (None when there is none) and its mtime in ns, read just after them."""
        data = self._read()
        try:
            return data, self.path.stat().st_mtime_ns
        except OSError:
            return data, 0

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
