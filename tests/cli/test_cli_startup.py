"""Starting the command line is cheap: the parser is built from light modules, each command imports its own.

``crewagent --help`` (and every test that starts a ``crewagent`` process) used to spend about a
second importing the store, the export, the loop, the tools, pydantic and the OpenAI client.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

import crewagent
from crewagent import cli_commands
from crewagent.core.messages import MODES

# One fresh interpreter (the ``started`` fixture) for the startup claims: one worker makes it.
pytestmark = pytest.mark.xdist_group("cli_startup")

#: Packages no command needs to build its parser (top-level names as ``-X importtime`` prints them).
HEAVY = ("PySide6", "openai", "pydantic", "pydantic_core", "httpx", "httpx2", "jsonschema", "tiktoken", "keyring")
#: The app's own modules that belong to the handlers, not to the parser.
HEAVY_APP = (
    "crewagent.cli_chat",
    "crewagent.cli_run",
    "crewagent.core.export",
    "crewagent.core.store",
    "crewagent.core.loop",
    "crewagent.core.tools",
    "crewagent.core.llm",
    "crewagent.core.messages",
    "crewagent.core.context",
    "crewagent.core.packages",
    "crewagent.core.runs",
    "crewagent.ui",
)


def _heavy(names: set[str]) -> list[str]:
    return sorted(
        name for name in names if name.split(".")[0] in HEAVY or any(name == m or name.startswith(m + ".") for m in HEAVY_APP)
    )


HELPS = (["--help"], ["chat", "--help"], ["run", "--help"], ["packages", "list", "--help"])
#: Arguments of every command, parsed (not run).
PARSED = (
    ["chat", "--project", ".", "hi"], ["run", "--project", "."], ["runs", "--project", "."],
    ["export", "--project", ".", "--conversation", "c"], ["import", "--project", ".", "f"],
    ["validate", "f"], ["context", "--project", ".", "--conversation", "c"], ["packages", "list"],
    ["mcp", "list"], ["mcp", "add", "x", "--", "cmd", "-y"], ["mcp", "add", "x", "--url", "http://h"],
    ["mcp", "test", "x"], ["mcp", "remove", "x"], ["mcp", "import", "f"],
)
#: What the claims below check, in one fresh interpreter (one start and one import of the parser,
#: not four): each stage prints what it ran and then every module imported so far (``=== modules``).
#: (1) ``python -m crewagent <argv>`` for each of HELPS in turn; (2) the parser built and every
#: command's arguments parsed; then, in a fork of that process (single-threaded, nothing heavy
#: imported), (3) ``crewagent packages list``; and in the process itself (4) the modules a command
#: and the app's worker import before any model is called. Each stage's modules include the
#: stages' before it, which the tests check import nothing heavy: a stage's import cannot hide.
_STAGES = """
import gc, json, os, runpy, sys

gc.disable()  # a short-lived checker: the ~600 modules it imports are garbage to no collection

def modules(stage):
    print("=== modules", stage, json.dumps(sorted(sys.modules)), flush=True)

def crewagent(argv):
    sys.argv = ["crewagent", *argv]
    try:
        runpy.run_module("crewagent", run_name="__main__", alter_sys=True)
        code = None
    except SystemExit as exc:
        code = exc.code
    print("=== exit", code, flush=True)

given = json.loads(sys.argv[1])
for argv in given["helps"]:
    print("=== help", *argv, flush=True)
    crewagent(argv)
modules("helps")
from crewagent.cli import build_parser
parser = build_parser()
for argv in given["parsed"]:
    parser.parse_args(argv)
