"""Issue 15, protocol: exports are the valid chain a request carries; the log reads in order; import checks.

- 11: ``export --format openai`` gives wire tool names (``fs_read``) and the repaired chain, and
  says on stderr what repair changed; ``import`` maps the names back; ``jsonl`` stays the raw log.
- 12: recovery's TOOL_INTERRUPTED result names the assistant it answers, so the log read alone
  (``validate --all`` of messages.jsonl) is a valid chain.
- 13: ``import`` refuses a broken chain (exit 2, the validator's envelope) or repairs it with
  ``--repair``; a failed import leaves nothing; only regular files are read; ``export -o`` into
  a missing folder or onto a folder is exit 2 with one line.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from crewagent.cli import main
from crewagent.core.context import ContextBudget, build_llm_messages
from crewagent.core.export import app_tool_names, export_openai
from crewagent.core.llm.toolnames import KnownNameDecoder, wire_name_candidates
from crewagent.core.loop import ConversationSession
from crewagent.core.messages import ConversationMessage, ConversationMeta, to_openai
from crewagent.core.protocol import (
    ANSWERS_FIELD,
    DOTTED_FUNCTION_NAME,
    OPENAI_FUNCTION_NAME,
    assemble,
    log_order,
    validate_messages,
)
from crewagent.core.store import ProjectInfo, RuntimeStore
from tests.core.test_context_properties import Op, build_log, scripts
from tests.core.test_validator import CASES
from tests.examples import examples
from tests.fakes.zygote import ZYGOTE_GROUP, Zygote


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def call(call_id: str, name: str = "fs.read") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": '{"path": "@project/a.txt"}'}}


def write_log(store: RuntimeStore, project_id: str, conversation_id: str, entries: list[Any]) -> None:
    """Write log lines as they are (a damaged log is written, not appended through the store)."""
    lines = []
    for number, entry in enumerate(entries):
        if isinstance(entry, ConversationMessage):
            lines.append(entry.to_log_line())
        elif isinstance(entry, dict):
            lines.append(json.dumps({"id": f"m{number}", "createdAt": "2026-01-01T00:00:00.000Z", **entry}))
        else:
            lines.append(json.dumps(entry))
    store.log_path(project_id, conversation_id).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


class Cli:
    """``crewagent`` commands on one project, in this process."""

    def __init__(self, capsys: pytest.CaptureFixture[str], store: RuntimeStore, project: ProjectInfo) -> None:
        self.capsys, self.store, self.project = capsys, store, project
        self.where = ["--data-dir", str(store.data_dir), "--project", str(project.root)]

    def export(self, cid: str, *argv: str) -> tuple[int, str, str]:
        return run(self.capsys, "export", *self.where, "--conversation", cid, *argv)

    def validate(self, path: Path, *argv: str) -> tuple[int, str, str]:
        return run(self.capsys, "validate", str(path), *argv)

    def imp(self, path: Path, *argv: str) -> tuple[int, str, str]:
        return run(self.capsys, "import", *self.where, str(path), *argv)

    def export_validates(self, cid: str, tmp: Path) -> list[dict[str, Any]]:
        """``export --format openai -o F`` then ``validate F``: both exit 0; returns the export."""
        out = tmp / f"{cid}.json"
        code, _, err = self.export(cid, "--format", "openai", "-o", str(out))
        assert code == 0, err
        exported = json.loads(out.read_text(encoding="utf-8"))
        if exported:
            code, report, _ = self.validate(out)
            assert code == 0, report
        return exported


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], store: RuntimeStore, project: ProjectInfo) -> Cli:
    return Cli(capsys, store, project)


def recover(store: RuntimeStore, project: ProjectInfo, cid: str) -> list[ConversationMessage]:
    """What opening the conversation does: the session's recovery (appends to the log)."""
    session = ConversationSession(store, project, cid, adapter=None, registry=None, tool_context=None)  # type: ignore[arg-type]
    return session.recover()


# -- 11: wire names, the repaired chain -----------------------------------------------------------


