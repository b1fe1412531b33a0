"""The package benchmark runs end to end and prints its table; no timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_smoke import run_main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_packages.py"

pytestmark = pytest.mark.slow  # ~1 CPU-s, most of it one `crewagent packages import` process


def test_smoke_run_prints_every_row(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # A small package, one timed run per case and no warm-up: its command-line case still starts
    # `crewagent packages import` as a new process, once (a warm-up made it twice: ~1 CPU-s more).
    out = run_main(BENCH, ["--steps", "5", "--runs", "1", "--warmup", "0"], monkeypatch, capsys)
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| case")]
    names = [row.split("|")[1].strip() for row in rows]
    assert len(names) == 6
    assert any(name.startswith("import .bmad into a fresh data folder") for name in names)
    assert "Machine:" in out and "< 1 s" in out
