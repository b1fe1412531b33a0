"""Packaged app budgets (issue 7): one-folder size and cold start to the first window.

Needs a build: ``make package`` first. Run: ``.venv/bin/python benchmarks/bench_package.py``
(``--runs N``). Prints a table; the start-up time is read from the app's own start-up probe
(``CREWAGENT_STARTUP_PROBE=1``: the main window's first paint, then it quits), offscreen, with a
fresh data and settings folder each run. The source checkout's start is measured the same way,
side by side.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist" / "crewagent"
SIZE_BUDGET_MB = 250
START_BUDGET_S = 2.0


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


def first_window_s(command: list[str]) -> float:
    """Seconds from launch to the main window's first paint, opening a project with one conversation.

    (The probe quits once the Works list has painted its rows, so the project must have one.)
    """
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", CREWAGENT_STARTUP_PROBE="1",
                   CREWAGENT_DATA_DIR=f"{scratch}/data", CREWAGENT_CONFIG_DIR=f"{scratch}/config", HOME=scratch)
        Path(scratch, "one.json").write_text('[{"role": "user", "content": "hello"}]', encoding="utf-8")
        subprocess.run([sys.executable, "-m", "crewagent", "import", "--project", f"{scratch}/project", f"{scratch}/one.json"],
                       env=env, check=True, capture_output=True)
        started = time.monotonic()
        proc = subprocess.run([*command, "--project", f"{scratch}/project"], env=env, capture_output=True, text=True, timeout=60)
        for line in proc.stderr.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "crewagent-startup" and parts[1] == "window":
                return float(parts[2]) - started
        raise RuntimeError(f"no first-window line from {command[0]}: {proc.stderr[-500:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if not (DIST / "crewagent").exists():
        print("dist/crewagent is missing: run `make package` first", file=sys.stderr)
        return 2
    rows = []
    for label, command in (
        ("packaged one-folder app", [str(DIST / "crewagent"), "gui"]),
        ("source checkout (python -m crewagent)", [sys.executable, "-m", "crewagent", "gui"]),
    ):
        first_window_s(command)  # warm the page cache once, as a second launch by a user would be
        times = [first_window_s(command) for _ in range(args.runs)]
        rows.append((label, statistics.median(times), min(times), max(times)))
    size = folder_mb(DIST)
    print(f"| measure | value | budget | holds |\n|---|---|---|---|")
    print(f"| one-folder size (dist/crewagent) | {size:.0f} MB | {SIZE_BUDGET_MB} MB | {'yes' if size <= SIZE_BUDGET_MB else 'NO'} |")
    print("\n| first window (offscreen, fresh folders) | median s | min s | max s | budget | holds |\n|---|---|---|---|---|---|")
    for label, median, low, high in rows:
        holds = "yes" if median <= START_BUDGET_S else "NO"
        budget = f"{START_BUDGET_S:.1f} s" if label.startswith("packaged") else "—"
        print(f"| {label} | {median:.2f} | {low:.2f} | {high:.2f} | {budget} | {holds if label.startswith('packaged') else ''} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
