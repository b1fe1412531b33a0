"""tests/hypothesis_utf8.py: hypothesis's UTF-8 characters, answered without its pass over every code point."""

from __future__ import annotations

import array
import sys

from hypothesis import strategies as st
from hypothesis.internal import charmap
from hypothesis.strategies._internal.lazy import unwrap_strategies
from hypothesis.strategies._internal.strings import OneCharStringStrategy

from tests import hypothesis_utf8


def test_utf8_encodes_and_decodes_back_exactly_the_code_points_of_the_two_intervals() -> None:
    for start, end in hypothesis_utf8.utf8_intervals():
        # Every code point of the interval, in order (built from UTF-32 in C: a third of the CPU of chr()).
        text = array.array("I", range(start, end + 1)).tobytes().decode(f"utf-32-{'le' if sys.byteorder == 'little' else 'be'}")
        assert len(text) == end + 1 - start and ord(text[0]) == start and ord(text[-1]) == end
        assert text.encode("utf-8").decode("utf-8") == text  # every one of them, in one call
    for code_point in range(hypothesis_utf8.SURROGATES[0], hypothesis_utf8.SURROGATES[1] + 1):
        try:
            chr(code_point).encode("utf-8")
        except UnicodeEncodeError:
            continue
        raise AssertionError(f"U+{code_point:04X} encodes")
    assert hypothesis_utf8.utf8_intervals()[-1][1] == 0x10FFFF  # the last code point Python has


def test_the_workers_answer_utf8_from_the_shortcut_and_other_codecs_from_hypothesis() -> None:
    hypothesis_utf8.install()  # tests/conftest.py did already: installing twice changes nothing
    encodable, non_roundtrip = charmap.intervals_from_codec("utf-8")
    assert encodable.intervals == hypothesis_utf8.utf8_intervals()
    assert not non_roundtrip.intervals
    # Any other codec is hypothesis's own function (not called here: it may take its 2 CPU-s pass).
    assert charmap.intervals_from_codec.__wrapped__.__module__ == "hypothesis.internal.charmap"


def test_text_draws_from_every_category_but_the_surrogates() -> None:
    default = unwrap_strategies(st.characters(codec="utf-8"))  # what st.text() draws from
    by_category = unwrap_strategies(st.characters(exclude_categories=["Cs"]))
    assert isinstance(default, OneCharStringStrategy) and isinstance(by_category, OneCharStringStrategy)
    assert default.intervals.intervals == by_category.intervals.intervals
