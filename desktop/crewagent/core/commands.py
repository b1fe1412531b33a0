"""Global commands, intercepted before any mode routes the input: /menu /pause /stop /resume /dismiss.

A leading ``*`` works as well as ``/`` (``*menu``). What each does to the conversation and its run
(the persistent part, here, for the app and the command line alike):

- ``/stop``: stop the running turn; the run (if any) waits, ``idle``;
- ``/pause``: the same, and the run is marked paused until ``/resume``;
- ``/resume``: continue the active run: back to Run mode and a turn that resumes it;
- ``/dismiss``: leave Run mode for Agent mode; the run is kept and ``/resume`` comes back to it;
- ``/menu``: Agent mode and the agent's menu.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

from crewagent.core.runs import RunIndex
from crewagent.core.runs.service import active_run
from crewagent.core.store import ProjectInfo, RuntimeStore

GlobalCommand = Literal["menu", "pause", "stop", "resume", "dismiss"]
COMMANDS: tuple[GlobalCommand, ...] = ("menu", "pause", "stop", "resume", "dismiss")
#: The user message a /resume turn sends (the model reads it as USER_INPUT, intent resume).
RESUME_TEXT = "continue"


def global_command(text: str) -> GlobalCommand | None:
    """The command ``text`` is (``/pause``, ``*Pause ``), or None for ordinary input."""
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in "/*":
        return None
    name = stripped[1:].strip().lower()
    return cast(GlobalCommand, name) if name in COMMANDS else None


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """What is left for the caller to do: ``turn`` (a Run-mode turn with ``text``), ``menu`` or nothing."""

    command: GlobalCommand
    message: str
    then: Literal["turn", "menu", "stop", "none"] = "none"
    text: str = ""


def apply_command(store: RuntimeStore, project: ProjectInfo, conversation_id: str, command: GlobalCommand) -> CommandOutcome:
    """Do the persistent part of ``command`` (blocking) and say what the caller does next."""
    meta = store.get_conversation(project.id, conversation_id)
    run = active_run(project, meta)
    if command == "menu":
        store.update_conversation(project.id, conversation_id, activeType="agent")
        return CommandOutcome(command, "Agent mode: the agent's menu.", "menu")
    if command == "dismiss":
        store.update_conversation(project.id, conversation_id, activeType="agent")
        hint = f" The run {run.runId} is kept; /resume returns to it." if run is not None else ""
        return CommandOutcome(command, "Left Run mode." + hint)
    if run is None:
        if command == "stop":
            return CommandOutcome(command, "Stopped.", "stop")
        return CommandOutcome(command, "This conversation has no workflow run.")
    index = RunIndex(project.runtime_dir)
    if command in ("stop", "pause"):
        paused = command == "pause"
        if run.phase not in ("completed",):
            index.update(run.runId, phase="idle", paused=paused)
        verb = "paused; /resume continues it" if paused else "stopped; it waits for your next message"
        return CommandOutcome(command, f"Run {run.runId} {verb}.", "stop")
    # resume
    if run.phase == "completed":
        return CommandOutcome(command, f"Run {run.runId} is complete; there is nothing to resume.")
    index.update(run.runId, paused=False)
    store.update_conversation(project.id, conversation_id, activeType="run")
    return CommandOutcome(command, f"Resuming run {run.runId}.", "turn", RESUME_TEXT)
