"""Path aliases (@project, @state, @pkg) resolved by realpath plus a prefix check.

Rules (ARCHITECTURE.md, PACKAGE-FORMAT.md), each refusal being ``E_SANDBOX_VIOLATION``:

- ``@project/...`` is the project folder (read-write), ``@state/...`` the project's runtime state
  folder (read-write), ``@pkg/...`` the active package (read-only). A path without an alias is
  relative to @project. A bare alias (``@state``) is the root itself.
- Refused before touching the disk: NUL bytes, any backslash (a separator on Windows and a
  trick elsewhere), absolute paths (``/x``, ``//server/share``), Windows drive forms (``C:\\``,
  ``C:foo``) in any component, a leading ``~``, an unknown ``@alias``, and any ``..`` component
  (even one that would stay inside: the model never needs one, and refusing it is simpler to
  trust). On Windows any ``:`` is refused too (alternate data streams).
- Then the path is joined to the root and resolved with ``os.path.realpath``; the result must be
  inside the root's own realpath, so a symlink pointing out of the root is refused.
- The app's own files are refused whatever alias, symlink or hard link reaches them, wherever
  they sit and whatever the project root is (a home folder opened as a project holds the
  default data and settings folders). The areas, decided in one place (protected.py, a
  ``ProtectedAreas`` value every ``ToolContext`` carries and any later tool can ask):

  * the stored API keys: the keyring fallback file ``<config>/secrets.json`` and the folder of
    file-based keyring backends;
  * the app's settings folder (``settings.json`` ...), the one in use and the default one;
  * every project's conversation logs (``<data>/projects/<id>/conversations``: messages.jsonl,
    index.json, subagent sidechains ...);
  * the rest of the app's data folder (the one in use, e.g. ``--data-dir``, and the default
    one), except this project's own ``@state`` root (read-write) and the active ``@pkg``
    (read-only).

  The refusal names the area ("... is part of the app's settings folder ..."). A regular file
  with more than one hard link is compared by ``(st_dev, st_ino)`` with the protected files.
  Walkers (fs.list, fs.search) skip protected entries silently.
- Writes are refused in @pkg (read-only; PACKAGE-FORMAT.md has no separate code, so the sandbox
  code is used with a message saying so), to the project's ``.crewagent.json`` (a broken file
  stops the project from opening; the app owns it), and under ``@state/logs/`` and
  ``@state/runs/<runId>/logs/`` (offloaded tool outputs and the audit trail, which the model may
  read but must not rewrite).

What remains: a symlink swapped in between the check and the open (TOCTOU) is not defended
against; the model cannot create symlinks or hard links through these tools, so only another
local process can. For the same reason the hard-link index may be up to two seconds old.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from crewagent.core import paths, texts
from crewagent.core.tools.protected import ProtectedAreas, is_within, parts_below, path_key, real_path
from crewagent.core.tools.results import ErrorCode, ToolFailure

__all__ = ["ALIASES", "PROJECT_FILE", "ProtectedAreas", "ResolvedPath", "Sandbox", "SandboxViolation", "is_within"]

ALIASES = ("project", "state", "pkg")
PROJECT_FILE = ".crewagent.json"

_DRIVE = re.compile(r"^[A-Za-z]:")


class SandboxViolation(ToolFailure):
    """A path the model may not use (always ``E_SANDBOX_VIOLATION``)."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.E_SANDBOX_VIOLATION, message)


@dataclass(frozen=True)
class ResolvedPath:
    """A path that passed the sandbox: where it is on disk and how the model calls it."""

    real: Path
    alias: str  # "project" | "state" | "pkg"
    relative: str  # posix path below the alias root, "" for the root itself
    read_only: bool

    @property
    def shown(self) -> str:
        """The alias form shown to the model, e.g. ``@project/docs/a.md``."""
        return f"@{self.alias}/{self.relative}" if self.relative else f"@{self.alias}"


