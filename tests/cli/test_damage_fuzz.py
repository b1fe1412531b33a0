"""Fuzz: whatever damage lands in messages.jsonl, index.json, settings.json or .crewagent.json,
every command exits 0, 1 or 2 without a traceback, and the conversation the damage did not
touch still loads completely (issue 15).

Most examples run the CLI in-process (``crewagent.cli.main``, output captured) to stay fast;
a few run it as a real process.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent import cli_chat
from crewagent.cli import main
from crewagent.core.llm.demo import start_demo_server
from crewagent.core.messages import ConversationMessage, new_message_id, utc_now_iso
from crewagent.core.store import RuntimeStore
from tests.examples import examples
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote

TARGETS = ("messages.jsonl", "index.json", "settings.json", ".crewagent.json")


@dataclass(frozen=True)
class World:
    """A data folder, a config folder and a project with two conversations: the victim and the bystander."""

    root: Path
    data: Path
    config: Path
    folder: Path
    project_id: str
    victim: str
    bystander: str
    bystander_ids: tuple[str, ...]

    def path_of(self, target: str) -> Path:
        conversations = self.data / "projects" / self.project_id / "conversations"
        return {
            "messages.jsonl": conversations / self.victim / "messages.jsonl",
            "index.json": conversations / "index.json",
            "settings.json": self.config / "settings.json",
            ".crewagent.json": self.folder / ".crewagent.json",
        }[target]

    def bystander_log(self) -> Path:
        return self.data / "projects" / self.project_id / "conversations" / self.bystander / "messages.jsonl"


def _message(role: str, **fields: Any) -> ConversationMessage:
    return ConversationMessage.model_validate({"id": new_message_id(), "createdAt": utc_now_iso(), "role": role, **fields})


def _chain(text: str) -> list[ConversationMessage]:
    call = {"id": f"call_{text}", "type": "function", "function": {"name": "fs.list", "arguments": "{}"}}
    return [
        _message("user", content=f"hello {text}"),
        _message("assistant", content=None, tool_calls=[call]),
        _message("tool", content='{"ok": true, "entries": []}', tool_call_id=call["id"], toolName="fs.list"),
        _message("assistant", content=f"done {text}"),
    ]


def _build(root: Path) -> World:
    data, config, folder = root / "data", root / "config", root / "project"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps({"llm": {"provider": "demo"}}), encoding="utf-8")
    store = RuntimeStore(data)
    project = store.create_project(folder)
    victim = store.create_conversation(project.id, title="victim").id
    bystander = store.create_conversation(project.id, title="bystander").id
    store.append_messages(project.id, victim, _chain("victim"))
    stored = store.append_messages(project.id, bystander, _chain("bystander"))
    store.list_conversations(project.id)
    store.flush()
    return World(root, data, config, folder, project.id, victim, bystander, tuple(m.id for m in stored))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> World:
    return _build(tmp_path_factory.mktemp("fuzz-template"))


def _copy(template: World, root: Path) -> World:
    shutil.copytree(template.root, root)

    def moved(path: Path) -> Path:
        return root / path.relative_to(template.root)

    return World(
        root, moved(template.data), moved(template.config), moved(template.folder),
        template.project_id, template.victim, template.bystander, template.bystander_ids,
    )


# -- damage ---------------------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
_json_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12
)
_ids = st.sampled_from(["", "..", "../x", "conv_x", "a/b", "x" * 200]) | st.text(max_size=12)
#: JSON shaped like what each file holds, with wrong types and values: it reaches the validators.
_plausible = {
    "messages.jsonl": st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", "wizard"]), "id": _ids},
        optional={"createdAt": _json_values, "content": _json_values, "tool_calls": _json_values, "tool_call_id": _json_values},
    ),
    "index.json": st.lists(
        st.fixed_dictionaries({"id": _ids}, optional={"title": _json_values, "messageCount": _json_values, "logBytes": _json_values}),
        max_size=3,
    ),
    "settings.json": st.fixed_dictionaries(
        {},
        optional={"llm": st.dictionaries(st.sampled_from(["provider", "model", "baseUrl", "contextMaxChars"]), _json_values), "tools": _json_values},
    ),
    ".crewagent.json": st.fixed_dictionaries(
        {"projectId": _ids}, optional={"projectName": _json_values, "artifactsDir": _json_values, "schemaVersion": _json_values}
    ),
}


def _deep(depth: int, opener: str) -> bytes:
    return (opener * depth).encode()


def _damage(target: str) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=200),
        _json_values.map(lambda value: json.dumps(value).encode()),
        _plausible[target].map(lambda value: json.dumps(value).encode()),
        st.builds(_deep, st.integers(150, 3000), st.sampled_from(["[", '{"a":', '{"role":"user","content":['])),
        st.sampled_from([b'"' + b"x" * 3_000_000, b'{"role": "user", "content": "' + b"y" * 3_000_000 + b'"}', b"\x00" * 100_000]),
    )


@st.composite
def _damages(draw: st.DrawFn) -> tuple[str, bytes, bool]:
    target = draw(st.sampled_from(TARGETS))
    content = draw(_damage(target))
    # For the log: also keep its valid lines and append the damage, as a torn or corrupt write would.
    append = target == "messages.jsonl" and draw(st.booleans())
    return target, content, append


def _apply(world: World, target: str, content: bytes, append: bool) -> None:
    path = world.path_of(target)
    if append:
        with open(path, "ab") as handle:
            handle.write(content + b"\n")
    else:
        path.write_bytes(content)


# -- running the commands ------------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:
        captured = capsys.readouterr()
        pytest.fail(f"crewagent {' '.join(argv)} raised:\n{traceback.format_exc()}\nstderr: {captured.err[-2000:]}")
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _commands(world: World, target: str) -> list[list[str]]:
    common = ["--data-dir", str(world.data), "--project", str(world.folder)]
    victim = ["--conversation", world.victim]
    return [
        ["conversations", "--json", *common],
        *(["export", *common, *victim, "--format", fmt] for fmt in ("openai", "markdown", "jsonl")),
        ["context", *common, *victim],
        ["validate", "--all", str(world.path_of("messages.jsonl"))],
        ["validate", str(world.path_of("index.json"))],
        ["import", *common, str(world.path_of(target))],  # the damaged file itself as input
        ["chat", *common, *victim, "--provider", "demo", "hello after the damage"],
    ]


def _assert_bystander_complete(capsys: pytest.CaptureFixture[str], world: World, target: str, before: bytes) -> None:
    assert world.bystander_log().read_bytes() == before  # nothing stored was lost or rewritten
    code, out, err = _cli(
        capsys,
        ["export", "--data-dir", str(world.data), "--project", str(world.folder), "--conversation", world.bystander, "--format", "jsonl"],
    )
    if target == ".crewagent.json" and code == 2:
        return  # the project file itself is damaged: no conversation of it can be opened until it is fixed
    assert code == 0, err
    assert tuple(json.loads(line)["id"] for line in out.splitlines()) == world.bystander_ids


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damage=_damages())
def test_no_damage_makes_a_command_crash(
    damage: tuple[str, bytes, bool],
    template: World,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target, content, append = damage
    world = _copy(template, tmp_path_factory.mktemp("fuzz") / "world")
    monkeypatch.setenv("CREWAGENT_CONFIG_DIR", str(world.config))
    # The demo paces its stream for a window to show; here only the outcome counts.
    monkeypatch.setattr(cli_chat, "start_demo_server", functools.partial(start_demo_server, chunk_delay=0.0))
    before = world.bystander_log().read_bytes()
    _apply(world, target, content, append)

    for argv in _commands(world, target):
        code, _, err = _cli(capsys, argv)
        assert code in (0, 1, 2), (argv, code, err)
        assert "Traceback" not in err, (argv, err)
    _assert_bystander_complete(capsys, world, target, before)


@pytest.mark.parametrize(
    ("target", "content", "command"),
    [
        ("messages.jsonl", b"[" * 1500, ["chat", "--provider", "demo", "list the files"]),
        ("index.json", b"\xff\xfe not json", ["export", "--format", "markdown"]),
        (".crewagent.json", b'{"projectId": "../../escape", "projectName": 3}', ["context"]),
    ],
)
@pytest.mark.xdist_group(ZYGOTE_GROUP)
def test_real_processes_survive_the_damage(
    target: str, content: bytes, command: list[str], template: World, tmp_path: Path, crewagent_zygote: Zygote
) -> None:
    """In real processes, forked from the session's zygote (tests/fakes/zygote.py)."""
    world = _copy(template, tmp_path / "world")
    before = world.bystander_log().read_bytes()
    _apply(world, target, content, append=True if target == "messages.jsonl" else False)
    env = {**os.environ, "CREWAGENT_CONFIG_DIR": str(world.config)}
    common = ["--data-dir", str(world.data), "--project", str(world.folder), "--conversation", world.victim]
    proc = crewagent_zygote.run([command[0], *common, *command[1:]], env=env, timeout=60)
    assert proc.returncode in (0, 1, 2) and "Traceback" not in proc.stderr, proc.stderr
    if target != ".crewagent.json":
        assert proc.returncode == 0, proc.stderr
    assert world.bystander_log().read_bytes() == before
