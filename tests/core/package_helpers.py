"""Packages for tests, as a dict of package-relative path -> content, written as a folder or a .bmad zip."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

import yaml

Files = dict[str, Any]  # dict/list -> JSON; {"frontmatter": ..., "body": ...} -> Markdown; str/bytes -> as is


def md(frontmatter: dict[str, Any], body: str = "Do the step.\n") -> dict[str, Any]:
    return {"frontmatter": frontmatter, "body": body}


def _step(node_id: str, node_type: str, **extra: Any) -> dict[str, Any]:
    return md({"schemaVersion": "1.1", "nodeId": node_id, "type": node_type, **extra}, f"# {node_id}\n\nInstructions for {node_id}.\n")


def _agents() -> dict[str, Any]:
    def persona() -> dict[str, Any]:
        return {"role": "Analyst", "identity": "Careful.", "communication_style": "Short.", "principles": ["Ask first."]}

    return {
        "schemaVersion": "1.1",
        "agents": [
            {
                "id": "analyst",
                "metadata": {"name": "Mira", "title": "Analyst", "icon": "A"},
                "persona": persona(),
                "menu": [{"trigger": "*go", "description": "Run it", "workflow": "WORKFLOW_ID"}],
            },
            {"id": "reviewer", "metadata": {"name": "Theo", "title": "Reviewer", "icon": "R"}, "persona": persona()},
        ],
    }


def _state(kind: str) -> dict[str, Any]:
    return md({"schemaVersion": "1.1", "workflowType": kind, "currentNodeId": "", "stepsCompleted": []}, "# State\n")


def flat_package(name: str = "demo", version: str = "1.0.0", steps: int = 1) -> Files:
    """entry only (no workflows[]): step-1 .. step-N -> decide -> end, steps/<id>.md beside the graph."""
    ids = [f"step-{i}" for i in range(1, steps + 1)]
    nodes = [{"id": i, "type": "step", "file": f"steps/{i}.md", "agentId": "analyst"} for i in ids]
    nodes += [
        {"id": "decide", "type": "decision", "file": "steps/decide.md", "agentId": "reviewer"},
        {"id": "end", "type": "end", "file": "steps/end.md"},
    ]
    chain = [*ids, "decide"]
    edges = [{"from": a, "to": b, "label": "next", "isDefault": True} for a, b in zip(chain, chain[1:], strict=False)]
    edges += [
        {"from": "decide", "to": "end", "label": "approve", "isDefault": True},
        {"from": "decide", "to": ids[0], "label": "revise"},
    ]
    agents = _agents()
    agents["agents"][0]["menu"][0]["workflow"] = "demo-flow"
    files: Files = {
        "bmad.json": {
            "schemaVersion": "1.1",
            "name": name,
            "version": version,
            "entry": {"workflow": "workflow.md", "graph": "workflow.graph.json", "agents": "agents.json"},
        },
        "workflow.graph.json": {"schemaVersion": "1.1", "entryNodeId": ids[0], "nodes": nodes, "edges": edges},
        "workflow.md": _state("demo-flow"),
        "agents.json": agents,
    }
    for node in nodes:
        files[node["file"]] = _step(node["id"], node["type"], **({"agentId": node["agentId"]} if "agentId" in node else {}))
    return files


def builder_package(name: str = "Builder Demo", version: str = "2.1.0") -> Files:
    """The Builder's multi-workflow layout: workflows/<id>/..., numeric ids, root-relative node files."""
    files: Files = {}
    workflows = []
    for wf in ("7", "12"):
        base = f"workflows/{wf}"
        node_ids = ["step-01", "decide-02", "end-99"]
        types = ["step", "decision", "end"]
        nodes = [{"id": n, "type": t, "file": f"{base}/steps/{n}.md", "title": n} for n, t in zip(node_ids, types, strict=True)]
        nodes[0]["agentId"] = "analyst"
        edges = [
            {"from": "step-01", "to": "decide-02", "label": "next", "isDefault": True},
            {"from": "decide-02", "to": "end-99", "label": "branch-1", "isDefault": True},
            {"from": "decide-02", "to": "step-01", "label": "branch-2"},
        ]
        files[f"{base}/workflow.graph.json"] = {"schemaVersion": "1.1", "entryNodeId": "step-01", "nodes": nodes, "edges": edges}
        files[f"{base}/workflow.md"] = _state(f"flow-{wf}")
        for node in nodes:
            files[node["file"]] = _step(node["id"], node["type"])
        workflows.append(
            {"id": wf, "displayName": f"Flow {wf}", "workflow": f"{base}/workflow.md", "graph": f"{base}/workflow.graph.json", "tags": []}
        )
    agents = _agents()
    agents["agents"][0]["menu"][0]["workflow"] = "12"
    files["agents.json"] = agents
    files["assets/readme.txt"] = "an asset\n"
    files["bmad.json"] = {
        "schemaVersion": "1.1",
        "name": name,
        "version": version,
        "createdAt": "2025-01-01T00:00:00Z",
        "entry": {
            "workflow": "workflows/7/workflow.md",
            "graph": "workflows/7/workflow.graph.json",
            "agents": "agents.json",
            "assetsDir": "assets/",
        },
        "workflows": workflows,
    }
    return files


def render(content: Any) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, dict) and set(content) == {"frontmatter", "body"}:
        head = yaml.safe_dump(content["frontmatter"], sort_keys=False, allow_unicode=True)
        return f"---\n{head}---\n{content['body']}".encode()
    return json.dumps(content, indent=2).encode("utf-8")


def write_folder(files: Files, folder: Path) -> Path:
    for name, content in files.items():
        path = folder.joinpath(*name.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(render(content))
    return folder


def write_zip(files: Files, path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, render(content))
    return path


def clone(files: Files) -> Files:
    return copy.deepcopy(files)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative POSIX path -> bytes)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
