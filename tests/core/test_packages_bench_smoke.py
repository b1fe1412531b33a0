"""The package benchmark runs end to end and prints its table; no timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_smoke import run_main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_packages.py"


def test_smoke_run_prints_every_row(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # A small package, one timed run per case and no warm-up, and the command-line case's
    # `crewagent packages import` run in this process: a new interpreter was ~0.5 CPU-s of its ~0.8.
    out = run_main(BENCH, ["--smoke"], monkeypatch, capsys)
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| case")]
    names = [row.split("|")[1].strip() for row in rows]
    assert len(names) == 6
    assert any(name.startswith("import .bmad into a fresh data folder") for name in names)
    assert "`crewagent packages import` in this process (--smoke)" in names
    assert "Machine:" in out and "< 1 s" in out
