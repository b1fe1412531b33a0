"""The bridge between the Qt UI and the core: a Worker in its own thread, speaking in signals."""

from crewagent.worker.bridge import Worker
from crewagent.worker.host import WorkerThread, start_worker
from crewagent.worker.values import ConversationSummary, ProjectRef, RecentProjectEntry

__all__ = [
    "ConversationSummary",
    "ProjectRef",
    "RecentProjectEntry",
    "Worker",
    "WorkerThread",
    "start_worker",
]
