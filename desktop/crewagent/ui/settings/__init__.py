"""The Settings dialog: LLM, Tools, Context and Appearance pages, saved by the worker, applied live."""

from crewagent.ui.settings.dialog import SettingsDialog
from crewagent.ui.settings.labels import provider_label

__all__ = ["SettingsDialog", "provider_label"]