@dataclass(frozen=True)
class Sandbox:
    """The roots a tool call may touch. ``state``/``pkg`` may be None (no state folder, no package).

    ``areas`` are the app's own files (see protected.py); left out, they are the app's default
    folders, so a sandbox built anywhere protects at least those. ``protected`` adds folders of
    conversation logs to them.
    """

    project: Path
    state: Path | None = None
    pkg: Path | None = None
    #: Further folders no alias may reach (conversation logs); merged into ``areas``.
    protected: tuple[Path, ...] = ()
    areas: ProtectedAreas | None = None
    _roots: dict[str, Path] = field(init=False, repr=False, compare=False)
    _allowed: tuple[Path, ...] = field(init=False, repr=False, compare=False)
    _areas: ProtectedAreas = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        roots = {"project": real_path(self.project)}
        if self.state is not None:
            roots["state"] = real_path(self.state)
        if self.pkg is not None:
            roots["pkg"] = real_path(self.pkg)
        object.__setattr__(self, "_roots", roots)
        object.__setattr__(self, "_allowed", tuple(root for alias, root in roots.items() if alias != "project"))
        areas = self.areas if self.areas is not None else ProtectedAreas.of_app()
        object.__setattr__(self, "_areas", areas.with_logs(self.protected))

    @property
    def protected_areas(self) -> ProtectedAreas:
        """The areas this sandbox refuses (``areas`` or the app's defaults, plus ``protected``)."""
        return self._areas

    @classmethod
    def for_project(
        cls, project_root: Path, runtime_dir: Path, pkg: Path | None = None, *, config_dir: Path | None = None
    ) -> Sandbox:
        """The sandbox of an opened project: @state is ``<runtime>/state``; its data root and settings are protected."""
        data_root = paths.data_root_of_runtime(runtime_dir)
        areas = ProtectedAreas.of_app(data_root, config_dir, logs=(paths.conversations_dir(runtime_dir),))
        return cls(project=project_root, state=paths.state_dir(runtime_dir), pkg=pkg, areas=areas)

    def root(self, alias: str) -> Path | None:
        return self._roots.get(alias)

    def resolve(self, raw: object, *, write: bool = False) -> ResolvedPath:
        """Resolve a model-supplied path; raises SandboxViolation, or ToolFailure(ENOENT) for a missing root."""
        if not isinstance(raw, str):
            raise SandboxViolation("A path must be a string.")
        alias, parts = _split(raw)
        root = self._roots.get(alias)
        if root is None:
            what = "no package is active" if alias == "pkg" else "this conversation has no state folder"
            raise ToolFailure(ErrorCode.ENOENT, f"@{alias} is not available: {what}.")
        real = _real_below(root, parts) if parts else root
        if not is_within(real, root):
            raise SandboxViolation(texts.SANDBOX_SYMLINK.format(path=raw, alias=alias))
        resolved = ResolvedPath(real=real, alias=alias, relative="/".join(parts), read_only=alias == "pkg")
        self.check_real(real, shown=resolved.shown, write=write)
        return resolved

    def check_real(self, real: Path, *, shown: str, write: bool = False) -> None:
        """The checks that hold for every real path, also applied to entries found while walking."""
        if not any(is_within(real, root) for root in self._roots.values()):
            raise SandboxViolation(texts.SANDBOX_OUTSIDE.format(path=shown))
        self._refuse_protected_real(real, shown)
        if not write:
            return
        pkg = self._roots.get("pkg")
        if pkg is not None and is_within(real, pkg):
            raise SandboxViolation(texts.SANDBOX_PKG_READ_ONLY.format(path=shown))
        if path_key(real) == path_key(self._roots["project"] / PROJECT_FILE):
            raise SandboxViolation(texts.SANDBOX_PROJECT_FILE.format(path=shown))
        state = self._roots.get("state")
        if state is not None and is_within(real, state) and _is_state_log(real, state):
            raise SandboxViolation(texts.SANDBOX_APP_LOG.format(path=shown))

    def protected_area(self, real: Path, info: os.stat_result | None = None) -> str | None:
        """The protected area a real path is in (by path, or as a hard link of a protected file), or None."""
        areas = self._areas
        area = areas.area_of(real, allowed=self._allowed)
        if area is not None:
            return area
        if info is None:
            try:
                info = os.stat(real)
            except OSError:
                return None  # nothing there yet: the path check above is all there is to check
        return areas.hardlink_area(info)

    def refuse_protected(self, path: Path | str, *, shown: str | None = None) -> None:
        """Raise SandboxViolation when a host path (any folder, symlinks followed) is one of the app's files.

        For tools that take paths outside the aliases (an MCP server's arguments, a command's
        working folder): the roots do not apply to them, the protected areas do.
        """
        self._refuse_protected_real(real_path(path), shown or str(path))

    def _refuse_protected_real(self, real: Path, shown: str) -> None:
        area = self.protected_area(real)  # ``real`` is a real path already: not resolved twice
        if area is not None:
            raise SandboxViolation(
                f"{shown} is protected: it is part of {area}. Tools may not read or change the app's own files."
            )

    def hides(self, entry: os.DirEntry[str]) -> bool:
        """True for a walked entry that walkers skip silently: in a protected area, a link into one, or a hard link of one."""
        try:
            if entry.is_symlink():
                return self.protected_area(real_path(entry.path)) is not None
            area = self._areas.area_of(Path(entry.path), allowed=self._allowed)
            if area is None and entry.is_file(follow_symlinks=False):
                area = self._areas.hardlink_area(entry.stat(follow_symlinks=False))
        except OSError:
            return False  # vanished while walking: the later open reports it
        return area is not None

    def show(self, real: Path) -> str:
        """The alias form of a real path inside one of the roots (the most specific root wins)."""
        best: tuple[str, Path] | None = None
        for alias, root in self._roots.items():
            if is_within(real, root) and (best is None or len(str(root)) > len(str(best[1]))):
                best = (alias, root)
        if best is None:
            return str(real)
        relative = Path(os.path.relpath(real, best[1])).as_posix()
        return f"@{best[0]}" if relative == "." else f"@{best[0]}/{relative}"


