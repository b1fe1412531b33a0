"""Hold off Python's cyclic garbage collector while a long log is turned into objects."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection inside the block (nested and concurrent blocks share one pause).

    Loading a log allocates one message object after another and frees none of them, so every
    collection the allocations trigger finds nothing, and the full ones walk everything loaded
    so far: at 100,000 messages they made a load twice as slow as its parsing, and its cost grow
    faster than the log (bench_scaling.py, docs/benchmarks.md "Scaling to 100,000 messages").
    Reference counting still frees everything as usual; the collector runs again after the block.
    """
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
