"""The index watcher: index.json replaced by rename (as the store writes it) is followed, bursts are announced once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crewagent.core.store._fsutil import atomic_write_json
from crewagent.ui.index_watcher import IndexWatcher
from crewagent.worker.values import ProjectRef


def test_every_atomic_replace_of_the_index_is_announced_and_a_burst_once(qtbot: Any, tmp_path: Path) -> None:
    runtime = tmp_path / "projects" / "proj_1"
    runtime.mkdir(parents=True)
    project = ProjectRef(id="proj_1", name="P", root=str(tmp_path), artifacts_dir=str(tmp_path), runtime_dir=str(runtime))
    index = Path(project.conversation_index)
    # 50 ms instead of 300: the burst below is written before the event loop runs again, so its
    # changes are all read at once however long the writes take
    watcher = IndexWatcher(settle_ms=50)
    announced: list[str] = []
    watcher.changed.connect(announced.append)
    watcher.watch_project(project)  # before the project has any conversation: no folder, no index yet

    index.parent.mkdir()
    with qtbot.waitSignal(watcher.changed):
        atomic_write_json(index, [])
    # A rename over the watched file ends its watch; the next replace must still be seen.
    with qtbot.waitSignal(watcher.changed):
        for count in range(5):  # a burst (a turn, an import): one announcement
            atomic_write_json(index, [{"n": count}])
    with qtbot.waitSignal(watcher.changed):
        atomic_write_json(index, [{"n": 5}])
    assert announced == ["proj_1"] * 3

