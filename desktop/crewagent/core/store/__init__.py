"""The runtime store: projects, conversation index, append-only logs, offloaded outputs."""

from crewagent.core.store.log import LoadResult, LogProblem
from crewagent.core.store.offload import TOOL_OUTPUT_PREVIEW_CHARS, TOOL_OUTPUT_THRESHOLD
from crewagent.core.store.projects import ProjectInfo, RecentProject
from crewagent.core.store.runtime import RuntimeStore

__all__ = [
    "LoadResult",
    "LogProblem",
    "ProjectInfo",
    "RecentProject",
    "RuntimeStore",
    "TOOL_OUTPUT_PREVIEW_CHARS",
    "TOOL_OUTPUT_THRESHOLD",
]
