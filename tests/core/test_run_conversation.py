"""A conversation's runs (core.runs.conversation): start one, pick one to resume, list them with their live phase."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crewagent.core.errors import RunSetupError
from crewagent.core.packages import PackageStore
from crewagent.core.runs import RunIndex
from crewagent.core.runs.conversation import begin_run, conversation_runs, select_run
from crewagent.core.runs.engine import running_marker
from tests.core.run_helpers import install_notes


def test_begin_run_records_the_run_and_switches_the_conversation_to_run_mode(
    store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    meta = store.create_conversation(project.id, entry_type="agent")
    run = begin_run(store, project, meta.id, package, "notes")
    after = store.get_conversation(project.id, meta.id)
    assert (after.activeType, after.activeRunId, after.packageId) == ("run", run.runId, package.id)
    assert [entry["runId"] for entry in after.workflowRuns] == [run.runId]
    assert after.title == "Run: Notes"  # the placeholder title gives way to the workflow's name
    named = store.create_conversation(project.id, title="My notes", entry_type="run")
    begin_run(store, project, named.id, package, "notes")
    assert store.get_conversation(project.id, named.id).title == "My notes"  # a title the user gave is kept
    (listed,) = conversation_runs(store, project, meta.id, PackageStore(isolated_dirs["data"]))
    assert (listed.run_id, listed.phase, listed.workflow_name, listed.package_installed) == (run.runId, "idle", "Notes", True)
    assert (listed.package_name, listed.package_version) == ("notes", "1.0.0")


def test_conversation_runs_lists_only_this_conversations_runs_with_the_live_phase(
    store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    packages = PackageStore(isolated_dirs["data"])
    mine, other = (store.create_conversation(project.id, entry_type="run") for _ in range(2))
    first = begin_run(store, project, mine.id, package, "notes")
    begin_run(store, project, other.id, package, "notes")
    second = begin_run(store, project, mine.id, package, "notes")
    RunIndex(project.runtime_dir).update(first.runId, phase="completed")
    running_marker(project, second.runId).touch()  # a turn that died: no process holds the conversation
    runs = conversation_runs(store, project, mine.id, packages)
    assert [(r.run_id, r.phase, r.interrupted) for r in runs] == [(first.runId, "completed", False), (second.runId, "idle", True)]


def test_select_run_makes_an_older_run_active_and_refuses_what_cannot_go_on(
    store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    packages = PackageStore(isolated_dirs["data"])
    meta = store.create_conversation(project.id, entry_type="run")
    older = begin_run(store, project, meta.id, package, "notes")
    newer = begin_run(store, project, meta.id, package, "notes")
    store.update_conversation(project.id, meta.id, activeType="agent")

    select_run(store, project, meta.id, older.runId, packages)
    after = store.get_conversation(project.id, meta.id)
    assert (after.activeRunId, after.activeType) == (older.runId, "run")

    RunIndex(project.runtime_dir).update(newer.runId, phase="completed")
    with pytest.raises(RunSetupError, match="complete"):
        select_run(store, project, meta.id, newer.runId, packages)
    elsewhere = store.create_conversation(project.id, entry_type="run")
    with pytest.raises(RunSetupError, match="another conversation"):
        select_run(store, project, elsewhere.id, older.runId, packages)
    with pytest.raises(RunSetupError, match="no run"):
        select_run(store, project, meta.id, "run_nope", packages)
    assert store.get_conversation(project.id, meta.id).activeRunId == older.runId  # nothing changed


def test_a_run_whose_package_is_gone_is_listed_as_such_and_cannot_be_resumed(
    store: Any, project: Any, tmp_path: Path, isolated_dirs: dict[str, Path]
) -> None:
    package = install_notes(isolated_dirs["data"], tmp_path)
    packages = PackageStore(isolated_dirs["data"])
    meta = store.create_conversation(project.id, entry_type="run")
    run = begin_run(store, project, meta.id, package, "notes")
    packages.remove(package.id)
    (listed,) = conversation_runs(store, project, meta.id, packages)
    assert not listed.package_installed and (listed.package_name, listed.package_version) == ("notes", "1.0.0")
    with pytest.raises(RunSetupError, match="notes 1.0.0, which is no longer installed"):
        select_run(store, project, meta.id, run.runId, packages)
