"""The context benchmark runs end to end (--quick) and every build it makes is valid; no timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_smoke import run_main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_context.py"


def test_quick_run_prints_the_tables_and_our_builds_never_fail(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_main(BENCH, ["--quick", "--messages", "300"], monkeypatch, capsys)
    assert "## 1. Build the context" in out and "## 2. Side by side" in out
    rows = [line.split("|") for line in out.splitlines() if line.startswith("| defaults")]
    assert len(rows) == 4 and all(row[-2].strip() == "yes" for row in rows)
    ours = [line.split("|") for line in out.splitlines() if line.startswith("| CrewAgent")]
    assert all(row[4].strip().startswith("0 /") for row in ours)
