"""Remembered window geometry and layout (an INI file in the config folder, written on close)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings

from crewagent.core import paths

STATE_FILE = "ui-state.ini"


def default_state() -> QSettings:
    """The QSettings for window state: ``<config>/ui-state.ini`` (never the registry or ~/.config/Qt)."""
    return QSettings(str(paths.config_dir() / STATE_FILE), QSettings.Format.IniFormat)


def read_bytes(state: QSettings, key: str) -> QByteArray | None:
    value = state.value(key)
    return value if isinstance(value, QByteArray) and not value.isEmpty() else None
