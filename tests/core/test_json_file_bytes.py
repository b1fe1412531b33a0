"""index.json is written by orjson: the bytes json.dumps(indent=2) wrote, for any JSON-mode value."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.core.messages import ConversationMeta
from crewagent.core.store import RuntimeStore
from crewagent.core.store._fsutil import json_mode_file_bytes


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


_LEAF = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text()
_VALUES = st.recursive(_LEAF, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(value=_VALUES, number=st.floats(allow_nan=False, allow_infinity=False))
def test_any_json_mode_value_is_written_as_json_wrote_it(value: Any, number: float) -> None:
    assert json_mode_file_bytes(value) == _json_bytes(value)
    # Floats: the same value back (orjson spells exponents without '+' and leading zeros).
    assert json.loads(json_mode_file_bytes([value, number])) == [value, number]


def test_what_orjson_refuses_goes_through_json() -> None:
    huge = {"n": 2**70, "k": [1, {"x": "é中"}]}
    assert json_mode_file_bytes(huge) == _json_bytes(huge)
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate fails as it did with json
        json_mode_file_bytes(["\ud800"])


def test_the_index_on_disk_is_what_json_wrote(tmp_path: Any) -> None:
    store = RuntimeStore(tmp_path / "data")
    project = store.create_project(tmp_path / "project")
    for number in range(3):
        store.create_conversation(project.id, title=f"résumé {number} 中")
    store.flush()
    (found,) = (tmp_path / "data" / "projects" / project.id).rglob("conversations/index.json")
    metas = [ConversationMeta.model_validate(entry) for entry in json.loads(found.read_bytes())]
    assert len(metas) == 3
    assert found.read_bytes() == _json_bytes([meta.model_dump(mode="json", exclude_none=True) for meta in metas])
