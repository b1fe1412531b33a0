"""The after-every-test export check (tests/export_check.py) looks at the right store and project."""

from __future__ import annotations

from pathlib import Path

from crewagent.core.store import RuntimeStore
from tests.export_check import _logs


def test_each_log_is_found_with_its_own_data_folder_and_project(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = RuntimeStore(data)
    project = store.create_project(tmp_path / "folder", "P")
    conversation = store.create_conversation(project.id, title="t")
    found = list(_logs(tmp_path))
    assert [(d, p) for d, _log, p in found] == [(data, project.id)]
    assert found[0][1].parent.name == conversation.id
