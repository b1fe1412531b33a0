"""Message search (issue 18): the FTS5 index answers exactly what a scan of the logs answers.

The index is derived: a missing or damaged one is rebuilt from the logs, an append by another
process is seen by the next search, a user's query is text (never FTS5 syntax), Chinese text
matches, and tool results are searched (and quoted in snippets) as readable text, not JSON.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crewagent.core import paths
from crewagent.core.messages import ConversationMessage
from crewagent.core.search import MessageSearch, SearchCancelled, SearchHit
from crewagent.core.search import index as search_index
from crewagent.core.search import service as search_service
from crewagent.core.search.index import files_of
from crewagent.core.store import ProjectInfo, RuntimeStore
from tests.core.forked import exited_cleanly, fork
from tests.examples import examples


def tool_result(payload: object, call_id: str = "call_1") -> ConversationMessage:
    message = ConversationMessage.new("tool", json.dumps(payload))
    message.tool_call_id = call_id
    return message


def index_file(store: RuntimeStore, project: ProjectInfo) -> Path:
    return paths.search_index_file(paths.project_runtime_dir(store.data_dir, project.id))


def scanned(store: RuntimeStore, project: ProjectInfo, query: str) -> tuple[SearchHit, ...]:
    return MessageSearch(store, use_index=False).search(project.id, query)


@pytest.fixture
def store(tmp_path: Path) -> RuntimeStore:
    return RuntimeStore(tmp_path / "data")


@pytest.fixture
def project(store: RuntimeStore, tmp_path: Path) -> ProjectInfo:
    return store.open_project(tmp_path / "project", create=True)


@pytest.fixture
def filled(store: RuntimeStore, project: ProjectInfo) -> dict[str, str]:
    """Three conversations: English, Chinese, and one with a JSON tool result."""
    ids = {}
    fox = store.create_conversation(project.id, title="Animals")
    store.append_message(project.id, fox.id, ConversationMessage.new("user", "Tell me about the quick brown FOX, please."))
    store.append_message(project.id, fox.id, ConversationMessage.new("assistant", 'Foxes: see "NEAR" * -minus (AND) OR NOT ^col: x'))
    ids["fox"] = fox.id
    cjk = store.create_conversation(project.id, title="中文")
    store.append_message(project.id, cjk.id, ConversationMessage.new("user", "我们需要全文检索功能，支持中文搜索。"))
    ids["cjk"] = cjk.id
    tools = store.create_conversation(project.id, title="Tools")
    call = {"id": "call_1", "type": "function", "function": {"name": "fs.read", "arguments": '{"path": "@project/notes.md"}'}}
    store.append_message(project.id, tools.id, ConversationMessage.new("assistant", "", tool_calls=[call]))
    store.append_message(project.id, tools.id, tool_result({"ok": True, "path": "@project/notes.md", "content": "Line one\nThe launch plan is due on Friday.\n"}))
    ids["tools"] = tools.id
    return ids


def test_the_index_answers_as_the_scan_does_and_is_built_under_the_project_runtime_folder(
    store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]
) -> None:
    search = MessageSearch(store)
    assert search.use_index
    for query in ("fox", "FOX", "quick brown", "launch plan", "中文", "全文检索", "Fo", "x", "nothing like this"):
        assert search.search(project.id, query) == scanned(store, project, query), query
    hits = search.search(project.id, "quick brown fox")
    assert [hit.conversation_id for hit in hits] == [filled["fox"]]
    assert hits[0].message_id and hits[0].matches == 1
    assert index_file(store, project).is_file()
    assert index_file(store, project).is_relative_to(store.data_dir / "projects" / project.id)


def test_tool_results_are_searched_and_quoted_as_readable_text_not_json(
    store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]
) -> None:
    search = MessageSearch(store)
    (hit,) = search.search(project.id, "launch plan")
    assert hit.conversation_id == filled["tools"]
    assert "The launch plan is due on Friday." in hit.snippet
    assert "\\n" not in hit.snippet and '"content"' not in hit.snippet and "{" not in hit.snippet
    # JSON syntax and keys are not text: a search for them finds no tool result
    assert search.search(project.id, '"ok"') == ()
    assert search.search(project.id, "content") == ()


@pytest.mark.parametrize("query", ['"', '""', "*", "NEAR", '"NEAR"', "-minus", "AND", "OR NOT", "(AND)", "^col:", "x:y", "fox*", 'a"b', "NEAR(a b)", "\x00"])
def test_a_query_is_text_never_fts_syntax(store: RuntimeStore, project: ProjectInfo, filled: dict[str, str], query: str) -> None:
    assert MessageSearch(store).search(project.id, query) == scanned(store, project, query)


def test_hostile_queries_find_what_they_say(store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]) -> None:
    search = MessageSearch(store)
    for query in ('"NEAR"', "* -minus", "(AND) OR NOT", "^col:"):
        assert [hit.conversation_id for hit in search.search(project.id, query)] == [filled["fox"]], query


def test_chinese_text_matches_with_queries_of_two_characters_or_more(
    store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]
) -> None:
    search = MessageSearch(store)
    for query in ("中文", "全文检索", "支持中文搜索", "搜索"):
        hits = search.search(project.id, query)
        assert [hit.conversation_id for hit in hits] == [filled["cjk"]], query
        assert query in hits[0].snippet
    assert search.search(project.id, "日文") == ()


def test_a_missing_index_is_rebuilt_from_the_logs(store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]) -> None:
    search = MessageSearch(store)
    expected = search.search(project.id, "fox")
    search.close()
    for file in files_of(index_file(store, project)):
        file.unlink(missing_ok=True)
    assert search.search(project.id, "fox") == expected
    assert index_file(store, project).is_file()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "dropped_table", "foreign_schema", "lost_rows"])
def test_a_damaged_index_is_rebuilt_never_trusted(
    store: RuntimeStore, project: ProjectInfo, filled: dict[str, str], damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    search = MessageSearch(store)
    expected = scanned(store, project, "fox")
    assert search.search(project.id, "fox") == expected
    search.close()
    file = index_file(store, project)
    if damage == "garbage":
        file.write_bytes(b"this is not a database at all" * 100)
    elif damage == "truncated":
        data = file.read_bytes()
        file.write_bytes(data[: len(data) // 3])
    else:
        with sqlite3.connect(file) as db:
            if damage == "dropped_table":
                db.execute("DROP TABLE docs")
            elif damage == "foreign_schema":
                db.execute("PRAGMA user_version = 99")
            else:  # the full-text index says a row matches, its document is gone
                db.execute("DELETE FROM docs")
    with caplog.at_level(logging.WARNING):
        assert MessageSearch(store).search(project.id, "fox") == expected
    assert "rebuilt from the conversation logs" in caplog.text
    with sqlite3.connect(file) as db:  # a sound index again
        assert db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        assert db.execute("SELECT count(*) FROM docs").fetchone()[0] > 0


def test_an_append_by_another_process_is_seen_by_the_next_search(
    store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]
) -> None:
    search = MessageSearch(store)
    assert search.search(project.id, "zanzibar") == ()

    def other_process() -> None:  # a store of its own in another process (forked: the store is imported)
        other = RuntimeStore(store.data_dir)
        other.append_message(project.id, filled["cjk"], ConversationMessage.new("assistant", "A Zanzibar quokka appears."))

    assert exited_cleanly(fork(other_process))
    hits = search.search(project.id, "zanzibar")
    assert [hit.conversation_id for hit in hits] == [filled["cjk"]]
    assert "Zanzibar quokka" in hits[0].snippet
    assert hits == scanned(store, project, "zanzibar")


def test_a_rewritten_log_is_indexed_again_and_a_deleted_conversation_leaves(
    store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]
) -> None:
    search = MessageSearch(store)
    assert search.search(project.id, "fox")
    log = store.log_path(project.id, filled["fox"])
    data = log.read_bytes()
    log.write_bytes(data.replace(b"FOX", b"CAT").replace(b"Foxes", b"Cates"))  # same size, other text
    assert search.search(project.id, "fox") == () == scanned(store, project, "fox")
    assert [hit.conversation_id for hit in search.search(project.id, "cat")] == [filled["fox"]]
    store.delete_conversation(project.id, filled["fox"])
    assert search.search(project.id, "cat") == ()
    with sqlite3.connect(index_file(store, project)) as db:
        assert db.execute("SELECT count(*) FROM logs WHERE conversation_id = ?", (filled["fox"],)).fetchone()[0] == 0


def test_a_line_still_being_written_is_read_from_the_log(store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]) -> None:
    search = MessageSearch(store)
    log = store.log_path(project.id, filled["cjk"])
    line = ConversationMessage.new("user", "an unterminated zebra line").to_log_line().encode()
    with open(log, "ab") as handle:
        handle.write(line)  # no newline yet
    assert [hit.conversation_id for hit in search.search(project.id, "zebra")] == [filled["cjk"]]
    assert search.search(project.id, "zebra") == scanned(store, project, "zebra")
    store.append_message(project.id, filled["cjk"], ConversationMessage.new("user", "another zebra"))
    assert search.search(project.id, "zebra")[0].matches == 2 == scanned(store, project, "zebra")[0].matches


def test_a_cancelled_first_build_keeps_its_progress(store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]) -> None:
    search = MessageSearch(store)
    calls = iter(range(1_000))

    def cancelled() -> bool:
        return next(calls) >= 2

    with pytest.raises(SearchCancelled):
        search.search(project.id, "fox", cancelled)
    assert search.search(project.id, "fox") == scanned(store, project, "fox")


def test_without_fts5_the_logs_are_scanned_with_a_notice(
    store: RuntimeStore, project: ProjectInfo, filled: dict[str, str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(search_service, "fts5_available", lambda: False)
    with caplog.at_level(logging.WARNING):
        search = MessageSearch(store)
    assert not search.use_index
    assert "scans the conversation logs" in caplog.text and "FTS5" in caplog.text
    assert [hit.conversation_id for hit in search.search(project.id, "quick brown")] == [filled["fox"]]
    assert not index_file(store, project).exists()


# -- for any messages and any query, the index answers what the scan answers -------------------

_ALPHABET = "abAB ßsSK\u212a\"*-:()^中文搜索İi\n\x00"
_texts = st.text(alphabet=_ALPHABET, max_size=24)
_message = st.one_of(
    st.builds(lambda text: ("user", text), _texts),
    st.builds(lambda text: ("assistant", text), _texts),
    st.builds(lambda text: ("tool", json.dumps({"ok": True, "content": text})), _texts),
    st.builds(lambda text: ("tool", json.dumps({"ok": True, "content": text}, ensure_ascii=False)), _texts),
    st.builds(lambda text: ("tool", json.dumps(text)), _texts),
    st.builds(lambda text: ("tool", text), _texts),
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    conversations=st.lists(st.lists(_message, max_size=5), min_size=1, max_size=3),
    queries=st.lists(st.text(alphabet=_ALPHABET, min_size=1, max_size=5), min_size=1, max_size=3),
    data=st.data(),
)
def test_for_any_messages_and_query_the_index_answers_as_the_scan(
    conversations: list[list[tuple[str, str]]], queries: list[str], data: st.DataObject
) -> None:
    texts = [text for messages in conversations for _role, text in messages if text]
    if texts:  # and pieces of what was written, which do occur (random queries mostly do not)
        text = data.draw(st.sampled_from(texts))
        start = data.draw(st.integers(0, len(text) - 1))
        queries.append(text[start : start + data.draw(st.integers(1, 5))])
    with tempfile.TemporaryDirectory() as folder:
        store = RuntimeStore(Path(folder) / "data")
        project = store.open_project(Path(folder) / "project", create=True)
        for number, messages in enumerate(conversations):
            meta = store.create_conversation(project.id, title=f"c{number}")
            stored = []
            for role, text in messages:
                message = ConversationMessage.new(role, text)  # type: ignore[arg-type]
                if role == "tool":
                    message.tool_call_id = "call_1"
                stored.append(message)
            if stored:
                store.append_messages(project.id, meta.id, stored)
        search, scan = MessageSearch(store), MessageSearch(store, use_index=False)
        for query in queries:
            assert search.search(project.id, query) == scan.search(project.id, query), query
        search.close()


def test_conversations_created_or_deleted_elsewhere_are_seen_by_the_next_search(
    store: RuntimeStore, project: ProjectInfo, filled: dict[str, str]
) -> None:
    search = MessageSearch(store)
    assert search.search(project.id, "walrus") == ()
    other = RuntimeStore(store.data_dir)  # another process's store: no shared cache
    new = other.create_conversation(project.id, title="Later")
    other.append_message(project.id, new.id, ConversationMessage.new("user", "a walrus"))
    assert [hit.conversation_id for hit in search.search(project.id, "walrus")] == [new.id]
    other.delete_conversation(project.id, new.id)
    assert search.search(project.id, "walrus") == ()


def test_snippets_read_as_the_rendered_message_not_its_markdown() -> None:
    from crewagent.core.search.text import snippet

    assert snippet("Take **tram 28** via `Graça` to [Alfama](https://x.y/z)", "tram") == "Take tram 28 via Graça to Alfama…"  # the link cut by the window
    assert snippet("## Budget\n~~old~~ new", "budget") == "Budget old new"
    assert snippet("a snake_case_name and *one* star", "snake") == "a snake_case_name and *one* star"  # single marks stay
    assert snippet("Take **tram 28** here", "**tram") == "Take **tram 28** here"  # searched for the marks: shown


# -- a build of more than a chunk: FTS5's merges held off, one merge at its end ----------------


def _merge_settings(path: Path) -> dict[str, int]:
    """FTS5's merge settings stored in the index file, read through a connection of its own."""
    with sqlite3.connect(path) as other:
        return dict(other.execute("SELECT k, v FROM fts_config WHERE k IN ('automerge', 'crisismerge')").fetchall())


