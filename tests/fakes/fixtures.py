"""Pytest fixtures for the LLM fakes; register with ``pytest_plugins = ["tests.fakes.fixtures"]``."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.xdist_role import is_xdist_controller

if TYPE_CHECKING:
    from crewagent.core.llm.local_server import LocalServer
    from tests.fakes.mcp_fork import MCPForkServer
    from tests.fakes.scripted_server import ScriptedServer
    from tests.fakes.zygote import Zygote


def pytest_configure(config: pytest.Config) -> None:
    """A test that runs a turn must not spend its timed waits importing the model client library
    (0.4 s, but 9 s measured on a loaded 2-core machine): it is imported once per test process, here.
    Not in an xdist controller, which runs no test: there it would only take CPU from the workers."""
    if is_xdist_controller(config):
        return
    from crewagent.core.llm.adapter import CLIENT_MODULE

    importlib.import_module(CLIENT_MODULE)


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedServer]:
    """A started scripted OpenAI-compatible server with an empty script; add steps with ``.script(...)``.

    At teardown it stops and fails the test if a step was left unused or a request went beyond
    the script.
    """
    from tests.fakes.scripted_server import ScriptedServer

    server = ScriptedServer().start()
    try:
        yield server
    finally:
        server.stop()
    server.assert_all_used()


@pytest.fixture
def demo_llm() -> Iterator[LocalServer]:
    """The demo provider's server, unpaced (no delay between chunks)."""
    from crewagent.core.llm.demo import DemoResponder
    from crewagent.core.llm.local_server import LocalServer

    with LocalServer(DemoResponder(chunk_delay=0.0)) as server:
        yield server


@pytest.fixture(scope="session")
def crewagent_zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    """Forks real ``crewagent`` processes from one warmed-up interpreter (see tests/fakes/zygote.py);
    one per test session (per xdist worker), shared by the crash loops and the CLI tests that need
    a real process; the tests that use it share the xdist group ``ZYGOTE_GROUP``. As root it runs
    without the capabilities that bypass file modes, so that mode 000 applies to its commands."""
    from tests.fakes.zygote import Zygote, without_file_override

    with Zygote(stderr=tmp_path_factory.mktemp("zygote") / "stderr.txt", wrapper=without_file_override()) as zygote:
        yield zygote


@pytest.fixture(scope="session")
def mcp_fork_server() -> Iterator[MCPForkServer | None]:
    """Runs the tests' SDK-based MCP servers (mcp-server-time, tests/fakes/mcp_edge_server.py) as
    forks of one interpreter that imported the SDK once (tests/fakes/mcp_fork.py): ~0.15 CPU-s a
    start instead of ~2. A server entry names it with ``tests.fakes.mcp_fork.command(...)``; the
    tests that start one share the xdist group ``MCP_GROUP`` (tests/core/mcp_helpers.py), so a run
    starts one fork server (~1.7 CPU-s of imports). Linux only (it rewrites what /proc shows of a
    fork); elsewhere None, and each server entry starts its server fresh."""
    import sys

    from tests.fakes.mcp_fork import MCPForkServer

    if not sys.platform.startswith("linux"):
        yield None
        return
    with MCPForkServer() as server:
        yield server
