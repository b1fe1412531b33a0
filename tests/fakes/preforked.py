"""What the tests' preloaded fork servers share (tests/fakes/zygote.py, tests/fakes/mcp_fork.py)."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
from typing import NoReturn


def freeze_preload() -> None:
    """After the preload (imported with the collector off): collect once and freeze what is left,
    so that a child's collections skip it instead of writing to (so copying) every page of it;
    then collect again as a fresh process would."""
    gc.collect()
    gc.freeze()
    gc.enable()


def sigchld_wakeup() -> tuple[int, int]:
    """A pipe whose read end becomes readable when a signal arrives, SIGCHLD included (it gets a
    handler that does nothing): select on it to learn that a child ended."""
    wakeup = os.pipe()
    for fd in wakeup:
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wakeup[1])
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
    return wakeup


def leave(code: int) -> NoReturn:
    """Flush stdout and stderr, then end the forked child at once: no interpreter teardown (which
    would touch, so copy, every page of the inherited heap) and no return into the server's code."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    os._exit(code)
