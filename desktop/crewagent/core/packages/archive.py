"""Where a package comes from: a ``.bmad`` zip or a folder, read without trusting names, types or sizes.

Every entry name is checked before anything is read (plain relative POSIX paths only), links and
special files are refused, and both the number of entries and the bytes unpacked are capped: the
declared sizes are checked first and the bytes are counted again while reading, because a zip
bomb's headers lie.
"""

from __future__ import annotations

import lzma
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from crewagent.core.errors import describe_os_error
from crewagent.core.packages.problems import PackageError, Problem

MAX_ENTRIES = 10_000
MAX_UNPACKED_BYTES = 200 * 1024 * 1024
_CHUNK = 1 << 16
#: What ``verify`` keeps of the bytes it read, for ``extract_to`` to write without reading them
#: again: a package's text files whole, not its large assets.
_KEEP_BYTES = 16 * 1024 * 1024
#: Left out of an install: a Finder's and a version control's leftovers, never part of a package.
_IGNORED_TOP = frozenset({"__MACOSX", ".git", ".hg", ".svn"})
_IGNORED_NAMES = frozenset({".DS_Store", "Thumbs.db"})
_DRIVE = re.compile(r"^[A-Za-z]:")


def entry_name_problem(name: str) -> str | None:
    """Why ``name`` is not a plain relative POSIX path (None when it is); directories end in ``/``."""
    if not name:
        return "an empty name"
    if "\0" in name:
        return "a NUL character in the name"
    if "\\" in name:
        return "a backslash in the name (entries are POSIX paths)"
    if name.startswith("/") or _DRIVE.match(name):
        return "an absolute path"
    segments = name[:-1].split("/") if name.endswith("/") else name.split("/")
    if any(segment == ".." for segment in segments):
        return "a '..' segment (path traversal)"
    if any(segment == "." for segment in segments):
        return "a '.' segment"
    if any(segment == "" for segment in segments):
        return "an empty path segment"
    return None


def _ignored(name: str) -> bool:
    parts = name.rstrip("/").split("/")
    return parts[0] in _IGNORED_TOP or parts[-1] in _IGNORED_NAMES


class _Budget:
    """Counts the bytes really produced, whatever the headers said."""

    def __init__(self, label: str):
        self.label = label
        self.used = 0

    def take(self, count: int, entry: str) -> None:
        self.used += count
        if self.used > MAX_UNPACKED_BYTES:
            raise PackageError.single(
                entry, f"the package unpacks to more than {MAX_UNPACKED_BYTES // (1024 * 1024)} MB", source=self.label
            )


@dataclass(frozen=True)
class _Entry:
    name: str  # the file's path inside the package (after the wrapper folder, if any)
    stored: str  # the name in the archive or below the folder
    size: int  # declared


