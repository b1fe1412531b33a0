"""PackageStore: install, list, load and remove workflow packages under ``<data>/packages/``.

An install is atomic. The package is checked completely, then unpacked into a staging folder
inside ``<data>/packages``, and renamed into place; a package it replaces is moved aside first
and deleted only after the rename. A crash at any point leaves the old package or the new one:
the next use of the store puts back a package that was moved aside but not replaced, and
deletes the leftovers. One file lock serialises installs and removals across processes.
"""

from __future__ import annotations

import builtins
import ctypes
import os
import secrets
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crewagent.core import paths
from crewagent.core.errors import StoreWriteError
from crewagent.core.packages.archive import FolderSource, PackageSource, ZipSource, open_source
from crewagent.core.packages.loader import load_definition
from crewagent.core.packages.model import PACKAGE_ID_PATTERN, InstalledPackage, PackageDefinition
from crewagent.core.packages.problems import PackageError, PackageNotFound
from crewagent.core.store._fsutil import fsync_dir
from crewagent.core.store._lock import ProcessLock

LOCK_TIMEOUT_S = 60.0
_LOCK_NAME = ".lock"
#: Leftovers of an interrupted install or removal (``~`` never occurs in a package id).
_STAGING, _OLD, _TRASH = ".staging~", ".old~", ".trash~"


