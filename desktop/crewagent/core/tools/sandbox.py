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
- Protected paths are refused whatever alias reaches them: the conversation logs
  (``<data>/projects/<id>/conversations``, a sibling of @state, reachable through a symlink or a
  data folder kept inside the project).
- Writes are refused in @pkg (read-only; PACKAGE-FORMAT.md has no separate code, so the sandbox
  code is used with a message saying so), to the project's ``.crewagent.json`` (a broken file
  stops the project from opening; the app owns it), and under ``@state/logs/`` and
  ``@state/runs/<runId>/logs/`` (offloaded tool outputs and the audit trail, which the model may
  read but must not rewrite).

What remains: a symlink swapped in between the check and the open (TOCTOU) is not defended
against; the model cannot create symlinks through these tools, so only another local process can.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from crewagent.core.tools.results import ErrorCode, ToolFailure

ALIASES = ("project", "state", "pkg")
PROJECT_FILE = ".crewagent.json"

_DRIVE = re.compile(r"^[A-Za-z]:")
_CASE_INSENSITIVE = sys.platform in ("darwin", "win32")


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


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _key(path: Path | str) -> str:
    text = os.path.normpath(str(path))
    return text.casefold() if _CASE_INSENSITIVE else text


def is_within(path: Path, root: Path) -> bool:
    """True when ``path`` is ``root`` or below it (both already real paths)."""
    path_key, root_key = _key(path), _key(root)
    if path_key == root_key:
        return True
    return path_key.startswith(root_key.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Sandbox:
    """The roots a tool call may touch. ``state``/``pkg`` may be None (no state folder, no package)."""

    project: Path
    state: Path | None = None
    pkg: Path | None = None
    #: Folders no alias may reach (the conversation logs); see ``for_project``.
    protected: tuple[Path, ...] = ()
    _roots: dict[str, Path] = field(init=False, repr=False, compare=False)
    _protected_real: tuple[Path, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        roots = {"project": _real(self.project)}
        if self.state is not None:
            roots["state"] = _real(self.state)
        if self.pkg is not None:
            roots["pkg"] = _real(self.pkg)
        object.__setattr__(self, "_roots", roots)
        object.__setattr__(self, "_protected_real", tuple(_real(p) for p in self.protected))

    @classmethod
    def for_project(cls, project_root: Path, runtime_dir: Path, pkg: Path | None = None) -> Sandbox:
        """The sandbox of an opened project: @state is ``<runtime>/state``, its conversations are protected."""
        return cls(
            project=project_root,
            state=runtime_dir / "state",
            pkg=pkg,
            protected=(runtime_dir / "conversations",),
        )

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
        real = _real(root.joinpath(*parts)) if parts else root
        if not is_within(real, root):
            raise SandboxViolation(f"{raw!r} resolves outside @{alias} (through a symbolic link).")
        resolved = ResolvedPath(real=real, alias=alias, relative="/".join(parts), read_only=alias == "pkg")
        self.check_real(real, shown=resolved.shown, write=write)
        return resolved

    def check_real(self, real: Path, *, shown: str, write: bool = False) -> None:
        """The checks that hold for every real path, also applied to entries found while walking."""
        if not any(is_within(real, root) for root in self._roots.values()):
            raise SandboxViolation(f"{shown} is outside the folders tools may use.")
        for protected in self._protected_real:
            if is_within(real, protected):
                raise SandboxViolation(f"{shown} is inside the conversation logs, which tools may not touch.")
        if not write:
            return
        pkg = self._roots.get("pkg")
        if pkg is not None and is_within(real, pkg):
            raise SandboxViolation(f"{shown} is in @pkg, which is read-only.")
        if _key(real) == _key(self._roots["project"] / PROJECT_FILE):
            raise SandboxViolation(f"{shown} is the project file; the app manages it, tools may only read it.")
        state = self._roots.get("state")
        if state is not None and is_within(real, state) and _is_state_log(real, state):
            raise SandboxViolation(f"{shown} is a log kept by the app (read-only for tools).")

    def is_protected(self, real: Path) -> bool:
        """True for a path inside the conversation logs (walkers skip these)."""
        return any(is_within(real, protected) for protected in self._protected_real)

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


def _is_state_log(real: Path, state: Path) -> bool:
    parts = Path(os.path.relpath(real, state)).parts
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
        raise SandboxViolation(f"{raw!r} is absolute; use @project/, @state/ or @pkg/ (or a path relative to the project).")
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
            raise SandboxViolation(f"{raw!r}: '..' is not allowed in paths.")
        if _DRIVE.match(part) or (sys.platform == "win32" and ":" in part):
            raise SandboxViolation(f"{raw!r}: drive letters and ':' are not allowed in paths.")
        parts.append(part)
    return alias, parts
