"""The Settings dialog: LLM, Tools, Context and Appearance pages, saved by the worker, applied live.

``SettingsDialog`` is imported on first use (PEP 562): the main window builds the dialog only when
the user opens it (ui/settings_opener.py), so a start does not import its six pages either
(about 0.1 s of a cold start), while ``provider_label`` is wanted at once by the Start page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crewagent.ui.settings.labels import provider_label

if TYPE_CHECKING:
    from crewagent.ui.settings.dialog import SettingsDialog

__all__ = ["SettingsDialog", "provider_label"]


def __getattr__(name: str) -> Any:
    if name == "SettingsDialog":
        from crewagent.ui.settings.dialog import SettingsDialog

        return SettingsDialog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
