"""The scaling benchmark runs end to end (--smoke: 20 and 200 messages) and prints its table; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from tests.bench_smoke import run_main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_scaling.py"

pytestmark = pytest.mark.slow  # ~3-4 CPU-s (a window, two search indexes): started first under xdist


def test_smoke_run_prints_the_table_its_growth_and_the_verdict(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The window is a real MainWindow with its worker thread, in this process (--smoke).
    out = run_main(BENCH, ["--smoke", "--json", "--data-dir", str(tmp_path / "bench")], monkeypatch, capsys)
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("| messages"))
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    assert columns[:3] == ["messages", "log MB", "append p50 (ms)"]
    for title in ("load, CPU (ms)", "load memory / file (x file)", "context build, CPU (ms)", "window: last page (ms)",
                  "search, index, CPU (ms)", "search, no index, CPU (ms)", "window RSS MB (peak), 1st open", "after 1 opens"):
        assert title in columns
    rows = [line for line in lines[: lines.index(header) + 4] if line.startswith(("| 20 ", "| 200 "))]
    assert len(rows) == 2 and all(len(row.strip("|").split("|")) == len(columns) for row in rows)
    # Two rounds interleaved between the sizes: the cold first one shown apart, the figure from the other.
    cold = next(i for i, line in enumerate(lines) if line.startswith("| messages, 1st round"))
    assert [line.split("|")[1].strip() for line in lines[cold + 2: cold + 4]] == ["20", "200"]
    growth = [line for line in lines if line.startswith("| ") and "20 -> 200" not in line and "not judged" in line]
    assert len(growth) == 8  # one growth factor per cost, each with its verdict
    assert any(line.startswith("issue 14 · scaling at 10^2: not judged (--quick)") for line in lines)
    results = json.loads(lines[-1])["rows"]
    assert set(results) == {"20", "200"}
    assert [results[size]["round_places"] for size in ("20", "200")] == [[0, 1], [1, 0]]  # smallest first, then largest
    assert all(len(row["load_rounds_s"]) == len(row["index_build_rounds_s"]) == 2 and row["load_s"] == row["load_rounds_s"][1]
               and row["load_cold_s"] == row["load_rounds_s"][0] for row in results.values())
    assert all(row["open_ms"] and row["hwm_mb"] > 0 and row["hwm_after_opens_mb"] > 0 and row["append_s"] > 0
               for row in results.values())
    assert not any((tmp_path / "bench").iterdir())  # the scratch folder is removed
