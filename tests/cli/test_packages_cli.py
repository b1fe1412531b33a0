"""crewagent packages import|list|remove: exit codes, one problem per line, the built-in package on a fresh data folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crewagent.cli import main
from tests.core.package_helpers import builder_package, flat_package, write_folder, write_zip


def test_list_shows_the_builtin_package_on_a_fresh_data_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["packages", "list", "--data-dir", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    assert "project-brief-1.0.0" in out and "workflow project-brief: Project brief" in out
    assert "agent    analyst" in out and "agent    reviewer" in out


def test_list_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["packages", "list", "--json", "--data-dir", str(tmp_path / "d")]) == 0
    (package,) = json.loads(capsys.readouterr().out)
    assert package["packageId"] == "project-brief-1.0.0"
    assert package["workflows"][0] == {
        "id": "project-brief",
        "displayName": "Project brief",
        "workflow": "workflow.md",
        "graph": "workflow.graph.json",
        "entryNodeId": "gather-goals",
        "nodes": 4,
    }
    assert [a["id"] for a in package["agents"]] == ["analyst", "reviewer"]


def test_import_prints_the_id_then_list_and_remove(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = ["--data-dir", str(tmp_path / "d")]
    source = write_zip(builder_package(), tmp_path / "b.bmad")
    assert main(["packages", "import", str(source), *data]) == 0
    package_id = capsys.readouterr().out.strip()
    assert package_id.startswith("builder-demo-2.1.0-")
    assert main(["packages", "list", "--json", *data]) == 0
    assert {p["packageId"] for p in json.loads(capsys.readouterr().out)} == {package_id, "project-brief-1.0.0"}
    assert main(["packages", "remove", package_id, *data]) == 0
    capsys.readouterr()
    assert main(["packages", "remove", package_id, *data]) == 2
    assert "No installed package" in capsys.readouterr().err


def test_import_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_folder(flat_package(), tmp_path / "src")
    assert main(["packages", "import", "--json", str(source), "--data-dir", str(tmp_path / "d")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is True and result["packageId"] == "demo-1.0.0" and result["workflows"][0]["id"] == "demo-flow"


def test_an_invalid_package_exits_2_with_every_problem_one_per_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = flat_package()
    files["workflow.graph.json"]["edges"][0]["to"] = "nowhere"
    files["steps/end.md"]["frontmatter"]["nodeId"] = "finish"
    del files["bmad.json"]["version"]
    source = write_folder(files, tmp_path / "bad")
    assert main(["packages", "import", str(source), "--data-dir", str(tmp_path / "d")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0].endswith("not installed, 3 problem(s):")
    assert sorted(lines[1:]) == sorted(
        [
            "bmad.json#/version: the required property 'version' is missing",
            "workflow.graph.json#/edges/0/to: the edge's 'to' node 'nowhere' is not a node of the graph",
            "steps/end.md#/nodeId: is 'finish' but the graph's node is 'end'",
        ]
    )
    assert main(["packages", "list", "--json", "--data-dir", str(tmp_path / "d")]) == 0
    assert [p["packageId"] for p in json.loads(capsys.readouterr().out)] == ["project-brief-1.0.0"]


def test_an_invalid_package_with_json_prints_the_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "x.bmad"
    source.write_bytes(b"garbage")
    assert main(["packages", "import", "--json", str(source), "--data-dir", str(tmp_path / "d")]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is False and result["errors"][0]["file"] == "x.bmad"


def test_a_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["packages", "import", str(tmp_path / "nope.bmad"), "--data-dir", str(tmp_path / "d")]) == 2
    assert "does not exist" in capsys.readouterr().err


