"""``tuning.release_free_memory``: freed memory goes back to the system (the re-open RSS, issue 14)."""

from __future__ import annotations

import ctypes
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
