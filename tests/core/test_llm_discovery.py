"""Local servers found automatically (issue 17): a scripted server on a random port is the probe target."""

from __future__ import annotations

import socket

from crewagent.core.llm.discovery import FoundServer, local_targets, probe_local_servers
from tests.fakes.fixtures import scripted_llm  # noqa: F401  (fixture)
from tests.fakes.llm_helpers import run
from tests.fakes.scripted_server import ScriptedServer, models, models_error


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_default_targets_are_ollama_and_lm_studio_unless_the_environment_says() -> None:
    assert local_targets({}) == (("ollama", "http://localhost:11434/v1"), ("lmstudio", "http://localhost:1234/v1"))
    assert local_targets({"CREWAGENT_LOCAL_SERVERS": ""}) == ()
    listed = "ollama=http://gpu-box:11434/v1, nope=http://x/v1, lmstudio=ftp://x, lmstudio=http://127.0.0.1:5/v1"
    assert local_targets({"CREWAGENT_LOCAL_SERVERS": listed}) == (("ollama", "http://gpu-box:11434/v1"), ("lmstudio", "http://127.0.0.1:5/v1"))


def test_a_server_that_answers_is_offered_with_its_models_and_a_silent_port_is_not(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(models("qwen3:8b", "llama3.1:latest"))
    targets = [("ollama", scripted_llm.base_url), ("lmstudio", f"http://127.0.0.1:{_closed_port()}/v1")]

    found = run(probe_local_servers(targets, timeout=20.0))

    assert found == [FoundServer("ollama", scripted_llm.base_url, ("llama3.1:latest", "qwen3:8b"))]
    assert scripted_llm.requests[0].path == "/v1/models"


def test_something_else_on_the_port_is_not_offered(scripted_llm: ScriptedServer) -> None:
    scripted_llm.script(models_error(404, "not here"))
    assert run(probe_local_servers([("lmstudio", scripted_llm.base_url)], timeout=2.0)) == []
