"""What the Settings dialog asks of the worker: validate and save settings, keep API keys, reach providers.

Plain Python used by the Worker (on its thread, or in its background pool for network calls);
it never sees Qt. The API key goes to the :class:`SecretStore` only: settings.json never holds it.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from crewagent.core import texts
from crewagent.core.errors import CrewAgentError
from crewagent.core.llm import config_from_env
from crewagent.core.llm.config import LlmConfigError, ProviderConfig
from crewagent.core.llm.demo import DEMO_MODEL
from crewagent.core.llm.errors import LlmError
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import Settings, SettingsStore
from crewagent.worker.values import ApiKeyState, ConnectionReport, LlmDraft, ModelList, SettingsProblem

#: The longest a user waits for Test Connection or the model list, whatever the timeout setting.
NETWORK_CHECK_TIMEOUT = 20.0
#: Providers whose key is kept (the demo needs none).
KEYED_PROVIDERS = ("openai", "openai-compatible")


class SettingsInvalid(CrewAgentError):
    """Changes that do not validate; ``problems`` name each field so the dialog can show them inline."""

    def __init__(self, problems: tuple[SettingsProblem, ...]):
        super().__init__("; ".join(f"{p.field}: {p.message}" for p in problems))
        self.problems = problems


def _deep_merge(base: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _problems_of(exc: ValidationError) -> tuple[SettingsProblem, ...]:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"])
        # pydantic's "Value error, ..." prefix means nothing to a user.
        problems.append(SettingsProblem(where, message.removeprefix("Value error, ")))
    return tuple(problems)


def _check_provider(llm: Mapping[str, Any]) -> tuple[SettingsProblem, ...]:
    """What the schema cannot say: a URL is http(s); an openai-compatible provider needs a URL and a model."""
    problems = []
    url = str(llm.get("baseUrl") or "").strip()
    if url and not url.startswith(("http://", "https://")):
        problems.append(SettingsProblem("llm.baseUrl", texts.SETTINGS_URL_SCHEME))
    if llm.get("provider") == "openai-compatible":
        if not url:
            problems.append(
                SettingsProblem("llm.baseUrl", texts.SETTINGS_URL_NEEDED)
            )
        if not str(llm.get("model") or "").strip():
            problems.append(SettingsProblem("llm.model", texts.SETTINGS_MODEL_NEEDED))
    return tuple(problems)


class SettingsOps:
    """Settings and secrets for one config folder."""

    def __init__(self, config_dir: str | None = None, *, secrets: SecretStore | None = None):
        self._store = SettingsStore(config_dir)
        self._secrets_instance = secrets
        self._config_dir = config_dir
        self._current: Settings | None = None
        #: settings.json as last read or written (inode, size, mtime): ``refresh`` compares it.
        self._seen: tuple[int, int, int] | None = None

    @property
    def _secrets(self) -> SecretStore:
        if self._secrets_instance is None:
            self._secrets_instance = SecretStore(self._config_dir)
        return self._secrets_instance

    # -- settings --------------------------------------------------------------------------

    @property
    def current(self) -> Settings:
        """The settings in force (loaded on first use); a copy is what the UI gets."""
        if self._current is None:
            self._current = self._store.load()
        return self._current

    def load(self) -> tuple[Settings, list[str]]:
        """Read settings.json again; returns the settings and what had to be repaired."""
        seen = self._stat()
        self._current = self._store.load()
        self._seen = seen
        return self._current, list(self._store.problems)

    def refresh(self) -> Settings | None:
        """The settings when settings.json changed on disk since it was last read or written, else None.

        Another writer (the turn host's "Always allow", another process, a hand edit) does not
        tell this one; a stat is enough to notice it.
        """
        seen = self._stat()
        if self._current is not None and seen == self._seen:
            return None
        settings = self._store.load_if_whole()
        if settings is None:
            return None  # half-written by another writer, or damaged: look again at the next poll
        before, self._current, self._seen = self._current, settings, seen
        return None if settings == before else settings

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            info = self._store.path.stat()
        except OSError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def save(self, changes: Mapping[str, Any]) -> Settings:
        """Merge ``{section: {key: value}}`` changes (nested) into settings.json as it is on disk now,
        validate everything, save atomically. What the changes do not name is kept as it is on disk.

        Raises :class:`SettingsInvalid` naming each bad field; nothing is saved then.
        """
        self.load()  # another writer may have changed the file since it was last read
        merged = _deep_merge(self.current.model_dump(mode="json"), changes)
        llm = merged.get("llm")
        problems = _check_provider(llm if isinstance(llm, Mapping) else {})
        try:
            settings = Settings.model_validate(merged)
        except ValidationError as exc:
            raise SettingsInvalid(problems + _problems_of(exc)) from exc
        if problems:
            raise SettingsInvalid(problems)
        self._store.save(settings)
        self._current = settings
        self._seen = self._stat()
        return settings

    # -- API keys --------------------------------------------------------------------------

    def key_state(self, provider: str) -> ApiKeyState:
        backend = self._secrets.backend
        is_set = provider in KEYED_PROVIDERS and bool(self._secrets.get(provider))
        return ApiKeyState(provider, is_set, backend.name, backend.secure, backend.warning)

    def set_key(self, provider: str, key: str) -> ApiKeyState:
        """Store ``key`` for ``provider`` (an empty key removes it)."""
        if provider not in KEYED_PROVIDERS:
            raise SettingsInvalid((SettingsProblem("llm.apiKey", texts.SETTINGS_NO_KEY.format(provider=provider)),))
        key = key.strip()
        if key:
            self._secrets.set(provider, key)
        else:
            self._secrets.delete(provider)
        return self.key_state(provider)

    # -- the network (called in the background pool) ---------------------------------------

    def _config(self, draft: LlmDraft) -> ProviderConfig:
        # Listing models must work before a model is chosen: any name will do for /v1/models.
        model = draft.model.strip() or "(none)"
        section = {"provider": draft.provider, "baseUrl": draft.base_url, "model": model, "timeout": draft.timeout_seconds}
        key = draft.api_key.strip() or (self._secrets.get(draft.provider) if draft.provider in KEYED_PROVIDERS else None)
        # What the user typed is what is tested: the environment does not override a draft.
        return config_from_env(section, env={}, provider=draft.provider, api_key=key, demo_base_url="http://127.0.0.1")

    def check_connection(self, draft: LlmDraft) -> ConnectionReport:
        if draft.provider == "demo":
            return ConnectionReport("ok", texts.DEMO_NOTHING_TO_CONNECT, (DEMO_MODEL,), 0.0)
        try:
            config = self._config(draft)
        except LlmConfigError as exc:
            return ConnectionReport("invalid", str(exc))
        started = time.perf_counter()
        try:
            from crewagent.core.llm.models import test_connection  # imports openai: not at start-up

            result = asyncio.run(asyncio.wait_for(test_connection(config), NETWORK_CHECK_TIMEOUT))
        except TimeoutError:
            return ConnectionReport("timeout", texts.CONNECT_TIMED_OUT.format(url=config.base_url, seconds=NETWORK_CHECK_TIMEOUT))
        latency = result.latency_ms if result.latency_ms is not None else (time.perf_counter() - started) * 1000
        if result.ok:
            self._remember_windows(config, result.windows)
        return ConnectionReport(result.status, result.message, result.models, latency, tuple(sorted(result.windows.items())))

    def fetch_models(self, draft: LlmDraft) -> ModelList:
        if draft.provider == "demo":
            return ModelList("demo", "", (DEMO_MODEL,))
        try:
            config = self._config(draft)
        except LlmConfigError as exc:
            return ModelList(draft.provider, draft.base_url, error=str(exc))
        try:
            from crewagent.core.llm.models import list_models_with_windows  # imports openai: not at start-up

            models, windows = asyncio.run(asyncio.wait_for(list_models_with_windows(config), NETWORK_CHECK_TIMEOUT))
        except TimeoutError:
            return ModelList(draft.provider, config.base_url, error=texts.CONNECT_NO_ANSWER.format(url=config.base_url))
        except LlmError as exc:
            return ModelList(draft.provider, config.base_url, error=exc.message)
        self._remember_windows(config, windows)
        return ModelList(draft.provider, config.base_url, tuple(models), windows=tuple(sorted(windows.items())))

    def _remember_windows(self, config: ProviderConfig, windows: Mapping[str, int]) -> None:
        """Keep the windows the provider reported for later turns (core/llm/reported_windows.py)."""
        from crewagent.core.llm.reported_windows import ReportedWindows

        ReportedWindows(self._config_dir).record(config.base_url, windows)
