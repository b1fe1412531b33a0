"""Building a session's parts from settings: provider config, tool context, turn settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crewagent.core import paths
from crewagent.core.context import ContextBudget
from crewagent.core.context.window import ContextWindow, resolve_window
from crewagent.core.llm import ProviderConfig, config_from_env
from crewagent.core.llm.config import LlmConfigError
from crewagent.core.llm.reported_windows import ReportedWindows
from crewagent.core.loop.session import TurnSettings
from crewagent.core.messages import Mode
from crewagent.core.providers import table_window
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import Settings
from crewagent.core.store import ProjectInfo
from crewagent.core.tools import ApprovalGate, Approver, AuditLog, ToolContext, ToolPolicy, audit_path
from crewagent.core.tools.registry import AskUser, FrontmatterGuard


def provider_config(
    settings: Settings,
    secrets: SecretStore | None = None,
    *,
    provider: str | None = None,
    model: str | None = None,
    demo_base_url: str | None = None,
) -> ProviderConfig:
    """The active provider's config: settings, then the environment, then command-line overrides."""
    llm = settings.llm.model_dump(mode="json")
    llm["timeout"] = settings.llm.timeoutSeconds
    name = provider or settings.llm.provider
    # Another provider than the active one (--provider) brings its own URL and model, not the active one's.
    profile = settings.llm.profile(name)
    llm["baseUrl"], llm["model"] = profile.baseUrl, profile.model
    key = secrets.get(name) if secrets is not None and name != "demo" else None
    # The model is applied before the config is checked: --model is enough when no model is set.
    return config_from_env(llm, provider=name, api_key=key, demo_base_url=demo_base_url, model=model or None)


def tool_context(
    project: ProjectInfo,
    settings: Settings,
    *,
    conversation_id: str,
    approver: Approver | None = None,
    ask_user: AskUser | None = None,
    run_id: str | None = None,
    pkg_dir: Path | None = None,
    agent_tools: dict[str, Any] | None = None,
    approval: ApprovalGate | None = None,
    config_dir: Path | None = None,
    frontmatter_guard: FrontmatterGuard | None = None,
) -> ToolContext:
    """The sandbox, policy, approval and audit of one conversation's tool calls.

    ``config_dir`` is the settings folder in use (None: the default); the sandbox protects it.
    """
    policy = ToolPolicy.from_settings(settings.tools.model_dump(mode="json")).tighten(agent_tools)
    if approval is None and approver is not None:
        approval = ApprovalGate(approver, always_allowed=settings.tools.alwaysAllow)
    state = paths.state_dir(project.runtime_dir)
    return ToolContext.for_project(
        project,
        pkg_dir=pkg_dir,
        config_dir=config_dir,
        policy=policy,
        ask_user=ask_user,
        approval=approval,
        audit=AuditLog(audit_path(state, run_id=run_id, conversation_id=conversation_id)),
        conversation_id=conversation_id,
        run_id=run_id,
        frontmatter_guard=frontmatter_guard,
    )


def context_window(settings: Settings, config: ProviderConfig, *, config_dir: str | Path | None = None) -> ContextWindow:
    """The window of the model a turn uses: ``llm.contextWindow``, else what the provider's model
    list reported (remembered by Test Connection / Fetch models), else the preset's model table,
    else the table of known models."""
    reported = None
    if settings.llm.contextWindow is None and config.provider != "demo":
        reported = ReportedWindows(config_dir).get(config.base_url, config.model)
    listed = table_window(config.provider, config.model)
    return resolve_window(config.model, setting=settings.llm.contextWindow, reported=reported, listed=listed)


def settings_window(settings: Settings, *, config_dir: str | Path | None = None) -> ContextWindow:
    """:func:`context_window` of the provider the settings and the environment select, with no key
    needed (for ``crewagent context``); incomplete provider settings fall back to ``llm.model``."""
    try:
        config = provider_config(settings, demo_base_url="http://127.0.0.1")
    except LlmConfigError:
        return resolve_window(settings.llm.model, setting=settings.llm.contextWindow)
    return context_window(settings, config, config_dir=config_dir)


def turn_settings(settings: Settings, mode: Mode, *, window: ContextWindow | None = None, **fields: Any) -> TurnSettings:
    """What a turn needs from the settings; ``window`` from :func:`context_window` (else resolved
    offline from ``llm.model``)."""
    llm = settings.llm
    return TurnSettings(
        mode=mode,
        budget=ContextBudget.from_settings(llm.model_dump(), window=window),
        max_turns=settings.engine.maxTurns,
        merge_system=llm.mergeSystemMessages,
        tool_results=llm.includeToolResultsInContext,
        **fields,
    )
