"""runs_using: which runs of which projects use a package, found without creating anything in projects that have none."""

from __future__ import annotations

from pathlib import Path

from crewagent.core.runs.usage import runs_using
from crewagent.core.store import RuntimeStore
from tests.core.run_helpers import install_notes, start_run


def test_runs_using_finds_the_runs_of_a_package_in_every_project(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = RuntimeStore(data)
    old, new = install_notes(data, tmp_path, version="1.0.0"), install_notes(data, tmp_path, version="2.0.0")
    travel = store.create_project(tmp_path / "travel", "Travel Guide")
    recipes = store.create_project(tmp_path / "recipes", "Recipes")
    idle = store.create_project(tmp_path / "idle", "Idle")
    first, _other = start_run(store, travel, old), start_run(store, travel, new)
    second = start_run(store, recipes, old)

    uses = runs_using(data, old.id)

    assert sorted((use.project_name, use.run.runId) for use in uses) == sorted(
        [("Travel Guide", first.runId), ("Recipes", second.runId)]
    )
    assert runs_using(data, "nothing-1.0.0") == []
    assert not (idle.runtime_dir / "runs").exists()  # a project without runs is not touched


def test_a_damaged_run_index_is_skipped_not_raised(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = RuntimeStore(data)
    package = install_notes(data, tmp_path)
    good, bad = store.create_project(tmp_path / "good", "Good"), store.create_project(tmp_path / "bad", "Bad")
    run = start_run(store, good, package)
    (bad.runtime_dir / "runs").mkdir(parents=True)
    (bad.runtime_dir / "runs" / "index.json").write_text("{torn", encoding="utf-8")

    assert [use.run.runId for use in runs_using(data, package.id)] == [run.runId]
