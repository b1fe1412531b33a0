"""Damaged, unreadable and mistaken input on the command line (issue 15, items 4-7 and 14-16).

Each case ends in exit 0, 1 or 2 with one ``crewagent: ...`` line naming the problem, never a
traceback, and leaves the other conversations and projects usable. Unreadable folders (mode
000) are checked in a real process without the capabilities that let root ignore file modes:
forked from the session's zygote, which runs under ``setpriv`` (tests/fakes/zygote.py), not a
fresh interpreter per command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from crewagent.cli import main
from crewagent.core.messages import ConversationMessage, new_message_id, utc_now_iso
from crewagent.core.store import RuntimeStore
from tests.fakes.scripted_server import API_KEY, ScriptedServer, text
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote, without_file_override

DEEP = "[" * 1500


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_one_line_error(err: str, *needles: str) -> None:
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("crewagent: "), err
    for needle in needles:
        assert needle in last, err


def _message(role: str, text: str) -> ConversationMessage:
    return ConversationMessage(id=new_message_id(), createdAt=utc_now_iso(), role=role, content=text)  # type: ignore[arg-type]


class Setup:
    """A project with two conversations, each with one exchange."""

    def __init__(self, data: Path, folder: Path):
        self.data, self.folder = data, folder
        store = RuntimeStore(data)
        self.project = store.create_project(folder)
        self.good = store.create_conversation(self.project.id, title="good").id
        self.bad = store.create_conversation(self.project.id, title="bad").id
        for conversation_id in (self.good, self.bad):
            store.append_message(self.project.id, conversation_id, _message("user", f"hello {conversation_id}"))
            store.append_message(self.project.id, conversation_id, _message("assistant", "hi"))
        store.flush()

    def args(self, *argv: str) -> list[str]:
        return [*argv, "--data-dir", str(self.data), "--project", str(self.folder)]

    def folder_of(self, conversation_id: str) -> Path:
        return self.data / "projects" / self.project.id / "conversations" / conversation_id

    def export(self, capsys: pytest.CaptureFixture[str], conversation_id: str, fmt: str = "openai") -> tuple[int, str, str]:
        return _run(capsys, *self.args("export", "--conversation", conversation_id, "--format", fmt))


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path / "data", tmp_path / "project")


def _assert_good_still_works(capsys: pytest.CaptureFixture[str], setup: Setup) -> None:
    code, out, err = setup.export(capsys, setup.good)
    assert code == 0, err
    assert [m["content"] for m in json.loads(out)] == [f"hello {setup.good}", "hi"]


# -- item 4: a deeply nested line ---------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["export", "--format", "openai"],
        ["export", "--format", "markdown"],
        ["export", "--format", "jsonl"],
        ["context"],
        ["chat", "--provider", "demo", "hello again"],
    ],
)
def test_a_deeply_nested_line_is_skipped_not_fatal(
    capsys: pytest.CaptureFixture[str], setup: Setup, command: list[str]
) -> None:
    log = setup.folder_of(setup.bad) / "messages.jsonl"
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(DEEP + "\n")

    code, out, err = _run(capsys, *setup.args(*command, "--conversation", setup.bad))

    assert code == 0, err
    assert "Traceback" not in err
    assert f"hello {setup.bad}" in out or command[0] == "chat"
    quarantined = (log.parent / "messages.corrupt.jsonl").read_text(encoding="utf-8")
    assert json.loads(quarantined)["raw"] == DEEP
    if command[0] == "export":
        assert "1 damaged line(s) skipped (line 3)" in err


def test_deep_input_to_import_and_validate_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, setup: Setup) -> None:
    for name in ("deep.json", "deep.jsonl"):
        source = tmp_path / name
        source.write_text(DEEP, encoding="utf-8")
        code, _, err = _run(capsys, "validate", str(source))
        assert code == 2
        _assert_one_line_error(err, name, "recursion limit")
    source = tmp_path / "deep.json"
    code, _, err = _run(capsys, *setup.args("import", str(source)))
    assert code == 2
    _assert_one_line_error(err, "deep.json", "not valid JSON")
    assert len(RuntimeStore(setup.data).list_conversations(setup.project.id)) == 2


def test_valid_json_too_deep_to_store_is_refused_by_import(capsys: pytest.CaptureFixture[str], tmp_path: Path, setup: Setup) -> None:
    """json.loads reads 900 levels, but the log could not be written or read back: refuse it up front."""
    source = tmp_path / "deep-but-valid.json"
    source.write_text(json.dumps([{"role": "user", "content": "x", "extra": json.loads("[" * 900 + "]" * 900)}]))
    code, _, err = _run(capsys, *setup.args("import", str(source)))
    assert code == 2
    _assert_one_line_error(err, "deep-but-valid.json")


def test_a_deep_settings_file_is_kept_aside_and_chat_goes_on(
    capsys: pytest.CaptureFixture[str], setup: Setup, isolated_dirs: dict[str, Path]
) -> None:
    settings = isolated_dirs["config"] / "settings.json"
    settings.write_text(DEEP, encoding="utf-8")
    code, out, err = _run(capsys, *setup.args("chat", "--provider", "demo", "--conversation", setup.good, "hi"))
    assert code == 0, err
    assert "Traceback" not in err and "settings.json is damaged" in err
    assert (isolated_dirs["config"] / "settings.json.corrupt").read_text(encoding="utf-8") == DEEP


# -- item 5: unreadable files and folders ------------------------------------------------------


def test_a_log_replaced_by_a_folder_fails_only_that_conversation(capsys: pytest.CaptureFixture[str], setup: Setup) -> None:
    log = setup.folder_of(setup.bad) / "messages.jsonl"
    log.unlink()
    log.mkdir()

    code, out, err = _run(capsys, *setup.args("conversations", "--json"))
    assert code == 0, err
    assert {meta["title"] for meta in json.loads(out)} == {"good", "bad"}
    for command in (["export"], ["context"], ["chat", "--provider", "demo", "hi"]):
        code, _, err = _run(capsys, *setup.args(*command, "--conversation", setup.bad))
        assert code == 1
        _assert_one_line_error(err, str(log), "is a folder")
    _assert_good_still_works(capsys, setup)
    code, _, err = _run(capsys, *setup.args("chat", "--provider", "demo", "--conversation", setup.good, "still fine?"))
    assert code == 0, err


@pytest.mark.parametrize("how", ["--data-dir", "CREWAGENT_DATA_DIR"])
def test_a_data_dir_that_is_a_file_is_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    file = tmp_path / "not-a-folder"
    file.write_text("x")
    argv = ["conversations", "--project", str(tmp_path / "p")]
    if how == "--data-dir":
        argv += ["--data-dir", str(file)]
    else:
        monkeypatch.setenv("CREWAGENT_DATA_DIR", str(file))
    code, _, err = _run(capsys, *argv)
    assert code == 2
    _assert_one_line_error(err, str(file), "is a file, not a folder")
    assert file.read_text() == "x"


def test_a_config_dir_that_is_a_file_is_bad_input(
    capsys: pytest.CaptureFixture[str], setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "config-file"
    file.write_text("x")
    monkeypatch.setenv("CREWAGENT_CONFIG_DIR", str(file))
    code, _, err = _run(capsys, *setup.args("chat", "--provider", "demo", "--conversation", setup.good, "hi"))
    assert code == 2
    _assert_one_line_error(err, str(file), "is a file, not a folder")
    assert len(_log_lines(setup, setup.good)) == 2  # nothing was sent or stored


def _log_lines(setup: Setup, conversation_id: str) -> list[str]:
    return (setup.folder_of(conversation_id) / "messages.jsonl").read_text(encoding="utf-8").splitlines()


def _without_file_override(argv: list[str]) -> list[str]:
    """``argv`` run so that file modes apply: as root, without the capabilities that bypass them."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("setpriv") is None:
        pytest.skip("running as root and setpriv (util-linux) is missing: mode 000 cannot be enforced")
    return [*without_file_override(), *argv]


