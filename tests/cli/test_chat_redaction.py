"""Credentials in a base URL never reach a file, a log line or the model (issue 15, item 2)."""

from __future__ import annotations

import json
import logging
import socket
import string
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crewagent.cli import main
from crewagent.core.redact import redact
from crewagent.core.settings import SettingsStore
from crewagent.core.tools import AuditLog
from tests.fakes.scripted_server import ScriptedServer, http_error, text

USER_SECRET = f"pw-{uuid.uuid4().hex}"
QUERY_SECRET = f"qk-{uuid.uuid4().hex}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _files_holding(root: Path, *secrets: str) -> list[str]:
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if any(secret.encode() in data for secret in secrets):
                found.append(str(path.relative_to(root)))
    return found


def test_a_base_url_with_credentials_is_redacted_everywhere(
    scripted_llm: ScriptedServer,
    isolated_dirs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    SettingsStore().update(llm={"provider": "openai-compatible", "model": "scripted-model", "maxRetries": 0})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    project = tmp_path / "project"
    project.mkdir()
    chat = ["chat", "--data-dir", str(isolated_dirs["data"]), "--project", str(project)]

    # 1. nothing listens there: a network error naming the base URL
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://user:{USER_SECRET}@127.0.0.1:{_free_port()}/v1")
    assert main([*chat, "hello"]) == 1
    # 2. the server answers an error that echoes the URL it was called with
    scripted = scripted_llm.base_url.replace("http://", f"http://user:{USER_SECRET}@")
    monkeypatch.setenv("OPENAI_BASE_URL", scripted)
    scripted_llm.script(
        http_error(400, f"no such route: {scripted}/chat/completions?api_key={QUERY_SECRET}&model=x"),
        text("Fine now."),
    )
    assert main([*chat, "again"]) == 1
    # 3. the next turn sends the history, errors included, back to the model
    assert main([*chat, "continue"]) == 0
    out, err = capsys.readouterr()

    log_text = next(isolated_dirs["data"].rglob("messages.jsonl")).read_text(encoding="utf-8")
    assert log_text.count("LLM_HTTP_ERROR") >= 2 and "http://***@127.0.0.1" in log_text and "api_key=***" in log_text
    last_messages = json.dumps(scripted_llm.bodies[-1]["messages"])
    assert "LLM_HTTP_ERROR" in last_messages  # the errors are in the history the model reads ...
    assert USER_SECRET not in last_messages and QUERY_SECRET not in last_messages  # ... without the secrets
    for root in (isolated_dirs["data"], isolated_dirs["config"], project):
        assert _files_holding(root, USER_SECRET, QUERY_SECRET) == [], root
    assert USER_SECRET not in out + err and QUERY_SECRET not in out + err

    # log lines and audit records of the process are redacted too
    with caplog.at_level(logging.INFO):
        logging.getLogger("crewagent.test").info("talking to %s", scripted)
    assert USER_SECRET not in caplog.text and "http://***@" in caplog.text
    audit = AuditLog(tmp_path / "audit.jsonl")
    audit.record(tool="mcp.fetch", args={"url": f"{scripted}?token={QUERY_SECRET}"}, result={"ok": True}, duration_ms=1)
    assert _files_holding(tmp_path, USER_SECRET, QUERY_SECRET) == []


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("http://u:p4ss@h:1/v1", "http://***@h:1/v1"),
        ("https://tok@h/v1/x?model=m", "https://***@h/v1/x?model=m"),
        ("see https://h/a?key=K1&x=1&apikey=K2&sig=K3#f", "see https://h/a?key=***&x=1&apikey=***&sig=***#f"),
        ("GET /v1?access_token=T&signature=S&password=P&secret=Z", "GET /v1?access_token=***&signature=***&password=***&secret=***"),
        ("x-amz-security-token=T client_secret=C api-key=K", "x-amz-security-token=*** client_secret=*** api-key=***"),
        ("Authorization: Bearer sk-0123456789", "Authorization: Bearer ***"),
        ("max_tokens=5 monkey=1 keyboard=2 mail bob@example.com", "max_tokens=5 monkey=1 keyboard=2 mail bob@example.com"),
    ],
)
def test_redact(raw: str, clean: str) -> None:
    assert redact(raw) == clean
    assert redact(clean) == clean


_SECRET_CHARS = st.text(alphabet=string.ascii_letters + string.digits + "-._~%!$'()*+,@:", min_size=6, max_size=40)


@given(
    secret=_SECRET_CHARS,
    user=st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=10),
    scheme=st.sampled_from(["http", "https", "ws", "postgres+psycopg"]),
    param=st.sampled_from(["key", "api_key", "apikey", "API-KEY", "token", "access_token", "sig", "signature", "password", "secret", "client_secret", "x-goog-signature"]),
    around=st.tuples(st.text(max_size=20), st.text(max_size=20)),
)
def test_no_credential_survives_redaction(secret: str, user: str, scheme: str, param: str, around: tuple[str, str]) -> None:
    """For any credential in user-info or a key-like query parameter, in any surrounding text."""
    before, after = (part.replace(secret, "") for part in around)
    for url in (
        f"{scheme}://{user}:{secret}@host.example:8080/v1",
        f"{scheme}://{secret}@host.example/v1?model=m",
        f"{scheme}://host.example/v1?model=m&{param}={secret}&x=1",
        f"{scheme}://host.example/v1?{param}={secret}#frag",
    ):
        assert secret not in redact(f"{before} {url} {after}"), url
