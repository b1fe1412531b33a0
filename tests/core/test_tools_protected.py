"""The app's own files (data, settings, keys, conversation logs) are out of every fs tool's reach (issue 15).

The set-ups are the ones of the report: the home folder opened as a project with the default
data and settings folders under it, a ``--data-dir`` inside the project, and symlinks and hard
links to the protected files. Every fs tool is tried on every protected file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from crewagent.core import paths
from crewagent.core.loop.factory import tool_context
from crewagent.core.messages import ConversationMessage
from crewagent.core.search import MessageSearch
from crewagent.core.secrets import SecretStore
from crewagent.core.settings import Settings, SettingsStore
from crewagent.core.store import ProjectInfo, RuntimeStore
from crewagent.core.tools import AutoApprover, ToolContext, default_registry
from crewagent.core.tools.protected import DATA, KEYS, LOGS, SETTINGS, ProtectedAreas
from crewagent.core.tools.results import ErrorCode

SECRET = "sk-protected-7d1f0c2b"
FS_TOOLS = ("fs.list", "fs.read", "fs.search", "fs.write", "fs.apply_patch")


@dataclass
class App:
    """A data folder with two projects, a settings folder and a stored key; ``project`` is the one tools run in."""

    store: RuntimeStore
    project: ProjectInfo
    other: ProjectInfo
    other_log: Path
    other_index: Path
    #: The other project's search index (issue 18): a copy of its logs' text.
    other_search_index: Path
    own_log: Path
    config: Path
    secrets: Path
    settings: Path

    def ctx(self) -> ToolContext:
        settings = SettingsStore(self.config).load()
        return tool_context(self.project, settings, conversation_id="conv_x", approver=AutoApprover(), config_dir=self.config)

    def shown(self, real: Path) -> str:
        return "@project/" + real.relative_to(self.project.root).as_posix()


def make_app(data: Path | None, config: Path | None, project_root: Path, other_root: Path) -> App:
    store = RuntimeStore(data)
    other = store.create_project(other_root, "Other")
    other_conv = store.create_conversation(other.id, title="other")
    store.append_message(other.id, other_conv.id, ConversationMessage.new("user", f"my key is {SECRET}"))
    project = store.create_project(project_root, "Home")
    own_conv = store.create_conversation(project.id, title="own")
    SecretStore(config, use_keyring=False).set("openai", SECRET)
    settings_store = SettingsStore(config)
    settings_store.save(Settings())
    other_log = store.log_path(other.id, other_conv.id)
    search = MessageSearch(store)
    search.warm(other.id)
    search.close()  # SQLite's last checkpoint writes the file: done before the tools' turn
    return App(
        store=store,
        project=project,
        other=other,
        other_log=other_log,
        other_index=other_log.parent.parent / "index.json",
        other_search_index=paths.search_index_file(paths.project_runtime_dir(store.data_dir, other.id)),
        own_log=store.log_path(project.id, own_conv.id),
        config=settings_store.dir,
        secrets=paths.secrets_file(settings_store.dir),
        settings=settings_store.path,
    )


@pytest.fixture
def home_app(isolated_dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> App:
    """The home folder is the project; data and settings are at their platformdirs defaults under it."""
    home = isolated_dirs["home"]
    monkeypatch.delenv(paths.DATA_DIR_ENV)
    monkeypatch.delenv(paths.CONFIG_DIR_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    assert paths.data_dir() == home / ".local" / "share" / "CrewAgent"
    assert paths.config_dir() == home / ".config" / "CrewAgent"
    app = make_app(None, None, home, tmp_path / "elsewhere")
    assert app.secrets.is_relative_to(home) and app.other_log.is_relative_to(home)
    return app


@pytest.fixture
def inner_data_app(isolated_dirs: dict[str, Path], tmp_path: Path) -> App:
    """``--data-dir`` inside the project; the settings folder is the test's own."""
    root = tmp_path / "proj"
    root.mkdir()
    return make_app(root / "appdata", None, root, tmp_path / "elsewhere")


