"""The tool loop benchmark runs end to end (--quick) and prints its tables; no timing is asserted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.bench_smoke import run_once_with_json

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_loop.py"

# One run in the test process (its tables and its JSON file) for both tests: one worker makes it.
pytestmark = pytest.mark.xdist_group("bench_loop_smoke")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    # One round: the smoke run proves every row and goal is printed; its figures mean nothing.
    return run_once_with_json(BENCH, ["--quick", "--rounds", "1"], tmp_path_factory.mktemp("bench_loop"))


def test_quick_run_prints_both_tables(quick_run: tuple[str, dict[str, Any]]) -> None:
    out, _data = quick_run
    assert "## 1. First byte -> first TextDelta event" in out and "## 2. Per-turn time" in out
    names = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ")]
    assert "session, in-memory store: first byte -> first TextDelta event" in names
    for kind in ("text", "tools"):
        assert f"session turn, in-memory store ({kind})" in names
        assert f"session turn, RuntimeStore with fsync ({kind})" in names
        assert f"**loop overhead: in-memory session - raw ({kind})**" in names
        assert f"persistence: RuntimeStore - in-memory ({kind})" in names
        assert f"of which the loop: in-memory session - adapter alone ({kind})" in names
    assert "Goal first byte -> first TextDelta event < 2 ms" in out and "Goal loop overhead per turn < 5 ms" in out


def test_json_output(quick_run: tuple[str, dict[str, Any]]) -> None:
    _out, data = quick_run
    assert data["rounds"] == 1
    assert [row["n"] for row in data["first_byte"]] == [1, 1]
    assert set(data["turns"]) == {"text", "tools"}
    assert len(data["request_bytes"]["tools"]) == 2  # a tool turn is two model calls
    for rows in data["turns"].values():
        assert rows["memory"]["n"] == rows["disk"]["n"] == rows["raw"]["n"] == rows["adapter"]["n"] == 1
