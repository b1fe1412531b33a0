"""The scaling benchmark runs end to end (--quick: 10^2 and 10^3 messages) and prints its table; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench_smoke import run_main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_scaling.py"

# Not cheap: the window is a real MainWindow in a child process (an interpreter, Qt and the app),
# and each size builds a search index: several CPU-seconds, so it starts first under xdist.
pytestmark = pytest.mark.slow


def test_quick_run_prints_the_table_its_growth_and_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run_main(BENCH, ["--quick", "--json", "--data-dir", str(tmp_path / "bench")], monkeypatch, capsys)
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("| messages"))
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    assert columns[:3] == ["messages", "log MB", "append p50 (ms)"]
    for title in ("load, CPU (ms)", "load memory / file (x file)", "context build, CPU (ms)", "window: last page (ms)",
                  "search, index, CPU (ms)", "search, no index, CPU (ms)", "window RSS MB (peak), 1st open", "after 1 opens"):
        assert title in columns
    rows = [line for line in lines if line.startswith(("| 100 ", "| 1,000 "))]
    assert len(rows) == 2 and all(len(row.strip("|").split("|")) == len(columns) for row in rows)
    growth = [line for line in lines if line.startswith("| ") and "100 -> 1,000" not in line and "not judged" in line]
    assert len(growth) == 8  # one growth factor per cost, each with its verdict
    assert any(line.startswith("issue 14 · scaling at 10^3: not judged (--quick)") for line in lines)
    results = json.loads(lines[-1])["rows"]
    assert set(results) == {"100", "1000"}
    assert all(row["open_ms"] and row["hwm_mb"] > 0 and row["hwm_after_opens_mb"] > 0 and row["append_s"] > 0
               for row in results.values())
    assert not any((tmp_path / "bench").iterdir())  # the scratch folder is removed
