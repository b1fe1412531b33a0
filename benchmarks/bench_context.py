"""Benchmark: the context builder on a 10,000-message conversation, beside langchain-core's trim_messages.

Run: ``.venv/bin/python benchmarks/bench_context.py`` (``--quick`` for a small smoke run).
langchain-core is a benchmark-only dependency (``pip install -e '.[bench]'``); without it the
comparison rows are skipped. Prints markdown tables; record them in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "desktop"))

from crewagent.core.context import ContextBudget, build_llm_messages, default_counter  # noqa: E402
from crewagent.core.context.tokens import TOKENS_PER_REPLY, TokenCounter, message_tokens  # noqa: E402
from crewagent.core.messages import ConversationMessage, to_openai  # noqa: E402
from crewagent.core.protocol import DOTTED_FUNCTION_NAME, first_error  # noqa: E402

WORDS = "the file reads config path value check build test run step output error ok list node".split()


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(lo, hi)))  # one call, not one per word


def make_conversation(n: int, seed: int, *, corrupt: bool) -> list[ConversationMessage]:
    """A log of ``n`` messages: user turns, tool groups of 1-3 calls, answers, some large results.

    ``corrupt`` adds what crashes and old builds leave behind: calls without results (about
    one group in 40), orphan results and answers repeated after their block.
    """
    rng = random.Random(seed)
    out: list[ConversationMessage] = []
    k = 0

    def add(role: str, content: Any, **fields: Any) -> None:
        nonlocal k
        k += 1
        out.append(ConversationMessage(id=f"m{k}", createdAt="2026-01-01T00:00:00.000Z", role=role, content=content, **fields))  # type: ignore[arg-type]

    while len(out) < n:
        add("user", _text(rng, 5, 80))
        for _ in range(rng.randint(0, 3)):
            ids = [f"call_{k}_{j}" for j in range(rng.randint(1, 3))]
            calls = [{"id": i, "type": "function", "function": {"name": rng.choice(["fs.read", "fs.write", "fs.list"]), "arguments": '{"path": "@project/src/%d.md"}' % k}} for i in ids]
            add("assistant", rng.choice([None, _text(rng, 3, 20)]), tool_calls=calls)
            interrupted = corrupt and rng.random() < 0.025
            for i in ids[: rng.randint(0, len(ids) - 1)] if interrupted else ids:
                if rng.random() < 0.05:
                    path = f"@state/logs/tool-results/conv/m{k}.json"
                    add("tool", _text(rng, 80, 90)[:500] + f"\n\n[Full output: {path}]", tool_call_id=i, fullOutputPath=path)
                else:
                    add("tool", '{"ok": true, "content": "%s"}' % _text(rng, 10, 400), tool_call_id=i)
            if corrupt and rng.random() < 0.02:
                add("tool", '{"ok": true}', tool_call_id=f"ghost_{k}")
            if corrupt and rng.random() < 0.02:
                add("tool", '{"ok": true, "again": 1}', tool_call_id=ids[0])
        add("assistant", _text(rng, 10, 200))
    return out[:n]


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """(first call ms, median of the rest ms, last result)."""
    t0 = time.perf_counter()
    result = fn()
    first = (time.perf_counter() - t0) * 1000
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return first, statistics.median(times) if times else first, result


def machine() -> str:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs (nproc), {cpu}, Python {platform.python_version()}, {platform.system()} {platform.machine()}"


def lc_setup(
    counter: TokenCounter,
) -> tuple[Callable[..., Any], Callable[[Any], list[dict[str, Any]]], Callable[[list[ConversationMessage]], Any]] | None:
    try:
        from langchain_core.messages import convert_to_messages, convert_to_openai_messages, trim_messages
    except ImportError:
        return None

    def count(messages: list[Any]) -> int:
        # The same counting rule as ours (tokens_of each message plus the reply priming).
        return TOKENS_PER_REPLY + sum(count_one(m) for m in messages)

    def count_one(message: Any) -> int:
        payload: dict[str, Any] = {"content": message.content}
        calls = getattr(message, "tool_calls", None) or []
        if calls:
            import json

            payload["tool_calls"] = [{"function": {"name": c["name"], "arguments": json.dumps(c["args"])}} for c in calls]
        if getattr(message, "tool_call_id", None):
            payload["tool_call_id"] = message.tool_call_id
        return message_tokens(payload, counter)

    def to_lc(messages: list[ConversationMessage]) -> Any:
        return convert_to_messages([to_openai(m) for m in messages])

    def trim(lc_messages: Any, max_tokens: int, recommended: bool) -> Any:
        options: dict[str, Any] = {"strategy": "last", "include_system": True}
        if recommended:
            options.update(start_on="human", end_on=("human", "tool"))
        return trim_messages(lc_messages, max_tokens=max_tokens, token_counter=count, **options)

    def back(lc_messages: Any) -> list[dict[str, Any]]:
        return convert_to_openai_messages(lc_messages)

    return trim, back, to_lc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1,000 messages and few trials (smoke run)")
    parser.add_argument("--messages", type=int, default=None, help="default 10,000 (--quick: 1,000)")
    args = parser.parse_args(argv)
    n = args.messages or (1_000 if args.quick else 10_000)
    repeat = 3 if args.quick else 30
    trials = 5 if args.quick else 40
    counter = default_counter()
    print(f"# Context builder benchmark\n\nMachine: {machine()}\nToken counter: {counter.name}\n")

    valid = make_conversation(n, seed=1, corrupt=False)
    corrupt = make_conversation(n, seed=2, corrupt=True)

    print(f"## 1. Build the context of a {n:,}-message conversation in memory\n")
    print("| budget | log | first call ms | median ms | sent msgs | est. tokens | valid |")
    print("|---|---|---:|---:|---:|---:|---|")
    for label, budget in (
        ("defaults (80 msgs, 120k chars)", ContextBudget()),
        ("defaults + 32k tokens", ContextBudget(max_tokens=32_000)),
    ):
        for log_name, log in (("valid", valid), ("corrupted", corrupt)):
            first, median, result = timed(lambda: build_llm_messages(log, mode="agent", budget=budget, counter=counter), repeat)
            ok = result.ok and first_error(result.messages, name_pattern=DOTTED_FUNCTION_NAME) is None
            print(f"| {label} | {log_name} | {first:.1f} | {median:.1f} | {len(result.messages)} | {result.debug['estimatedTokens']} | {'yes' if ok else 'NO'} |")

    lc = lc_setup(counter)
    print("\n## 2. Side by side with langchain-core trim_messages (same messages, same token counter)\n")
    if lc is None:
        print("langchain-core is not installed (pip install -e '.[bench]'): comparison skipped.")
        return 0
    trim, back, to_lc = lc
    import langchain_core

    print(f"langchain-core {langchain_core.__version__}. Each trial cuts the conversation after a random user message")
    print("and trims it to a random token budget (2k-32k); an output is a failure when our validator rejects it")
    print("(or, for ours, when it is empty with an error). Times are the median per call.\n")
    print("| implementation | log | median ms | failures / trials | failure categories |")
    print("|---|---|---:|---:|---|")
    rng = random.Random(7)
    for log_name, log in (("valid", valid), ("corrupted", corrupt)):
        # A request is built right after a user message: cut there, so a valid log stays valid.
        ends = [i + 1 for i, m in enumerate(log) if m.role == "user" and i >= n // 10]
        plans = [(rng.choice(ends), rng.randint(2_000, 32_000)) for _ in range(trials)]
        lc_log = to_lc(log)
        rows: dict[str, tuple[list[float], int, dict[str, int]]] = {}
        for cut, tokens in plans:
            budget = ContextBudget(max_messages=10**9, max_chars=10**9, max_tokens=tokens)
            t0 = time.perf_counter()
            ours = build_llm_messages(log[:cut], mode="chat", budget=budget, counter=counter, compress=False)
            elapsed = (time.perf_counter() - t0) * 1000
            error = first_error(ours.messages, name_pattern=DOTTED_FUNCTION_NAME) if ours.ok else None
            _record(rows, "CrewAgent build_llm_messages", elapsed, error.code if error else (None if ours.ok else ours.error.code))  # type: ignore[union-attr]
            for recommended in (False, True):
                t0 = time.perf_counter()
                trimmed = trim(lc_log[:cut], tokens, recommended)
                elapsed = (time.perf_counter() - t0) * 1000
                payload = back(trimmed)
                error = first_error(payload, name_pattern=DOTTED_FUNCTION_NAME) if payload else None
                code = error.code if error else (None if payload else "empty_output")
                name = "trim_messages (start_on=human, end_on=human|tool)" if recommended else "trim_messages (strategy=last)"
                _record(rows, name, elapsed, code)
        for name, (times, failures, codes) in rows.items():
            cats = ", ".join(f"{c} {k}" for c, k in sorted(codes.items())) or "-"
            print(f"| {name} | {log_name} | {statistics.median(times):.1f} | {failures} / {len(times)} | {cats} |")
    return 0


def _record(rows: dict[str, tuple[list[float], int, dict[str, int]]], name: str, ms: float, code: str | None) -> None:
    times, failures, codes = rows.setdefault(name, ([], 0, {}))
    times.append(ms)
    if code is not None:
        codes[code] = codes.get(code, 0) + 1
        rows[name] = (times, failures + 1, codes)


if __name__ == "__main__":
    raise SystemExit(main())
