"""The runs of a project: ``<data>/projects/<id>/runs/index.json`` (RunMetadata[], replaced atomically).

The index says which runs exist, which conversation and package version each belongs to, and
its phase. The state file is the truth about progress: ``currentNodeId`` and ``stepsCompleted``
here are a copy, refreshed whenever a turn changes the run's phase (not after every turn; the
state file is re-read when runs are listed). The index is replaced atomically but not fsync'd: a
killed process never leaves it torn, and what a power loss could take back (a phase, a copy of
the progress) is reconciled on read (a ``running`` phase without a live turn is shown as
``idle``), so each turn does not pay two fsyncs (about 10 ms) for it. Changes hold the runs
folder's lock; on POSIX reads hold none (see ``RunIndex._reading``).
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from crewagent.core import paths
from crewagent.core.errors import CrewAgentError
from crewagent.core.jsonparse import parse_json
from crewagent.core.messages import utc_now_iso
from crewagent.core.store._fsutil import atomic_write_bytes
from crewagent.core.store._lock import READS_NEED_NO_LOCK, process_lock

RunPhase = Literal["idle", "running", "waiting-user", "completed", "failed"]
PHASES: tuple[RunPhase, ...] = ("idle", "running", "waiting-user", "completed", "failed")
INDEX_NAME = "index.json"


class RunNotFound(CrewAgentError):
    """No run with that id in the project."""


class RunMetadata(BaseModel):
    """One entry of ``runs/index.json`` (unknown fields survive a round trip)."""

    model_config = ConfigDict(extra="allow")

    runId: str
    conversationId: str
    packageId: str
    packageName: str = ""
    packageVersion: str = ""
    workflowId: str
    workflowRef: str = ""
    activeAgentId: str | None = None
    phase: RunPhase = "idle"
    currentNodeId: str = ""
    stepsCompleted: list[str] = []
    createdAt: str
    updatedAt: str
    lastError: dict[str, Any] | None = None

    @property
    def state_alias(self) -> str:
        return f"@state/runs/{self.runId}/workflow.md"


class RunIndex:
    """Reads and changes one project's runs index; every change holds a cross-process lock."""

    def __init__(self, runtime_dir: Path):
        self.folder = paths.runs_dir(runtime_dir)
        self.path = self.folder / INDEX_NAME
        self._lock = process_lock(self.folder / ".lock")

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock.held():
            yield

    def _read(self) -> builtins.list[RunMetadata]:
        runs: builtins.list[RunMetadata] = []
        for item in self._entries():
            try:
                runs.append(RunMetadata.model_validate(item))
            except ValidationError:
                continue  # one damaged entry does not hide the others
        return runs

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """What a read holds: nothing on POSIX, the lock elsewhere.

        Every writer replaces the index with a rename of a complete temp file (never in place), and
        on POSIX opening the path gives the old file or the new one, whole, even while it is being
        replaced: a reader needs no lock, and waits for no writer of another process. The lock
        stays for changes (read, modify, replace). On Windows a reader holding the file open would
        make the writer's replace fail, so reads take the lock there.
        """
        if READS_NEED_NO_LOCK:
            yield
        else:
            with self._locked():
                yield

    def list(self) -> builtins.list[RunMetadata]:
        """Every run, oldest first."""
        with self._reading():
            return self._read()

    def get(self, run_id: str) -> RunMetadata:
        # Every run-mode turn looks its run up: only that entry is validated, not the whole index.
        with self._reading():
            for entry in self._entries():
                if isinstance(entry, dict) and entry.get("runId") == run_id:
                    try:
                        return RunMetadata.model_validate(entry)
                    except ValidationError:
                        continue  # a damaged entry is skipped, as list() skips it
        raise RunNotFound(f"There is no run {run_id!r} in this project.")

    def add(self, run: RunMetadata) -> None:
        with self._locked():
            entries = [e for e in self._entries() if not (isinstance(e, dict) and e.get("runId") == run.runId)]
            self._write([*entries, run.model_dump(mode="json")])

    def update(self, run_id: str, **changes: Any) -> RunMetadata:
        """Change fields of a run (``updatedAt`` is set) and persist the index."""
        return self.modify(run_id, lambda run: run.model_copy(update=changes))

    def modify(self, run_id: str, change: Callable[[RunMetadata], RunMetadata]) -> RunMetadata:
        # Every turn updates its run twice: only that entry is validated, the others are copied
        # as they are, so the cost stays small in a project with many runs.
        with self._locked():
            entries = list(self._entries())  # a copy: the parsed entries are shared, and never changed
            for position, entry in enumerate(entries):
                if isinstance(entry, dict) and entry.get("runId") == run_id:
                    try:
                        run = RunMetadata.model_validate(entry)
                    except ValidationError:
                        break
                    updated = RunMetadata.model_validate({**change(run).model_dump(), "updatedAt": utc_now_iso()})
                    entries[position] = updated.model_dump(mode="json")
                    self._write(entries)
                    return updated
        raise RunNotFound(f"There is no run {run_id!r} in this project.")

    def _write(self, entries: builtins.list[Any]) -> None:
        # One run per line: json's C encoder does each line (``indent`` would switch it to the
        # pure-Python one, about 1 ms for 40 runs), and the file stays readable and diffable.
        # A line this process wrote before is not encoded again: a turn that changes its run's
        # phase changes one entry, and encoding every run of the project's history cost ~13 µs a
        # run (0.6 ms at 44 runs) on top of the replace itself. The lines are known by the entry
        # objects they were made from, which the remembered index keeps alive (so no other object
        # can have the id of one of them) and which are never changed (see ``_entries``).
        remembered = _PARSED.get(self.path)
        known = remembered.lines if remembered is not None else {}
        lines = [known.get(id(entry)) or _ENCODER.encode(entry) for entry in entries]
        data = ("[\n" + ",\n".join(lines) + "\n]\n").encode() if entries else b"[]\n"
        atomic_write_bytes(self.path, data, sync=False)
        # What this process wrote is what it would parse.
        _remember(self.path, data, entries, {id(entry): line for entry, line in zip(entries, lines)})

    def _entries(self) -> builtins.list[Any]:
        """The parsed entries (shared: never to be changed), parsed again only when the file's bytes changed.

        Every Run-mode turn looks its run up, and the index grows by a run per run started (a
        project's whole history): reading the bytes and comparing them costs microseconds where
        parsing costs ~10 µs a run. Same bytes, same entries, whatever the file's inode or times;
        the index this process wrote last is remembered with its entries too.
        """
        try:
            with open(self.path, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise CrewAgentError(f"{self.path} cannot be read ({exc}); fix or remove it.") from exc
        remembered = _PARSED.get(self.path)
        if remembered is not None and remembered.raw == raw:
            return remembered.entries
        try:
            data = parse_json(raw)
        except ValueError as exc:
            raise CrewAgentError(f"{self.path} cannot be read ({exc}); fix or remove it.") from exc
        entries = data if isinstance(data, list) else []
        _remember(self.path, raw, entries)
        return entries


#: Encodes one entry as its line of the index (as ``json.dumps(entry, ensure_ascii=False)``).
_ENCODER = json.JSONEncoder(ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class _Parsed:
    """A runs index as this process last read or wrote it."""

    raw: bytes
    #: The parsed entries (shared: never changed).
    entries: builtins.list[Any]
    #: The JSON line of each entry this process wrote, by ``id(entry)`` (the entries above keep them alive).
    lines: dict[int, str] = field(default_factory=dict)


#: The last parse of each runs index read in this process (see RunIndex._entries and RunIndex._write).
_PARSED: dict[Path, _Parsed] = {}
_PARSED_MAX = 16


def _remember(path: Path, raw: bytes, entries: builtins.list[Any], lines: dict[int, str] | None = None) -> None:
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[path] = _Parsed(raw, entries, lines or {})
