"""Building a session's parts from settings: provider config, tool context, turn settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crewagent.core.context import ContextBudget
from crewagent.core.llm import ProviderConfig, config_from_env
from crewagent.core.loop.session import TurnSettings
from crewagent.core.messages import Mode
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
    key = secrets.get(name) if secrets is not None and name != "demo" else None
    config = config_from_env(llm, provider=name, api_key=key, demo_base_url=demo_base_url)
    if model and name != "demo":
        config = config.model_copy(update={"model": model})
    return config


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
    frontmatter_guard: FrontmatterGuard | None = None,
) -> ToolContext:
    """The sandbox, policy, approval and audit of one conversation's tool calls."""
    policy = ToolPolicy.from_settings(settings.tools.model_dump(mode="json")).tighten(agent_tools)
    if approval is None and approver is not None:
        approval = ApprovalGate(approver, always_allowed=settings.tools.alwaysAllow)
    state = project.runtime_dir / "state"
    return ToolContext.for_project(
        project,
        pkg_dir=pkg_dir,
        policy=policy,
        ask_user=ask_user,
        approval=approval,
        audit=AuditLog(audit_path(state, run_id=run_id, conversation_id=conversation_id)),
        conversation_id=conversation_id,
        run_id=run_id,
        frontmatter_guard=frontmatter_guard,
    )


def turn_settings(settings: Settings, mode: Mode, **fields: Any) -> TurnSettings:
    llm = settings.llm
    return TurnSettings(
        mode=mode,
        budget=ContextBudget.from_settings(llm.model_dump()),
        max_turns=settings.engine.maxTurns,
        merge_system=llm.mergeSystemMessages,
        **fields,
    )
