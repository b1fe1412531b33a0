"""The LLM adapter benchmark runs end to end (--quick) and prints its tables; no timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench_smoke import run_main

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_llm.py"

pytestmark = pytest.mark.slow  # a benchmark in a subprocess: started first under xdist


def _run(*extra: str) -> str:
    proc = subprocess.run([sys.executable, "-W", "error", str(BENCH), "--quick", *extra], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_quick_run_prints_both_tables() -> None:
    out = _run()
    assert "## 1. First byte -> first TextDelta" in out and "## 2. Per-turn time" in out
    names = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ")]
    assert "adapter: first byte -> first TextDelta" in names
    for kind in ("text", "tools"):
        assert f"raw httpx2 round trip ({kind})" in names
        assert f"LlmAdapter.stream to Completed ({kind})" in names
        assert f"**overhead: adapter - raw httpx2 ({kind})**" in names
    assert "Goal first byte -> first TextDelta < 2 ms" in out and "Goal per-turn overhead < 5 ms" in out


def test_json_output(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(run_main(BENCH, ["--quick", "--json", "--rounds", "3"], monkeypatch, capsys))
    assert data["rounds"] == 3
    assert data["first_byte"][0]["n"] == 3
    assert set(data["turns"]) == {"text", "tools"}
