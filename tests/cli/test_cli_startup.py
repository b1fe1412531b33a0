"""Starting the command line is cheap: the parser is built from light modules, each command imports its own.

``crewagent --help`` (and every test that starts a ``crewagent`` process) used to spend about a
second importing the store, the export, the loop, the tools, pydantic and the OpenAI client.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

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


@pytest.mark.parametrize("argv", [["--help"], ["chat", "--help"], ["run", "--help"], ["packages", "list", "--help"]])
def test_help_imports_none_of_the_app(argv: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "crewagent", *argv], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage: crewagent" in result.stdout
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
