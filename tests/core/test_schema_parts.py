"""A schema of independent properties is checked property by property, with the answers remembered.

A run's state is checked against the workflow-frontmatter schema before every write of it; a write
changes two or three of its properties. ``check`` answers "valid" from the answers it remembers
for the properties that did not change, and must give exactly the whole schema's answer.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.core.packages import schemas
from crewagent.core.packages.schemas import SchemaKind, check, validator

KIND = SchemaKind.WORKFLOW
NAMES = sorted(validator(KIND).schema["properties"])

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=16), st.sampled_from(["", "1.1", "1.1.2", "x", "2024-01-01T00:00:00Z"]))
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),  # not a JSON array to the validator: told apart by repr
        st.dictionaries(st.sampled_from(["from", "to", "label", "reason", "decidedAt", "x"]), inner, max_size=4),
    ),
    max_leaves=6,
)
#: The smallest valid state; the generated ones change, add or drop a few of its properties.
VALID = {"schemaVersion": "1.1", "workflowType": "notes", "currentNodeId": "", "stepsCompleted": []}
_states = st.tuples(
    st.dictionaries(st.sampled_from([*NAMES, "extra", "other"]), _values | st.lists(st.sampled_from(["a", "b"]), max_size=2), max_size=4),
    st.sets(st.sampled_from(sorted(VALID)), max_size=1),
).map(lambda parts: {k: v for k, v in {**VALID, **parts[0]}.items() if k not in parts[1]})


@settings(max_examples=100, deadline=None)
@given(_states, st.sampled_from(NAMES), _values)
def test_for_any_state_the_answer_is_the_whole_schemas_before_and_after_a_change(state: dict[str, Any], name: str, value: Any) -> None:
    whole = validator(KIND)
    assert (check(KIND, state, "workflow.md") == []) == whole.is_valid(state)
    assert (check(KIND, state, "workflow.md") == []) == whole.is_valid(state)  # remembered answers
    changed = {**state, name: value}
    assert (check(KIND, changed, "workflow.md") == []) == whole.is_valid(changed)


def test_an_invalid_state_still_gets_every_problem_with_its_pointer() -> None:
    state = {"schemaVersion": "1.1", "workflowType": "notes", "currentNodeId": 3, "stepsCompleted": ("a",)}
    problems = check(KIND, state, "workflow.md")
    assert [p.pointer for p in problems] == ["/currentNodeId", "/stepsCompleted"]


def _record_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Wrap each property's validator so that every check it makes adds the property's name to the list returned."""
    parts = schemas._parts(KIND)
    assert parts is not None  # the workflow frontmatter is a schema of independent properties
    asked: list[str] = []

    class Spy:
        def __init__(self, name: str, inner: Any) -> None:
            self.name, self.inner = name, inner

        def is_valid(self, value: Any) -> bool:
            asked.append(self.name)
            return bool(self.inner.is_valid(value))

    for name, part in list(parts[1].items()):
        monkeypatch.setitem(parts[1], name, Spy(name, part))
    return asked


def test_only_the_properties_that_changed_are_checked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _record_checks(monkeypatch)
    state = {
        "schemaVersion": "1.1", "workflowType": "notes-parts", "currentNodeId": "write-parts", "stepsCompleted": [],
        "variables": {"parts": 1}, "decisionLog": [], "artifacts": ["artifacts/parts.md"],
    }
    assert check(KIND, state, "workflow.md") == []
    asked.clear()

    assert check(KIND, {**state, "currentNodeId": "check-parts", "stepsCompleted": ["write-parts"]}, "workflow.md") == []
    assert sorted(asked) == ["currentNodeId", "stepsCompleted"]


def test_a_value_every_write_keeps_stays_remembered_after_more_values_than_the_cache_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The remembered answers drop the least recently used first: a run's schema version and type,
    in every state it writes, are never checked again, however long the run (the answers used to
    be dropped oldest-first, so after 256 other values they were checked again, and the test above
    failed when earlier tests had filled the cache)."""
    monkeypatch.setattr(schemas, "_part_answers", {})
    asked = _record_checks(monkeypatch)
    state = {"schemaVersion": "1.1", "workflowType": "notes", "currentNodeId": "a", "stepsCompleted": []}
    for number in range(schemas._PART_CACHE_SIZE + 50):
        assert check(KIND, {**state, "variables": {"n": number}}, "workflow.md") == []
    assert len(schemas._part_answers) == schemas._PART_CACHE_SIZE
    assert sorted(set(asked)) == sorted([*state, "variables"])
    assert {name: asked.count(name) for name in state} == dict.fromkeys(state, 1)  # once each, at the first write


def test_the_generated_states_reach_both_answers() -> None:
    from hypothesis import Phase, find

    # The first state found is proof enough: no shrinking (nor its explain phase, ~90 % of the
    # test's CPU), which would only make the found state smaller.
    opts = settings(max_examples=2000, database=None, phases=[Phase.generate])  # find's own budget
    whole = validator(KIND)
    find(_states, lambda state: whole.is_valid(state) and len(state) > len(VALID), settings=opts)
    find(_states, lambda state: not whole.is_valid(state) and "schemaVersion" in state and "stepsCompleted" in state, settings=opts)
