"""``tuning``: freed memory goes back to the system (the re-open RSS, issue 14); the start's imports collect nothing."""

from __future__ import annotations

import ctypes
import gc
import os
import platform

import pytest

from crewagent.core import tuning

BLOCK = 4096  # below glibc's mmap threshold: the blocks come from the heap, as parsed messages do
BLOCKS = 12_000  # ~48 MB


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_heap_pages_are_given_back() -> None:
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(BLOCK) for _ in range(BLOCKS)]
    pin = libc.malloc(64)  # above them: the heap's top cannot shrink by itself when they are freed
    try:
        for block in blocks:
            ctypes.memset(block, 1, BLOCK)  # touched: resident
        for block in blocks:
            libc.free(block)
        before = _rss_bytes()
        assert tuning.release_free_memory()
        given_back = before - _rss_bytes()
    finally:
        libc.free(pin)
    assert given_back > BLOCK * BLOCKS // 2, f"{given_back / 1e6:.1f} MB given back of {BLOCK * BLOCKS / 1e6:.0f} MB freed"


def test_the_start_imports_run_no_collection_and_freeze_what_they_made() -> None:
    """``tuning.start_imports``: a start's imports allocate ~80,000 long-lived objects; with the
    collector running, ~190 collections walked them (~0.12 CPU-s), and the first after the block
    ~0.06 more. None runs inside the block, and what it made is frozen, not walked again."""
    collections: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    made: list[list[int]] = []
    gc.callbacks.append(note)
    try:
        frozen = gc.get_freeze_count()
        with tuning.start_imports():
            made.extend([i] for i in range(20_000))  # ~30 collections' worth of allocations
            assert not gc.isenabled()
    finally:
        gc.callbacks.remove(note)
    assert collections == []
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(made)
