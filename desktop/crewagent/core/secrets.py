"""API keys: the OS keyring when there is one, else a 0600 file with a warning; never settings.json."""

from __future__ import annotations

import json
import os
import stat
import sys
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


def _skip_the_macos_keychain_probe() -> None:
    """Outside macOS, make keyring's macOS backend fail its import at once.

    To choose a backend, keyring imports every one it ships. The macOS one, on any system, first
    looks for the Security, CoreServices and Foundation libraries with ``ctypes.util.find_library``,
    which on Linux runs ``ldconfig``, ``gcc`` and ``ld`` to fail three times (~0.1-0.25 CPU-s of
    every start of the app), and then reports itself unusable ("macOS required") anyway. A ``None``
    in ``sys.modules`` makes its ``from . import api`` raise ImportError, which keyring's backend
    module catches: the same backends are found, and the chosen one is the same.
    """
    if sys.platform != "darwin":
        sys.modules.setdefault("keyring.backends.macOS.api", None)  # type: ignore[arg-type]


class SecretStore:
    """Stores one secret per provider name (``openai``, ``openai-compatible``)."""

    def __init__(self, config_dir: str | Path | None = None, *, use_keyring: bool = True):
        self._fallback = paths.secrets_file(paths.config_dir(config_dir))
        if use_keyring:
            _skip_the_macos_keychain_probe()
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
