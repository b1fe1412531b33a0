"""The desktop UI benchmark runs end to end (--smoke) and prints its tables; no timing is asserted.

--smoke only proves each section runs: the smallest sizes, no baseline app in section 4, every
section's child in the script's own process (and its model servers in threads of it, section 4's
outside state writes made by it), and section 3's `crewagent gui` forked from it.
Sections 1, 2 and 4 run their ``main()`` in the test process (its QApplication), as the other
benchmarks' smoke tests do: a fresh interpreter would import Qt and the app again (~2.5 CPU-s).
Section 3, the cold start, is about a fresh process: it runs as the benchmark is run by hand,
``python benchmarks/bench_ui.py --smoke --only cold``, which is also the proof that the script
runs on its own with one command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from tests.bench_smoke import run_main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_ui.py"

pytestmark = pytest.mark.slow  # a benchmark's windows, and one in a subprocess: started first under xdist


def _keep_what_the_children_patch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The children time the app's methods by replacing them on their classes (in a child process,
    for its whole life): here, each is put back after the test (monkeypatch restores what it set)."""
    import crewagent.core.turns as turns_module
    from crewagent.core.turn_host import TurnHost
    from crewagent.ui.conversation_view import ConversationView
    from crewagent.ui.run_workspace.panel import RunWorkspace

    for owner, names in ((TurnHost, ("_first_page", "_recovered")), (ConversationView, ("on_loaded",)),
                         (RunWorkspace, ("_show", "on_run_progress", "_fill_slice")), (turns_module, ("default_registry",))):
        for name in names:
            monkeypatch.setattr(owner, name, vars(owner)[name])


def test_smoke_run_prints_every_section(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _keep_what_the_children_patch(monkeypatch)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the scratch folder, to check it is removed
    argv = ["--smoke", "--json", "--only", "open", "--only", "latency", "--only", "run"]
    out = run_main(BENCH, argv, monkeypatch, capsys)
    for heading in ("## 1. Open a 160-message conversation", "## 2a. GUI event-loop latency", "## 2b. GUI event-loop latency",
                    "## 4. Run workspace"):
        assert heading in out
    for goal in ("last page in under 300 ms", "process memory under 400 MB", "never blocks longer than 50 ms",
                 "layout under 200 ms, off the GUI thread", "progress reaches the panel within 100 ms",
                 "GUI p99 latency under 50 ms while a run streams"):
        assert goal in out
    assert "| CPUs (nproc)" in out and "| Qt / PySide6" in out
    results = json.loads(out.strip().splitlines()[-1])
    rounds = results["open"]["rounds"]
    assert len(rounds) == 2 and all(r["total"] > 0 for r in rounds)
    assert results["open"]["reached_top"] and results["open"]["page_steps"]
    for variant in ("tool", "fs_write"):
        assert results["latency"][variant]["chunks"] > 0 and results["latency"][variant]["lateness_ms"]
    assert results["latency"]["tool"]["outcomes"] == {"visible": "completed", "other": "completed"}
    run = results["run"]
    assert run["engine_writes"] == 2 and len(run["engine_delays"]) == 2 and len(run["external_delays"]) == 2
    assert run["loader_layouts"] and all(thread != "MainThread" for _ms, thread in run["loader_layouts"])
    # Scratch data is removed afterwards.
    assert not any(tmp_path.glob("crewagent-bench-ui-*"))


def test_the_script_runs_on_its_own_and_times_a_cold_start(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--json", "--only", "cold"], capture_output=True, text=True, timeout=600, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "## 3. Cold start" in out and "cold start under 1.5 s" in out
    assert "| CPUs (nproc)" in out and "| Qt / PySide6" in out
    results = json.loads(out.strip().splitlines()[-1])
    assert results["cold"] and results["cold"][0]["works_rows"] == 3
    # Scratch data is removed afterwards.
    assert not any(tmp_path.glob("crewagent-bench-ui-*"))


def test_the_output_viewer_benchmark_runs_and_prints_its_table(
    qapp: QApplication, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # In the test process (its QApplication): the script makes no app of its own when one exists.
    out = run_main(BENCH.with_name("bench_output_viewer.py"), ["--megabytes", "0.2"], monkeypatch, capsys)
    assert "| step | first text shown (ms) | fully loaded (s) | longest GUI stall (ms) | first search (ms) |" in out
    assert "| viewer, wrap on |" in out and "| viewer, wrap off |" in out


def test_a_child_run_in_this_process_leaves_the_keyring_backend_as_it_found_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child's PYTHON_KEYRING_BACKEND (the null keyring) is chosen by keyring once per process: run
    in the test process (--smoke), it stayed the backend of every later test on that worker, and a
    test of the keyring-less fallback then saw a "secure" keyring (found by a clean-clone CI run)."""
    import keyring
    import keyring.core
    from keyring.backends import null

    from tests.bench_smoke import load_script

    bench_ui = load_script(BENCH, monkeypatch)
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)  # not chosen yet, as in a fresh worker
    env = {"PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    seen = bench_ui.run_here(lambda payload: {"backend": type(keyring.get_keyring()).__module__}, {}, env)
    assert seen == {"backend": null.Keyring.__module__}  # the child had its own backend
    assert not isinstance(keyring.get_keyring(), null.Keyring)  # and this process has its own again