def run(ctx: ToolContext, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = asyncio.run(default_registry().execute(name, json.dumps(args), ctx, call_id="call_1"))
    assert SECRET not in json.dumps(result), (name, args, result)
    return result


def refused(result: dict[str, Any], area: str) -> bool:
    return result["ok"] is False and result["error"]["code"] == ErrorCode.E_SANDBOX_VIOLATION and area in result["error"]["message"]


def attempts(path: str) -> list[tuple[str, dict[str, Any]]]:
    """Every fs tool aimed at one path."""
    return [
        ("fs.read", {"path": path}),
        ("fs.read", {"path": path, "offset": 0, "limit": 100}),
        ("fs.list", {"path": path}),
        ("fs.search", {"query": "sk-", "path": path}),
        ("fs.write", {"path": path, "content": '{"llm": {"baseUrl": "http://evil.example/v1"}}'}),
        ("fs.apply_patch", {"path": path, "replace": [{"old": "{", "new": "{ "}]}),
    ]


def protected_files(app: App) -> list[tuple[Path, str]]:
    return [
        (app.secrets, KEYS),
        (app.settings, SETTINGS),
        (app.other_log, LOGS),
        (app.other_index, LOGS),
        (app.other_search_index, LOGS),
        (app.own_log, LOGS),
        (app.store.data_dir / "projects.json", DATA),
        (app.other_log.parent.parent.parent / "state" / "notes.md", DATA),  # another project's @state
    ]


def assert_untouched(app: App, before: dict[Path, bytes]) -> None:
    for path, data in before.items():
        assert path.read_bytes() == data, path


def snapshot(app: App) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path, _ in protected_files(app) if path.exists()}


@pytest.mark.parametrize("fixture", ["home_app", "inner_data_app"])
def test_every_fs_tool_refuses_every_protected_file(fixture: str, request: pytest.FixtureRequest) -> None:
    app: App = request.getfixturevalue(fixture)
    ctx = app.ctx()
    before = snapshot(app)
    inside = [(real, area) for real, area in protected_files(app) if real.is_relative_to(app.project.root)]
    assert len(inside) >= 5
    for real, area in inside:
        for name, args in attempts(app.shown(real)):
            result = run(ctx, name, args)
            assert refused(result, area), (name, args, result)
        # the folder holding it too
        for name, args in attempts(app.shown(real.parent))[:4]:
            assert run(ctx, name, args)["error"]["code"] == ErrorCode.E_SANDBOX_VIOLATION, (name, args)
    assert_untouched(app, before)
    assert not (app.other_log.parent.parent.parent / "state" / "notes.md").exists()


@pytest.mark.parametrize("fixture", ["home_app", "inner_data_app"])
def test_walkers_skip_the_protected_areas_silently(fixture: str, request: pytest.FixtureRequest) -> None:
    app: App = request.getfixturevalue(fixture)
    (app.project.root / "notes.md").write_text(f"not a key: sk-\n", encoding="utf-8")
    ctx = app.ctx()
    listing = run(ctx, "fs.list", {"recursive": True, "maxEntries": 5000})
    shown = [entry["path"] for entry in listing["entries"]]
    assert "@project/notes.md" in shown
    data_shown = app.shown(app.store.data_dir)
    assert not any(path.startswith(data_shown) for path in shown), shown
    assert not any("CrewAgent" in path for path in shown), shown
    found = run(ctx, "fs.search", {"query": "sk-"})
    assert [m["path"] for m in found["matches"]] == ["@project/notes.md"]
    globbed = run(ctx, "fs.list", {"recursive": True, "glob": "*.json*"})
    assert all(".crewagent.json" in entry["path"] for entry in globbed["entries"]), globbed


