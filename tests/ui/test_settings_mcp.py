"""Settings → MCP as a user meets it (issue 12): add a server, test it, save, duplicate, delete
(mcp-server-time itself goes through this page in tests/ui/test_mcp_gui.py's "done when"); a server
that fails shows its error and stderr; import a Claude Desktop mcpServers file.
Secret values reach the keyring (here its private fallback file), never settings.json."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from crewagent.core.mcp import McpSecrets, McpStatus, McpToolInfo, ServerState
from crewagent.core.settings import SettingsStore
from crewagent.ui.settings.mcp_form import KEEP
from crewagent.ui.settings.mcp_page import McpPage
from crewagent.worker import WorkerThread
from tests.core.mcp_helpers import MCP_GROUP, REPO, mark, processes_with, wait_gone
from tests.ui.conftest import ScriptedDialogs, SettingsOnly
from tests.ui.test_settings import no_system_keyring  # noqa: F401  (a fixture)

pytestmark = pytest.mark.xdist_group(MCP_GROUP)


@pytest.fixture
def main(settings_only: SettingsOnly) -> SettingsOnly:
    """The dialog as the window wires it, without the window: these claims are the MCP page's."""
    return settings_only


def open_mcp(main: SettingsOnly) -> McpPage:
    main.settings_dialog.show_settings("mcp")
    return main.settings_dialog.mcp_page


def add_server(page: McpPage, server_id: str, args: str, env: str = "", *, done: bool = True) -> None:
    page.add_button.click()
    form = page.form
    assert form.isVisible()
    form.server_id.setText(server_id)
    form.command.setText(sys.executable)
    form.args.setText(args)
    form.cwd.setText(str(REPO))
    form.env.setPlainText(env)
    if done:
        form.done_button.click()
        assert not form.isVisible(), form.error.text()


def rows(page: McpPage) -> list[list[str]]:
    return [[page.servers.topLevelItem(n).text(c) for c in range(4)] for n in range(page.servers.topLevelItemCount())]  # type: ignore[union-attr]


def save(qtbot: Any, main: SettingsOnly) -> dict[str, Any]:
    dialog = main.settings_dialog
    dialog.apply()
    qtbot.waitUntil(lambda: dialog.status.text() == "Saved. The changes are in effect.")
    return json.loads(SettingsStore().path.read_text(encoding="utf-8"))


def test_add_test_save_duplicate_and_delete_a_server(qtbot: Any, main: SettingsOnly, isolated_dirs: dict[str, Path]) -> None:
    # The page's claims, against the lean echo server (a real stdio process, 0.1 CPU-s to start);
    # mcp-server-time is added, tested and used from this page in tests/ui/test_mcp_gui.py's "done when".
    page = open_mcp(main)
    assert rows(page) == [] and page.enabled.isChecked()
    add_server(page, "echo", "-m tests.fakes.mcp_echo_server", env="ECHO_TOKEN=s3cret-value")
    assert rows(page) == [["echo", "stdio", "yes", "stopped"]]

    page.test_button.click()
    assert rows(page)[0][3] == "starting…" and not page.test_button.isEnabled()
    qtbot.waitUntil(lambda: rows(page)[0][3] != "starting…", timeout=120_000)
    assert rows(page)[0][3].startswith("works · "), page.status.text()  # tested, and stopped again: not "running"
    tools = {page.tools.topLevelItem(n).text(0): page.tools.topLevelItem(n).text(1) for n in range(page.tools.topLevelItemCount())}  # type: ignore[union-attr]
    assert tools["echo"] == "Return the text unchanged." and len(tools) == 7  # with their descriptions
    assert page.test_button.isEnabled()

    stored = save(qtbot, main)
    assert stored["mcp"]["servers"][0]["envNames"] == ["ECHO_TOKEN"]
    assert "s3cret-value" not in SettingsStore().path.read_text(encoding="utf-8")
    assert dict(McpSecrets().get("echo").env) == {"ECHO_TOKEN": "s3cret-value"}

    # The stored value is never read back into the form: it shows as kept.
    page.servers.setCurrentItem(page.servers.topLevelItem(0))
    page.edit_button.click()
    assert page.form.env.toPlainText() == f"ECHO_TOKEN={KEEP}"
    page.form.cancel_button.click()

    # A duplicate gets the secret values too (copied in the keyring); deleting the original forgets its own.
    page.duplicate_button.click()
    assert [row[0] for row in rows(page)] == ["echo", "echo (copy)"] and page.selected_id() == "echo-copy"
    page.servers.setCurrentItem(page.servers.topLevelItem(0))
    page.delete_button.click()
    stored = save(qtbot, main)
    assert [server["id"] for server in stored["mcp"]["servers"]] == ["echo-copy"]
    qtbot.waitUntil(lambda: McpSecrets().get("echo").env == {})
    assert dict(McpSecrets().get("echo-copy").env) == {"ECHO_TOKEN": "s3cret-value"}


