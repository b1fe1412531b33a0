"""Golden files of the system prefix (and run blocks) per mode: a prompt change shows up as a diff.

Regenerate after an intended prompt change with ``UPDATE_GOLDEN=1 pytest tests/core/test_context_golden.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.context import RunContext, Transition, build_llm_messages, render_persona
from crewagent.core.messages import ConversationMessage

GOLDEN = Path(__file__).parent / "golden"

AGENT = {
    "id": "pm",
    "metadata": {"name": "Paula", "title": "Product Manager", "icon": "P"},
    "persona": {
        "role": "Product manager",
        "identity": "Ten years of shipping desktop software.",
        "communication_style": "Short, concrete questions.",
        "principles": ["Ask before assuming", "Write decisions down"],
    },
    "critical_actions": ["Read the state file before anything else"],
}
RUN = RunContext(
    run_id="run_42",
    workflow_id="create-prd",
    graph_path="workflow.graph.json",
    effective_agent_id="pm",
    current_node_id="gather-goals",
    intent="continue",
    outputs_map={"artifacts/prd.md": "@project/artifacts/prd.md"},
    allowed_next=(Transition("draft", "next", True), Transition("gather-goals", "retry")),
)


def request(mode: str) -> list[dict[str, Any]]:
    log = [ConversationMessage(id="u1", createdAt="t", role="user", content="Hello")]
    result = build_llm_messages(
        log,
        mode=mode,  # type: ignore[arg-type]
        persona=render_persona(AGENT),
        run_context=RUN if mode == "run" else None,
    )
    assert result.ok
    return result.messages


@pytest.mark.parametrize("mode", ["chat", "agent", "run"])
def test_system_prefix_matches_golden(mode: str) -> None:
    path = GOLDEN / f"context-{mode}.json"
    actual = request(mode)
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert actual == expected


def test_system_prompt_replaces_the_rendered_persona() -> None:
    assert render_persona({**AGENT, "systemPrompt": "  You are Paula.  "}) == "You are Paula."
