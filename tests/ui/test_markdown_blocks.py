"""A stored answer is rendered from the blocks cached while it streamed in, exactly as a whole render would be;
the common languages' lexers are compiled off the GUI thread before the first code block.

The end of a stream used to parse the whole answer again on the GUI thread (20 ms of CPU for a
6.5 KB answer, while the worker held the GIL half the time: bench_ui's 20 MB ``fs.write``
scenario, docs/benchmarks.md, "Session 7"), and the first Python block compiled its lexer there.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crewagent.ui import markdown

#: Lines that mean something to CommonMark at the start of a block, or across blocks.
_LINES = (
    "", " ", "\t", "  ", "a", "b c", "**x**", "*y", "z*", "`z`", "- a", "* a", "+ a", "-", "1. a", "2) b", "10. c",
    "1.", "  - n", "   d", "    code", "\tcode", "> q", ">", "> - a", "```", "```python", "````", "~~~", "  ```",
    "    ```", "``` a`b", "~~~ a`b", "[x]: /u", "[x]", "[x][]", "see [y]", "[y]:", "  [z]: /z", "a | b", "--- | ---",
    "|c|d|", "---", "***", "* * *", "===", "# h", "## h2", "<div>", "&amp;", "\\", "a  ", "x]: y", "\u00a0", "\x0c",
    "\x0b", "\u2028", "\0", "a\r", "\r", "![i](u)", "<http://x.y>",
)
_texts = st.lists(
    st.one_of(st.sampled_from(_LINES), st.text(alphabet=" -*+`~>#[]:|\t1.)a\r", max_size=6)), max_size=14
).map("\n".join)


def _whole(text: str) -> markdown.Rendered:
    return markdown._renderer("light").render(text)


#: No deadline: an example may compile a code block's lexer (~50-300 ms on a loaded machine).
@settings(deadline=None)
@given(text=_texts)
def test_a_text_rendered_block_by_block_renders_as_the_whole_text_would(text: str) -> None:
    assert markdown.render(text) == _whole(text)


@settings(deadline=None)
@given(text=_texts)
def test_a_streaming_text_that_a_blank_line_cannot_join_renders_as_the_whole_text(text: str) -> None:
    if markdown._split(text)[1]:
        assert markdown.render_growing(text) == _whole(text)


ANSWER = (
    "Here is the plan, with **bold** and `code`.\n\n"
    "## Steps\n\n"
    "1. Read the file\n2. Change it\n3. Write it back\n\n"
    "```python\ndef load(path: str) -> dict[str, int]:\n    data = {}\n\n    return data\n```\n\n"
    "| name | size |\n|---|--:|\n| a | 1 |\n\n"
    "> A note.\n\n"
    "- one\n- two\n\n"
    "Done → see [the docs](https://example.com).\n"
)


@pytest.mark.parametrize("text", [ANSWER, "".join(
    "\n\n```python\nprint(1, %d)\n```\n\n" % i if i % 150 == 149 else ("Streaming", " **word**", " by", " word", ",", " with",
                                                                          " `code`", " and", " →", " text.\n\n")[i % 10]
    for i in range(1200))])  # the second: what bench_ui streams
def test_the_stored_form_of_a_streamed_answer_parses_nothing_again(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = markdown._Renderer.render

    def counted(self: Any, source: str) -> markdown.Rendered:
        parsed.append(source)
        return real(self, source)

    markdown.render_growing(text[: len(text) // 2])
    markdown.render_growing(text)  # the stream, its blocks cached
    monkeypatch.setattr(markdown._Renderer, "render", counted)
    stored = markdown.render(text)
    assert parsed == []
    monkeypatch.undo()
    assert stored == _whole(text)


@pytest.mark.parametrize("text", ["- a\n\n- b", "1. a\n\n   more\n\n2. b", "    x\n\n    y", "[a]\n\n[a]: /u", "a\r\rb"])
def test_a_text_whose_blocks_join_is_rendered_whole(text: str) -> None:
    markdown.render_growing(text)
    assert markdown.render(text) == _whole(text)


def test_the_common_lexers_are_compiled_off_the_gui_thread(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from pygments.lexers import find_lexer_class_by_name

    classes = [find_lexer_class_by_name(name) for name in markdown.WARM_LANGUAGES]
    for cls in classes:  # as in a fresh process: compiled when first made
        if "_tokens" in cls.__dict__:
            monkeypatch.delattr(cls, "_tokens")
    compiled_on: list[str] = []
    real = markdown._lexer

    def lexer(language: str) -> Any:
        compiled_on.append(threading.current_thread().name)
        return real(language)

    monkeypatch.setattr(markdown, "_lexer", lexer)
    monkeypatch.setattr(markdown, "_warm_up_scheduled", False)
    markdown.warm_up_later(0)
    qtbot.waitUntil(lambda: all("_tokens" in cls.__dict__ for cls in classes), timeout=30_000)
    # (An earlier test's warm-up may fire meanwhile too: its thread has the same name.)
    assert set(compiled_on) == {"crewagent-lexers"} and len(compiled_on) >= len(classes)
