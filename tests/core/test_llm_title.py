"""Titles from the provider's answer: one short line, never longer than 30 characters (issue 18, item 14)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crewagent.core.llm.title import TITLE_MAX_CHARS, clean_title


def test_quotes_prefixes_markup_and_thinking_are_removed() -> None:
    assert clean_title('"Trip to Paris"') == "Trip to Paris"
    assert clean_title("Title: **Budget review**\nBecause the user asked…") == "Budget review"
    assert clean_title("<think>the user wants a title</think>\n\n# 巴黎之旅。") == "巴黎之旅"
    assert clean_title("A rather long title that goes on and on and on") == "A rather long title that goes…"
    assert clean_title("   \n\t") == ""


@given(st.text())
def test_any_answer_gives_one_line_of_at_most_30_characters(answer: str) -> None:
    title = clean_title(answer)
    assert len(title) <= TITLE_MAX_CHARS
    assert "\n" not in title and "\r" not in title and title == title.strip() or title.endswith("…")