def test_export_sends_wire_names_that_validate_and_import_maps_them_back(
    cli: Cli, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, tmp_path: Path
) -> None:
    log = [
        {"role": "user", "content": "read it and ask me"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "fs.read"), call("c2", "ui.ask_user"), call("c3", "task.status")]},
        {"role": "tool", "tool_call_id": "c1", "content": "alpha"},
        {"role": "tool", "tool_call_id": "c2", "content": "yes"},
        {"role": "tool", "tool_call_id": "c3", "content": "done"},
        {"role": "assistant", "content": "Read."},
    ]
    write_log(store, project.id, conversation.id, log)

    exported = cli.export_validates(conversation.id, tmp_path)  # was: 'fs.read' rejected by validate

    assert [c["function"]["name"] for c in exported[1]["tool_calls"]] == ["fs_read", "ui_ask_user", "task_status"]
    code, out, err = cli.imp(tmp_path / f"{conversation.id}.json")
    assert code == 0, err
    imported = store.load_messages(project.id, out.strip()).messages
    assert [c.function.name for c in imported[1].tool_calls or ()] == ["fs.read", "ui.ask_user", "task.status"]
    assert cli.export_validates(out.strip(), tmp_path) == exported


def test_known_name_decoder_maps_only_unambiguous_wire_forms() -> None:
    decoder = KnownNameDecoder(["fs.read", "fs:read", "fs.list", "task"])
    assert decoder.decode("fs_list") == "fs.list"
    assert decoder.decode("fs_read") == "fs_read"  # two tools share it: left as it is
    assert decoder.decode("task") == "task" and decoder.decode("weather") == "weather"
    hashed = next(w for w in wire_name_candidates("fs.read") if w != "fs_read")
    assert decoder.decode(hashed) == "fs.read"


def test_export_of_a_log_missing_a_result_in_the_middle_is_the_repaired_chain(
    cli: Cli, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, tmp_path: Path
) -> None:
    log = [
        {"role": "user", "content": "read both"},
        {"role": "assistant", "content": None, "tool_calls": [call("ca"), call("cb")]},
        {"role": "tool", "tool_call_id": "ca", "content": "alpha"},
        {"role": "user", "content": "and then?"},
        {"role": "assistant", "content": "Done."},
    ]
    write_log(store, project.id, conversation.id, log)

    code, out, err = cli.export(conversation.id, "--format", "openai")

    assert code == 0
    exported = json.loads(out)
    assert validate_messages(exported) == []  # was: missing_tool_result, exit 0
    assert [m["role"] for m in exported] == ["user", "assistant", "tool", "tool", "user", "assistant"]
    assert json.loads(exported[3]["content"])["error"]["code"] == "TOOL_INTERRUPTED" and exported[3]["tool_call_id"] == "cb"
    assert err == "crewagent: repaired: 1 tool call(s) without a result answered with TOOL_INTERRUPTED (cb)\n"
    # Exactly the history the next request carries (the builder's own rendering, names on the wire).
    request = build_llm_messages(store.load_messages(project.id, conversation.id).messages, budget=ContextBudget(max_chars=10**6))
    history = [m for m in request.messages if m["role"] != "system"]
    for message in history:
        for c in message.get("tool_calls") or ():
            c["function"]["name"] = c["function"]["name"].replace(".", "_")
    assert exported == history
    # jsonl stays the raw log, untouched by repair.
    code, out, _ = cli.export(conversation.id, "--format", "jsonl")
    assert code == 0 and [json.loads(line) for line in out.splitlines()] == [{"id": f"m{i}", "createdAt": "2026-01-01T00:00:00.000Z", **m} for i, m in enumerate(log)]


@pytest.mark.xdist_group(ZYGOTE_GROUP)  # real processes forked from the session's zygote (tests/fakes/zygote.py)
def test_export_piped_into_validate_passes_in_real_processes(
    store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, crewagent_zygote: Zygote, tmp_path: Path
) -> None:
    """``crewagent export ... | crewagent validate -``: two real processes, export's stdout the write end
    of a pipe (a FIFO) whose read end is validate's stdin."""
    write_log(store, project.id, conversation.id, [
        {"role": "user", "content": "read"},
        {"role": "assistant", "content": None, "tool_calls": [call("ca")]},
        {"role": "user", "content": "still there?"},
    ])
    where = ["--data-dir", str(store.data_dir), "--project", str(project.root), "--conversation", conversation.id]
    pipe, export_err, out, err = tmp_path / "pipe", tmp_path / "export.err", tmp_path / "validate.out", tmp_path / "validate.err"
    os.mkfifo(pipe)
    exporter = crewagent_zygote.spawn(["export", *where], env=os.environ, stdout=pipe, stderr=export_err)
    checker = crewagent_zygote.spawn(["validate", "-"], env=os.environ, stdin=pipe, stdout=out, stderr=err)
    try:
        assert exporter.wait(60) == 0 and "repaired: 1 tool call(s)" in export_err.read_text(encoding="utf-8")
        assert checker.wait(60) == 0, out.read_text(encoding="utf-8") + err.read_text(encoding="utf-8")
    finally:
        for proc in (exporter, checker):
            if proc.poll() is None:  # the other end never opened the pipe
                proc.kill()
                proc.wait(30)
    assert out.read_text(encoding="utf-8") == "valid: 4 messages\n"


