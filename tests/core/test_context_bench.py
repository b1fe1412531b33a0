"""The context benchmark runs end to end (--quick) and every build it makes is valid; no timing is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_context.py"

pytestmark = pytest.mark.slow  # a benchmark in a subprocess: started first under xdist


def test_quick_run_prints_the_tables_and_our_builds_never_fail() -> None:
    proc = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "## 1. Build the context" in out and "## 2. Side by side" in out
    rows = [line.split("|") for line in out.splitlines() if line.startswith("| defaults")]
    assert len(rows) == 4 and all(row[-2].strip() == "yes" for row in rows)
    ours = [line.split("|") for line in out.splitlines() if line.startswith("| CrewAgent")]
    assert all(row[4].strip().startswith("0 /") for row in ours)
