"""Starting the command line is cheap: the parser is built from light modules, each command imports its own.

``crewagent --help`` (and every test that starts a ``crewagent`` process) used to spend about a
second importing the store, the export, the loop, the tools, pydantic and the OpenAI client.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import crewagent
from crewagent import cli_commands
from crewagent.core.messages import MODES

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


def _imported(stderr: str) -> set[str]:
    """The modules a ``python -X importtime`` run imported, from its stderr."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def _heavy(names: set[str]) -> list[str]:
    return sorted(
        name for name in names if name.split(".")[0] in HEAVY or any(name == m or name.startswith(m + ".") for m in HEAVY_APP)
    )


HELPS = (["--help"], ["chat", "--help"], ["run", "--help"], ["packages", "list", "--help"])
#: ``python -m crewagent <argv>`` for each of HELPS in turn, in one fresh interpreter (one start, not
#: four): each run's exit code and output after a marker line. What they import together is none of
#: the app, so neither does any one of them.
_HELPS_IN_ONE = """
import json, runpy, sys
for argv in json.loads(sys.argv[1]):
    print("=== help", *argv, flush=True)
    sys.argv = ["crewagent", *argv]
    try:
        runpy.run_module("crewagent", run_name="__main__", alter_sys=True)
        code = None
    except SystemExit as exc:
        code = exc.code
    print("=== exit", code, flush=True)
"""


def test_help_imports_none_of_the_app() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _HELPS_IN_ONE, json.dumps(HELPS)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    runs = result.stdout.split("=== help ")[1:]
    assert [run.splitlines()[0].split() for run in runs] == [list(argv) for argv in HELPS]
    for run in runs:
        assert run.rstrip().endswith("=== exit 0"), run[-2000:]
        assert "usage: crewagent" in run
    imported = _imported(result.stderr)
    assert "crewagent.cli" in imported  # the -X importtime output was read
    assert _heavy(imported) == []


def test_parsing_every_command_imports_none_of_their_handlers() -> None:
    """Building the parser and parsing any command's arguments stays light; only running it imports more."""
    code = (
        "import sys\nfrom crewagent.cli import build_parser\np = build_parser()\n"
        "for argv in (['chat', '--project', '.', 'hi'], ['run', '--project', '.'], ['runs', '--project', '.'],\n"
        "             ['export', '--project', '.', '--conversation', 'c'], ['import', '--project', '.', 'f'],\n"
        "             ['validate', 'f'], ['context', '--project', '.', '--conversation', 'c'], ['packages', 'list']):\n"
        "    p.parse_args(argv)\n"
        "print('\\n'.join(sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    imported = set(result.stdout.split())
    assert "crewagent.cli_commands" in imported
    assert _heavy(imported) == []


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


def test_packages_list_runs_headless_without_the_context_tools_or_store(tmp_path: Path) -> None:
    """``crewagent packages list`` in a fresh interpreter: no Qt, and only the package modules it needs."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "crewagent", "packages", "list", "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "project-brief-1.0.0" in result.stdout  # the built-in package was installed and listed
    imported = _imported(result.stderr)
    assert "crewagent.core.packages.loader" in imported and "crewagent.core.agents" in imported
    assert sorted(n for n in imported if any(n == m or n.startswith(m + ".") for m in NOT_FOR_PACKAGES)) == []


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