def test_export_says_nothing_on_stderr_when_the_log_is_a_valid_chain(
    cli: Cli, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta
) -> None:
    write_log(store, project.id, conversation.id, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    code, _, err = cli.export(conversation.id)
    assert (code, err) == (0, "")


# -- 12: the log reads in order after recovery; every damaged-chain case ---------------------------


def _log_as_read(store: RuntimeStore, project_id: str, cid: str) -> list[dict[str, Any]]:
    return [m.to_log_dict() for m in store.load_messages(project_id, cid).messages]


def test_recovery_names_the_call_it_answers_so_the_log_validates_on_its_own(
    cli: Cli, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, tmp_path: Path
) -> None:
    cid = conversation.id
    write_log(store, project.id, cid, [
        {"role": "user", "content": "read both"},
        {"role": "assistant", "content": None, "tool_calls": [call("ca"), call("cb")]},
        {"role": "tool", "tool_call_id": "ca", "content": "alpha"},
        {"role": "user", "content": "and then?"},
        {"role": "assistant", "content": "Done."},
    ])

    (synthetic,) = recover(store, project, cid)

    assert getattr(synthetic, ANSWERS_FIELD) == "m1" and synthetic.tool_call_id == "cb"
    path = store.log_path(project.id, cid)
    assert path.read_text(encoding="utf-8").splitlines()[-1] == synthetic.to_log_line()  # still append-only
    code, out, _ = cli.validate(path, "--all", "--allow-dotted-names")
    assert code == 0, out  # was: missing_tool_result at [1] and orphan_tool_message at [5]
    assert [m["id"] for m in log_order(_log_as_read(store, project.id, cid))] == ["m0", "m1", "m2", synthetic.id, "m3", "m4"]
    code, _, err = cli.export(cid)
    assert (code, err) == (0, "")  # the log reads as a valid chain: nothing left to repair
    assert "answersMessageId" not in json.dumps(cli.export_validates(cid, tmp_path))


def test_a_late_result_without_the_field_is_not_moved_by_the_log_order() -> None:
    log = [
        {"id": "u", "role": "user", "content": "go"},
        {"id": "a", "role": "assistant", "content": None, "tool_calls": [call("c")]},
        {"id": "u2", "role": "user", "content": "?"},
        {"id": "t", "role": "tool", "tool_call_id": "c", "content": "late"},
    ]
    assert log_order(log) == log  # a hand-written late result stays an orphan for validate
    marked = [*log[:3], {**log[3], ANSWERS_FIELD: "a"}]
    assert [m["id"] for m in log_order(marked)] == ["u", "a", "t", "u2"]
    before = [{**log[3], ANSWERS_FIELD: "a"}, *log[:3]]  # names an assistant that comes later
    assert log_order(before) == before


def _damaged_cases() -> list[tuple[str, list[Any]]]:
    cases = [(name, messages) for name, messages, _, _ in CASES]
    u = {"role": "user", "content": "go"}
    calls2 = {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]}
    cases += [
        ("repair: crash during a tool", [u, calls2, {"role": "tool", "tool_call_id": "a", "content": "x"}]),
        ("repair: every call of two turns", [u, calls2, {"role": "user", "content": "2"}, {"role": "assistant", "content": None, "tool_calls": [call("c")]}]),
        ("repair: orphan and duplicate", [u, {"role": "tool", "tool_call_id": "zz", "content": "o"}, calls2,
                                          {"role": "tool", "tool_call_id": "a", "content": "1"}, {"role": "tool", "tool_call_id": "a", "content": "2"}]),
        ("results after the next user message", [u, calls2, {"role": "user", "content": "?"}, {"role": "tool", "tool_call_id": "b", "content": "1"}]),
        ("hidden message inside a block", [u, calls2, {"role": "user", "content": "h", "includeInContext": False},
                                           {"role": "tool", "tool_call_id": "a", "content": "1"}]),
        ("calls all invalid, with text", [u, {"role": "assistant", "content": "t", "tool_calls": [call(""), call("x", "bad name")]}]),
        ("system and empty messages", [{"role": "system", "content": "s"}, u, {"role": "assistant", "content": ""}, {"role": "system"}]),
    ]
    return cases


DAMAGED = _damaged_cases()


