"""Run mode: runs of a package's workflow, their state checks and the engine around the ToolLoop."""

from crewagent.core.runs.create import RunSetupError, create_run, state_path
from crewagent.core.runs.engine import RunDriver, prepare_run
from crewagent.core.runs.guard import StateGuard, state_alias
from crewagent.core.runs.index import PHASES, RunIndex, RunMetadata, RunNotFound, RunPhase
from crewagent.core.runs.state import RunState, check_write, parse_state

__all__ = [
    "PHASES",
    "RunDriver",
    "RunIndex",
    "RunMetadata",
    "RunNotFound",
    "RunPhase",
    "RunSetupError",
    "RunState",
    "StateGuard",
    "check_write",
    "create_run",
    "parse_state",
    "prepare_run",
    "state_alias",
    "state_path",
]
