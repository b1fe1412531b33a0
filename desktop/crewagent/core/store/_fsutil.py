"""Durable file primitives: atomic replace, fsync'd appends, directory fsync."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from crewagent.core.errors import StoreWriteError
from crewagent.core.jsonparse import read_json_file


#: Flush a file's data to disk. ``fdatasync`` where the OS has it (Linux): it also writes the
#: metadata needed to read the data back (the new size of an appended file), which is all an
#: append needs; SQLite's unix VFS makes the same choice. ``fsync`` elsewhere.
sync_data = getattr(os, "fdatasync", os.fsync)


def fsync_dir(path: Path) -> None:
    """Make a rename or a new directory entry in ``path`` durable (a no-op where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # Some filesystems (and Windows) cannot fsync a directory; the rename is still atomic.
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes | Sequence[bytes], *, sync: bool = True) -> None:
    """Replace ``path`` with ``data`` (bytes, or pieces written in a row): write a temp file,
    fsync it, rename it over, fsync the dir.

    A failure (disk full, permission denied) leaves the old file untouched and no temp file behind.
    ``sync=False`` skips both fsyncs: the file is still replaced whole (a killed process never
    leaves half of it), but a power loss may bring back the previous version. Only for files
    that can be rebuilt or are reconciled on read (the runs index).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # a read-only or full folder: the same clear error as a failed write
        raise StoreWriteError.from_os_error(path, exc) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)  # megabytes in pieces, never joined (bigjson.encode_utf8_pieces)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException as exc:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise StoreWriteError.from_os_error(path, exc) from exc
        raise
    if sync:
        fsync_dir(path.parent)


def atomic_write_json(path: Path, value: Any, *, sync: bool = True) -> None:
    atomic_write_bytes(path, _json_file_bytes(value), sync=sync)


def _json_file_bytes(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


_ORJSON_FILE = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_SUBCLASS


def json_mode_file_bytes(value: Any) -> bytes:
    """What :func:`atomic_write_json` writes for ``value``, for data of pydantic's JSON mode
    (``model_dump(mode="json")``: no NaN or infinity, which orjson would write as ``null``).

    json's encoder is pure Python when it indents: index.json of 1,000 conversations took 29 ms,
    orjson 1.7 ms, the same bytes (a float aside: the same value, its exponent spelled ``1e16``
    rather than ``1e+16``). What orjson refuses (integers past 64 bits, non-str keys, subclasses
    of str or int) goes through json as before.
    """
    try:
        return orjson.dumps(value, option=_ORJSON_FILE)
    except orjson.JSONEncodeError:
        return _json_file_bytes(value)


def append_line(path: Path, line: bytes) -> int:
    """Append one newline-terminated record to ``path`` and fsync it; returns the new file size."""
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    return append_records(path, line)


def append_records(path: Path, line: bytes) -> int:
    """Append newline-terminated records to ``path`` with one write and one fsync.

    The caller holds the file's lock. If the file ends in a torn record (a crash mid-write), the
    new records start on a fresh line. If the write fails part-way (disk full), the file is cut
    back to its previous length, so no partial line is ever left behind. Returns the new size.
    """
    return append_records_span(path, line)[1]


_APPEND_FLAGS = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0)
_APPEND_EXISTING_FLAGS = _APPEND_FLAGS & ~os.O_CREAT


def append_records_span(
    path: Path | str, line: bytes, *, make_parents: bool = True, create: bool = True, known_end: int = -1
) -> tuple[int, int]:
    """:func:`append_records`, returning the file's size before and after the append.

    ``make_parents=False``: a missing folder is not made; FileNotFoundError is raised instead (a
    conversation deleted by another process: no stat of the folder before every append).
    ``create=False``: neither is a missing file; FileNotFoundError is raised (the caller has
    something to do before a file's first record: no stat of the file before every append).
    ``known_end``: the size this file had right after the caller's last append to it, which ended
    in a newline. A file still that size ends in that newline (the file only grows, under the
    caller's lock): its last byte is not read again to look for a torn record.
    """
    assert line.endswith(b"\n")
    try:
        try:
            fd = os.open(path, _APPEND_FLAGS if create else _APPEND_EXISTING_FLAGS, 0o644)
        except FileNotFoundError:  # the folder is made on the first append only, not on every one
            if not make_parents or not create:
                raise
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, _APPEND_FLAGS, 0o644)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) and (not make_parents or not create):
            raise
        raise StoreWriteError.from_os_error(Path(path), exc) from exc
    try:
        size = os.lseek(fd, 0, os.SEEK_END)  # the size (O_APPEND writes there), without a stat result
        if size > 0 and size != known_end and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        try:
            written = os.write(fd, line)
            if written < len(line):  # a short write: the rest, until all of it is written
                view = memoryview(line)[written:]
                while view:
                    view = view[os.write(fd, view) :]
            sync_data(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, size)
                os.fsync(fd)
            except OSError:
                pass
            raise StoreWriteError.from_os_error(Path(path), exc) from exc
        return size, size + len(line)
    finally:
        os.close(fd)


def read_json(path: Path) -> Any:
    """Parse a JSON file: OSError when unreadable, ValueError when damaged (see core.jsonparse)."""
    return read_json_file(path)
