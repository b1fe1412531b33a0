"""Every agent Agent mode offers: the built-in ones and those of the installed packages.

A package agent's id in the catalog (and in a conversation's ``agentId``) is qualified with its
package: ``<packageId>:<agentId>`` (``:`` never occurs in either part), so two packages may both
have an ``analyst``. A menu item of such an agent that names a workflow (``workflow``, or an
``exec`` pointing at a ``workflow.md``) starts that workflow of the agent's package in Run mode.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from crewagent.core import texts
from crewagent.core.agents import Agent, builtin_agents, effective_agent
from crewagent.core.errors import CrewAgentError, RunSetupError
from crewagent.core.packages import InstalledPackage, PackageError, PackageNotFound, PackageStore, ensure_builtin_packages, shared_store
from crewagent.core.runs import RunMetadata
from crewagent.core.runs.conversation import begin_run
from crewagent.core.runs.service import find_workflow
from crewagent.core.store import ProjectInfo, RuntimeStore

log = logging.getLogger(__name__)

SEPARATOR = ":"


@dataclass(frozen=True)
class CatalogAgent:
    """An agent as the catalog lists it: ``agent.id`` is qualified for package agents."""

    agent: Agent
    #: None for a built-in agent.
    package_id: str | None = None

    @property
    def local_id(self) -> str:
        return self.agent.id.split(SEPARATOR, 1)[-1]


def qualified(package_id: str, agent_id: str) -> str:
    return f"{package_id}{SEPARATOR}{agent_id}"


def catalog(data_dir: str | os.PathLike[str] | None = None) -> tuple[CatalogAgent, ...]:
    """The built-in agents, then each installed package's (blocking: reads the packages).

    The first listing of a data folder installs the built-in example package, so the app has it
    on first launch as the command line does (a failure to install is logged, not raised).
    """
    entries = [CatalogAgent(agent) for agent in builtin_agents()]
    try:
        ensure_builtin_packages(data_dir)
    except (PackageError, OSError, CrewAgentError) as exc:
        log.warning("the built-in packages could not be installed: %s", exc)
    try:
        packages = shared_store(data_dir).list()
    except PackageError as exc:  # a damaged package folder hides its agents, not everyone's
        log.warning("packages could not be listed: %s", exc)
        packages = []
    for package in packages:
        for agent in package.agents:
            entries.append(CatalogAgent(agent.model_copy(update={"id": qualified(package.id, agent.id)}), package.id))
    return tuple(entries)


def find(data_dir: str | os.PathLike[str] | None, agent_id: str | None) -> CatalogAgent | None:
    """The catalog entry of ``agent_id`` (a built-in id, or ``<packageId>:<agentId>``)."""
    if not agent_id:
        return None
    if SEPARATOR not in agent_id:
        found = next((a for a in builtin_agents() if a.id == agent_id), None)
        return CatalogAgent(found) if found is not None else None
    package_id, local = agent_id.split(SEPARATOR, 1)
    try:
        package = shared_store(data_dir).get(package_id)
    except (PackageNotFound, PackageError):
        return None
    agent = package.definition.agent(local)
    return CatalogAgent(agent.model_copy(update={"id": agent_id}), package_id) if agent is not None else None


def turn_agent(data_dir: str | os.PathLike[str] | None, agent_id: str | None, mode: str) -> Agent | None:
    """The agent whose persona a Chat/Agent turn carries: none in Chat, the conversation's in Agent
    (a package agent too), else the first built-in one."""
    if mode == "chat":
        return None
    entry = find(data_dir, agent_id)
    return entry.agent if entry is not None else effective_agent(builtin_agents(), None)


def start_menu_workflow(
    store: RuntimeStore, project: ProjectInfo, conversation_id: str, entry: CatalogAgent, target: str
) -> RunMetadata:
    """A menu item's ``workflow`` / ``exec`` target started as a run in the same conversation (blocking).

    A package agent's target is a workflow of its own package (an id, or the path of its
    ``workflow.md``); a built-in agent's is looked up in the installed packages (``[PKG:]WF``).
    The conversation switches to Run mode.
    """
    package: InstalledPackage
    if entry.package_id is not None:
        package = PackageStore(store.data_dir).get(entry.package_id)
        workflow = package.definition.resolve_workflow_ref(target)
        if workflow is None:
            raise RunSetupError(texts.MENU_WORKFLOW_MISSING.format(package=package.id, workflow=target, agent=entry.agent.metadata.name))
        workflow_id = workflow.id
    else:
        package, workflow_id = find_workflow(PackageStore(store.data_dir), target)
    return begin_run(store, project, conversation_id, package, workflow_id, agent_id=entry.local_id)
