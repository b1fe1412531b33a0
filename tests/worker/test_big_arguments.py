"""Issue 14: megabytes of tool-call arguments (an fs.write of a big file) streamed by the model.

They are parsed and stored in slices on the worker (core/bigjson.py); the GUI thread only ever
gets a preview of them, so that nothing there parses (or lays out) the whole text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from crewagent.core import bigjson
from crewagent.core.export import export_openai
from crewagent.worker import WorkerThread
from crewagent.worker.turn_values import ARGUMENTS_PREVIEW_CHARS, ApprovalPrompt, TimelineMessage, ToolCallRef
from tests.core.loop_helpers import assert_log_valid
from tests.fakes.scripted_server import ScriptedServer, call, text, tool_calls
from tests.worker.gui_thread import wait_signal
from tests.worker.turns_support import TurnClient, TurnRecorder, scripted_worker

#: A content of more than bigjson.LARGE_CHARS characters (so its own text is written in slices
#: too, not only the arguments around it), with escapes and characters outside ASCII: 1.06 M
#: characters, 1.9 MB of arguments. Just over the line: every megabyte more is only more of the
#: same slices, streamed, parsed and written (40,000 lines, 2.7 MB, cost ~0.5 CPU-s more).
CONTENT = 'print("héllo, 世界")\t# a line of code 😀\n' * 28_000


@pytest.fixture
def host(qapp: Any, isolated_dirs: dict[str, Path], scripted_llm: ScriptedServer) -> Iterator[WorkerThread]:
    with scripted_worker(isolated_dirs["data"], scripted_llm) as running:
        yield running


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a signal's arguments (frozen dataclasses, mappings, tuples)."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _strings(getattr(value, field.name))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _strings(item)


def test_an_fs_write_of_megabytes_is_written_logged_and_exported_whole_while_the_gui_gets_a_preview(
    qtbot: Any, scripted_llm: ScriptedServer, store: Any, project: Any, conversation: Any, host: WorkerThread,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arguments = json.dumps({"path": "@project/big.py", "content": CONTENT})
    decoded: list[int | None] = []  # each decode of the content's JSON body: the characters asked for (None: all)
    decode = bigjson._decode_body

    def counted(text: str, start: int, end: int, head: int | None = None) -> str:
        if end - start > bigjson.LARGE_CHARS:
            decoded.append(head)
        return decode(text, start, end, head)

    monkeypatch.setattr(bigjson, "_decode_body", counted)
    assert len(CONTENT) > bigjson.LARGE_CHARS and len(arguments) > bigjson.LARGE_CHARS
    pieces = [arguments[start : start + 64 * 1024] for start in range(0, len(arguments), 64 * 1024)]
    scripted_llm.script(tool_calls(call("call_big", "fs_write", *pieces)), text("Written."))
    client, recorder = TurnClient(host.worker), TurnRecorder(host.worker.turns)
    with wait_signal(qtbot, host.worker.project_opened):
        client.open_project.emit(str(project.root))

    client.send.emit(project.id, conversation.id, "write the big file", "chat")
    qtbot.waitUntil(lambda: bool(recorder.of("approval_requested")), timeout=30_000)
    (prompt,) = recorder.of("approval_requested")[0]
    assert isinstance(prompt, ApprovalPrompt)
    assert prompt.arguments["path"] == "@project/big.py" and prompt.arguments["content"] == CONTENT[:ARGUMENTS_PREVIEW_CHARS] + "…"
    client.answer_approval.emit(prompt.request_id, "allow_once")
    qtbot.waitUntil(recorder.finished, timeout=30_000)
    assert recorder.of("turn_finished")[-1][1] == "completed"
    # The content was decoded whole once, for the tool; the next request's context, which cuts the
    # arguments to a preview, decoded only the start it keeps.
    assert decoded.count(None) == 1 and len(decoded) >= 2
    assert all(head is None or head < 10_000 for head in decoded)

    # The file, byte for byte.
    assert (Path(project.root) / "big.py").read_bytes() == CONTENT.encode("utf-8")
    # The log: a valid chain whose assistant message carries the arguments whole.
    messages = assert_log_valid(store, project.id, conversation.id)
    (assistant,) = [m for m in messages if m.tool_calls]
    assert assistant.tool_calls is not None and assistant.tool_calls[0].function.arguments == arguments
    # The tool wrote and hashed the content piece by piece: its result names the whole file.
    (tool,) = [m for m in messages if m.role == "tool"]
    written = json.loads(str(tool.content))
    assert written["bytes"] == len(CONTENT.encode("utf-8")) and written["sha256"] == hashlib.sha256(CONTENT.encode("utf-8")).hexdigest()
    # The export (crewagent export --format openai) carries them whole too.
    exported = export_openai(messages, lambda m: store.read_full_output(project.id, m))
    assert exported.errors == []
    (call_out,) = [c for m in exported.messages for c in m.get("tool_calls") or ()]
    assert call_out["function"]["arguments"] == arguments

    # The GUI thread got a preview of the arguments in the tool part and in the stored message,
    # never the whole text: no string in any signal comes near the content's length.
    refs = [args[1] for args in recorder.of("tool_started") if isinstance(args[1], ToolCallRef)]
    refs += [c for args in recorder.of("message_persisted") if isinstance(args[1], TimelineMessage) for c in args[1].tool_calls]
    assert len(refs) == 2 and all(ref.cut and ref.arguments_chars == len(arguments) for ref in refs)
    assert all(ref.arguments == arguments[:ARGUMENTS_PREVIEW_CHARS] + "…" for ref in refs)
    longest = max(len(s) for _, args in recorder.events for s in _strings(args))
    assert longest <= ARGUMENTS_PREVIEW_CHARS + 1
