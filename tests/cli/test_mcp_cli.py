"""``crewagent mcp list|add|remove|test|import`` and ``crewagent chat`` with MCP servers (issue 12)."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

from crewagent.cli import main
from crewagent.core.store import RuntimeStore
from tests.core.loop_helpers import assert_log_valid, result_of
from tests.core.mcp_helpers import MCP_GROUP, echo_server, mark, processes_with_env, wait_gone
from tests.fakes import mcp_fork
from tests.fakes.mcp_fork import MCPForkServer
from tests.fakes.scripted_server import API_KEY, ScriptedServer, call, text, tool_calls

pytestmark = pytest.mark.xdist_group(MCP_GROUP)


def _out(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_add_list_remove(capsys: pytest.CaptureFixture[str], isolated_dirs: dict[str, Path]) -> None:
    secret = f"tok-{uuid.uuid4().hex}"
    assert main(["mcp", "add", "time", "--name", "Time", "--", sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]) == 0
    assert main(["mcp", "add", "web", "--url", "https://example.com/mcp", "--header", f"Authorization=Bearer {secret}", "--trusted"]) == 0
    _out(capsys)
    assert main(["mcp", "list", "--json"]) == 0
    listed = json.loads(_out(capsys)[0])
    assert [(s["id"], s["transport"]) for s in listed["servers"]] == [("time", "stdio"), ("web", "http")]
    assert listed["servers"][0]["command"].endswith("-m mcp_server_time --local-timezone UTC")
    assert listed["servers"][1]["headerNames"] == ["Authorization"] and listed["servers"][1]["trusted"] is True
    assert secret not in (isolated_dirs["config"] / "settings.json").read_text(encoding="utf-8")

    assert main(["mcp", "remove", "web"]) == 0
    assert main(["mcp", "list"]) == 0
    out = _out(capsys)[0]
    assert "time\tstdio" in out and "web" not in out
    assert not any(secret in path.read_text(encoding="utf-8", errors="replace") for path in isolated_dirs["config"].rglob("*") if path.is_file())


@pytest.mark.parametrize(
    "argv, problem",
    [
        (["mcp", "add", "bad__id", "--", "x"], "cannot contain '__'"),
        (["mcp", "add", "x"], "either -- COMMAND"),
        (["mcp", "add", "x", "--url", "ftp://host"], "http:// or https://"),
        (["mcp", "remove", "nope"], "no MCP server 'nope'"),
        (["mcp", "test", "nope"], "no MCP server 'nope'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = _out(capsys)[1]
    assert problem in err and "Traceback" not in err


def test_import_claude_desktop_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}, "Remote One": {"url": "http://127.0.0.1:9/mcp"}}}))
    assert main(["mcp", "import", str(source)]) == 0
    assert _out(capsys)[0].split() == ["time", "Remote-One"]


@pytest.mark.slow
def test_mcp_test_lists_the_tools_or_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    marker = mark()
    server = echo_server("edge", marker)  # the edge server's seven tools, without the SDK's imports
    # Starts are slow on a loaded machine: a generous start timeout.
    assert main(["mcp", "add", "edge", "--cwd", server["cwd"], "--start-timeout", "300", "--", server["command"], *server["args"]]) == 0
    assert main(["mcp", "add", "gone", "--", str(Path(sys.executable).parent / "no-such-command")]) == 0
    _out(capsys)
    assert main(["mcp", "test", "edge"]) == 0
    out = _out(capsys)[0]
    assert "edge: running, 7 tool(s)" in out and "mcp__edge__echo" in out
    assert wait_gone(marker) == []
    assert main(["mcp", "test", "gone"]) == 1
    assert "could not be started" in _out(capsys)[1]


@pytest.mark.slow
def test_chat_uses_an_enabled_server_and_leaves_no_process(
    scripted_llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], isolated_dirs: dict[str, Path],
    mcp_fork_server: MCPForkServer | None,
) -> None:
    """The issue's "done when", headless: `crewagent mcp add` + `crewagent chat`, against mcp-server-time
    (forked from the session's MCP fork server, tests/fakes/mcp_fork.py)."""
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("CREWAGENT_MODEL", "scripted-model")
    marker = f"crewagent-test-{uuid.uuid4().hex}"
    time_server = mcp_fork.command("mcp_server_time", "--local-timezone", "UTC")
    assert main(["mcp", "add", "time", "--start-timeout", "300", "--env", f"CREWAGENT_TEST_MARK={marker}", "--", *time_server]) == 0
    scripted_llm.script(
        tool_calls(call("c1", "mcp__time__get_current_time", '{"timezone": "Asia/Tokyo"}')),
        text("It is evening in Tokyo."),
    )
    data, project = tmp_path / "data", tmp_path / "project"
    code = main(["chat", "--data-dir", str(data), "--project", str(project), "--provider", "openai-compatible", "--new", "what time is it in Tokyo?"])
    out, err = _out(capsys)
    assert code == 0, err
    assert "🔧 mcp__time__get_current_time" in err and "It is evening in Tokyo." in out
    store = RuntimeStore(data)
    opened = store.open_project(project)
    conversation_id = err.splitlines()[1]
    [result] = [m for m in assert_log_valid(store, opened.id, conversation_id) if m.role == "tool"]
    assert json.loads(result_of(result)["content"])["timezone"] == "Asia/Tokyo" and result.toolName == "mcp__time__get_current_time"
    # Its tool was offered to the model with the schema it declares.
    offered = {tool["function"]["name"]: tool["function"] for tool in scripted_llm.bodies[0]["tools"]}
    assert offered["mcp__time__get_current_time"]["parameters"]["required"] == ["timezone"]
    # The env value reached the server (found by it) and lives only in the secrets store.
    assert processes_with_env(marker) == []
    holders = [p for p in tmp_path.rglob("*") if p.is_file() and marker.encode() in p.read_bytes()]
    assert holders == [isolated_dirs["config"] / "secrets.json"]
