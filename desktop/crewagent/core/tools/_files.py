"""File primitives of the fs tools: atomic replace, hashing, binary sniffing, per-path locks."""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import zlib
from collections.abc import Sequence
from pathlib import Path

from crewagent.core.tools.results import ErrorCode, ToolFailure

CHUNK = 1 << 16
SNIFF_BYTES = 8192
_LOCKS = tuple(threading.Lock() for _ in range(64))


def path_lock(real: Path) -> threading.Lock:
    """A lock held across read-check-write of one file, so two calls in this process cannot lose an update.

    Striped (64 locks) rather than one per path, so the table never grows. Another process
    writing the same file is not excluded; ``ifMatchSha256`` is how a caller detects that.
    """
    return _LOCKS[zlib.crc32(os.fsencode(real)) % len(_LOCKS)]


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first bytes marks a file as binary (the heuristic git and grep use)."""
    return b"\x00" in head[:SNIFF_BYTES]


def sha256_file(real: Path) -> str:
    digest = hashlib.sha256()
    with open(real, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_bytes(data: bytes | Sequence[bytes]) -> str:
    """The SHA-256 of ``data``, or of its pieces in a row."""
    if isinstance(data, bytes):
        return hashlib.sha256(data).hexdigest()
    digest = hashlib.sha256()
    for piece in data:
        digest.update(piece)
    return digest.hexdigest()


def atomic_write(real: Path, data: bytes | Sequence[bytes]) -> bool:
    """Replace ``real`` with ``data`` (temp file, fsync, rename, fsync of the folder); True when created.

    Parent folders are created. An existing file keeps its permission bits. On any failure the
    old file is untouched and the temp file is removed; the OSError propagates.
    """
    real.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = os.stat(real).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp_name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)  # the pieces of megabytes of text, never joined
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        os.replace(tmp_name, real)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise
    _fsync_dir(real.parent)
    return mode is None


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # Windows cannot open a folder; the rename is atomic there all the same.
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse to fsync a folder; nothing more can be done
    finally:
        os.close(fd)


def check_expected_sha(real: Path, expected: str | None, shown: str) -> None:
    """Raise E_CONFLICT when ``expected`` is given and the file's current content differs."""
    if expected is None:
        return
    try:
        current = sha256_file(real)
    except FileNotFoundError:
        raise ToolFailure(
            ErrorCode.E_CONFLICT, f"{shown} no longer exists; it changed since you read it.", currentSha256=None
        ) from None
    if current != expected.lower():
        raise ToolFailure(
            ErrorCode.E_CONFLICT,
            f"{shown} changed since you read it (sha256 {current[:12]}…, expected {expected[:12]}…). "
            "Read it again and redo the change.",
            currentSha256=current,
        )


def utf8_start(data: bytes, index: int) -> int:
    """Move ``index`` forward past UTF-8 continuation bytes, so a cut never splits a character."""
    while index < len(data) and (data[index] & 0xC0) == 0x80:
        index += 1
    return index


def utf8_end(data: bytes, index: int) -> int:
    """Move ``index`` back to the start of the character it falls in."""
    index = min(index, len(data))
    while 0 < index < len(data) and (data[index] & 0xC0) == 0x80:
        index -= 1
    return index
