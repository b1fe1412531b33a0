"""The Run workspace (issue 11): the run panel beside the timeline and the Logs panel under it."""

from crewagent.ui.run_workspace.logs import LogModel, LogPanel
from crewagent.ui.run_workspace.panel import RunWorkspace

__all__ = ["LogModel", "LogPanel", "RunWorkspace"]