def test_a_failing_server_shows_its_error_and_its_stderr(qtbot: Any, main: SettingsOnly) -> None:
    page = open_mcp(main)
    script = "import sys; sys.stderr.write('no API key given\\n'); sys.exit(3)"
    add_server(page, "broken", f"-c {json.dumps(script)}")
    page.test_button.click()
    qtbot.waitUntil(lambda: rows(page)[0][3].startswith("error: "), timeout=60_000)
    assert "no API key given" in page.log.toPlainText()
    assert page.tools.topLevelItemCount() == 0

    # The live status of the servers the turns start (Worker.turns.mcp_state_changed) shows the same way.
    page.show_state(ServerState("broken", McpStatus.RUNNING, (McpToolInfo("echo", "Says it  back", {}),)))
    assert rows(page)[0][3] == "running · 1 tool(s)" and page.tools.topLevelItem(0).text(1) == "Says it back"  # type: ignore[union-attr]
    assert "no API key given" in page.log.toPlainText()  # the last test's log stays
    page.show_state(ServerState("broken", McpStatus.STOPPED))
    assert rows(page)[0][3] == "stopped"


def test_quitting_during_a_test_stops_the_server_at_once(qtbot: Any, main: SettingsOnly, worker_thread: WorkerThread) -> None:
    page = open_mcp(main)
    marker = mark()
    # Tested from the open form, as typed: a server that never answers initialize (its start timeout is 60 s).
    add_server(page, "hangs", f"-m tests.fakes.mcp_edge_server --hang-initialize {marker}", done=False)
    page.test_button.click()
    assert page.status.text() == "hangs: starting…"
    qtbot.waitUntil(lambda: len(processes_with(marker)) == 1, timeout=30_000)
    started = time.monotonic()
    worker_thread.stop()
    assert time.monotonic() - started < 20.0  # not the 60 s start timeout
    assert wait_gone(marker) == []


def test_import_claude_desktop_servers_keeps_their_secrets_out_of_settings(
    qtbot: Any, main: SettingsOnly, dialogs: ScriptedDialogs, tmp_path: Path
) -> None:
    page = open_mcp(main)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    dialogs.mcp_servers_file = str(bad)
    page.import_button.click()
    qtbot.waitUntil(lambda: page.notice.text().startswith("Nothing was imported"))
    assert rows(page) == []

    shared = {
        "mcpServers": {
            "Brave Search": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-brave-search"], "env": {"BRAVE_API_KEY": "k-123"}},
            "remote": {"type": "sse", "url": "https://example.com/sse", "headers": {"Authorization": "Bearer t-456"}},
        }
    }
    good = tmp_path / "claude_desktop_config.json"
    good.write_text(json.dumps(shared), encoding="utf-8")
    dialogs.mcp_servers_file = str(good)
    page.import_button.click()
    qtbot.waitUntil(lambda: page.servers.topLevelItemCount() == 2)
    assert rows(page) == [["Brave Search", "stdio", "yes", "stopped"], ["remote", "sse", "yes", "stopped"]]
    assert main.settings_dialog.has_unsaved_changes()

    stored = save(qtbot, main)
    servers = {server["id"]: server for server in stored["mcp"]["servers"]}
    assert servers["Brave-Search"]["envNames"] == ["BRAVE_API_KEY"] and servers["remote"]["headerNames"] == ["Authorization"]
    text = SettingsStore().path.read_text(encoding="utf-8")
    assert "k-123" not in text and "t-456" not in text
    assert dict(McpSecrets().get("Brave-Search").env) == {"BRAVE_API_KEY": "k-123"}
    assert dict(McpSecrets().get("remote").headers) == {"Authorization": "Bearer t-456"}

    # A secret value typed and then discarded is not kept.
    page.servers.setCurrentItem(page.servers.topLevelItem(1))
    page.edit_button.click()
    page.form.headers.setPlainText("Authorization=Bearer typed-then-discarded")
    page.form.done_button.click()
    dialog = main.settings_dialog
    assert dialog.has_unsaved_changes()  # only a secret changed: the settings did not
    dialogs.unsaved_settings_answer = "discard"
    dialog.reject()
    assert not dialog.isVisible() and not dialog.has_unsaved_changes()
    page = open_mcp(main)
    save(qtbot, main)
    assert dict(McpSecrets().get("remote").headers) == {"Authorization": "Bearer t-456"}

    # A bad line in the form is a one-line error, and nothing changes.
    page.servers.setCurrentItem(page.servers.topLevelItem(1))
    page.edit_button.click()
    page.form.headers.setPlainText("no equals sign")
    page.form.done_button.click()
    assert page.form.isVisible() and page.form.error.text() == "Headers, line 1: write NAME=value."


def test_the_start_timeout_is_edited_in_the_form_and_bounded(qtbot: Any) -> None:
    from crewagent.core.settings import McpServerSettings
    from crewagent.ui.settings.mcp_form import McpServerForm
    from crewagent.worker.mcp_ops import McpSecretEdit

    form = McpServerForm()
    qtbot.addWidget(form)
    server = McpServerSettings(id="slow", command="uvx", startTimeoutSeconds=90)
    form.edit(server, McpSecretEdit("slow"), taken=(), new=False)
    assert form.start_timeout.value() == 90 and form.rows["start_timeout"].label.text() == "Start timeout"
    form.start_timeout.setValue(240)
    assert form.draft()[0].startTimeoutSeconds == 240
    form.start_timeout.setValue(0)  # the spin box keeps it in range: a server always gets some time to start
    assert form.draft()[0].startTimeoutSeconds == 1
    form.start_timeout.setValue(10**6)
    assert form.draft()[0].startTimeoutSeconds == 3_600