class PackageStore:
    """The installed packages of one data folder (no Qt; safe to use from several threads and processes)."""

    def __init__(self, data_root: str | os.PathLike[str] | None = None):
        self.data_root = paths.data_dir(data_root)
        self.root = paths.packages_dir(self.data_root)
        self._thread_lock = threading.RLock()
        self._file_lock: ProcessLock | None = None
        self._cache: dict[str, tuple[tuple[int, int], InstalledPackage]] = {}

    # -- reading -------------------------------------------------------------------------------

    def list(self) -> builtins.list[InstalledPackage]:
        """The packages that load, sorted by name then version (see ``scan`` for the broken ones)."""
        return self.scan()[0]

    def scan(self) -> tuple[builtins.list[InstalledPackage], builtins.list[PackageError]]:
        self._recover_if_needed()
        packages: builtins.list[InstalledPackage] = []
        broken: builtins.list[PackageError] = []
        for package_id in self.ids():
            try:
                packages.append(self.get(package_id))
            except PackageError as exc:
                broken.append(exc)
            except PackageNotFound:
                continue  # removed meanwhile
        packages.sort(key=lambda package: (package.name.lower(), package.version, package.id))
        return packages, broken

    def ids(self) -> builtins.list[str]:
        try:
            entries = list(os.scandir(self.root))
        except FileNotFoundError:
            return []
        return sorted(entry.name for entry in entries if PACKAGE_ID_PATTERN.fullmatch(entry.name) and entry.is_dir())

    def get(self, package_id: str) -> InstalledPackage:
        """The installed package ``package_id``, checked again as it is loaded (PackageNotFound, PackageError)."""
        folder = self._folder(package_id)
        self._recover_if_needed()
        try:
            info = folder.stat()
        except (FileNotFoundError, NotADirectoryError):
            raise PackageNotFound(package_id) from None
        key = (info.st_ino, info.st_mtime_ns)
        cached = self._cache.get(package_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        with FolderSource(folder) as source:
            definition = load_definition(source)
        package = InstalledPackage(package_id, folder, definition)
        self._cache[package_id] = (key, package)
        return package

    def _remember(self, package_id: str, definition: PackageDefinition) -> InstalledPackage:
        folder = self.root / package_id
        info = folder.stat()
        package = InstalledPackage(package_id, folder, definition)
        self._cache[package_id] = ((info.st_ino, info.st_mtime_ns), package)
        return package

    def _folder(self, package_id: str) -> Path:
        if not PACKAGE_ID_PATTERN.fullmatch(package_id):
            raise PackageNotFound(package_id)
        return self.root / package_id

    # -- writing -------------------------------------------------------------------------------

    def check(self, path: str | os.PathLike[str]) -> PackageDefinition:
        """Check a ``.bmad`` zip or a folder as ``import_package`` would, writing nothing."""
        with open_source(Path(path)) as source:
            return _checked(source)

    def import_package(self, path: str | os.PathLike[str]) -> InstalledPackage:
        """Install a ``.bmad`` zip or a package folder; replaces the same name and version atomically.

        Raises PackageError (every problem, file + JSON pointer) with nothing written when the package
        is invalid or hostile, StoreWriteError when the disk refuses.
        """
        with open_source(Path(path)) as source:
            return self.install(source)

    def install(self, source: PackageSource, *, checked: PackageDefinition | None = None) -> InstalledPackage:
        """Install ``source``; ``checked`` is what loading exactly these files gave already (the
        built-in package, checked once per process), else the source is checked here."""
        definition = checked if checked is not None else _checked(source)
        package_id = definition.package_id
        with self._locked():
            self._recover()
            staging = self.root / f"{_STAGING}{package_id}~{secrets.token_hex(4)}"
            try:
                staging.mkdir()
                source.extract_to(staging)
                _fsync_tree(staging)
                self._publish(staging, package_id)
            except OSError as exc:
                raise StoreWriteError.from_os_error(staging, exc) from exc
            finally:
                if staging.exists():
                    shutil.rmtree(staging, ignore_errors=True)
            return self._remember(package_id, definition)  # what was checked is what was written

    def remove(self, package_id: str) -> None:
        folder = self._folder(package_id)
        with self._locked():
            self._recover()
            if not folder.is_dir():
                raise PackageNotFound(package_id)
            trash = self.root / f"{_TRASH}{secrets.token_hex(4)}"
            try:
                os.replace(folder, trash)
                fsync_dir(self.root)
            except OSError as exc:
                raise StoreWriteError.from_os_error(folder, exc) from exc
            shutil.rmtree(trash, ignore_errors=True)
            self._cache.pop(package_id, None)

    def _publish(self, staging: Path, package_id: str) -> None:
        target = self.root / package_id
        aside = self.root / f"{_OLD}{package_id}~{secrets.token_hex(4)}"
        had_old = target.exists()
        if had_old:
            os.replace(target, aside)  # a crash from here to the next rename is undone by _recover
        os.replace(staging, target)
        fsync_dir(self.root)
        if had_old:
            shutil.rmtree(aside, ignore_errors=True)
        self._cache.pop(package_id, None)

    # -- crash recovery ------------------------------------------------------------------------

    def _recover_if_needed(self) -> None:
        """Cheap when there is nothing to do: one listing, no lock."""
        try:
            names = [entry.name for entry in os.scandir(self.root)]
        except FileNotFoundError:
            return
        if any(name.startswith((_STAGING, _OLD, _TRASH)) for name in names):
            with self._locked():
                self._recover()

    def _recover(self) -> None:
        """Under the lock: put back a package moved aside and never replaced, delete every leftover."""
        try:
            names = sorted(entry.name for entry in os.scandir(self.root))
        except FileNotFoundError:
            return
        for name in names:
            path = self.root / name
            if name.startswith(_OLD):
                package_id = name[len(_OLD) :].rsplit("~", 1)[0]
                target = self.root / package_id
                if PACKAGE_ID_PATTERN.fullmatch(package_id) and not target.exists():
                    os.replace(path, target)
                    fsync_dir(self.root)
                    continue
                shutil.rmtree(path, ignore_errors=True)
            elif name.startswith((_STAGING, _TRASH)):
                shutil.rmtree(path, ignore_errors=True)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._thread_lock:
            if self._file_lock is None:
                try:
                    self.root.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreWriteError.from_os_error(self.root, exc) from exc
                self._file_lock = ProcessLock(self.root / _LOCK_NAME, timeout=LOCK_TIMEOUT_S)
            with self._file_lock.guarded():
                yield


_shared: dict[Path, PackageStore] = {}
_shared_lock = threading.Lock()


def shared_store(data_root: str | os.PathLike[str] | None = None) -> PackageStore:
    """The process's PackageStore of a data folder. It keeps the packages it loaded (by inode and
    mtime), so what an install or a listing checked is not checked again by the next reader: the
    agent catalog, the Packages listing, a run's turn. A store of one's own (``PackageStore(...)``)
    checks every package again on its first read."""
    root = paths.data_dir(data_root)
    with _shared_lock:
        found = _shared.get(root)
        if found is None:
            found = _shared[root] = PackageStore(root)
        return found


def _checked(source: PackageSource) -> PackageDefinition:
    definition = load_definition(source)
    if isinstance(source, ZipSource):
        source.verify()  # every byte decompressed and its checksum checked before the first write
    return definition


def _fsync_tree(root: Path) -> None:
    """Make a staged package durable before the rename publishes it.

    A kill -9 keeps the page cache, a power cut does not. On Linux one ``syncfs`` of the staging
    folder's filesystem costs about what writing the files did; an fsync per file costs 4-7 ms each
    (1.5 s for 200 steps on the benchmark machine). Elsewhere, or if ``syncfs`` fails: one fsync per
    file and per folder.
    """
    if _syncfs(root):
        return
    for folder, _dirs, names in os.walk(root):
        for name in names:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(folder))


def _syncfs(path: Path) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(path, os.O_RDONLY)
    except (OSError, AttributeError):
        return False
    try:
        return bool(libc.syncfs(fd) == 0)
    except AttributeError:  # a libc without syncfs
        return False
    finally:
        os.close(fd)


