"""Project folders (.crewagent.json with a stable projectId) and the recent-projects list."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from crewagent.core.errors import ProjectError, StoreReadError
from crewagent.core.messages import utc_now_iso
from crewagent.core.store._fsutil import atomic_write_json, read_json

PROJECT_FILE = ".crewagent.json"
PROJECT_SCHEMA_VERSION = 1
DEFAULT_ARTIFACTS_DIR = "artifacts"


class ProjectFile(BaseModel):
    """The content of ``<project>/.crewagent.json`` (contract)."""

    model_config = ConfigDict(extra="allow")

    schemaVersion: int = PROJECT_SCHEMA_VERSION
    projectId: str
    projectName: str
    artifactsDir: str = DEFAULT_ARTIFACTS_DIR
    activePackageId: str | None = None


class RecentProject(BaseModel):
    """One entry of ``<data>/projects.json``."""

    model_config = ConfigDict(extra="allow")

    projectId: str
    name: str
    projectRoot: str
    lastOpenedAt: str

    @property
    def exists(self) -> bool:
        return (Path(self.projectRoot) / PROJECT_FILE).is_file()


@dataclass(frozen=True)
class ProjectInfo:
    """An opened project: its identity, its folder and its runtime data folder."""

    id: str
    name: str
    root: Path
    runtime_dir: Path
    artifacts_dir: Path
    active_package_id: str | None = None


def new_project_id() -> str:
    return f"proj_{uuid.uuid4().hex}"


def read_project_file(root: Path) -> ProjectFile | None:
    """The project file of ``root``, None when the folder is not a project yet."""
    path = root / PROJECT_FILE
    try:
        return ProjectFile.model_validate(read_json(path))
    except FileNotFoundError:
        return None
    except OSError as exc:  # permission denied, or a folder named .crewagent.json
        raise ProjectError(f"{StoreReadError.from_os_error(path, exc)} The project was left untouched.") from exc
    except (ValueError, ValidationError) as exc:
        raise ProjectError(
            f"{path} is damaged and was left untouched ({_short(exc)}). "
            "Fix or remove it to open this folder as a project."
        ) from exc


def write_project_file(root: Path, name: str) -> ProjectFile:
    if root.exists() and not root.is_dir():
        raise ProjectError(f"{root} is a file, not a folder.")
    try:
        root.mkdir(parents=True, exist_ok=True)
        project = ProjectFile(projectId=new_project_id(), projectName=name)
        (root / project.artifactsDir).mkdir(exist_ok=True)
        atomic_write_json(root / PROJECT_FILE, project.model_dump(mode="json"))
    except OSError as exc:
        raise ProjectError(f"Cannot create a project in {root}: {exc.strerror or exc}") from exc
    return project


def load_recent(path: Path) -> list[RecentProject]:
    """The recent projects, most recent first; a damaged file is kept aside and treated as empty."""
    try:
        data = read_json(path)
    except FileNotFoundError:
        return []
    except ValueError:  # damaged content; an unreadable file (OSError) is raised and left alone
        _keep_aside(path)
        return []
    items = data.get("projects", []) if isinstance(data, dict) else data
    recent: list[RecentProject] = []
    for item in items if isinstance(items, list) else []:
        try:
            recent.append(RecentProject.model_validate(item))
        except ValidationError:
            continue
    recent.sort(key=lambda entry: entry.lastOpenedAt, reverse=True)
    return recent


def save_recent(path: Path, recent: list[RecentProject]) -> None:
    atomic_write_json(path, {"schemaVersion": 1, "projects": [entry.model_dump(mode="json") for entry in recent]})


def touch_recent(recent: list[RecentProject], project: ProjectFile, root: Path, limit: int = 30) -> list[RecentProject]:
    """Move (or add) a project to the top; a moved folder replaces its old path (same projectId)."""
    kept = [entry for entry in recent if entry.projectId != project.projectId and entry.projectRoot != str(root)]
    entry = RecentProject(
        projectId=project.projectId, name=project.projectName, projectRoot=str(root), lastOpenedAt=utc_now_iso()
    )
    return [entry, *kept][:limit]


def _keep_aside(path: Path) -> None:
    stamp = utc_now_iso().replace(":", "").replace(".", "")
    try:
        path.replace(path.with_name(f"{path.name}.corrupt-{stamp}"))
    except OSError:
        pass


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]
