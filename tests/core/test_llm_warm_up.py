"""``_client.warm_up``: after it, a client's first request loads no module of the HTTP transport and
starts no process (the app runs it before the first send: ``tuning.warm_up_once``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# In a fresh interpreter (this one has long imported the transport): one streamed request against
# the scripted server, recording what it imports and which processes it starts.
_FIRST_REQUEST = """
import json, subprocess, sys
from crewagent.core.llm import LlmRequest, _client
from tests.fakes.llm_helpers import collect, user
from tests.fakes.scripted_server import ScriptedServer, text
import concurrent.futures.thread  # asyncio's default executor: the app has it long before
if sys.argv[1] == "warm":
    _client.warm_up()
server = ScriptedServer().start()
server.script(text("Hel", "lo"))
imported, spawned = [], []
class Log:
    def find_spec(self, name, path=None, target=None):
        imported.append(name)
sys.meta_path.insert(0, Log())
popen = subprocess.Popen.__init__
def recorded(self, *args, **kwargs):
    spawned.append(args[0] if args else kwargs.get("args"))
    popen(self, *args, **kwargs)
subprocess.Popen.__init__ = recorded
events, error = collect(server.config(), LlmRequest([user("hi")]))
server.stop()
print(json.dumps({"error": repr(error), "text": [getattr(e, "text", None) for e in events], "imported": imported, "spawned": spawned}))
"""


def _first_request(mode: str) -> dict[str, list[str]]:
    result = subprocess.run([sys.executable, "-c", _FIRST_REQUEST, mode], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    out: dict[str, list[str]] = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["error"] == "None" and "Hel" in out["text"]
    return out


@pytest.mark.parametrize("mode", ["cold", "warm"])
def test_after_warm_up_the_first_request_imports_no_transport_and_starts_no_process(mode: str) -> None:
    out = _first_request(mode)
    transport = [name for name in out["imported"] if name.split(".")[0] in ("httpcore", "httpcore2", "anyio", "h11", "truststore")]
    if mode == "cold":  # what warm_up takes off the first send: the check below sees it when it is there
        assert "anyio._backends._asyncio" in transport and any(name.startswith("h11") for name in transport)
        assert out["spawned"], "the SDK's platform headers start `uname -p` on a first request"
    else:
        assert transport == [] and out["spawned"] == []
