"""``crewagent export --include-subagents``: children nested under their Task calls in every format."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from crewagent.cli import main
from crewagent.core.messages import ConversationMessage, ConversationMeta
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, validate_messages
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.subagents import SubagentManager
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
from tests.fakes.subagent_helpers import marker, only_sidechain, parent_turn, task_step

BIG = "big line\n" * 12_000  # ~108 KB: offloaded in the child's sidechain


@pytest.fixture
def tree(scripted_llm: ScriptedServer, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta) -> dict[str, str]:
    """A parent whose child read a big file and started a grandchild."""
    (project.root / "big.txt").write_text(BIG, encoding="utf-8")
    scripted_llm.script(task_step("call_p", "exp-child"), text("Parent summary."))
    scripted_llm.script_for(
        marker("exp-child"),
        tool_calls(call("call_big", "fs_read", json.dumps({"path": "@project/big.txt"}))),
        task_step("call_c", "exp-grandchild", subagent_type="explore"),
        text("Child answer."),
    )
    scripted_llm.script_for(marker("exp-grandchild"), text("Grandchild answer."))
    asyncio.run(parent_turn(store, project, conversation.id, scripted_llm.config(), "Export me", SubagentManager()))
    child = only_sidechain(store, project.id, conversation.id, depth=1)
    grandchild = only_sidechain(store, project.id, conversation.id, depth=2)
    return {"child": child.sessionId, "grandchild": grandchild.sessionId}


def _export(capsys: pytest.CaptureFixture[str], store: RuntimeStore, project: ProjectInfo, cid: str, *argv: str) -> str:
    code = main(["export", "--data-dir", str(store.data_dir), "--project", str(project.root), "--conversation", cid, *argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == ""
    return captured.out


def test_openai_export_is_an_object_with_the_messages_and_the_nested_subagents(
    tree: dict[str, str], capsys: pytest.CaptureFixture[str], store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    plain = json.loads(_export(capsys, store, project, conversation.id, "--format", "openai"))
    assert isinstance(plain, list)  # without the flag: the messages[] as before

    data = json.loads(_export(capsys, store, project, conversation.id, "--format", "openai", "--include-subagents"))

    assert data["messages"] == plain
    (child,) = data["subagents"]
    assert child["sessionId"] == tree["child"] and child["parentSessionId"] == conversation.id
    assert child["parentToolCallId"] == "call_p" and child["type"] == "general-purpose" and child["status"] == "completed"
    assert validate_messages(child["messages"], name_pattern=DOTTED_FUNCTION_NAME) == []
    read = next(m for m in child["messages"] if m["role"] == "tool" and m["tool_call_id"] == "call_big")
    assert json.loads(read["content"])["content"] == BIG  # the offloaded output, in full
    assert child["messages"][-1] == {"role": "assistant", "content": "Child answer."}
    (grandchild,) = child["subagents"]
    assert grandchild["sessionId"] == tree["grandchild"] and grandchild["parentSessionId"] == tree["child"]
    assert grandchild["parentToolCallId"] == "call_c" and grandchild["depth"] == 2 and grandchild["subagents"] == []
    assert grandchild["messages"][-1]["content"] == "Grandchild answer."


def test_jsonl_export_puts_child_lines_after_their_task_result(
    tree: dict[str, str], capsys: pytest.CaptureFixture[str], store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    lines = [json.loads(line) for line in _export(capsys, store, project, conversation.id, "--format", "jsonl", "--include-subagents").splitlines()]
    sessions = [line.get("sessionId", "main") for line in lines]
    # parent: user, assistant+task, tool(task) | child ... with the grandchild after the child's task result | parent's answer
    assert sessions[:3] == ["main"] * 3 and sessions[-1] == "main"
    assert lines[2]["tool_call_id"] == "call_p" and lines[2]["subagentSessionId"] == tree["child"]
    child_part = sessions[3:-1]
    first_grand = child_part.index(tree["grandchild"])
    task_result = lines[3 + first_grand - 1]
    assert task_result["sessionId"] == tree["child"] and task_result["tool_call_id"] == "call_c"
    assert child_part == [tree["child"]] * first_grand + [tree["grandchild"]] * 2 + [tree["child"]]
    for line in lines[3:-1]:
        assert line["isSidechain"] is True and line["parentSessionId"] in (conversation.id, tree["child"])
    for line in lines:
        ConversationMessage.model_validate(line)


def test_markdown_export_nests_quoted_sections(
    tree: dict[str, str], capsys: pytest.CaptureFixture[str], store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    out = _export(capsys, store, project, conversation.id, "--format", "markdown", "--include-subagents")

    child_head = f"> #### 🤖 Subagent `{tree['child']}` (general-purpose) — completed"
    grand_head = f"> > #### 🤖 Subagent `{tree['grandchild']}` (explore) — completed"
    assert child_head in out and grand_head in out
    assert out.index("### 🔧 Result of `task` (call `call_p`)") < out.index(child_head) < out.index(grand_head)
    assert out.index(grand_head) < out.index("> Child answer.") < out.index("Parent summary.")
    assert "> > Grandchild answer." in out
    assert out.count("big line") >= 12_000  # the child's offloaded output, in full
    assert "Subagent" not in _export(capsys, store, project, conversation.id, "--format", "markdown")


def test_export_names_a_damaged_sidechain_line(
    tree: dict[str, str], capsys: pytest.CaptureFixture[str], store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    path: Path = store.sidechains(project.id, conversation.id).log_path(tree["grandchild"])
    with open(path, "ab") as handle:
        handle.write(b"{torn\n")
    code = main(["export", "--data-dir", str(store.data_dir), "--project", str(project.root), "--conversation", conversation.id, "--format", "jsonl", "--include-subagents"])
    captured = capsys.readouterr()
    assert code == 0
    assert f"subagent {tree['grandchild']}: 1 damaged line(s) skipped" in captured.err