@pytest.fixture
def long_log(store: RuntimeStore, project: ProjectInfo, monkeypatch: pytest.MonkeyPatch) -> str:
    """A conversation of ~40 KB indexed 4 KB a transaction: a long build in miniature."""
    monkeypatch.setattr(search_index, "_CHUNK", 4096)
    meta = store.create_conversation(project.id, title="Long")
    store.append_messages(project.id, meta.id, [ConversationMessage.new("user", f"line {n} of a long talk about otters") for n in range(600)])
    return meta.id


def test_a_long_build_holds_merges_off_while_it_runs_and_puts_them_back(
    store: RuntimeStore, project: ProjectInfo, long_log: str
) -> None:
    # Merged as it goes, FTS5 rewrote every term once per level: a build of 10^5 messages grew 15x
    # a decade (docs/benchmarks.md, "Session 11: a robust scaling verdict").
    seen: list[dict[str, int]] = []

    def cancelled() -> bool:
        if index_file(store, project).exists():
            seen.append(_merge_settings(index_file(store, project)))
        return False

    search = MessageSearch(store)
    assert search.search(project.id, "otters", cancelled) == scanned(store, project, "otters")
    assert {"automerge": 0, "crisismerge": 2000} in seen  # held off during the build
    assert _merge_settings(index_file(store, project)) == {"automerge": 4, "crisismerge": 16}
    store.append_message(project.id, long_log, ConversationMessage.new("user", "one more otter"))
    assert search.search(project.id, "otter") == scanned(store, project, "otter")  # a short update: merges as usual
    assert _merge_settings(index_file(store, project)) == {"automerge": 4, "crisismerge": 16}