@pytest.mark.parametrize("entries", [c[1] for c in DAMAGED], ids=[c[0] for c in DAMAGED])
def test_every_damaged_chain_exports_valid_before_and_after_recovery_and_reads_in_order(
    entries: list[Any], cli: Cli, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, tmp_path: Path
) -> None:
    cid = conversation.id
    write_log(store, project.id, cid, entries)
    damage = {e.code for e in validate_messages([_wire(m) for m in _log_as_read(store, project.id, cid)], name_pattern=DOTTED_FUNCTION_NAME)}
    before = cli.export_validates(cid, tmp_path)

    appended = recover(store, project, cid)

    after = cli.export_validates(cid, tmp_path)
    assert after == before  # recovery persists what the export already showed
    assert_reads_in_order(_log_as_read(store, project.id, cid), {m.id for m in appended})
    if damage == {"missing_tool_result"}:
        # Only results were missing: the log alone is now a valid chain.
        code, out, _ = cli.validate(store.log_path(project.id, cid), "--all", "--allow-dotted-names")
        assert code == 0, out


def _wire(data: dict[str, Any]) -> dict[str, Any]:
    return to_openai(ConversationMessage.model_validate(data))


def assert_reads_in_order(log: list[dict[str, Any]], synthetic_ids: set[str]) -> None:
    """Read in its own order, the repaired log has every repair result in place, answering its call.

    What recovery cannot change in an append-only log (a real result written after later
    messages, an orphan, a call with an empty id) is still reported; none of it may concern a
    call that recovery answered.
    """
    ordered = log_order(log)
    repaired_calls = {m["tool_call_id"] for m in ordered if m["id"] in synthetic_ids}
    errors = validate_messages([_wire(m) for m in ordered], name_pattern=DOTTED_FUNCTION_NAME)
    for error in errors:
        assert error.index < 0 or ordered[error.index]["id"] not in synthetic_ids, errors
        if error.code == "missing_tool_result":
            assert not set(error.message.rsplit(": ", 1)[-1].split(", ")) & repaired_calls, errors
    chain, again = assemble(log), assemble(ordered)
    assert [(u.message.id, sorted(u.results)) for u in chain.units] == [(u.message.id, sorted(u.results)) for u in again.units]
    assert again.report.unansweredToolCallIds == []


# -- the property over generated logs ---------------------------------------------------------------


def test_any_damaged_log_exports_a_valid_chain_and_reads_in_order_after_recovery() -> None:
    # One store and project for the test, a new conversation per example: what each example checks
    # (its export, its recovery, its log as read) reads and writes that conversation only, so the
    # others cannot change the outcome; a store and project per example cost a quarter of the body
    # (cProfile: project files, index and recent list written with fsync, then the folder removed).
    names = app_tool_names()
    with tempfile.TemporaryDirectory() as scratch:
        store = RuntimeStore(Path(scratch) / "data")
        project = store.create_project(Path(scratch) / "project")

        @settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(script=scripts(0, 30))
        def each_log(script: list[Op]) -> None:
            cid = store.create_conversation(project.id, title="generated").id
            write_log(store, project.id, cid, build_log(script))

            def exported() -> list[dict[str, Any]]:
                loaded = store.load_messages(project.id, cid).messages
                result = export_openai(loaded, lambda m: store.read_full_output(project.id, m), tool_names=names)
                wire = json.loads(json.dumps(result.messages))
                assert result.errors == [] and (not wire or validate_messages(wire, name_pattern=OPENAI_FUNCTION_NAME) == [])
                return wire

            before = exported()
            appended = recover(store, project, cid)
            assert exported() == before
            assert_reads_in_order(_log_as_read(store, project.id, cid), {m.id for m in appended})

        each_log()


# -- 13 and the import/export parts of 15 and 16 -----------------------------------------------------


BROKEN = {
    "orphan tool message": ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "o"}], "orphan_tool_message"),
    "empty tool_call_id": (
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call("a", "fs_read")]},
         {"role": "tool", "tool_call_id": "", "content": "o"}],
        "missing_tool_call_id",
    ),
    "missing result": ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call("a", "fs_read")]}], "missing_tool_result"),
}


def _conversation_folders(store: RuntimeStore) -> list[Path]:
    return list(store.data_dir.glob("projects/*/conversations/conv_*"))


@pytest.mark.parametrize("name", list(BROKEN))
def test_import_refuses_a_broken_chain_with_the_envelope_and_creates_nothing(
    name: str, cli: Cli, store: RuntimeStore, project: ProjectInfo, tmp_path: Path
) -> None:
    messages, code_name = BROKEN[name]
    source = tmp_path / "broken.json"
    source.write_text(json.dumps(messages), encoding="utf-8")

    code, out, err = cli.imp(source)

    assert code == 2  # was: 0, and the broken chain stored
    assert json.loads(out)["error"]["code"] == code_name
    assert len(err.splitlines()) == 1 and "--repair" in err and "nothing was imported" in err
    assert _conversation_folders(store) == []


