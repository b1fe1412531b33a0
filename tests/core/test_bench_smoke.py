"""The store benchmark runs end to end (--smoke: --quick's sizes, and its RSS probe in the test
process instead of a new interpreter) and prints its tables; no timing is asserted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench_smoke import load_script, run_once

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_store.py"

# One run in the test process (its tables and its JSON file) for both tests: one worker makes it.
pytestmark = pytest.mark.xdist_group("bench_store_smoke")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any], Path]:
    tmp_path = tmp_path_factory.mktemp("bench_store")
    out = run_once(BENCH, ["--smoke", "--data-dir", str(tmp_path / "bench"), "--json-file", str(tmp_path / "results.json")])
    return out, json.loads((tmp_path / "results.json").read_text(encoding="utf-8")), tmp_path


def test_quick_run_prints_every_table_row(quick_run: tuple[str, dict[str, Any], Path]) -> None:
    out, _data, tmp_path = quick_run
    for heading in ("## 1. Append latency", "## 2. Side by side", "## 3. Load"):
        assert heading in out
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    names = [row.split("|")[1].strip() for row in rows]
    assert names.count("this store") == 4  # two in section 1, two in section 2
    assert names.count("original design (rewrite messages.json)") == 2
    assert names.count("openai-agents SQLiteSession.add_items") == 2  # measured, or marked skipped
    assert names.count("this store via asyncio.to_thread") == 2
    assert names.count("bare write + fdatasync (floor)") == 4  # issue 14's baseline, sections 1 and 2
    assert "issue 14 · appends: not judged (--quick)" in out
    assert any(row.startswith("| data dir filesystem (df -T)") for row in rows)
    assert "p50 ms" in out and "p99 ms" in out and "mean ms" in out
    assert "tracemalloc peak MB" in out and "MB/s" in out
    assert "peak RSS delta MB (VmHWM)" in out  # the probe ran (in this process: its figure means nothing)
    for goal in ("within 2x", ">= 20x", "load < 0.5 s", "peak memory < 3x"):
        assert goal in out
    # Scratch data is removed afterwards.
    assert not any((tmp_path / "bench").iterdir())


def test_quick_run_json(quick_run: tuple[str, dict[str, Any], Path]) -> None:
    _out, data, _tmp_path = quick_run
    assert data["quick"] is True
    scaling = data["append_scaling"]["rows"]
    assert [row["existing"] for row in scaling] == [10, 200]
    assert all(row["n"] > 0 and row["p50_ms"] > 0 for row in scaling)
    assert [row["existing"] for row in data["append_scaling"]["floor_rows"]] == [10, 200]
    side = {(row["name"], row["existing"]) for row in data["side_by_side"]["rows"]}
    assert ("original design (rewrite messages.json)", 200) in side
    load = data["load"]
    assert load["messages"] == 200 and load["file_bytes"] > 0 and load["tracemalloc_peak_bytes"] > 0
    assert load["rss_source"] == "VmHWM" and load["rss_delta_bytes"] >= 0


def test_side_by_side_is_fair_to_the_bare_floor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14's baseline: the same line each round, a file of the same size, no fixed neighbour.

    A disk that discards freed blocks makes whoever follows the original design's rename-over pay
    for it; with a fixed order that was always this store, never the bare floor.
    """
    bench = load_script(BENCH, monkeypatch)
    calls: list[tuple[str, str]] = []

    def contender(name: str) -> Any:
        return bench.Contender(bench.Latency(name, 0), lambda message: calls.append((name, message.id)))

    names = ["store", "bare", "original", "sqlite"]
    cfg = bench.QUICK.__class__(**{**bench.QUICK.__dict__, "appends": 40})
    asyncio.run(bench._run_side_by_side(cfg, [contender(name) for name in names], 0))

    rounds = [calls[i : i + len(names)] for i in range(0, len(calls), len(names))]
    assert len(rounds) == 40
    assert all(len({message_id for _, message_id in round_}) == 1 for round_ in rounds)  # one line per round
    followers = {name: {b for (a, _), (b, _) in zip(calls, calls[1:]) if a == name} for name in names}
    assert all(followers[name] >= set(names) - {name} for name in ("original", "store")), followers

    log = tmp_path / "messages.jsonl"
    log.write_bytes(b'{"a": 1}\n' * 1000)
    bare = bench.BareAppend(tmp_path / "bare.jsonl", prefill=log)
    try:
        bare.append(b'{"b": 2}\n')
    finally:
        bare.close()
    assert (tmp_path / "bare.jsonl").stat().st_size == log.stat().st_size + 9