def test_a_cancelled_long_build_puts_the_merges_back_and_the_next_search_ends_it(
    store: RuntimeStore, project: ProjectInfo, long_log: str
) -> None:
    calls = iter(range(10_000))
    search = MessageSearch(store)
    with pytest.raises(SearchCancelled):
        search.search(project.id, "otters", lambda: next(calls) >= 3)  # after a few chunks
    assert _merge_settings(index_file(store, project)) == {"automerge": 4, "crisismerge": 16}
    assert search.search(project.id, "line 599 of") == scanned(store, project, "line 599 of")
    assert search.search(project.id, "otters")[0].matches == 600


def test_the_rest_of_a_cancelled_long_build_is_held_and_merged_like_its_start(
    store: RuntimeStore, project: ProjectInfo, long_log: str
) -> None:
    size = store.log_path(project.id, long_log).stat().st_size

    def indexed() -> int:
        if not index_file(store, project).exists():
            return 0
        with sqlite3.connect(index_file(store, project)) as other:
            row = other.execute("SELECT indexed FROM logs").fetchone()
        return 0 if row is None else int(row[0])

    search = MessageSearch(store)
    with pytest.raises(SearchCancelled):  # stopped with less than a chunk left
        search.search(project.id, "otters", lambda: indexed() > size - 4096)
    assert 0 < size - indexed() < 4096
    seen: list[dict[str, int]] = []

    def watch() -> bool:
        seen.append(_merge_settings(index_file(store, project)))
        return False

    assert search.search(project.id, "otters", watch) == scanned(store, project, "otters")
    assert {"automerge": 0, "crisismerge": 2000} in seen
    assert _merge_settings(index_file(store, project)) == {"automerge": 4, "crisismerge": 16}


def test_merges_left_held_by_a_process_that_died_are_put_back_on_open(
    store: RuntimeStore, project: ProjectInfo, long_log: str
) -> None:
    MessageSearch(store).search(project.id, "otters")
    with sqlite3.connect(index_file(store, project)) as other:  # as a build killed in its middle leaves it
        other.execute("INSERT INTO fts(fts, rank) VALUES('automerge', 0)")
        other.execute("INSERT INTO fts(fts, rank) VALUES('crisismerge', 2000)")
    assert _merge_settings(index_file(store, project)) == {"automerge": 0, "crisismerge": 2000}
    assert MessageSearch(store).search(project.id, "otters") == scanned(store, project, "otters")
    assert _merge_settings(index_file(store, project)) == {"automerge": 4, "crisismerge": 16}