def test_the_projects_own_state_stays_usable_through_its_alias(home_app: App) -> None:
    ctx = home_app.ctx()
    assert run(ctx, "fs.write", {"path": "@state/notes.md", "content": "mine\n"})["ok"]
    assert run(ctx, "fs.read", {"path": "@state/notes.md"})["content"] == "mine\n"
    assert [m["path"] for m in run(ctx, "fs.search", {"query": "mine", "path": "@state", "glob": "*.md"})["matches"]] == [
        "@state/notes.md"
    ]
    assert "@state/notes.md" in [e["path"] for e in run(ctx, "fs.list", {"path": "@state"})["entries"]]


def test_symlinks_to_protected_files_are_refused_and_hidden(isolated_dirs: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    app = make_app(None, None, root, tmp_path / "elsewhere")  # data and settings outside the project
    links = {
        "keys.json": app.secrets,
        "cfg": app.config,
        "log.jsonl": app.other_log,
        "convs": app.other_index.parent,
        "data": app.store.data_dir,
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    ctx = app.ctx()
    before = snapshot(app)
    for name in links:
        for tool, args in attempts(name):
            assert run(ctx, tool, args)["error"]["code"] == ErrorCode.E_SANDBOX_VIOLATION, (tool, args)
    for path in ("cfg/settings.json", "convs/index.json", f"data/projects/{app.other.id}/state/x.md"):
        assert run(ctx, "fs.write", {"path": path, "content": "x"})["error"]["code"] == ErrorCode.E_SANDBOX_VIOLATION
    listed = {e["path"] for e in run(ctx, "fs.list", {"recursive": True})["entries"]}
    assert not listed & {f"@project/{name}" for name in links}
    assert run(ctx, "fs.search", {"query": "sk-"})["count"] == 0
    assert_untouched(app, before)


def test_hard_links_to_protected_files_are_refused_and_hidden(isolated_dirs: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    app = make_app(None, None, root, tmp_path / "elsewhere")
    links = {"keys.json": app.secrets, "settings.json": app.settings, "log.jsonl": app.other_log, "index.json": app.other_index}
    for name, target in links.items():
        os.link(target, root / name)
    # an ordinary file with two names stays usable
    (root / "a.md").write_text("plain sk-\n", encoding="utf-8")
    os.link(root / "a.md", root / "b.md")
    ctx = app.ctx()
    before = snapshot(app)
    labels = {"keys.json": KEYS, "settings.json": SETTINGS, "log.jsonl": LOGS, "index.json": LOGS}
    for name, area in labels.items():
        for tool, args in attempts(name):
            result = run(ctx, tool, args)
            assert refused(result, area), (tool, args, result)
    assert run(ctx, "fs.read", {"path": "b.md"})["content"] == "plain sk-\n"
    listed = sorted(e["path"] for e in run(ctx, "fs.list", {})["entries"])
    assert listed == ["@project/.crewagent.json", "@project/a.md", "@project/artifacts", "@project/b.md"]
    assert sorted(m["path"] for m in run(ctx, "fs.search", {"query": "sk-"})["matches"]) == ["@project/a.md", "@project/b.md"]
    assert_untouched(app, before)


def test_a_hard_link_made_after_the_index_was_built_is_seen_once_it_expires(
    isolated_dirs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from crewagent.core.tools import protected

    root = tmp_path / "proj"
    root.mkdir()
    app = make_app(None, None, root, tmp_path / "elsewhere")
    (root / "a.md").write_text("x", encoding="utf-8")
    os.link(root / "a.md", root / "b.md")
    ctx = app.ctx()
    assert run(ctx, "fs.read", {"path": "b.md"})["ok"]  # builds the index
    fresh = app.store.create_conversation(app.other.id, title="new")
    app.store.append_message(app.other.id, fresh.id, ConversationMessage.new("user", SECRET))
    os.link(app.store.log_path(app.other.id, fresh.id), root / "new.jsonl")
    monkeypatch.setattr(protected, "INODE_INDEX_TTL_S", 0.0)
    assert refused(run(ctx, "fs.read", {"path": "new.jsonl"}), LOGS)


def test_defaults_are_protected_even_with_overrides_elsewhere(isolated_dirs: dict[str, Path], tmp_path: Path) -> None:
    """A run with --data-dir and CREWAGENT_CONFIG_DIR elsewhere still protects the default folders."""
    areas = ProtectedAreas.of_app(tmp_path / "custom-data", tmp_path / "custom-config")
    default_data = paths.default_data_dir()
    default_config = paths.default_config_dir()
    assert areas.area_of(Path(os.path.realpath(default_data / "projects.json"))) == DATA
    assert areas.area_of(Path(os.path.realpath(default_config / "settings.json"))) == SETTINGS
    assert areas.area_of(Path(os.path.realpath(default_config / "secrets.json"))) == KEYS
    assert areas.area_of(Path(os.path.realpath(tmp_path / "custom-data" / "projects" / "p" / "conversations"))) == LOGS
    assert areas.area_of(Path(os.path.realpath(tmp_path / "custom-config" / "secrets.json"))) == KEYS
    assert areas.area_of(Path(os.path.realpath(tmp_path / "project" / "a.md"))) is None


def test_a_context_built_without_the_project_still_protects_the_app_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Construction sites that pass no areas get the app's folders (from the environment), not nothing."""
    project = tmp_path / "proj"
    (project / "appdata").mkdir(parents=True)
    (project / "appdata" / "projects.json").write_text("[]", encoding="utf-8")
    monkeypatch.setenv(paths.DATA_DIR_ENV, str(project / "appdata"))
    monkeypatch.setenv(paths.CONFIG_DIR_ENV, str(project / "cfg"))
    ctx = ToolContext(project_root=project)
    assert refused(run(ctx, "fs.read", {"path": "appdata/projects.json"}), DATA)
    assert refused(run(ctx, "fs.write", {"path": "cfg/settings.json", "content": "{}"}), SETTINGS)
    assert refused(run(ctx, "fs.write", {"path": "cfg/secrets.json", "content": "{}"}), KEYS)
    assert not (project / "cfg").exists()


def test_a_settings_folder_passed_by_the_caller_is_protected_and_derived_contexts_keep_it(
    isolated_dirs: dict[str, Path], tmp_path: Path
) -> None:
    """The worker passes its settings folder; a subagent's context (dataclasses.replace) keeps the areas."""
    root = tmp_path / "proj"
    root.mkdir()
    app = make_app(root / "appdata", root / "my-config", root, tmp_path / "elsewhere")
    assert app.config == root / "my-config" and paths.config_dir() != app.config
    ctx = app.ctx()
    child = dataclasses.replace(ctx, run_id="run_1")
    for context in (ctx, child):
        assert refused(run(context, "fs.read", {"path": "my-config/secrets.json"}), KEYS)
        assert refused(run(context, "fs.write", {"path": "my-config/settings.json", "content": "{}"}), SETTINGS)
        assert refused(run(context, "fs.read", {"path": app.shown(app.other_log)}), LOGS)
        assert run(context, "fs.write", {"path": "@state/ok.md", "content": "fine"})["ok"]


def test_a_later_tool_checks_host_paths_with_the_same_rules(home_app: App, tmp_path: Path) -> None:
    """An MCP or command tool gets host paths, not aliases: refuse_protected applies the areas to them."""
    from crewagent.core.tools.sandbox import SandboxViolation

    sandbox = home_app.ctx().sandbox
    for path, area in ((home_app.secrets, KEYS), (home_app.settings.parent, SETTINGS), (home_app.other_index, LOGS)):
        with pytest.raises(SandboxViolation, match=area):
            sandbox.refuse_protected(path)
    os.symlink(home_app.secrets, tmp_path / "k")
    with pytest.raises(SandboxViolation, match=KEYS):
        sandbox.refuse_protected(tmp_path / "k")
    sandbox.refuse_protected(tmp_path)  # anything else is the tool's own business
    sandbox.refuse_protected(home_app.store.state_dir(home_app.project.id))
