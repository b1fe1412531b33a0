"""The app's own files that no tool may reach: the data folder, the settings folder, the stored keys.

A :class:`ProtectedAreas` value is built once per tool context from the data root, the settings
folder and the key files, and answers one question for any real path: which protected area is
it in, if any. The sandbox asks it for every path a file tool touches; any later tool that
takes a host path (MCP, commands) asks it the same way, through
``ctx.sandbox.refuse_protected(path)``, so the rules live in this one place.

The areas, whatever folder they sit in and whatever the project root is:

- the stored API keys: the keyring fallback file (``<config>/secrets.json``) and the folder of
  the file-based keyring backends (``keyring``'s own data root);
- the app's settings folder (``settings.json``, the window state ...);
- the conversation logs of every project (``<data>/projects/<id>/conversations``), their
  derived search index (``<data>/projects/<id>/search``), and any folder given as ``logs``;
- the rest of the app's data folder (other projects' state, ``projects.json``, the installed
  packages), except the roots a tool context opens on purpose: its own ``@state`` and its active
  ``@pkg`` (read-only; the sandbox enforces that).

Each area is protected both at the folder the caller names (``--data-dir``, the settings folder
in use) and at the defaults (``$CREWAGENT_DATA_DIR`` / ``$CREWAGENT_CONFIG_DIR`` or the
platformdirs locations), so a run with ``--data-dir`` elsewhere still cannot reach the app's
usual folders.

Hard links: a regular file with more than one link might be another name of a protected file,
which no path check can see. For such files only, :meth:`ProtectedAreas.hardlink_area` compares
``(st_dev, st_ino)`` with an index of the protected files (the settings folder, the key files,
and the data folder outside its ``state`` and ``packages`` folders). The index is built on the
first such file and kept for :data:`INODE_INDEX_TTL_S` seconds, so the usual path (one link)
costs nothing and a tree full of hard links costs one scan per few seconds.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from crewagent.core import paths

#: Labels used in refusals; the model reads them, so they say what the files are.
KEYS = "the stored API keys"
SETTINGS = "the app's settings folder"
LOGS = "the conversation logs"
DATA = "the app's data folder"

#: How long the hard-link index is trusted before a rescan.
INODE_INDEX_TTL_S = 2.0
#: Folders of the data root whose files are not indexed for hard links (large, and not secret:
#: another project's state is still refused by path).
_UNINDEXED = frozenset({"state", "packages"})
_INDEX_MAX_FILES = 200_000
#: Folders of a project's runtime folder that hold the conversations' text: the logs and the
#: search index derived from them.
_LOG_FOLDERS = frozenset({"conversations", paths.SEARCH_SUBDIR})

_CASE_INSENSITIVE = sys.platform in ("darwin", "win32")


def real_path(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


@lru_cache(maxsize=4096)
def path_key(path: Path | str) -> str:
    """The comparable form of a path (case-folded where the file system ignores case).

    Remembered: every file tool call compares its path with the same few roots and protected
    folders, a dozen keys a call (a pure function of the path's text).
    """
    text = os.path.normpath(str(path))
    return text.casefold() if _CASE_INSENSITIVE else text


def parts_below(real: Path, root: Path) -> tuple[str, ...]:
    """The names leading from ``root`` down to ``real`` (both real paths, ``real`` within ``root``),
    as path keys: what ``Path(os.path.relpath(real, root)).parts`` gives, without its work."""
    inner, outer = path_key(real), path_key(root).rstrip(os.sep)
    return tuple(inner[len(outer) + 1 :].split(os.sep)) if len(inner) > len(outer) else ()


def is_within(path: Path, root: Path) -> bool:
    """True when ``path`` is ``root`` or below it (both already real paths)."""
    inner, outer = path_key(path), path_key(root)
    if inner == outer:
        return True
    return inner.startswith(outer.rstrip(os.sep) + os.sep)


def _unique(items: Iterable[Path | None]) -> tuple[Path, ...]:
    seen: dict[str, Path] = {}
    for item in items:
        if item is not None:
            real = real_path(item)
            seen.setdefault(path_key(real), real)
    return tuple(seen.values())


def keyring_data_root() -> Path | None:
    """Where file-based keyring backends (keyrings.alt) keep their files; None if unknown."""
    try:
        from keyring.util import platform_
    except ImportError:  # pragma: no cover - keyring is a dependency
        return None
    return Path(platform_.data_root())


@dataclass
class _InodeIndex:
    """``(st_dev, st_ino) -> area`` of the protected files, rebuilt when older than the TTL."""

    built_at: float = -1.0
    table: dict[tuple[int, int], str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class ProtectedAreas:
    """The app's own folders and files; :meth:`area_of` says whether a real path is in one."""

    data_roots: tuple[Path, ...] = ()
    config_dirs: tuple[Path, ...] = ()
    #: Files (or folders) holding API keys.
    key_files: tuple[Path, ...] = ()
    #: Further folders of conversation logs (the project's own, or a test's).
    log_dirs: tuple[Path, ...] = ()
    _index: _InodeIndex = field(default_factory=_InodeIndex, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("data_roots", "config_dirs", "key_files", "log_dirs"):
            object.__setattr__(self, name, _unique(getattr(self, name)))

    @classmethod
    def of_app(
        cls,
        data_root: Path | None = None,
        config_dir: Path | None = None,
        *,
        logs: Iterable[Path] = (),
    ) -> ProtectedAreas:
        """The areas of the app: the given data root and settings folder, plus the defaults."""
        data = [data_root, _or_none(paths.data_dir), _or_none(paths.default_data_dir)]
        config = [config_dir, _or_none(paths.config_dir), _or_none(paths.default_config_dir)]
        configs = _unique(config)
        keys = [paths.secrets_file(folder) for folder in configs] + [keyring_data_root()]
        return cls(data_roots=_unique(data), config_dirs=configs, key_files=_unique(keys), log_dirs=tuple(logs))

    def with_logs(self, logs: Iterable[Path]) -> ProtectedAreas:
        extra = tuple(logs)
        if not extra:
            return self
        return ProtectedAreas(self.data_roots, self.config_dirs, self.key_files, self.log_dirs + extra)

    def area_of(self, real: Path, *, allowed: Iterable[Path] = ()) -> str | None:
        """The protected area holding ``real`` (a real path), or None.

        ``allowed`` are roots inside the data folder that the caller opens on purpose (its
        ``@state`` and ``@pkg``); they never lift the protection of keys, settings or logs.
        """
        if any(is_within(real, item) for item in self.key_files):
            return KEYS
        if any(is_within(real, item) for item in self.config_dirs):
            return SETTINGS
        if any(is_within(real, item) for item in self.log_dirs):
            return LOGS
        for root in self.data_roots:
            if not is_within(real, root):
                continue
            parts = parts_below(real, root)
            if len(parts) >= 3 and parts[0] == "projects" and parts[2] in _LOG_FOLDERS:
                return LOGS
            if any(is_within(real, item) for item in allowed):
                return None
            return DATA
        return None

    def hardlink_area(self, info: os.stat_result) -> str | None:
        """The area of the protected file that ``info`` is another link of, or None (cheap for nlink == 1)."""
        if info.st_nlink <= 1 or not stat.S_ISREG(info.st_mode):
            return None
        return self._inodes().get((info.st_dev, info.st_ino))

    def _inodes(self) -> dict[tuple[int, int], str]:
        index = self._index
        with index.lock:
            now = time.monotonic()
            if now - index.built_at > INODE_INDEX_TTL_S:
                table: dict[tuple[int, int], str] = {}
                for ident, area in self._protected_files():
                    table.setdefault(ident, area)  # the first, most specific label wins
                    if len(table) >= _INDEX_MAX_FILES:
                        break
                index.table, index.built_at = table, now
            return index.table

    def _protected_files(self) -> Iterator[tuple[tuple[int, int], str]]:
        for item in self.key_files:
            yield from _files_under(item, KEYS)
        for folder in self.config_dirs:
            yield from _files_under(folder, SETTINGS)
        for folder in self.log_dirs:
            yield from _files_under(folder, LOGS)
        for root in self.data_roots:
            yield from _files_under(root, DATA, skip=_UNINDEXED)


def _or_none(make: Callable[[], Path]) -> Path | None:
    """A default folder, or None when it cannot be computed (the protection of the others stays)."""
    try:
        return make()
    except (OSError, ValueError, RuntimeError):
        return None


def _files_under(top: Path, area: str, *, skip: frozenset[str] = frozenset()) -> Iterator[tuple[tuple[int, int], str]]:
    """``((st_dev, st_ino), area)`` of every regular file under ``top`` (``top`` itself if a file).

    Inode numbers come from the directory entries (free on POSIX); the device is the folder's.
    Folders named in ``skip`` are not entered.
    """
    try:
        info = os.stat(top)
    except OSError:
        return
    if stat.S_ISREG(info.st_mode):
        yield (info.st_dev, info.st_ino), area
        return
    if not stat.S_ISDIR(info.st_mode):
        return
    stack = [(top, info.st_dev)]
    while stack:
        folder, device = stack.pop()
        try:
            with os.scandir(folder) as scan:
                for entry in scan:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name in skip:
                            continue
                        try:
                            stack.append((Path(entry.path), entry.stat(follow_symlinks=False).st_dev))
                        except OSError:
                            continue
                    elif entry.is_file(follow_symlinks=False):
                        label = LOGS if _LOG_FOLDERS & set(Path(entry.path).relative_to(top).parts) else area
                        yield (device, entry.inode()), label
        except OSError:
            continue
