"""User-facing names of settings values (providers, themes), translated at call time."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

#: Providers in the order the LLM page lists them.
PROVIDERS = ("demo", "openai", "openai-compatible")
THEMES = ("system", "light", "dark")


def provider_label(name: str) -> str:
    labels = {
        "demo": QCoreApplication.translate("labels", "Demo (offline script)"),
        "openai": QCoreApplication.translate("labels", "OpenAI"),
        "openai-compatible": QCoreApplication.translate("labels", "OpenAI-compatible (custom URL)"),
    }
    return labels.get(name, name)


def theme_label(name: str) -> str:
    labels = {
        "system": QCoreApplication.translate("labels", "Follow the system"),
        "light": QCoreApplication.translate("labels", "Light"),
        "dark": QCoreApplication.translate("labels", "Dark"),
    }
    return labels.get(name, name)