class PackageSource:
    """The files of a package, read-only. ``files`` are package-relative POSIX paths of regular files."""

    label: str

    def __init__(self, label: str, entries: list[_Entry]):
        self.label = label
        self._entries = {entry.name: entry for entry in entries}
        self._kept: dict[str, bytes] = {}  # bytes verify() read and checked, by name

    def files(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def has(self, name: str) -> bool:
        return name in self._entries

    def read(self, name: str) -> bytes:
        """The whole content of ``name`` (KeyError when absent); never more than it declared."""
        entry = self._entries[name]
        chunks = list(self._chunks(entry, _Budget(self.label)))
        return b"".join(chunks)

    def verify(self) -> None:
        """Read every file once without writing anything: the real sizes and checksums, within the budget.

        The bytes read are kept (up to ``_KEEP_BYTES`` in all) for ``extract_to``: it writes what
        was checked, without opening and inflating those entries a second time.
        """
        budget = _Budget(self.label)
        kept: dict[str, bytes] = {}
        room = _KEEP_BYTES
        for entry in self._entries.values():
            keep = entry.size <= room  # never more than declared: _chunks stops a longer entry
            chunks = [chunk for chunk in self._chunks(entry, budget) if keep]
            if keep:
                kept[entry.name] = data = b"".join(chunks)
                room -= len(data)
        self._kept = kept

    def extract_to(self, destination: Path) -> None:
        """Write every file under ``destination`` (an empty, new folder); the caller makes them durable."""
        budget = _Budget(self.label)
        root = os.fspath(destination)
        made: set[str] = {root}
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            for entry in self._entries.values():
                target = os.path.join(root, *entry.name.split("/"))
                parent = os.path.dirname(target)
                if parent not in made:
                    os.makedirs(parent, exist_ok=True)
                    made.add(parent)
                fd = os.open(target, flags, 0o644)
                try:
                    kept = self._kept.pop(entry.name, None)
                    if kept is not None:
                        budget.take(len(kept), entry.name)
                    for chunk in (kept,) if kept is not None else self._chunks(entry, budget):
                        view = memoryview(chunk)
                        while view:
                            view = view[os.write(fd, view) :]
                finally:
                    os.close(fd)
        except OSError as exc:
            raise PackageError.single(entry.name, f"cannot be written: {describe_os_error(exc)}", source=self.label) from exc

    def close(self) -> None:
        """Release the archive (nothing to do for a folder)."""

    def __enter__(self) -> PackageSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _chunks(self, entry: _Entry, budget: _Budget) -> Iterator[bytes]:
        raise NotImplementedError

    @staticmethod
    def _over(entry: _Entry, produced: int, label: str) -> None:
        if produced > entry.size:
            raise PackageError.single(entry.name, "holds more bytes than its header declares", source=label)


def _rooted(label: str, names: dict[str, _Entry]) -> list[_Entry]:
    """Unwrap a package zipped with its folder (``my-package/bmad.json``): one top folder, no bmad.json above it."""
    if "bmad.json" in names:
        return list(names.values())
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) == 1 and all("/" in name for name in names):
        top = next(iter(tops))
        if f"{top}/bmad.json" in names:
            return [_Entry(name[len(top) + 1 :], entry.stored, entry.size) for name, entry in names.items()]
    return list(names.values())


class ZipSource(PackageSource):
    def __init__(self, path: Path):
        label = path.name
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
            raise PackageError.single(path.name, f"is not a .bmad (zip) archive: {exc}") from exc
        except OSError as exc:
            raise PackageError.single(path.name, f"cannot be read: {describe_os_error(exc)}") from exc
        try:
            entries = self._check(label, self._zip.infolist())
        except BaseException:
            self._zip.close()
            raise
        super().__init__(label, entries)

    def close(self) -> None:
        self._zip.close()

    @staticmethod
    def _check(label: str, infos: list[zipfile.ZipInfo]) -> list[_Entry]:
        if len(infos) > MAX_ENTRIES:
            raise PackageError.single(label, f"has {len(infos)} entries; at most {MAX_ENTRIES} are allowed", source=label)
        problems: list[Problem] = []
        files: dict[str, _Entry] = {}
        folded: dict[str, str] = {}
        declared = 0
        for info in infos:
            # zipfile cuts a name at its first NUL (and turns '\\' into '/' on Windows); judge the name as stored.
            name = info.orig_filename
            reason = entry_name_problem(name)
            mode = (info.external_attr >> 16) & 0xFFFF
            kind = stat.S_IFMT(mode) if info.create_system == 3 else 0
            if reason is None and kind == stat.S_IFLNK:
                reason = "a symbolic link"
            elif reason is None and kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                reason = "not a regular file or folder"
            elif reason is None and info.flag_bits & 0x1:
                reason = "encrypted"
            elif reason is None and info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
                reason = f"compressed with an unsupported method ({info.compress_type})"
            if reason is None:
                key = name.rstrip("/").casefold()
                if key in folded:
                    reason = f"a second entry for {folded[key]!r} (names differing only in case collide on some disks)"
                folded.setdefault(key, name)
            if reason is not None:
                problems.append(Problem(name.replace("\0", "\\0"), "", f"refused: {reason}"))
                continue
            declared += info.file_size
            if not info.is_dir() and not _ignored(name):
                files[name] = _Entry(name, name, info.file_size)
        for name in files:
            prefixes = {"/".join(name.split("/")[: i + 1]) for i in range(name.count("/"))}
            clash = next((p for p in prefixes if p in files), None)
            if clash is not None:
                problems.append(Problem(clash, "", f"refused: {clash!r} is a file and also a folder of {name!r}"))
        if declared > MAX_UNPACKED_BYTES:
            problems.append(Problem(label, "", f"refused: declares {declared} bytes unpacked; at most {MAX_UNPACKED_BYTES} are allowed"))
        if problems:
            raise PackageError(problems, source=label)
        return _rooted(label, files)

    def _chunks(self, entry: _Entry, budget: _Budget) -> Iterator[bytes]:
        produced = 0
        try:
            with self._zip.open(entry.stored) as handle:
                while chunk := handle.read(_CHUNK):
                    produced += len(chunk)
                    self._over(entry, produced, self.label)
                    budget.take(len(chunk), entry.name)
                    yield chunk
        except (zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError, NotImplementedError, RuntimeError) as exc:
            raise PackageError.single(entry.name, f"is damaged in the archive: {exc}", source=self.label) from exc
        except OSError as exc:
            raise PackageError.single(entry.name, f"cannot be read: {describe_os_error(exc)}", source=self.label) from exc


