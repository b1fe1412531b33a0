"""tests/strategies.py: ``keyed`` draws the dicts ``st.fixed_dictionaries`` draws, every one of them."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from tests.examples import examples
from tests.strategies import keyed

REQUIRED = {"a": st.integers(0, 3), "b": st.just("b")}
OPTIONAL = {"x": st.integers(10, 13), "y": st.just(None), "z": st.text(max_size=2)}


@settings(max_examples=examples(60), deadline=None)  # a dict of 3 optional keys: 8 subsets
@given(keyed(REQUIRED, OPTIONAL))
def test_a_drawn_dict_has_every_required_key_and_optional_keys_only_each_with_a_value_of_its_strategy(drawn: dict[str, Any]) -> None:
    assert {"a", "b"} <= set(drawn) <= {"a", "b", "x", "y", "z"}
    assert drawn["a"] in range(4) and drawn["b"] == "b"
    assert drawn.get("x", 10) in range(10, 14) and drawn.get("y") is None
    assert isinstance(drawn.get("z", ""), str) and len(drawn.get("z", "")) <= 2


@pytest.mark.parametrize("chosen", [set(c) for size in range(4) for c in combinations(OPTIONAL, size)], ids=repr)
def test_every_subset_of_the_optional_keys_is_drawn(chosen: set[str]) -> None:
    assert set(find(keyed(REQUIRED, OPTIONAL), lambda drawn: set(drawn) == {"a", "b", *chosen})) == {"a", "b", *chosen}


def test_the_empty_subset_is_the_simplest_so_a_failure_shrinks_to_fewer_keys() -> None:
    assert find(keyed({}, OPTIONAL), lambda drawn: True) == {}


def test_more_optional_keys_than_the_subsets_are_worth_are_refused() -> None:
    with pytest.raises(ValueError, match="11 optional keys"):
        keyed({}, {f"k{i}": st.none() for i in range(11)})
