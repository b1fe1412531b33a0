"""The Run-mode benchmark runs end to end (--quick) and prints its table; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench_smoke import run_main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_run.py"


def test_quick_run_prints_the_side_by_side_table(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # One round: the smoke run proves every row and goal is printed; its figures mean nothing.
    data = json.loads(run_main(BENCH, ["--quick", "--rounds", "1", "--json"], monkeypatch, capsys))
    assert set(data["turns"]) == {"text", "state write"}
    for per_turn in data["turns"].values():
        assert set(per_turn) == {"first", "next"}
        for rows in per_turn.values():
            assert rows["chat"]["n"] == rows["run"]["n"] == 1
            assert "overhead_p50_ms" in rows
    # the run's steps ran in the timed turns: the state was read and parsed in every one
    assert all(steps["p50_ms"]["prepare_run"] > 0 for steps in data["run_steps"].values())
    # the side-by-side steps ran in both kinds of state-write turn: the same durable write in each
    for mode in ("chat", "run"):
        steps = data["side_steps"][f"state write, next, {mode}"]
        assert steps["  of which the durable write (fsync, rename, fsync dir)"] > 0
        assert steps["request build (per call; run: + run context)"] > 0
