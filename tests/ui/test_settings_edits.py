"""The Settings dialog's edits: only what the user changed is sent, and carried over onto settings changed on disk."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crewagent.ui.settings import edits

TOOLS = st.sampled_from(["fs.read", "fs.write", "fs.apply_patch", "task", "mcp.a", "mcp.b"])
UNIQUE = st.lists(TOOLS, unique=True)


def test_edits_are_the_leaves_that_differ() -> None:
    base = {"tools": {"timeoutSeconds": 300.0, "alwaysAllow": ["fs.write"], "fs": {"enabled": True}}, "llm": {"model": "m"}}
    values = {"tools": {"timeoutSeconds": 42, "alwaysAllow": ["fs.write"], "fs": {"enabled": True}}, "llm": {"model": "m"}}
    assert edits.edits(values, base) == {"tools": {"timeoutSeconds": 42}}
    assert edits.edits(base, base) == {}


@given(old=UNIQUE, new=UNIQUE, data=st.data())
def test_a_rebased_list_keeps_the_users_removals_and_additions_and_what_appeared_on_disk(
    old: list[str], new: list[str], data: st.DataObject
) -> None:
    kept = data.draw(st.lists(st.sampled_from(old), unique=True) if old else st.just([]))
    added = data.draw(st.lists(TOOLS.filter(lambda tool: tool not in old), unique=True))
    shown = [tool for tool in old if tool in kept] + added  # what the page holds after the user's edits
    result = edits.rebase({"tools": {"alwaysAllow": shown}}, {"tools": {"alwaysAllow": old}}, {"tools": {"alwaysAllow": new}})
    allowed = result["tools"]["alwaysAllow"]
    removed = [tool for tool in old if tool not in kept]
    assert len(allowed) == len(set(allowed))
    assert not set(removed) & set(allowed)  # what the user removed stays removed
    assert set(added) <= set(allowed)  # what the user added stays added
    assert {tool for tool in new if tool not in removed} <= set(allowed)  # what appeared on disk is kept
