"""``python -m crewagent.ui [--data-dir DIR] [--project PATH]``: the window without the CLI."""

from __future__ import annotations

import argparse

from crewagent.ui.app import run_gui


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m crewagent.ui")
    parser.add_argument("--data-dir")
    parser.add_argument("--project")
    args = parser.parse_args()
    return run_gui(args.data_dir, args.project)


if __name__ == "__main__":
    raise SystemExit(main())
