"""Where CrewAgent keeps its data and settings: the one place paths are decided."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "CrewAgent"
DATA_DIR_ENV = "CREWAGENT_DATA_DIR"
CONFIG_DIR_ENV = "CREWAGENT_CONFIG_DIR"
SECRETS_FILE = "secrets.json"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The runtime data root: ``--data-dir``, else ``$CREWAGENT_DATA_DIR``, else the OS default."""
    if override:
        return Path(override).expanduser().resolve()
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The settings folder: ``$CREWAGENT_CONFIG_DIR`` or the OS default."""
    if override:
        return Path(override).expanduser().resolve()
    env = os.environ.get(CONFIG_DIR_ENV)
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def default_data_dir() -> Path:
    """The OS default data root, whatever the overrides say (the sandbox protects it too)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_config_dir() -> Path:
    """The OS default settings folder, whatever the overrides say (the sandbox protects it too)."""
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def secrets_file(config: Path) -> Path:
    """The keyring fallback file of a settings folder (core/secrets.py)."""
    return config / SECRETS_FILE


def projects_file(root: Path) -> Path:
    return root / "projects.json"


def projects_lock_file(root: Path) -> Path:
    """Held while ``projects.json`` is read-modified-written."""
    return root / ".projects.lock"


def project_runtime_dir(root: Path, project_id: str) -> Path:
    """A project's folder under the data root (``<data>/projects/<projectId>``)."""
    return root / "projects" / project_id


def project_lock_file(runtime_dir: Path) -> Path:
    """Held while a project's conversation index and logs are written."""
    return runtime_dir / ".lock"


def data_root_of_runtime(runtime_dir: Path) -> Path:
    """The data root a project runtime folder belongs to (the inverse of ``project_runtime_dir``)."""
    return runtime_dir.parent.parent


def conversations_dir(runtime_dir: Path) -> Path:
    """A project's conversation logs and their index (no tool may reach them)."""
    return runtime_dir / "conversations"


def conversation_dir(runtime_dir: Path, conversation_id: str) -> Path:
    return conversations_dir(runtime_dir) / conversation_id


#: A project's derived search index (search/index.py): rebuilt from the logs whenever it is
#: missing or damaged; it holds the logs' text, so no tool may reach it either.
SEARCH_SUBDIR = "search"


def search_index_file(runtime_dir: Path) -> Path:
    """A project's full-text index of its conversation logs (``<data>/projects/<id>/search/``)."""
    return runtime_dir / SEARCH_SUBDIR / "messages.sqlite3"


def state_dir(runtime_dir: Path) -> Path:
    """A project's ``@state`` folder."""
    return runtime_dir / "state"


#: Offloaded tool outputs, under ``@state`` (store/offload.py names them by this alias too).
TOOL_RESULTS_SUBDIR = "logs/tool-results"


def tool_results_dir(state: Path, conversation_stem: str) -> Path:
    """Where a conversation's offloaded tool outputs go (``stem``: the conversation id made file-safe)."""
    return state / TOOL_RESULTS_SUBDIR / conversation_stem


def runs_dir(runtime_dir: Path) -> Path:
    """A project's run index and the markers of running runs."""
    return runtime_dir / "runs"


def run_state_dir(state: Path, run_id: str) -> Path:
    """A run's folder under ``@state`` (its workflow.md, its execution log)."""
    return state / "runs" / run_id


def packages_dir(root: Path) -> Path:
    """Installed workflow packages, one folder per package id (mounted read-only as @pkg)."""
    return root / "packages"
