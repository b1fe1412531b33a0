"""The example package that ships with the app (resources/packages/), installed on first use of a data folder."""

from __future__ import annotations

import json
import os
import threading
from importlib.resources import as_file, files
from pathlib import Path

from crewagent.core.errors import CrewAgentError
from crewagent.core.packages.archive import FolderSource, PackageSource
from crewagent.core.packages.loader import load_definition
from crewagent.core.packages.model import PackageDefinition, package_id
from crewagent.core.packages.store import PackageStore, shared_store
from crewagent.core.store._fsutil import atomic_write_json

BUILTIN_FOLDERS = ("project-brief",)
#: The built-in package ids ever installed in this data folder: one the user removed stays removed.
MARKER = ".builtin.json"

_Fingerprint = tuple[tuple[str, int, int, int], ...]
#: The built-in packages' folders as this process checked them: each file's (path, size, mtime,
#: inode) then, and what they loaded as. Every new data folder installs them: one check per process
#: instead of one per data folder (~5 ms each, every first start and every UI test's window).
_checked: dict[Path, tuple[_Fingerprint, PackageDefinition]] = {}
_checked_lock = threading.Lock()


def builtin_package_ids() -> list[str]:
    ids = []
    for folder in BUILTIN_FOLDERS:
        manifest = json.loads(files("crewagent.resources").joinpath("packages", folder, "bmad.json").read_text("utf-8"))
        ids.append(package_id(manifest["name"], manifest["version"]))
    return ids


def ensure_builtin_packages(data_root: str | os.PathLike[str] | None = None) -> list[str]:
    """Install the built-in packages not yet installed once in ``data_root``; returns the ids it installed.

    Idempotent and cheap when there is nothing to do (one small file read per package). A broken
    built-in package is a bug in the build, so its PackageError is not softened.
    """
    store = shared_store(data_root)  # what the install checked, the next listing does not check again
    marker = store.root / MARKER
    wanted = list(zip(BUILTIN_FOLDERS, builtin_package_ids(), strict=True))
    if all(pid in _installed(marker) for _folder, pid in wanted):
        return []
    installed: list[str] = []
    with store._locked():
        done = _installed(marker)
        for folder, pid in wanted:
            if pid in done:
                continue
            with as_file(files("crewagent.resources").joinpath("packages", folder)) as path:
                with FolderSource(Path(path)) as source:
                    store.install(source, checked=_checked_definition(Path(path), source))
            done.append(pid)
            installed.append(pid)
        atomic_write_json(marker, {"installed": done})
    return installed


def example_package_id(data_root: str | os.PathLike[str] | None = None) -> str:
    """The id of the built-in example package ("Try a workflow"), installed on first use.

    Raises CrewAgentError when the user has removed it (it is not installed again behind their back).
    """
    ensure_builtin_packages(data_root)
    wanted = builtin_package_ids()[0]
    if wanted not in PackageStore(data_root).ids():
        raise CrewAgentError("The example workflow package was removed; import a workflow package to try one.")
    return wanted


def _checked_definition(folder: Path, source: PackageSource) -> PackageDefinition:
    """``load_definition(source)``, once per process while the folder's files stay the same."""
    fingerprint = _fingerprint(folder)
    with _checked_lock:
        known = _checked.get(folder)
    if known is not None and known[0] == fingerprint:
        return known[1]
    definition = load_definition(source)
    with _checked_lock:
        _checked[folder] = (fingerprint, definition)
    return definition


def _fingerprint(folder: Path) -> _Fingerprint:
    found = []
    for parent, _dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(parent, name)
            info = os.stat(path, follow_symlinks=False)
            found.append((os.path.relpath(path, folder), info.st_size, info.st_mtime_ns, info.st_ino))
    return tuple(sorted(found))


def _installed(marker: Path) -> list[str]:
    try:
        data = json.loads(marker.read_text("utf-8"))
    except (OSError, ValueError):
        return []
    ids = data.get("installed") if isinstance(data, dict) else None
    return [item for item in ids if isinstance(item, str)] if isinstance(ids, list) else []


__all__ = ["BUILTIN_FOLDERS", "builtin_package_ids", "ensure_builtin_packages"]