def _real_below(root: Path, parts: list[str]) -> Path:
    """``os.path.realpath(root/parts...)`` for a ``root`` that is a real path already.

    Only the components below the root are looked at (``lstat``), not the root's own: a run's
    state file sits ten folders deep, and ``realpath`` re-checked every one of them, twice a call
    (preflight and call). ``parts`` are clean (no ``.``, ``..`` or empty parts: see ``_split``).
    Where a component is a symlink, the whole path goes through ``realpath``. A missing or
    unreadable component is kept as it is, as ``realpath`` keeps it. POSIX only: on Windows
    ``realpath`` also follows junctions and fixes the case of each name, which ``lstat`` does not.
    """
    if os.name != "posix":
        return real_path(root.joinpath(*parts))
    path = str(root)
    for part in parts:
        path = os.path.join(path, part)
        try:
            is_link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            is_link = False
        if is_link:
            return real_path(root.joinpath(*parts))
    return Path(path)


def _is_state_log(real: Path, state: Path) -> bool:
    parts = parts_below(real, state)
    if parts[:1] == ("logs",):
        return True
    return len(parts) >= 3 and parts[0] == "runs" and parts[2] == "logs"


def _split(raw: str) -> tuple[str, list[str]]:
    """The alias and the clean components of a path, refusing every form that could escape."""
    if "\x00" in raw:
        raise SandboxViolation("A path may not contain NUL bytes.")
    if "\\" in raw:
        raise SandboxViolation(f"{raw!r}: use '/' in paths; backslashes are not allowed.")
    text = raw.strip()
    if text.startswith("/"):
        raise SandboxViolation(texts.SANDBOX_ABSOLUTE.format(path=raw))
    if text.startswith("~"):
        raise SandboxViolation(f"{raw!r}: home-folder paths are not allowed.")
    alias = "project"
    if text.startswith("@"):
        head, _, text = text.partition("/")
        alias = head[1:]
        if alias not in ALIASES:
            raise SandboxViolation(f"Unknown alias {head!r}; use @project, @state or @pkg.")
    parts: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            raise SandboxViolation(texts.SANDBOX_DOTDOT.format(path=raw))
        if _DRIVE.match(part) or (sys.platform == "win32" and ":" in part):
            raise SandboxViolation(f"{raw!r}: drive letters and ':' are not allowed in paths.")
        parts.append(part)
    return alias, parts