class FolderSource(PackageSource):
    def __init__(self, path: Path):
        self._root = path
        label = path.name or str(path)
        problems: list[Problem] = []
        files: dict[str, _Entry] = {}
        count = folders = 0
        declared = 0
        stack = [("", path)]
        while stack:
            prefix, folder = stack.pop()
            try:
                listing = sorted(os.scandir(folder), key=lambda item: item.name)
            except OSError as exc:
                problems.append(Problem(prefix or ".", "", f"cannot be listed: {describe_os_error(exc)}"))
                continue
            for item in listing:
                name = prefix + item.name
                reason = entry_name_problem(name)
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError as exc:
                    problems.append(Problem(name, "", f"cannot be read: {describe_os_error(exc)}"))
                    continue
                if reason is None and stat.S_ISLNK(info.st_mode):
                    reason = "a symbolic link"
                elif reason is None and not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                    reason = "not a regular file or folder"
                if reason is not None:
                    problems.append(Problem(name, "", f"refused: {reason}"))
                elif _ignored(name):
                    continue
                elif stat.S_ISDIR(info.st_mode):
                    folders += 1
                    if folders > MAX_ENTRIES:
                        raise PackageError.single(label, f"has more than {MAX_ENTRIES} folders", source=label)
                    stack.append((name + "/", Path(item.path)))
                else:
                    # Files only: a zip of N files may have N more folder entries, or none.
                    count += 1
                    if count > MAX_ENTRIES:
                        raise PackageError.single(label, f"has more than {MAX_ENTRIES} files", source=label)
                    declared += info.st_size
                    files[name] = _Entry(name, name, info.st_size)
        if declared > MAX_UNPACKED_BYTES:
            problems.append(Problem(label, "", f"refused: holds {declared} bytes; at most {MAX_UNPACKED_BYTES} are allowed"))
        if problems:
            raise PackageError(problems, source=label)
        super().__init__(label, _rooted(label, files))

    def _chunks(self, entry: _Entry, budget: _Budget) -> Iterator[bytes]:
        produced = 0
        flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self._root.joinpath(*entry.stored.split("/")), flags)
        except OSError as exc:
            raise PackageError.single(entry.name, f"cannot be read: {describe_os_error(exc)}", source=self.label) from exc
        try:
            with os.fdopen(fd, "rb", closefd=False) as handle:
                while chunk := handle.read(_CHUNK):
                    produced += len(chunk)
                    self._over(entry, produced, self.label)  # the file grew since it was listed
                    budget.take(len(chunk), entry.name)
                    yield chunk
        finally:
            os.close(fd)


def open_source(path: Path) -> PackageSource:
    """A zip or folder source for ``path``; raises PackageError when it cannot be used at all."""
    if path.is_dir():
        return FolderSource(path)
    if not path.exists():
        raise PackageError.single(path.name or str(path), f"does not exist ({path})")
    return ZipSource(path)
