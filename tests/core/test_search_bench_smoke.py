"""The search benchmark runs end to end (--quick) and prints its tables; no timing is asserted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.bench_smoke import run_main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_search.py"


def test_quick_run_compares_the_scan_and_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # --quick's rounds (and its smaller paragraph pool) on a quarter of a MB of logs: the same rows as
    # its 2 MB, for an eighth of the generating, indexing and scanning
    out = run_main(BENCH, ["--quick", "--sizes", "0.25", "--data-dir", str(tmp_path / "bench")], monkeypatch, capsys)
    assert "| machine |" in out and "| sqlite |" in out
    assert "index: first build" in out and "index: size on disk" in out
    rows = [line for line in out.splitlines() if re.match(r"\| 0\.\d\d MB \|", line)]  # under 1 MB: two decimals
    assert len(rows) == 7  # six queries and the append by another store
    assert any("Chinese, 2 chars" in row for row in rows)
    assert "scan p50 ms" in out and "index p50 ms" in out and "speed-up" in out
    assert not any((tmp_path / "bench").iterdir())  # scratch data removed
