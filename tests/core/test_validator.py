"""The validator reports each protocol fault with OpenAI's envelope, category and exact param."""

from __future__ import annotations

from typing import Any

import pytest

from crewagent.core.protocol import (
    DOTTED_FUNCTION_NAME,
    first_error,
    validate_messages,
)


def user(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": text}


def call(call_id: str, name: str = "read_file", arguments: Any = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def calls(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]}


def result(call_id: Any, content: Any = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def answer(text: str = "done") -> dict[str, Any]:
    return {"role": "assistant", "content": text}


VALID: list[list[dict[str, Any]]] = [
    [user()],
    [{"role": "system", "content": "rules"}, user(), answer()],
    [user(), calls("a", "b"), result("b"), result("a"), answer()],
    [user(), calls("a"), result("a"), calls("b"), result("b"), user("more"), answer()],
    [user(), {"role": "assistant", "content": "looking", "tool_calls": [call("a")]}, result("a")],
    [user([{"type": "text", "text": "parts"}]), answer("")],  # type: ignore[arg-type]
]


@pytest.mark.parametrize("messages", VALID)
def test_valid_chains_have_no_error(messages: list[dict[str, Any]]) -> None:
    assert validate_messages(messages) == []


CASES: list[tuple[str, list[Any], str, str]] = [
    ("orphan at start", [result("a"), user()], "orphan_tool_message", "messages.[0].role"),
    ("orphan after user", [user(), result("a")], "orphan_tool_message", "messages.[1].role"),
    (
        "orphan after a plain answer",
        [user(), calls("a"), result("a"), answer(), result("a")],
        "orphan_tool_message",
        "messages.[4].role",
    ),
    (
        "unknown id",
        [user(), calls("a"), result("zzz"), result("a")],
        "unknown_tool_call_id",
        "messages.[2].tool_call_id",
    ),
    (
        "id of an earlier turn",
        [user(), calls("a"), result("a"), user(), calls("b"), result("a"), result("b")],
        "duplicate_tool_call_id",
        "messages.[5].tool_call_id",
    ),
    (
        "answered twice",
        [user(), calls("a", "b"), result("a"), result("a"), result("b")],
        "duplicate_tool_call_id",
        "messages.[3].tool_call_id",
    ),
    (
        "answered twice after the block completed",
        [user(), calls("a"), result("a"), result("a")],
        "duplicate_tool_call_id",
        "messages.[3].tool_call_id",
    ),
    (
        "issued twice across turns",
        [user(), calls("a"), result("a"), user(), calls("a"), result("a")],
        "duplicate_tool_call_id",
        "messages.[4].tool_calls.[0].id",
    ),
    (
        "issued twice in one message",
        [user(), calls("a", "a"), result("a")],
        "duplicate_tool_call_id",
        "messages.[1].tool_calls.[1].id",
    ),
    (
        "result missing before the next user message",
        [user(), calls("a", "b"), result("a"), user()],
        "missing_tool_result",
        "messages.[1].tool_calls",
    ),
    ("result missing at the end", [user(), calls("a")], "missing_tool_result", "messages.[1].tool_calls"),
    (
        "tool without id",
        [user(), calls("a"), {"role": "tool", "content": "x"}],
        "missing_tool_call_id",
        "messages.[2].tool_call_id",
    ),
    ("tool with empty id", [user(), calls("a"), result("")], "missing_tool_call_id", "messages.[2].tool_call_id"),
    ("unknown role", [user(), {"role": "robot", "content": "x"}], "invalid_message", "messages.[1].role"),
    ("missing role", [{"content": "x"}], "invalid_message", "messages.[0].role"),
    ("not an object", [user(), "hello"], "invalid_message", "messages.[1]"),
    ("empty list", [], "invalid_message", "messages"),
    ("user without content", [{"role": "user", "content": None}], "invalid_message", "messages.[0].content"),
    (
        "assistant with neither content nor tool_calls",
        [user(), {"role": "assistant", "content": None}],
        "invalid_message",
        "messages.[1].content",
    ),
    (
        "empty tool_calls",
        [user(), {"role": "assistant", "content": None, "tool_calls": []}],
        "invalid_message",
        "messages.[1].tool_calls",
    ),
    (
        "tool_calls not a list",
        [user(), {"role": "assistant", "content": None, "tool_calls": {"id": "a"}}],
        "invalid_message",
        "messages.[1].tool_calls",
    ),
    (
        "empty call id",
        [user(), {"role": "assistant", "content": None, "tool_calls": [call("")]}],
        "invalid_message",
        "messages.[1].tool_calls.[0].id",
    ),
    (
        "call without function",
        [user(), {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function"}]}, result("a")],
        "invalid_message",
        "messages.[1].tool_calls.[0].function",
    ),
    (
        "arguments not a string",
        [user(), {"role": "assistant", "content": None, "tool_calls": [call("a", arguments={"p": 1})]}, result("a")],
        "invalid_message",
        "messages.[1].tool_calls.[0].function.arguments",
    ),
    (
        "function name the provider rejects",
        [user(), {"role": "assistant", "content": None, "tool_calls": [call("a", name="fs.read")]}, result("a")],
        "invalid_message",
        "messages.[1].tool_calls.[0].function.name",
    ),
]


@pytest.mark.parametrize(("messages", "code", "param"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_category_reports_code_and_exact_param(messages: list[Any], code: str, param: str) -> None:
    error = first_error(messages)
    assert error is not None
    envelope = error.envelope()
    assert envelope == {
        "error": {"message": error.message, "type": "invalid_request_error", "param": param, "code": code}
    }


def test_missing_result_uses_openai_wording() -> None:
    error = first_error([user(), calls("call_x", "call_y"), result("call_y"), user()])
    assert error is not None
    assert error.message == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: call_x"
    )


def test_orphan_uses_openai_wording() -> None:
    error = first_error([user(), result("a")])
    assert error is not None
    assert "messages with role 'tool' must be a response to a preceding message with 'tool_calls'" in error.message


def test_dotted_names_pass_the_log_level_rule() -> None:
    messages = [user(), {"role": "assistant", "content": None, "tool_calls": [call("a", name="fs.read")]}, result("a")]
    assert validate_messages(messages, name_pattern=DOTTED_FUNCTION_NAME) == []
    assert validate_messages(messages, name_pattern=None) == []
    too_long = [user(), {"role": "assistant", "content": None, "tool_calls": [call("a", name="x" * 65)]}, result("a")]
    assert validate_messages(too_long, name_pattern=DOTTED_FUNCTION_NAME)[0].code == "invalid_message"


def test_all_errors_are_listed_in_order() -> None:
    messages = [result("o"), user(), calls("a", "b"), result("a"), result("a"), {"role": "x"}]
    codes = [(e.code, e.param) for e in validate_messages(messages)]
    assert codes == [
        ("orphan_tool_message", "messages.[0].role"),
        ("duplicate_tool_call_id", "messages.[4].tool_call_id"),
        ("missing_tool_result", "messages.[2].tool_calls"),
        ("invalid_message", "messages.[5].role"),
    ]


def test_a_bad_call_name_does_not_make_its_answer_an_orphan() -> None:
    messages = [user(), {"role": "assistant", "content": None, "tool_calls": [call("a", name="bad name")]}, result("a")]
    assert [e.code for e in validate_messages(messages)] == ["invalid_message"]


def test_messages_not_a_list() -> None:
    error = first_error({"role": "user"})
    assert error is not None and error.param == "messages" and error.code == "invalid_message"


# --- crewagent validate FILE -------------------------------------------------------------------


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from crewagent.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_validate_exit_codes(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    good = tmp_path / "good.json"
    good.write_text(json.dumps([user(), calls("a"), result("a"), answer()]))
    assert run_cli(["validate", str(good)], capsys)[0] == 0

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([user(), calls("a", "b"), result("a"), result("zzz"), user()]))
    code, out, _ = run_cli(["validate", str(bad)], capsys)
    assert code == 1
    assert json.loads(out)["error"]["param"] == "messages.[3].tool_call_id"
    code, out, _ = run_cli(["validate", str(bad), "--all"], capsys)
    assert code == 1
    assert [e["error"]["code"] for e in json.loads(out)] == ["unknown_tool_call_id", "missing_tool_result"]

    body = tmp_path / "request.json"
    body.write_text(json.dumps({"model": "m", "messages": [user()]}))
    code, out, _ = run_cli(["validate", str(body), "--json"], capsys)
    assert code == 0 and json.loads(out) == {"valid": True, "messageCount": 1}

    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    code, _, err = run_cli(["validate", str(broken)], capsys)
    assert code == 2 and "cannot read" in err
    assert run_cli(["validate", str(tmp_path / "missing.json")], capsys)[0] == 2


def test_cli_validate_dotted_names_only_when_asked(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    log = tmp_path / "messages.jsonl"
    lines = [user(), {"role": "assistant", "content": None, "tool_calls": [call("a", name="fs.read")]}, result("a")]
    log.write_text("\n".join(json.dumps({**m, "id": f"m{i}"}) for i, m in enumerate(lines)) + "\n")
    assert run_cli(["validate", str(log)], capsys)[0] == 1
    assert run_cli(["validate", str(log), "--allow-dotted-names"], capsys)[0] == 0


# --- pre-send check --------------------------------------------------------------------------


def test_presend_failure_becomes_an_error_part_naming_the_category() -> None:
    from crewagent.core.protocol import PROTOCOL_INVALID, presend_check, presend_error_message

    assert presend_check([user(), calls("a"), result("a")]) is None
    error = presend_check([user(), calls("a"), user()])
    assert error is not None and error.code == "missing_tool_result"
    part = presend_error_message(error, mode="chat")
    assert part.role == "assistant" and part.partType == "error" and part.includeInContext is False
    assert "- category: missing_tool_result" in part.text
    assert getattr(part, "error") == {"code": PROTOCOL_INVALID, "category": "missing_tool_result", "envelope": error.envelope()}