modules("parsed")
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    print("=== packages list", flush=True)
    crewagent(["packages", "list", "--data-dir", given["data_dir"]])
    modules("packages list")
    sys.stdout.flush()
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("=== packages list status", status, flush=True)
build_parser().parse_args(["conversations", "--project", "."])
import crewagent.core.packages, crewagent.core.runs, crewagent.core.turns
import crewagent.core.llm.demo, crewagent.worker.bridge
print("=== not yet loaded", json.dumps(sorted(m for m in ("jsonschema", "openai", "regex") if m in sys.modules)), flush=True)
"""


@dataclass(frozen=True)
class Started:
    """The output of the stages (``_STAGES``): each stage's text, and the modules imported by its end."""

    text: dict[str, str]
    modules: dict[str, set[str]]


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Started:
    folder = tmp_path_factory.mktemp("cli_startup")
    env = {**os.environ, "CREWAGENT_DATA_DIR": str(folder / "data"), "CREWAGENT_CONFIG_DIR": str(folder / "config"),
           "XDG_DATA_HOME": str(folder / "xdg-data"), "XDG_CONFIG_HOME": str(folder / "xdg-config"),
           "XDG_CACHE_HOME": str(folder / "cache"), "HOME": str(folder / "home"), "CREWAGENT_LOCAL_SERVERS": ""}
    given = {"helps": HELPS, "parsed": PARSED, "data_dir": str(folder / "d")}
    result = subprocess.run([sys.executable, "-c", _STAGES, json.dumps(given)], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    text: dict[str, str] = {}
    modules: dict[str, set[str]] = {}
    stage = "helps"
    for line in result.stdout.splitlines(keepends=True):
        if line.startswith("=== modules "):
            name, listed = line[len("=== modules "):].rsplit(" [", 1)
            modules[name] = set(json.loads("[" + listed))
            stage = {"helps": "parsed", "parsed": "packages list", "packages list": "after the fork"}[name]
        else:
            text[stage] = text.get(stage, "") + line
    assert set(modules) == {"helps", "parsed", "packages list"}, result.stdout[-2000:]
    return Started(text, modules)


def test_help_imports_none_of_the_app(started: Started) -> None:
    runs = started.text["helps"].split("=== help ")[1:]
    assert [run.splitlines()[0].split() for run in runs] == [list(argv) for argv in HELPS]
    for run in runs:
        assert run.rstrip().endswith("=== exit 0"), run[-2000:]
        assert "usage: crewagent" in run
    imported = started.modules["helps"]
    assert "crewagent.cli" in imported  # the stage's modules were read
    assert _heavy(imported) == []


def test_parsing_every_command_imports_none_of_their_handlers(started: Started) -> None:
    """Building the parser and parsing any command's arguments stays light; only running it imports more."""
    imported = started.modules["parsed"]
    assert "crewagent.cli_commands" in imported
    assert _heavy(imported) == []


def test_parsing_the_mcp_commands_imports_neither_the_sdk_nor_the_core(started: Started) -> None:
    """`crewagent --help` stays cheap with the mcp commands registered (their arguments are in PARSED)."""
    imported = started.modules["parsed"]
    assert "crewagent.cli_mcp" in imported
    assert not any(name == "mcp" or name.startswith(("mcp.", "mcp_types", "crewagent.core.mcp")) for name in imported)


def test_the_chat_modes_are_the_conversation_modes() -> None:
    """cli_commands spells the modes out (core.messages imports pydantic); they must not drift apart."""
    assert cli_commands.MODES == MODES


#: What listing packages must not import: the context builder's compaction, the tools, the log
#: store, the loop and the model client (``core.packages`` needs only the agents' prompts, the
#: YAML frontmatter reader and the file helpers of those packages).
NOT_FOR_PACKAGES = (
    "PySide6",
    "openai",
    "httpx",
    "crewagent.core.context.builder",
    "crewagent.core.context.compaction",
    "crewagent.core.tools.builtin",
    "crewagent.core.tools.fs",
    "crewagent.core.tools.registry",
    "crewagent.core.store.runtime",
    "crewagent.core.store.log",
    "crewagent.core.messages",
    "crewagent.core.loop",
    "crewagent.core.llm",
    "crewagent.gui_deps",
)


def test_packages_list_runs_headless_without_the_context_tools_or_store(started: Started) -> None:
    """``crewagent packages list`` in a fresh interpreter (after only the light stages above): no Qt,
    and only the package modules it needs."""
    out = started.text["packages list"]
    assert out.rstrip().endswith("=== exit 0"), out[-2000:]
    assert "project-brief-1.0.0" in out  # the built-in package was installed and listed
    imported = started.modules["packages list"]
    own = imported - started.modules["parsed"]
    assert "crewagent.core.packages.loader" in own and "crewagent.core.agents" in own
    assert sorted(n for n in imported if any(n == m or n.startswith(m + ".") for m in NOT_FOR_PACKAGES)) == []


def test_other_commands_do_not_pay_for_the_package_checker(started: Started) -> None:
    """jsonschema (and the schemas) load when a package is checked, not when a command starts; nor
    does openai (~0.4 s of API types) load before a model is called, in the CLI or the app's worker;
    nor the ``regex`` module before fs.search meets a pattern RE2 refuses."""
    after = started.text["after the fork"]
    assert "=== packages list status 0\n" in after
    assert after.rstrip().endswith("=== not yet loaded []"), after[-2000:]


def _lazy_packages() -> list[Path]:
    core = Path(crewagent.__file__).parent / "core"
    return sorted(p for p in core.glob("*/__init__.py") if "lazy_exports(" in p.read_text(encoding="utf-8"))


def _type_checking_imports(init: Path) -> dict[str, str]:
    """name -> module, from the ``if TYPE_CHECKING:`` block of a package's ``__init__``."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    return {a.name: n.module or "" for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names}


@pytest.mark.parametrize("init", _lazy_packages(), ids=lambda p: p.parent.name)
def test_lazy_exports_match_what_mypy_sees(init: Path) -> None:
    """A lazy package exports exactly its ``TYPE_CHECKING`` imports (what mypy and PyInstaller see),
    each name is ``__all__``'s and resolves to that very object of that module."""
    package = importlib.import_module(f"crewagent.core.{init.parent.name}")
    declared = _type_checking_imports(init)
    assert sorted(declared) == sorted(package.__all__)
    for name, module in declared.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name), name
    listed = {n for n in dir(package) if not n.startswith("_") and not isinstance(getattr(package, n), types.ModuleType)}
    assert listed - {"TYPE_CHECKING", "lazy_exports"} == set(declared)
    with pytest.raises(AttributeError, match="no attribute 'not_exported'"):
        package.not_exported  # noqa: B018
