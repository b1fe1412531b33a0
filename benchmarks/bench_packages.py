#!/usr/bin/env python3
"""Workflow package import benchmark (issue 16, "Performance"); results go to docs/benchmarks.md.

    .venv/bin/python benchmarks/bench_packages.py            # 200 steps, 7 runs each
    .venv/bin/python benchmarks/bench_packages.py --quick    # a smoke run for the tests

A generated package in the Builder's layout (``workflows/<id>/steps/*.md``, root-relative node
files, two agents), ``--steps`` nodes in a chain with a decision and an end, zipped as a ``.bmad``.
Each case is timed ``--runs`` times after one warm-up (imports and schema compilation are paid
once per process, so they are measured separately, by the command-line case; ``--warmup 0``
skips it: one `crewagent packages import` process instead of two). ``--smoke`` (the smoke test:
5 steps, one run, no warm-up) runs the command-line case's ``crewagent.cli.main`` in this
process, not in a new one (~0.5 CPU-s of start-up and imports): its figure means nothing, it only
proves that the benchmark runs:

- check only: open the zip, check every entry, validate every file and reference, and
  decompress every byte once (what happens before the first write);
- import into a fresh data folder, and re-import (replace) over the installed copy: check,
  unpack into the staging folder with an fsync per file, rename into place;
- load an installed package (``PackageStore.get`` with a cold cache: validated again);
- ``ensure_builtin_packages`` when the built-in package is already installed;
- ``crewagent packages import`` as a new process (Python start-up and imports included).

Goal: importing the 200-step package takes under 1 s.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crewagent.cli import main as cli_main  # noqa: E402
from crewagent.core.packages import PackageStore, ensure_builtin_packages  # noqa: E402
from tests.core.package_helpers import md, render, write_zip  # noqa: E402

GOAL_S = 1.0


def generate(steps: int) -> dict[str, object]:
    """A Builder-layout package with ``steps`` step nodes, a decision and an end."""
    base = "workflows/1"
    ids = [f"step-{i:03d}" for i in range(1, steps + 1)]
    nodes = [{"id": i, "type": "step", "file": f"{base}/steps/{i}.md", "title": f"Step {i}", "agentId": "analyst"} for i in ids]
    nodes += [
        {"id": "decide-998", "type": "decision", "file": f"{base}/steps/decide-998.md", "agentId": "reviewer"},
        {"id": "end-999", "type": "end", "file": f"{base}/steps/end-999.md"},
    ]
    chain = [*ids, "decide-998"]
    edges = [{"from": a, "to": b, "label": "next", "isDefault": True} for a, b in zip(chain, chain[1:], strict=False)]
    edges += [
        {"from": "decide-998", "to": "end-999", "label": "branch-1", "isDefault": True},
        {"from": "decide-998", "to": ids[0], "label": "branch-2"},
    ]
    body = "# Step\n\n" + "Read the state file, follow these instructions, update the state with fs.apply_patch.\n" * 20
    persona = {"role": "r", "identity": "i", "communication_style": "c", "principles": ["p"]}
    files: dict[str, object] = {
        "bmad.json": {
            "schemaVersion": "1.1",
            "name": "bench-package",
            "version": "1.0.0",
            "entry": {"workflow": f"{base}/workflow.md", "graph": f"{base}/workflow.graph.json", "agents": "agents.json"},
            "workflows": [{"id": "1", "displayName": "Bench", "workflow": f"{base}/workflow.md", "graph": f"{base}/workflow.graph.json", "tags": []}],
        },
        f"{base}/workflow.graph.json": {"schemaVersion": "1.1", "entryNodeId": ids[0], "nodes": nodes, "edges": edges},
        f"{base}/workflow.md": md({"schemaVersion": "1.1", "workflowType": "bench", "currentNodeId": "", "stepsCompleted": []}),
        "agents.json": {
            "schemaVersion": "1.1",
            "agents": [
                {"id": "analyst", "metadata": {"name": "A", "title": "Analyst", "icon": "a"}, "persona": persona,
                 "menu": [{"trigger": "*go", "description": "Run", "workflow": "1"}]},
                {"id": "reviewer", "metadata": {"name": "R", "title": "Reviewer", "icon": "r"}, "persona": persona},
            ],
        },
    }
    for node in nodes:
        extra = {"agentId": node["agentId"]} if "agentId" in node else {}
        files[str(node["file"])] = md(
            {"schemaVersion": "1.1", "nodeId": node["id"], "type": node["type"], "title": str(node["id"]), "outputs": [], **extra},
            body,
        )
    return files


def timed(runs: int, action: Callable[[int], object], setup: Callable[[int], object] | None = None, warmup: int = 1) -> list[float]:
    samples = []
    for index in range(runs + warmup):  # the first ``warmup`` are not timed
        if setup is not None:
            setup(index)
        start = time.perf_counter()
        action(index)
        elapsed = time.perf_counter() - start
        if index >= warmup:
            samples.append(elapsed)
    return samples


def row(name: str, samples: list[float], goal: str = "") -> str:
    ms = [s * 1000 for s in samples]
    return f"| {name} | {len(ms)} | {statistics.median(ms):.1f} | {min(ms):.1f} | {max(ms):.1f} | {goal} |"


def machine() -> str:
    model = platform.processor() or "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), model)
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs, {model}, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--warmup", type=int, choices=(0, 1), default=1, help="untimed runs of each case first (0: a smoke run)")
    parser.add_argument("--quick", action="store_true", help="20 steps, 2 runs")
    parser.add_argument("--smoke", action="store_true",
                        help="5 steps, one run, no warm-up, the command-line case in this process (the smoke test)")
    args = parser.parse_args(argv)
    steps, runs = (5, 1) if args.smoke else (20, 2) if args.quick else (args.steps, args.runs)
    warmup = 0 if args.smoke else args.warmup
    with tempfile.TemporaryDirectory(prefix="bench-packages-") as scratch:
        tmp = Path(scratch)
        files = generate(steps)
        archive = write_zip(files, tmp / "bench.bmad")
        size = sum(len(render(content)) for content in files.values())
        fresh = [tmp / f"fresh-{i}" for i in range(runs + warmup)]
        replace_store = PackageStore(tmp / "replace")
        replace_store.import_package(archive)
        results = [
            row("check only (validate, decompress, nothing written)", timed(runs, lambda i: PackageStore(tmp / "none").check(archive), warmup=warmup)),
            row(f"import .bmad into a fresh data folder ({len(files)} files)",
                timed(runs, lambda i: PackageStore(fresh[i]).import_package(archive), warmup=warmup), f"< {GOAL_S:.0f} s"),
            row("re-import (replace the same version)", timed(runs, lambda i: replace_store.import_package(archive), warmup=warmup), f"< {GOAL_S:.0f} s"),
            row("load the installed package (PackageStore.get, cold)",
                timed(runs, lambda i: PackageStore(tmp / "replace").get(replace_store.ids()[0]), warmup=warmup)),
        ]
        ensure_builtin_packages(tmp / "builtin")
        results.append(row("ensure_builtin_packages, already installed", timed(runs, lambda i: ensure_builtin_packages(tmp / "builtin"), warmup=warmup)))

        def cli(i: int) -> None:
            argv = ["packages", "import", str(archive), "--data-dir", str(tmp / f"cli-{i}")]
            if args.smoke:
                with contextlib.redirect_stdout(io.StringIO()):
                    code = cli_main(argv)
                if code != 0:
                    raise SystemExit(f"crewagent {' '.join(argv)} exited with {code}")
                return
            subprocess.run([sys.executable, "-m", "crewagent.cli", *argv], check=True, capture_output=True)

        name = "`crewagent packages import` in this process (--smoke)" if args.smoke else "`crewagent packages import` as a new process"
        results.append(row(name, timed(runs, cli, warmup=warmup), "(start-up included)"))
        zipped = archive.stat().st_size
        for folder in fresh:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"## Package import: {steps + 2} nodes, {len(files)} files, {size / 1024:.0f} KB unpacked, {zipped / 1024:.0f} KB zipped")
    print()
    print(f"Machine: {machine()}")
    print()
    print("| case | runs | p50 ms | min ms | max ms | goal |")
    print("|---|---:|---:|---:|---:|---|")
    for line in results:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
