"""The system prefix per mode and the run blocks (RUN_DIRECTIVE, NODE_BRIEF, USER_INPUT), from resources/prompts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from crewagent.core.messages import Mode

Intent = Literal["start", "continue", "resume"]

BASE_RULES = {"chat": "system-base-rules-chat.md", "agent": "system-base-rules.md", "run": "system-base-rules.md"}
TOOL_POLICY = "system-tool-policy.md"
RUN_PROTOCOL = "run-directive-protocol.md"
RUN_POST_PROTOCOL = "run-post-protocol.md"


@lru_cache(maxsize=None)
def load_prompt(name: str) -> str:
    """A template from the ``crewagent.resources`` package, without its trailing newline."""
    return (files("crewagent.resources") / "prompts" / name).read_text(encoding="utf-8").rstrip("\n")


def mode_banner(mode: Mode) -> str:
    return f"MODE\n- active: {mode}\n- note: history may include other modes; follow current instructions."


def render_persona(agent: Mapping[str, Any]) -> str:
    """The persona block of an ``agents.json`` agent; its ``systemPrompt`` replaces the rendering."""
    system_prompt = agent.get("systemPrompt")
    if isinstance(system_prompt, str) and system_prompt.strip():
        return system_prompt.strip()
    metadata = agent.get("metadata") or {}
    persona = agent.get("persona") or {}
    lines = ["PERSONA"]
    name = metadata.get("name") or agent.get("id") or "agent"
    title = metadata.get("title")
    lines.append(f"- name: {name}" + (f" ({title})" if title else ""))
    for key in ("role", "identity", "communication_style"):
        if persona.get(key):
            lines.append(f"- {key}: {persona[key]}")
    principles = persona.get("principles")
    if isinstance(principles, str) and principles.strip():
        lines.append(f"- principles: {principles.strip()}")
    elif isinstance(principles, list) and principles:
        lines.append("- principles:")
        lines.extend(f"  - {p}" for p in principles)
    actions = agent.get("critical_actions") or []
    if actions:
        lines.append("CRITICAL_ACTIONS")
        lines.extend(f"- {a}" for a in actions)
    return "\n".join(lines)


def system_prefix(
    mode: Mode,
    *,
    persona: str | None = None,
    extra_system: Sequence[str] = (),
    merge: bool = False,
) -> list[dict[str, Any]]:
    """The system messages that open every request of ``mode``; rebuilt each call, never stored.

    Order: base rules (the chat variant in chat mode), tool policy, persona (agent and run only),
    mode banner, extra blocks. ``merge`` joins them into one message for providers that accept
    a single system message.
    """
    blocks = [load_prompt(BASE_RULES[mode]), load_prompt(TOOL_POLICY)]
    if mode != "chat" and persona:
        blocks.append(persona)
    blocks.append(mode_banner(mode))
    blocks.extend(block for block in extra_system if block)
    if merge:
        return [{"role": "system", "content": "\n\n".join(blocks)}]
    return [{"role": "system", "content": block} for block in blocks]


@dataclass(frozen=True, slots=True)
class Transition:
    """An edge out of the current node, as NODE_BRIEF lists it."""

    to: str
    label: str
    is_default: bool = False


@dataclass(frozen=True, slots=True)
class RunContext:
    """What Run mode injects after the history (PACKAGE-FORMAT.md, prompt layers)."""

    run_id: str
    workflow_id: str
    graph_path: str
    effective_agent_id: str
    current_node_id: str | None = None
    node_type: str = "step"
    step_file: str | None = None
    intent: Intent = "continue"
    run_type: str = "bmad-micro"
    artifacts_root: str = "@project/artifacts/"
    outputs_map: Mapping[str, str] = field(default_factory=dict)
    allowed_next: Sequence[Transition] = ()
    #: The user's text for USER_INPUT when it is not the latest user message of the log.
    user_input: str | None = None
    #: The run is complete: RUN_DIRECTIVE carries the post-run protocol and no NODE_BRIEF follows.
    completed: bool = False


def run_directive(ctx: RunContext) -> str:
    lines = [
        "RUN_DIRECTIVE",
        f"- runType: {ctx.run_type}",
        f"- intent: {ctx.intent}",
        f"- workflow: {ctx.workflow_id}",
        f"- state: @state/runs/{ctx.run_id}/workflow.md",
        f"- graph: @pkg/{ctx.graph_path}",
        f"- artifactsRoot: {ctx.artifacts_root}",
    ]
    if ctx.current_node_id and not ctx.completed:
        lines.append(f"- currentNodeId: {ctx.current_node_id}")
    if ctx.completed:
        lines.append("- status: complete")
    lines.append(f"- effectiveAgentId: {ctx.effective_agent_id}")
    lines.append(load_prompt(RUN_POST_PROTOCOL if ctx.completed else RUN_PROTOCOL))
    return "\n".join(lines)


def node_brief(ctx: RunContext) -> str | None:
    """NODE_BRIEF of the current node; ``None`` after completion (no current node)."""
    if not ctx.current_node_id or ctx.completed:
        return None
    node = ctx.current_node_id
    lines = [
        "NODE_BRIEF",
        f"- currentNodeId: {node} (type={ctx.node_type})",
        f"- stepFile: @pkg/{ctx.step_file or f'steps/{node}.md'}",
    ]
    if ctx.outputs_map:
        lines.append("- outputsMap: " + ", ".join(f"{k} -> {v}" for k, v in ctx.outputs_map.items()))
    if ctx.allowed_next:
        lines.append(
            "- allowedNext: "
            + ", ".join(
                f"{t.to} (label={t.label}, default={'true' if t.is_default else 'false'})" for t in ctx.allowed_next
            )
        )
    return "\n".join(lines)


def user_input_block(ctx: RunContext, text: str) -> str:
    header = f"USER_INPUT\n- forNodeId: {ctx.current_node_id or ''}"
    return f"{header}\n{text}"


def run_blocks(ctx: RunContext) -> list[dict[str, Any]]:
    """RUN_DIRECTIVE and NODE_BRIEF as user messages."""
    blocks = [run_directive(ctx), node_brief(ctx)]
    return [{"role": "user", "content": block} for block in blocks if block]
