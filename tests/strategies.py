"""Hypothesis strategies shared by the property tests, shaped for a cheap draw.

What a property pays for is mostly hypothesis's bookkeeping per choice and per span (each
``data.draw`` of a nested strategy opens a span), not the values it builds. The helpers here draw
the same values as the obvious spelling with fewer of both.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

from hypothesis import strategies as st

#: More optional keys than this and the subsets (2**n branches) cost more to hold than they save.
_MOST_OPTIONAL = 10


def keyed(
    required: Mapping[str, st.SearchStrategy[Any]], optional: Mapping[str, st.SearchStrategy[Any]] | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    """The dicts ``st.fixed_dictionaries(required, optional=optional)`` draws, as values: every
    required key and any subset of the optional ones, each with a value of its strategy.

    ``fixed_dictionaries`` decides each optional key with two choices in a span of its own, then
    shuffles the keys' order (one more choice per key). Here one choice picks the subset (sampled
    from all of them, the empty one first, so a failure shrinks towards fewer keys) and the keys
    come in the order given. Use it where the order of a dict's keys changes nothing for the code under test.
    """
    optional = dict(optional or {})
    if len(optional) > _MOST_OPTIONAL:
        raise ValueError(f"{len(optional)} optional keys: use st.fixed_dictionaries")
    # Subsets as values, not one builds() branch each: one_of's draw checks every branch it holds.
    subsets = st.sampled_from([chosen for size in range(len(optional) + 1) for chosen in combinations(optional, size)])
    return _keyed(dict(required), optional, subsets)


@st.composite
def _keyed(
    draw: st.DrawFn,
    required: dict[str, st.SearchStrategy[Any]],
    optional: dict[str, st.SearchStrategy[Any]],
    subsets: st.SearchStrategy[tuple[str, ...]],
) -> dict[str, Any]:
    drawn = {key: draw(values) for key, values in required.items()}
    for key in draw(subsets):
        drawn[key] = draw(optional[key])
    return drawn
