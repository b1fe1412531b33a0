"""The scripted OpenAI-compatible server (core/llm/local_server.py) and clients that die mid-request."""

from __future__ import annotations

import json
import socket
import time
import urllib.request

from crewagent.core.llm.local_server import JsonReply, LocalServer, RecordedRequest, Reply


class _Strict:
    """A responder that, like the crash tests' models, reads the body's fields without a check."""

    def list_models(self, request: RecordedRequest) -> Reply:
        return JsonReply(200, {"object": "list", "data": []})

    def chat_completion(self, request: RecordedRequest) -> Reply:
        return JsonReply(200, {"model": request.body["model"]})


def test_a_request_cut_short_by_its_clients_death_is_neither_answered_nor_a_responder_error() -> None:
    # A `crewagent chat` killed with SIGKILL while it sends its request: the body stops short of
    # its Content-Length. Nobody is left to answer, and the responder must not see half a body.
    with LocalServer(_Strict()) as server:
        host, port = server.base_url.split("//")[1].split("/")[0].split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 200\r\n\r\n{\"model\": \"cut")
        deadline = time.monotonic() + 10
        while server.cut_requests == 0:
            assert time.monotonic() < deadline, "the cut request was never noticed"
            time.sleep(0.01)
        assert server.errors == [] and server.requests == []
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions", data=b'{"model": "whole"}', headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as whole:  # noqa: S310 - 127.0.0.1
            assert json.loads(whole.read()) == {"model": "whole"}
        assert server.errors == [] and len(server.requests) == 1


def _switches(native_id: int) -> int:
    """How often a thread of this process gave up the CPU to wait (Linux's per-thread count)."""
    with open(f"/proc/self/task/{native_id}/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith("voluntary_ctxt_switches:"))
    return int(line.split()[1])


def test_an_idle_server_sleeps_until_a_request_or_its_stop_and_stops_at_once() -> None:
    # The demo provider's server lives as long as a window: it used to wake every 20 ms to look for
    # a stop request (~4 ms of CPU a second, doing nothing). It now waits for a connection or the stop.
    server = LocalServer(_Strict()).start()
    try:
        thread = server._thread
        assert thread is not None and thread.native_id is not None
        models = urllib.request.urlopen(f"{server.base_url}/models", timeout=10)  # noqa: S310 - 127.0.0.1
        assert json.loads(models.read()) == {"object": "list", "data": []}
        models.close()
        before = _switches(thread.native_id)
        time.sleep(0.3)  # idle: a poll every 20 ms would wake it 15 times
        assert _switches(thread.native_id) - before <= 2
    finally:
        start = time.monotonic()
        server.stop()
    assert time.monotonic() - start < 2 and not thread.is_alive()
