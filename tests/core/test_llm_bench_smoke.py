"""The LLM adapter benchmark runs end to end (--quick) and prints its tables; no timing is asserted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.bench_smoke import run_once_with_json

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_llm.py"

# One run in the test process (its tables and its JSON file) for both tests: one worker makes it.
pytestmark = pytest.mark.xdist_group("bench_llm_smoke")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    # One round: the smoke run proves every row and goal is printed; its figures mean nothing.
    return run_once_with_json(BENCH, ["--quick", "--rounds", "1"], tmp_path_factory.mktemp("bench_llm"))


def test_quick_run_prints_both_tables(quick_run: tuple[str, dict[str, Any]]) -> None:
    out, _data = quick_run
    assert "## 1. First byte -> first TextDelta" in out and "## 2. Per-turn time" in out
    names = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ")]
    assert "adapter: first byte -> first TextDelta" in names
    for kind in ("text", "tools"):
        assert f"raw httpx2 round trip ({kind})" in names
        assert f"LlmAdapter.stream to Completed ({kind})" in names
        assert f"**overhead: adapter - raw httpx2 ({kind})**" in names
    assert "Goal first byte -> first TextDelta < 2 ms" in out and "Goal per-turn overhead < 5 ms" in out


def test_json_output(quick_run: tuple[str, dict[str, Any]]) -> None:
    _out, data = quick_run
    assert data["rounds"] == 1
    assert data["first_byte"][0]["n"] == 1
    assert set(data["turns"]) == {"text", "tools"}
