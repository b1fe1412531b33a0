#!/usr/bin/env python3
"""Message search benchmark (issue 18, "Search"): today's scan of the logs and the FTS5 index, side by side.

    .venv/bin/python benchmarks/bench_search.py               # 100 MB and 1 GB of logs (the 1 GB
                                                               # generation and first build take minutes)
    .venv/bin/python benchmarks/bench_search.py --quick       # 2 MB: a smoke run for the tests
    .venv/bin/python benchmarks/bench_search.py --sizes 100   # one size, in MB

For each size, a project of 1,000 conversations is generated in a temporary data folder: user
questions, Markdown answers, tool calls and JSON tool results, English with some Chinese, and
marker words planted at known rates (``rare``: about 1 message in 100,000; ``some``: 1 in 1,000;
the common ``the``; a 2-character Chinese word, which trigrams cannot answer and the index
matches with ``instr``; a word no message holds). Logs are written in bulk with the store's own
encoder, then the store catches its index up once.

Printed, as Markdown tables: the machine; per size the first build of the index (time, size on
disk), its first open (``quick_check``) and then, per query, the hits and the p50/max of
``MessageSearch.search`` with the index against the scan (``use_index=False``: the algorithm
search used before the index), both in the same run on the same files. Every search includes
listing the project's conversations and checking each log against the index. A last row
appends one message from outside and searches again (the index catches up with that log).
Results are recorded in docs/benchmarks.md; nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

try:
    import crewagent  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "desktop"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import machine_info  # noqa: E402

from crewagent.core import paths  # noqa: E402
from crewagent.core.messages import ConversationMessage  # noqa: E402
from crewagent.core.search import MessageSearch  # noqa: E402
from crewagent.core.search.index import files_of  # noqa: E402
from crewagent.core.store import RuntimeStore  # noqa: E402
from crewagent.core.store.log import encode_message  # noqa: E402

MS = 1000.0
CONVERSATIONS = 1_000
#: Distinct paragraphs the logs are drawn from; ``--quick`` draws from fewer (its logs are small).
POOL = 3_000
QUICK_POOL = 300
QUERIES = (
    ("rare word", "zanzibarquokka"),
    ("some (1 in 1,000)", "ultramarine lighthouse"),
    ("common word", "the"),
    ("Chinese, 2 chars", "搜索"),
    ("Chinese, 4 chars", "全文检索"),
    ("no hit", "xylophone-nebula"),
)
_WORDS = (
    "the of and to in is that for it as with was on be by this are from at or an not have which but"
    " project file test build index search query model agent tool result message conversation log"
    " python function class value error review release plan budget design layout window theme"
).split()
_CHINESE = "我们 需要 一个 文件 项目 测试 模型 工具 结果 会话 设计 计划 发布 窗口 主题 代码 数据".split()


def _paragraph(rng: random.Random) -> str:
    words = rng.choices(_WORDS, k=rng.randint(12, 90))  # one call, not one per word
    if rng.random() < 0.15:
        words += rng.sample(_CHINESE, 4)
    return " ".join(words).capitalize() + "."


def _planted(rng: random.Random, text: str) -> str:
    roll = rng.random()
    if roll < 0.00001:
        text += " zanzibarquokka"
    if roll < 0.001:
        text += " Ultramarine Lighthouse"
    if rng.random() < 0.002:
        text += " 全文检索"
    if rng.random() < 0.01:
        text += " 搜索"
    return text


def _conversation(rng: random.Random, pool: list[str], target: int) -> list[ConversationMessage]:
    """Messages until their encoded size reaches ``target`` bytes."""
    out: list[ConversationMessage] = []
    size = 0
    turn = 0
    while size < target:
        turn += 1
        batch = [ConversationMessage.new("user", _planted(rng, rng.choice(pool)))]
        if turn % 3 == 0:
            call = {"id": f"call_{turn}", "type": "function", "function": {"name": "fs.read", "arguments": json.dumps({"path": f"@project/doc{turn}.md"})}}
            batch.append(ConversationMessage.new("assistant", "", tool_calls=[call]))
            body = "\n\n".join(_planted(rng, rng.choice(pool)) for _ in range(rng.randint(2, 8)))
            result = ConversationMessage.new("tool", json.dumps({"ok": True, "path": f"@project/doc{turn}.md", "content": body}))
            result.tool_call_id = call["id"]
            batch.append(result)
        answer = "\n\n".join(_planted(rng, rng.choice(pool)) for _ in range(rng.randint(1, 5)))
        batch.append(ConversationMessage.new("assistant", "## Answer\n\n" + answer))
        for message in batch:
            size += len(encode_message(message))
        out.extend(batch)
    return out


def generate(
    root: Path, megabytes: float, conversations: int = CONVERSATIONS, seed: int = 18, pool_size: int = POOL
) -> tuple[RuntimeStore, str, int]:
    """A project of ``conversations`` conversations holding about ``megabytes`` MB of logs."""
    rng = random.Random(seed)
    pool = [_paragraph(rng) for _ in range(pool_size)]
    store = RuntimeStore(root / "data")
    project = store.open_project(root / "project", create=True)
    per = int(megabytes * 1_000_000 / conversations)
    total = 0
    for number in range(conversations):
        meta = store.create_conversation(project.id, title=f"Conversation {number}")
        data = b"".join(encode_message(message) for message in _conversation(rng, pool, per))
        log = store.log_path(project.id, meta.id)
        log.write_bytes(data)
        total += len(data)
    store.list_conversations(project.id)  # the store's index catches up with the bulk-written logs once
    return store, project.id, total


def _times(run: Callable[[], object], repeat: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds of each run (the CPU time shows the cost on a busy machine)."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return wall, cpu


def _index_bytes(store: RuntimeStore, project_id: str) -> int:
    index = paths.search_index_file(paths.project_runtime_dir(store.data_dir, project_id))
    return sum(file.stat().st_size for file in files_of(index) if file.exists())


def _prepared(root: Path, megabytes: float, conversations: int, pool_size: int = POOL) -> tuple[RuntimeStore, str, int, float]:
    """The generated project (reused when ``--keep`` left it in ``root``), its index removed."""
    marker = root / "generated.json"
    if marker.exists():
        saved = json.loads(marker.read_text(encoding="utf-8"))
        store, project_id, total, generated = RuntimeStore(root / "data"), saved["project"], saved["bytes"], saved["seconds"]
    else:
        started = time.perf_counter()
        store, project_id, total = generate(root, megabytes, conversations, pool_size=pool_size)
        generated = time.perf_counter() - started
        marker.write_text(json.dumps({"project": project_id, "bytes": total, "seconds": generated}), encoding="utf-8")
    for file in files_of(paths.search_index_file(paths.project_runtime_dir(store.data_dir, project_id))):
        file.unlink(missing_ok=True)
    return store, project_id, total, generated


def bench_size(
    root: Path, megabytes: float, repeat_index: int, repeat_scan: int, conversations: int = CONVERSATIONS, pool_size: int = POOL
) -> list[str]:
    lines: list[str] = []
    store, project_id, total, generated = _prepared(root, megabytes, conversations, pool_size)
    indexed = MessageSearch(store)
    if not indexed.use_index:
        return ["This Python's SQLite has no FTS5 trigram tokenizer: nothing to compare."]
    start = time.perf_counter()
    indexed.warm(project_id)
    build = time.perf_counter() - start
    indexed.close()
    reopened = MessageSearch(store)
    start = time.perf_counter()
    reopened.warm(project_id)  # opening checks the file (quick_check), then finds every log up to date
    first_open = time.perf_counter() - start
    scan = MessageSearch(store, use_index=False)
    label = f"{total / 1e6:,.0f} MB" if total >= 1e6 else f"{total / 1e6:.2f} MB"  # a smoke run's logs are under 1 MB
    lines.append(f"\n## {label} of logs ({conversations:,} conversations)\n")
    lines.append("| step | value |")
    lines.append("|---|---|")
    lines.append(f"| logs generated in | {generated:.1f} s |")
    lines.append(f"| index: first build | {build:.1f} s ({total / 1e6 / build:.1f} MB/s of logs) |")
    lines.append(f"| index: size on disk | {_index_bytes(store, project_id) / 1e6:,.0f} MB ({_index_bytes(store, project_id) / total:.2f}x the logs) |")
    lines.append(f"| index: first open (quick_check) and up-to-date check | {first_open * MS:,.0f} ms |")
    listing, listing_cpu = _times(lambda: store.list_conversations(project_id), 10)
    lines.append(
        f"| listing the conversations (the store; the scan does it on every search, the index only"
        f" when index.json changed) | p50 {statistics.median(listing) * MS:.1f} ms, CPU {statistics.median(listing_cpu) * MS:.1f} ms |"
    )
    lines.append("")
    lines.append("| logs | query | conversations hit | scan p50 ms | scan CPU ms | index p50 ms | index max ms | index CPU ms | speed-up |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, query in QUERIES:
        hits = reopened.search(project_id, query)
        expected = scan.search(project_id, query)
        if hits != expected:
            raise SystemExit(f"the index and the scan disagree on {query!r}")
        fast, fast_cpu = _times(lambda: reopened.search(project_id, query), repeat_index)  # noqa: B023
        slow, slow_cpu = _times(lambda: scan.search(project_id, query), repeat_scan)  # noqa: B023
        lines.append(
            f"| {label} | {name}: `{query}` | {len(hits)} | {statistics.median(slow) * MS:,.0f} | {statistics.median(slow_cpu) * MS:,.0f} |"
            f" {statistics.median(fast) * MS:.1f} | {max(fast) * MS:.1f} | {statistics.median(fast_cpu) * MS:.1f} |"
            f" {statistics.median(slow) / statistics.median(fast):,.0f}x |"
        )
    # Another process appends to one log: the next search indexes that message before answering.
    metas = store.list_conversations(project_id)
    other = RuntimeStore(store.data_dir)
    samples = []
    for round_ in range(repeat_index):
        other.append_message(project_id, metas[round_ % len(metas)].id, ConversationMessage.new("user", f"late zanzibarquokka {round_}"))
        start = time.perf_counter()
        reopened.search(project_id, "zanzibarquokka")
        samples.append(time.perf_counter() - start)
    lines.append(
        f"| {label} | `zanzibarquokka` after an append by another store | - | - | - |"
        f" {statistics.median(samples) * MS:.1f} | {max(samples) * MS:.1f} | - | - |"
    )
    reopened.close()
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 MB of logs in 50 conversations, few rounds (smoke run)")
    parser.add_argument("--sizes", type=float, nargs="+", help="sizes of logs in MB (default: 100 1000)")
    parser.add_argument("--data-dir", type=Path, help="scratch folder (default: a temporary one, removed afterwards)")
    parser.add_argument("--keep", action="store_true", help="keep the generated logs in --data-dir and reuse them next time")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([2.0] if args.quick else [100.0, 1000.0])
    repeat_index, repeat_scan = (3, 1) if args.quick else (20, 3)
    scratch = args.data_dir or Path(tempfile.mkdtemp(prefix="crewagent-bench-search-"))
    scratch.mkdir(parents=True, exist_ok=True)
    print("# Message search: scan of the logs vs. the FTS5 index\n")
    print("| machine | |")
    print("|---|---|")
    for key, value in machine_info(scratch).items():
        if key != "openai-agents":
            print(f"| {key} | {value} |")
    try:
        for megabytes in sizes:
            folder = scratch / f"{megabytes:g}mb"
            try:
                # A scan of 1 GB takes seconds: once per query is enough to compare.
                scans = 1 if megabytes >= 500 else repeat_scan
                count = 50 if args.quick else CONVERSATIONS
                pool = QUICK_POOL if args.quick else POOL
                print("\n".join(bench_size(folder, megabytes, repeat_index, scans, count, pool)), flush=True)
            finally:
                if not (args.keep and args.data_dir):
                    shutil.rmtree(folder, ignore_errors=True)
    finally:
        if args.data_dir is None:
            shutil.rmtree(scratch, ignore_errors=True)
    print("\nGoal: 1 GB of logs searched in under 50 ms (index p50).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