#: The tests that start commands from the session's zygote (as root, it runs without the
#: capabilities that bypass file modes): on its xdist worker.
UNPRIVILEGED = pytest.mark.xdist_group(ZYGOTE_GROUP)


def _cli(zygote: Zygote, *argv: str) -> subprocess.CompletedProcess[str]:
    return zygote.run(argv, timeout=60)


@pytest.fixture
def locked() -> Iterator[list[Path]]:
    """Paths chmod'ed to 000 by a test; their modes are restored afterwards (so tmp_path can be removed)."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        path.chmod(0o755)


def _lock(locked: list[Path], path: Path) -> None:
    path.chmod(0o000)
    locked.append(path)
    probe = subprocess.run(_without_file_override(["ls", str(path)]), capture_output=True)
    if probe.returncode == 0:
        pytest.skip("this system lets the test process read a mode-000 folder")


@UNPRIVILEGED
def test_an_unreadable_conversation_folder_fails_only_that_conversation(setup: Setup, locked: list[Path], crewagent_zygote: Zygote) -> None:
    folder = setup.folder_of(setup.bad)
    _lock(locked, folder)

    listed = _cli(crewagent_zygote, *setup.args("conversations", "--json"))
    assert listed.returncode == 0, listed.stderr
    assert {meta["id"] for meta in json.loads(listed.stdout)} == {setup.good, setup.bad}
    for command in (["export"], ["context"], ["chat", "--provider", "demo", "hi"]):
        failed = _cli(crewagent_zygote, *setup.args(*command, "--conversation", setup.bad))
        assert failed.returncode == 1
        _assert_one_line_error(failed.stderr, str(folder), "permission denied")
    exported = _cli(crewagent_zygote, *setup.args("export", "--conversation", setup.good))
    assert exported.returncode == 0, exported.stderr
    assert len(json.loads(exported.stdout)) == 2


@UNPRIVILEGED
@pytest.mark.parametrize("sub", ["", "conversations"])
def test_an_unreadable_project_data_folder_fails_only_that_project(
    setup: Setup, locked: list[Path], tmp_path: Path, sub: str, crewagent_zygote: Zygote
) -> None:
    folder = setup.data / "projects" / setup.project.id / sub
    _lock(locked, folder)
    for command in (["conversations"], ["export", "--conversation", setup.good], ["chat", "--provider", "demo", "hi"]):
        failed = _cli(crewagent_zygote, *setup.args(*command))
        assert failed.returncode == 1
        _assert_one_line_error(failed.stderr, str(folder).rstrip("/"), "permission denied")

    other = _cli(crewagent_zygote, "chat", "--data-dir", str(setup.data), "--project", str(tmp_path / "other"), "--provider", "demo", "hi")
    assert other.returncode == 0, other.stderr


@UNPRIVILEGED
def test_an_unreadable_project_folder_is_bad_input(setup: Setup, locked: list[Path], tmp_path: Path, crewagent_zygote: Zygote) -> None:
    _lock(locked, setup.folder)
    failed = _cli(crewagent_zygote, *setup.args("conversations"))
    assert failed.returncode == 2
    _assert_one_line_error(failed.stderr, str(setup.folder / ".crewagent.json"), "permission denied")

    other = _cli(crewagent_zygote, "conversations", "--data-dir", str(setup.data), "--project", str(tmp_path / "other"))
    assert other.returncode == 0, other.stderr


# -- item 6: an unreadable settings.json is an error, not a reset --------------------------------


@UNPRIVILEGED
def test_an_unreadable_settings_file_is_an_error_and_is_left_alone(
    setup: Setup, locked: list[Path], isolated_dirs: dict[str, Path], crewagent_zygote: Zygote
) -> None:
    settings = isolated_dirs["config"] / "settings.json"
    content = json.dumps({"llm": {"provider": "demo", "model": "my-precious-model"}})
    settings.write_text(content, encoding="utf-8")
    settings.chmod(0o000)
    locked.append(settings)

    failed = _cli(crewagent_zygote, *setup.args("chat", "--conversation", setup.good, "hi"))

    assert failed.returncode == 2
    _assert_one_line_error(failed.stderr, str(settings), "permission denied")
    assert sorted(p.name for p in isolated_dirs["config"].iterdir()) == ["settings.json"]
    settings.chmod(0o600)
    assert settings.read_text(encoding="utf-8") == content
    assert len(_log_lines(setup, setup.good)) == 2


# -- item 7: a stale index ----------------------------------------------------------------------


def test_an_empty_index_hides_no_conversation(capsys: pytest.CaptureFixture[str], setup: Setup) -> None:
    index = setup.folder_of(setup.good).parent / "index.json"
    index.write_text("[]", encoding="utf-8")

    code, out, err = setup.export(capsys, setup.good)
    assert code == 0, err
    assert "brought back" in err and setup.good in err and setup.bad in err
    assert len(json.loads(out)) == 2

    code, _, err = _run(capsys, *setup.args("chat", "--provider", "demo", "--conversation", setup.bad, "are you there?"))
    assert code == 0, err
    assert "brought back" not in err  # the index was repaired once
    assert len(_log_lines(setup, setup.bad)) == 4


# -- items 14-16: --model, validate before create, bad input --------------------------------------


@pytest.fixture
def compatible(scripted_llm: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.delenv("CREWAGENT_MODEL", raising=False)
    return scripted_llm


def test_the_model_flag_is_enough_without_a_model_setting(
    capsys: pytest.CaptureFixture[str], compatible: ScriptedServer, tmp_path: Path
) -> None:
    compatible.script(text("Hello from the flag model."))
    code, out, err = _run(
        capsys, "chat", "--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "p"),
        "--provider", "openai-compatible", "--model", "flag-model", "hi",
    )
    assert code == 0, err
    assert "Hello from the flag model." in out
    assert compatible.requests[0].body["model"] == "flag-model"


def test_the_model_flag_wins_over_the_environment(
    capsys: pytest.CaptureFixture[str], compatible: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CREWAGENT_MODEL", "env-model")
    compatible.script(text("ok"))
    code, _, err = _run(
        capsys, "chat", "--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "p"),
        "--provider", "openai-compatible", "--model", "flag-model", "hi",
    )
    assert code == 0, err
    assert compatible.requests[0].body["model"] == "flag-model"


@pytest.mark.parametrize(
    ("provider", "env", "problem"),
    [
        ("openai-compatible", {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "needs a model name"),
        ("openai-compatible", {"CREWAGENT_MODEL": "m"}, "needs a base URL"),
        ("openai", {}, "needs an API key"),
        ("openai-compatible", {"OPENAI_BASE_URL": "not a url", "CREWAGENT_MODEL": "m"}, "must start with http://"),
        ("openai-compatible", {"OPENAI_BASE_URL": "http:///v1", "CREWAGENT_MODEL": "m"}, "is not a URL"),
    ],
)
def test_a_chat_that_cannot_reach_a_model_creates_nothing(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    env: dict[str, str],
    problem: str,
) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CREWAGENT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    data, folder = tmp_path / "d", tmp_path / "p"
    code, _, err = _run(capsys, "chat", "--data-dir", str(data), "--project", str(folder), "--provider", provider, "my words")
    assert code == 2
    assert err.count("\n") == 1, err  # one line, not pydantic's four
    _assert_one_line_error(err, problem)
    store = RuntimeStore(data)
    assert store.list_conversations(store.open_project(folder).id) == []


def test_a_refused_base_url_does_not_print_its_credentials(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "ftp://user:hunter2secret@host/v1?api_key=sk-live-123")
    monkeypatch.setenv("CREWAGENT_MODEL", "m")
    code, out, err = _run(
        capsys, "chat", "--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "p"),
        "--provider", "openai-compatible", "hi",
    )
    assert code == 2
    assert "must start with http://" in err
    assert "hunter2secret" not in out + err and "sk-live-123" not in out + err


def test_a_failed_model_call_keeps_the_users_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_dirs: dict[str, Path]
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens on the discard port
    monkeypatch.setenv("CREWAGENT_MODEL", "m")
    # No retries (the default 3 wait ~2 s in backoff; retries are tested in tests/core/test_llm_errors.py)
    (isolated_dirs["config"] / "settings.json").write_text(json.dumps({"llm": {"maxRetries": 0}}), encoding="utf-8")
    data, folder = tmp_path / "d", tmp_path / "p"
    code, _, err = _run(capsys, "chat", "--data-dir", str(data), "--project", str(folder), "--provider", "openai-compatible", "keep me")
    assert code == 1
    store = RuntimeStore(data)
    project = store.open_project(folder)
    (meta,) = store.list_conversations(project.id)
    messages = store.load_messages(project.id, meta.id).messages
    assert messages[0].text == "keep me" and messages[-1].partType == "error"


@pytest.mark.parametrize(
    "command",
    [["conversations"], ["chat", "--provider", "demo", "hi"], ["export", "--conversation", "conv_x"], ["context", "--conversation", "conv_x"]],
)
def test_an_empty_project_path_is_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, *command, "--project", "", "--data-dir", str(tmp_path / "d"))
    assert code == 2
    _assert_one_line_error(err, "project path is empty")
    assert not (tmp_path / ".crewagent.json").exists()


@pytest.mark.parametrize(
    ("argv", "env", "problem"),
    [
        (["--data-dir", "{file}"], {}, "is a file, not a folder"),
        (["--project", ""], {}, "project path is empty"),
        ([], {"CREWAGENT_CONFIG_DIR": "{file}"}, "settings folder"),
    ],
)
@UNPRIVILEGED
def test_the_window_refuses_a_broken_setup_before_it_opens(
    tmp_path: Path, argv: list[str], env: dict[str, str], problem: str, crewagent_zygote: Zygote
) -> None:
    """`crewagent gui` with a data folder that is a file used to hang with no window; now exit 2, one line."""
    afile = tmp_path / "a-file"
    afile.write_text("not a folder")
    environ = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "CREWAGENT_DATA_DIR": str(tmp_path / "data"),
        "CREWAGENT_CONFIG_DIR": str(tmp_path / "config"),
    }
    environ.update({name: value.format(file=afile) for name, value in env.items()})
    result = crewagent_zygote.run(["gui", *(a.format(file=afile) for a in argv)], env=environ, timeout=60)
    assert result.returncode == 2, result.stderr
    _assert_one_line_error(result.stderr, problem)
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir())
