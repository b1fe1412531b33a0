"""API keys: sent to the provider, stored only in the 0600 fallback file, found nowhere else on disk."""

from __future__ import annotations

import stat
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring.core
import pytest
from keyring.backends import fail

from crewagent.cli import main
from crewagent.core.llm.local_server import Pause, RecordedRequest, SseItem, SseReply
from crewagent.core.loop import toolloop
from crewagent.core.secrets import FALLBACK_NAME, SecretStore
from crewagent.core.settings import SettingsStore
from tests.fakes.scripted_server import ScriptedServer, Step, call, chunk, http_error, text, tool_calls

STORED_KEY = f"sk-stored-{uuid.uuid4().hex}"
ENV_KEY = f"sk-env-{uuid.uuid4().hex}"


def _files_holding(root: Path, *secrets: str) -> dict[str, list[str]]:
    """Every file under ``root`` (recursively) whose bytes contain one of ``secrets``."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # a temp file renamed away during the scan
            continue
        hits = [s for s in secrets if s.encode() in data]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def _auth(request: RecordedRequest) -> str | None:
    return next((v for k, v in request.headers.items() if k.lower() == "authorization"), None)


def _wait_for_file(root: Path, name: str, timeout: float = 10) -> None:
    """Until a file called ``name`` exists under ``root`` (or ``timeout`` passes: the caller checks)."""
    deadline = time.monotonic() + timeout
    while not any(root.rglob(name)) and time.monotonic() < deadline:
        time.sleep(0.01)


def _slow_answer_scanning(root: Path, scans: list[tuple[list[str], dict[str, list[str]]]]) -> Step:
    """A streamed answer of 16 chunks 10 ms apart; after the 14th (past the first checkpoint, written
    every 50 ms here: see the test) the whole tree is scanned."""

    def events() -> Iterator[SseItem]:
        yield chunk({"role": "assistant", "content": ""})
        for k in range(16):
            yield Pause(0.01)
            yield chunk({"content": f"word{k} "})
            if k == 13:
                _wait_for_file(root, "streaming.json")  # the client writes its checkpoint
                names = [p.name for p in root.rglob("*") if p.is_file()]
                scans.append((names, _files_holding(root, STORED_KEY, ENV_KEY)))
        yield chunk({}, "stop")

    return Step("slow answer, scanning the disk mid-stream", lambda request: SseReply(events()))


@pytest.fixture
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    """No OS keyring (as on this CI box and many Linux desktops): keys go to the 0600 fallback file."""
    monkeypatch.setattr(keyring.core, "_keyring_backend", fail.Keyring())
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


def test_api_keys_reach_the_provider_and_no_file_but_the_fallback(
    no_keyring: None,
    scripted_llm: ScriptedServer,
    isolated_dirs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    secrets = SecretStore()
    backend = secrets.set("openai-compatible", STORED_KEY)
    assert not backend.secure and backend.warning  # the user is told
    SettingsStore().update(llm={"provider": "openai-compatible", "baseUrl": scripted_llm.base_url, "model": "scripted-model"})
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("hello\n", encoding="utf-8")
    data = isolated_dirs["data"]
    scans: list[tuple[list[str], dict[str, list[str]]]] = []

    # 1. the key from the secret store; a tool call; then an error whose message echoes the key
    scripted_llm.script(
        tool_calls(call("c1", "fs_read", '{"path": "@project/README.md"}')),
        text("It says hello."),
        http_error(400, f"Invalid request for key {STORED_KEY}"),
    )
    assert main(["chat", "--data-dir", str(data), "--project", str(project), "read README.md"]) == 0
    assert main(["chat", "--data-dir", str(data), "--project", str(project), "again"]) == 1
    # 2. the key from OPENAI_API_KEY, with a streamed answer long enough to be checkpointed (the
    # loop checkpoints every 0.5 s; a tenth of it here, for a tenth of the wait)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setattr(toolloop, "CHECKPOINT_INTERVAL_S", 0.05)
    scripted_llm.script(_slow_answer_scanning(tmp_path, scans))
    assert main(["chat", "--data-dir", str(data), "--project", str(project), "continue"]) == 0
    out, err = capsys.readouterr()

    # the keys were sent where they belong
    assert [_auth(r) for r in scripted_llm.requests] == [f"Bearer {STORED_KEY}"] * 3 + [f"Bearer {ENV_KEY}"]
    # ... and nowhere else: the data, config, cache and home folders and the project
    fallback = isolated_dirs["config"] / FALLBACK_NAME
    assert stat.S_IMODE(fallback.stat().st_mode) == 0o600
    assert _files_holding(tmp_path, STORED_KEY, ENV_KEY) == {str(fallback.relative_to(tmp_path)): [STORED_KEY]}
    names, found_mid_stream = scans[0]
    assert "streaming.json" in names  # a checkpoint was on disk during the scan
    assert found_mid_stream == {str(fallback.relative_to(tmp_path)): [STORED_KEY]}
    assert STORED_KEY not in out + err and ENV_KEY not in out + err
    # the scan covered what it claims to: settings, the log (with the persisted error), the audit
    written = {p.name for p in tmp_path.rglob("*") if p.is_file()}
    assert {"settings.json", "messages.jsonl", "index.json", FALLBACK_NAME} <= written
    assert any(p.parent.name == "execution" for p in data.rglob("*.jsonl"))  # the tool audit
    log = next(data.rglob("messages.jsonl")).read_text(encoding="utf-8")
    assert "LLM_HTTP_ERROR" in log and "Invalid request for key ***" in log
