"""Helpers for the Run-mode tests: a small real package on disk, installed, and a run in a conversation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crewagent.core.packages import InstalledPackage, PackageStore
from crewagent.core.runs import RunMetadata, create_run
from crewagent.core.store import ProjectInfo, RuntimeStore

#: A three-node workflow: write -> check (a decision: back to write, or on to done) -> done.
GRAPH: dict[str, Any] = {
    "schemaVersion": "1.1",
    "entryNodeId": "write",
    "nodes": [
        {"id": "write", "type": "step", "file": "steps/write.md", "title": "Write", "agentId": "writer", "outputs": ["artifacts/note.md"]},
        {"id": "check", "type": "decision", "file": "steps/check.md", "title": "Check", "agentId": "checker"},
        {"id": "done", "type": "end", "file": "steps/done.md", "title": "Done"},
    ],
    "edges": [
        {"from": "write", "to": "check", "label": "next", "isDefault": True},
        {"from": "check", "to": "done", "label": "ok", "isDefault": True},
        {"from": "check", "to": "write", "label": "redo"},
    ],
}


def _agent(agent_id: str, name: str, role: str) -> dict[str, Any]:
    return {
        "id": agent_id,
        "metadata": {"name": name, "title": role, "icon": "*"},
        "persona": {"role": role, "identity": f"{name} the {role}", "communication_style": "short", "principles": ["follow the graph"]},
        "menu": [{"trigger": "*note", "description": "Write a note (workflow)", "workflow": "notes"}],
    }


def _step(node_id: str, node_type: str, transitions: list[dict[str, Any]], body: str) -> str:
    lines = ["---", 'schemaVersion: "1.1"', f"nodeId: {node_id}", f"type: {node_type}", "inputs: []", "outputs: []"]
    lines.append("setsVariables: []")
    lines.append("transitions: " + json.dumps(transitions))
    return "\n".join(lines) + "\n---\n\n" + body + "\n"


def write_package(folder: Path, *, version: str = "1.0.0") -> Path:
    """The three-node ``notes`` package as a flat folder."""
    (folder / "steps").mkdir(parents=True, exist_ok=True)
    manifest = {
        "schemaVersion": "1.1",
        "name": "notes",
        "version": version,
        "entry": {"workflow": "workflow.md", "graph": "workflow.graph.json", "agents": "agents.json"},
        "workflows": [{"id": "notes", "displayName": "Notes", "workflow": "workflow.md", "graph": "workflow.graph.json", "tags": []}],
    }
    (folder / "bmad.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "workflow.graph.json").write_text(json.dumps(GRAPH), encoding="utf-8")
    agents = {"schemaVersion": "1.1", "agents": [_agent("writer", "Wren", "Writer"), _agent("checker", "Cato", "Checker")]}
    (folder / "agents.json").write_text(json.dumps(agents), encoding="utf-8")
    (folder / "workflow.md").write_text(
        '---\nschemaVersion: "1.1"\nworkflowType: notes\ncurrentNodeId: ""\nstepsCompleted: []\nvariables: {}\n'
        "decisionLog: []\nartifacts: []\n---\n\n# Notes\n",
        encoding="utf-8",
    )
    (folder / "steps" / "write.md").write_text(
        _step("write", "step", [{"to": "check", "label": "next", "isDefault": True}], "Write artifacts/note.md."), encoding="utf-8"
    )
    (folder / "steps" / "check.md").write_text(
        _step("check", "decision", [{"to": "done", "label": "ok", "isDefault": True}, {"to": "write", "label": "redo"}], "Check the note."),
        encoding="utf-8",
    )
    (folder / "steps" / "done.md").write_text(_step("done", "end", [], "Finish."), encoding="utf-8")
    return folder


def install_notes(data_dir: Path, tmp: Path, *, version: str = "1.0.0") -> InstalledPackage:
    return PackageStore(data_dir).import_package(write_package(tmp / f"notes-src-{version}", version=version))


def start_run(store: RuntimeStore, project: ProjectInfo, package: InstalledPackage, conversation_id: str | None = None) -> RunMetadata:
    if conversation_id is None:
        conversation_id = store.create_conversation(project.id, title="run", entry_type="run").id
    store.update_conversation(project.id, conversation_id, activeType="run")
    return create_run(store, project, conversation_id, package, "notes")