@pytest.mark.parametrize("name", list(BROKEN))
def test_import_repair_stores_the_chain_a_request_would_carry(
    name: str, cli: Cli, store: RuntimeStore, project: ProjectInfo, tmp_path: Path
) -> None:
    messages, _ = BROKEN[name]
    source = tmp_path / "broken.json"
    source.write_text(json.dumps(messages), encoding="utf-8")

    code, out, err = cli.imp(source, "--repair")

    assert code == 0 and err.startswith("crewagent: repaired: ")
    cid = out.strip()
    log = _log_as_read(store, project.id, cid)
    assert validate_messages([_wire(m) for m in log], name_pattern=DOTTED_FUNCTION_NAME) == []
    assert cli.export(cid)[2] == ""  # nothing left for the export to repair
    cli.export_validates(cid, tmp_path)


def test_import_of_an_empty_array_or_unstorable_text_leaves_no_conversation(
    cli: Cli, store: RuntimeStore, project: ProjectInfo, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    surrogate = tmp_path / "surrogate.json"
    surrogate.write_text('[{"role": "user", "content": "a\\ud800b"}]', encoding="utf-8")
    for source in (empty, surrogate):
        code, _, err = cli.imp(source)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert _conversation_folders(store) == []  # was: a folder left behind for the surrogate


@pytest.mark.xdist_group(ZYGOTE_GROUP)
def test_import_reads_only_regular_files(tmp_path: Path, crewagent_zygote: Zygote) -> None:
    """Real processes (forked from the session's zygote): a read that blocks fails the test, not the run."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    where = ["--data-dir", str(tmp_path / "d"), "--project", str(tmp_path / "p")]
    for source in (fifo, Path("/dev/null"), tmp_path):
        done = crewagent_zygote.run(["import", *where, str(source)], timeout=60)
        assert done.returncode == 2, done.stderr  # was: blocked forever on the FIFO
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    piped = crewagent_zygote.run(["import", *where, "-"], input='[{"role": "user", "content": "hi"}]', timeout=60)
    assert piped.returncode == 0, piped.stderr


def test_export_into_a_missing_folder_or_onto_a_folder_is_bad_input(
    cli: Cli, store: RuntimeStore, project: ProjectInfo, conversation: ConversationMeta, tmp_path: Path
) -> None:
    write_log(store, project.id, conversation.id, [{"role": "user", "content": "hi"}])
    for target in (tmp_path / "missing" / "out.json", tmp_path):
        code, out, err = cli.export(conversation.id, "-o", str(target))
        assert code == 2 and out == ""  # was: exit 1 (or a traceback)
        assert len(err.splitlines()) == 1 and str(target) in err
    assert not (tmp_path / "missing").exists()


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(script=scripts(1, 20))
def test_any_messages_array_is_imported_valid_or_refused_whole(capsys: pytest.CaptureFixture[str], script: list[Op]) -> None:
    """Whatever the file holds: refused with exit 2, an envelope and nothing created; or stored as a
    chain that validates. ``--repair`` stores every file that holds a message a request can carry."""
    entries = [to_openai(m) for m in build_log(script) if isinstance(m, ConversationMessage)]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        source = root / "in.json"
        source.write_text(json.dumps(entries), encoding="utf-8")
        where = ["--data-dir", str(root / "d"), "--project", str(root / "p")]
        code, out, err = run(capsys, "import", *where, str(source))
        broken = bool(validate_messages(entries, name_pattern=DOTTED_FUNCTION_NAME))
        if broken:
            assert code == 2 and json.loads(out)["error"]["code"] and list((root / "d").glob("projects/*/conversations/conv_*")) == []
            code, out, err = run(capsys, "import", *where, str(source), "--repair")
            if code == 2:
                assert "holds no message" in err
                return
        assert code == 0, err
        cid = out.strip()
        code, out, err = run(capsys, "export", *where, "--conversation", cid)
        assert code == 0 and err == ""  # stored valid: nothing for the export to repair
        assert validate_messages(json.loads(out)) == []
        if not broken:
            assert json.loads(out) == [_renamed(m) for m in entries]


def _renamed(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with its tool names as the export writes them (``fs.read`` -> ``fs_read``)."""
    calls = message.get("tool_calls")
    if not calls:
        return message
    return {**message, "tool_calls": [{**c, "function": {**c["function"], "name": c["function"]["name"].replace(".", "_")}} for c in calls]}
