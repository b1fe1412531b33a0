"""User-facing names of settings values (providers, themes), translated at call time."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from crewagent.core.providers import preset, provider_names

#: Providers in the order the LLM page lists them: the demo, then resources/providers.json.
PROVIDERS = provider_names()
THEMES = ("system", "light", "dark")


def provider_label(name: str) -> str:
    labels = {
        "demo": QCoreApplication.translate("labels", "Demo (offline script)"),
        "openai": QCoreApplication.translate("labels", "OpenAI"),
        "openai-compatible": QCoreApplication.translate("labels", "OpenAI-compatible (custom URL)"),
    }
    if name in labels:
        return labels[name]
    spec = preset(name)
    if spec is None:
        return name
    if spec.local:
        return QCoreApplication.translate("labels", "{name} (on this computer)").format(name=spec.label)
    return spec.label


def theme_label(name: str) -> str:
    labels = {
        "system": QCoreApplication.translate("labels", "Follow the system"),
        "light": QCoreApplication.translate("labels", "Light"),
        "dark": QCoreApplication.translate("labels", "Dark"),
    }
    return labels.get(name, name)


def provider_hint(name: str) -> str:
    """The line under the provider picker: what the provider is and what it needs."""
    spec = preset(name)
    if spec is None:
        return QCoreApplication.translate(
            "labels", "A scripted model inside CrewAgent: no network, no key, always the same answers. Good for trying the app."
        )
    if name == "openai":
        return ""
    if name == "openai-compatible":
        return QCoreApplication.translate("labels", "Any server that speaks the OpenAI chat API.")
    if spec.auth == "api-key":
        return QCoreApplication.translate(
            "labels", "The deployment's URL from the Azure portal; requests carry api-version {version}. Type the deployment name as the model."
        ).format(version=spec.apiVersion or "")
    if spec.local:
        return QCoreApplication.translate("labels", "Runs on this computer, no key needed. Start {name}, then fetch its models.").format(name=spec.label)
    if spec.needs_url:
        return QCoreApplication.translate("labels", "Give the address of your {name}; a key only if you set one.").format(name=spec.label)
    return QCoreApplication.translate("labels", "Needs an API key from {name}.").format(name=spec.label)


def url_placeholder(name: str) -> str:
    """The base URL field's placeholder: the preset's own URL (empty field = that URL), or an example."""
    spec = preset(name)
    if spec is None:
        return ""
    if spec.baseUrl:
        return QCoreApplication.translate("labels", "{url} (leave empty for the default)").format(url=spec.baseUrl)
    return spec.urlHint


def model_placeholder(name: str) -> str:
    spec = preset(name)
    if spec is None:
        return ""
    if spec.defaultModel:
        return spec.defaultModel
    return QCoreApplication.translate("labels", "e.g. llama3.1") if spec.listModels == "openai" else ""


def key_needed(name: str) -> bool:
    """Whether the provider takes an API key at all (the demo, Ollama and LM Studio do not)."""
    spec = preset(name)
    return spec is not None and spec.key != "none"


def lists_models(name: str) -> bool:
    spec = preset(name)
    return spec is not None and spec.listModels != "none"
