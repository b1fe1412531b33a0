"""`crewagent gui --self-test` drives the real window through a demo turn and checks it on disk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow  # a real GUI process: started first under xdist
def test_self_test_passes_in_a_real_process(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    project = tmp_path / "project"
    result = subprocess.run(
        [sys.executable, "-m", "crewagent", "gui", "--self-test", "--project", str(project), "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "self-test passed" in result.stdout
    assert "turn finished ✓" in result.stderr
    # The turn is really on disk, where the check found it.
    logs = list((tmp_path / "d").glob("projects/*/conversations/*/messages.jsonl"))
    assert len(logs) == 1 and '"fs.list"' in logs[0].read_text(encoding="utf-8")


def test_self_test_fails_when_the_turn_is_not_persisted(tmp_path: Path) -> None:
    from crewagent.core.self_check import check_demo_turn
    from crewagent.core.store import RuntimeStore

    store = RuntimeStore(tmp_path / "d")
    project = store.create_project(tmp_path / "p", "p")
    store.create_conversation(project.id, title="empty")
    problems = check_demo_turn(store, tmp_path / "p")
    assert any("user message" in p for p in problems)
    assert any("tool result" in p for p in problems)
