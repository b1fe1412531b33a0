"""Which runs use a package: every project's run index under one data folder, read without creating anything."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from crewagent.core import paths
from crewagent.core.errors import CrewAgentError
from crewagent.core.runs.index import INDEX_NAME, RunIndex, RunMetadata
from crewagent.core.store.projects import load_recent

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PackageUse:
    """A run of a package, with the project it belongs to (its name, or its id when it has none)."""

    project_id: str
    project_name: str
    run: RunMetadata


def runs_using(data_root: str | os.PathLike[str] | None, package_id: str) -> list[PackageUse]:
    """The runs of every project of ``data_root`` whose ``packageId`` is ``package_id``.

    Reads one small index per project that has runs; a project without runs is not touched (no
    runs folder or lock file is created). An index that cannot be read is skipped and logged:
    it cannot say which package its runs use.
    """
    root = paths.data_dir(data_root)
    try:
        names = {entry.projectId: entry.name for entry in load_recent(paths.projects_file(root))}
    except OSError:
        names = {}
    projects = root / "projects"
    try:
        folders = sorted(entry.path for entry in os.scandir(projects) if entry.is_dir())
    except FileNotFoundError:
        return []
    uses: list[PackageUse] = []
    for folder in map(Path, folders):
        if not (paths.runs_dir(folder) / INDEX_NAME).is_file():
            continue
        try:
            runs = RunIndex(folder).list()
        except (CrewAgentError, OSError) as exc:
            log.warning("the runs of %s cannot be read: %s", folder, exc)
            continue
        project_id = folder.name
        uses.extend(PackageUse(project_id, names.get(project_id, project_id), run) for run in runs if run.packageId == package_id)
    return uses
