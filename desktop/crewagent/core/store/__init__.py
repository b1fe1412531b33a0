"""The runtime store: projects, conversation index, append-only logs, offloaded outputs."""

from typing import TYPE_CHECKING

from crewagent.core.lazy import lazy_exports

if TYPE_CHECKING:
    from crewagent.core.store.log import LoadResult, LogProblem
    from crewagent.core.store.offload import TOOL_OUTPUT_PREVIEW_CHARS, TOOL_OUTPUT_THRESHOLD
    from crewagent.core.store.projects import ProjectInfo, RecentProject
    from crewagent.core.store.runtime import RuntimeStore

# Imported on first use (crewagent/core/lazy.py): a light submodule must not pull in the rest.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "log": ("LoadResult", "LogProblem"),
        "offload": ("TOOL_OUTPUT_PREVIEW_CHARS", "TOOL_OUTPUT_THRESHOLD"),
        "projects": ("ProjectInfo", "RecentProject"),
        "runtime": ("RuntimeStore",),
    },
)

__all__ = [
    "LoadResult",
    "LogProblem",
    "ProjectInfo",
    "RecentProject",
    "RuntimeStore",
    "TOOL_OUTPUT_PREVIEW_CHARS",
    "TOOL_OUTPUT_THRESHOLD",
]
