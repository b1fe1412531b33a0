"""A second process for a test: a fork of the test worker (it has imported the store already),
instead of a fresh interpreter that imports it again (~0.4 CPU-s each)."""

from __future__ import annotations

import os
from collections.abc import Callable


def fork(body: Callable[[], None]) -> int:
    """Run ``body`` in a forked child that never returns into pytest; its pid (exit status 1 when it raised)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 0
        try:
            body()
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    return pid


def exited_cleanly(pid: int) -> bool:
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
