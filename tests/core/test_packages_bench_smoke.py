"""The package benchmark runs end to end (--quick) and prints its table; no timing is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_packages.py"

pytestmark = pytest.mark.slow  # a benchmark in a subprocess: started first under xdist


def test_quick_run_prints_every_row() -> None:
    proc = subprocess.run([sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and not line.startswith("| case")]
    names = [row.split("|")[1].strip() for row in rows]
    assert len(names) == 6
    assert any(name.startswith("import .bmad into a fresh data folder") for name in names)
    assert "Machine:" in proc.stdout and "< 1 s" in proc.stdout
