"""The command reaper's code (core/tools/terminal_proc.py), kept free of imports of the app.

It runs as its own small process: from source as ``python -S -c REAPER_SCRIPT``; in a frozen
build, which has no Python interpreter to run ``-c``, as the app's own executable with
:data:`REAPER_FLAG`, which packaging/entry.py hands to :func:`run` before anything else loads.
"""

from __future__ import annotations

#: The frozen app's argument that makes it the reaper (not a user-facing option).
REAPER_FLAG = "--crewagent-command-reaper"

#: Reads ``+pgid`` / ``-pgid`` lines until the app's end of the pipe closes (the app is gone),
#: then kills every process group still listed.
REAPER_SCRIPT = r"""
import os, signal, sys
groups = set()
for line in sys.stdin:
    line = line.strip()
    if line[:1] == "+":
        groups.add(int(line[1:]))
    elif line[:1] == "-":
        groups.discard(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""


def run() -> None:
    """Be the reaper (the frozen app's entry point calls this for :data:`REAPER_FLAG`)."""
    exec(compile(REAPER_SCRIPT, "<crewagent command reaper>", "exec"), {"__name__": "__reaper__"})  # noqa: S102 - our own constant
