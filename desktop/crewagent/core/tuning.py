"""Process-wide tuning of the desktop app, each setting next to the measurement that justifies it.

The numbers come from ``benchmarks/bench_ui.py`` (results and method in docs/benchmarks.md,
"Desktop UI", "What changed, and why"): re-run it before changing any of them.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from crewagent.core.store.gcpause import gc_paused

#: ``sys.setswitchinterval`` for the desktop app (Python's default is 5 ms). The GUI thread
#: competes for the GIL with the worker's threads (loading logs, building contexts, parsing
#: streams); handing the GIL over every 1 ms lets it in sooner: bench_ui's worst event-loop stall
#: while a turn streams fell from ~70 ms to ~35 ms.
GIL_SWITCH_INTERVAL_S = 0.001

#: Seconds the whole load of a long conversation waits after its first page was sent: the GUI lays
#: out and paints the page while nothing in the worker competes with it for the GIL (the whole load
#: is ~0.3 s of Python at 10,000 messages). bench_ui's "open" section measures the first page's
#: phases (``worker_first_page`` ~8 ms, then transfer, model fill, layout and paint), which fit in
#: it; no run without the head start is recorded, so measure both before changing it.
FIRST_PAGE_HEAD_START_S = 0.15

_warmed = False
_warm_lock = threading.Lock()


def tune_gui_process() -> None:
    """The settings of a process that shows the GUI (call once, before the window)."""
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


@contextmanager
def start_imports() -> Iterator[None]:
    """The cyclic collector held off while the desktop app's start imports its modules.

    Importing Qt, the window, the worker and the core makes ~80,000 objects that live as long as
    the app, and almost no garbage: the ~190 collections their allocations triggered found next to
    nothing, walked a growing heap and took ~0.12 CPU-s of every start (a fresh ``crewagent gui``);
    the one collection that comes after the block takes ~0.07. Reference counting frees as usual.
    """
    with gc_paused():
        yield
        gc.freeze()


def warm_up_once() -> None:
    """Load now what the first turn would load while it runs, then freeze the heap (blocking; once).

    The model client library is ~0.4 s of imports and the token counter ~0.1 s, mostly holding the
    GIL, which stalls the GUI thread; done after a conversation has been opened, the user is reading
    it and no answer streams. So is what the client's first request would load (its transport's
    modules, the CA store, the platform headers: ``_client.warm_up``), which otherwise ran right
    after the first send, as the GUI laid out the user's message. What is alive then lives about as long as the app (modules, the
    window, the conversation shown, whose rows leave no reference cycles behind): ``gc.freeze``
    stops full collections walking it. They held the GIL for 80-230 ms with 10,000 messages open
    (bench_ui), stalling the GUI thread.
    """
    global _warmed
    with _warm_lock:
        if _warmed:
            return
        _warmed = True
    from crewagent.core.context import default_counter

    importlib.import_module("crewagent.core.llm._client").warm_up()
    default_counter()
    gc.freeze()


def release_free_memory() -> bool:
    """Give the C allocator's free pages back to the system (glibc's ``malloc_trim``; blocking).

    A long conversation is parsed on the worker thread and shown on the GUI thread; once it is
    replaced, its objects are freed (by reference counting) but glibc keeps their pages, so the
    window's RSS grew with every re-open: 455 → 583 → 506 MB over three opens of 30,000 messages,
    413-476 MB after a trim (docs/benchmarks.md, "Session 6: the re-open leak"). True when pages
    were given back; False elsewhere (no glibc) or when there was nothing to give. ctypes releases
    the GIL during the call.
    """
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    return bool(trim(0))
