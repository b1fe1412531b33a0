"""The Run-mode benchmark runs end to end (--quick) and prints its table; no timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_run.py"

pytestmark = pytest.mark.slow  # a benchmark in a subprocess: started first under xdist


def test_quick_run_prints_the_side_by_side_table() -> None:
    proc = subprocess.run([sys.executable, "-W", "error", str(BENCH), "--quick", "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data["turns"]) == {"text", "state write"}
    for per_turn in data["turns"].values():
        assert set(per_turn) == {"first", "next"}
        for rows in per_turn.values():
            assert rows["chat"]["n"] == rows["run"]["n"] == 3
            assert "overhead_p50_ms" in rows
    # the run's steps ran in the timed turns: the state was read and parsed in every one
    assert all(steps["p50_ms"]["prepare_run"] > 0 for steps in data["run_steps"].values())
    # the side-by-side steps ran in both kinds of state-write turn: the same durable write in each
    for mode in ("chat", "run"):
        steps = data["side_steps"][f"state write, next, {mode}"]
        assert steps["  of which the durable write (fsync, rename, fsync dir)"] > 0
        assert steps["request build (per call; run: + run context)"] > 0
