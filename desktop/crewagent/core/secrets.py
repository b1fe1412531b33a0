"""API keys: the OS keyring when there is one, else a 0600 file with a warning; never settings.json."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import keyring
import keyring.errors
from keyring.backends import fail

from crewagent.core import paths
from crewagent.core.jsonparse import parse_json
from crewagent.core.store._fsutil import atomic_write_bytes

SERVICE = "CrewAgent Desktop"
FALLBACK_NAME = paths.SECRETS_FILE


@dataclass(frozen=True)
class SecretBackend:
    """Where keys are kept, for the Settings page to say so plainly."""

    name: str
    secure: bool
    warning: str = ""


class SecretStore:
    """Stores one secret per provider name (``openai``, ``openai-compatible``)."""

    def __init__(self, config_dir: str | Path | None = None, *, use_keyring: bool = True):
        self._fallback = paths.secrets_file(paths.config_dir(config_dir))
        self._keyring = keyring.get_keyring() if use_keyring else None
        if self._keyring is not None and isinstance(self._keyring, fail.Keyring):
            self._keyring = None

    @property
    def backend(self) -> SecretBackend:
        if self._keyring is not None:
            return SecretBackend(name=type(self._keyring).__name__, secure=True)
        return SecretBackend(
            name="file",
            secure=False,
            warning=(
                f"No system keyring is available; API keys are stored in {self._fallback} "
                "(readable only by you, but not encrypted)."
            ),
        )

    def get(self, account: str) -> str | None:
        if self._keyring is not None:
            try:
                return self._keyring.get_password(SERVICE, account)
            except keyring.errors.KeyringError:
                pass
        return self._read_fallback().get(account)

    def set(self, account: str, secret: str) -> SecretBackend:
        if self._keyring is not None:
            try:
                self._keyring.set_password(SERVICE, account, secret)
                return self.backend
            except keyring.errors.KeyringError:
                self._keyring = None
        data = self._read_fallback()
        data[account] = secret
        self._write_fallback(data)
        return self.backend

    def delete(self, account: str) -> None:
        if self._keyring is not None:
            try:
                self._keyring.delete_password(SERVICE, account)
            except keyring.errors.KeyringError:
                pass
        data = self._read_fallback()
        if data.pop(account, None) is not None:
            self._write_fallback(data)

    def _read_fallback(self) -> dict[str, str]:
        try:
            data = parse_json(self._fallback.read_bytes())
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}

    def _write_fallback(self, data: dict[str, str]) -> None:
        payload = json.dumps(data).encode("utf-8")
        self._fallback.parent.mkdir(parents=True, exist_ok=True)
        # mkstemp creates the temp file 0600 before any secret is in it; the rename keeps that mode.
        atomic_write_bytes(self._fallback, payload)
        os.chmod(self._fallback, stat.S_IRUSR | stat.S_IWUSR)
