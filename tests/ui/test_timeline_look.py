"""The timeline's rows: their estimated size is their layout's, and they look as recorded (pixel for pixel)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtWidgets import QApplication

from crewagent.ui.timeline import TimelineModel, TimelineRole, TimelineView
from crewagent.ui.timeline.model import SUBAGENT_NOTICE
from crewagent.worker.turn_values import LoadedConversation, TimelineMessage
from tests.ui import timeline_gallery as gallery
from tests.examples import examples

RECORDED = Path(__file__).with_name("timeline_look.json")
#: Row widths from the narrowest laid out to past the widest column, in odd steps.
ROW_WIDTHS = range(240, 1400, 193)


@pytest.fixture(scope="module")
def shown(qapp: QApplication) -> Iterator[tuple[TimelineView, TimelineModel]]:
    view, model = gallery.build(qapp)
    yield view, model
    view.close()
    view.deleteLater()


def estimate_and_layout(view: TimelineView, index: Any, width: int) -> tuple[float, float]:
    """A row's estimated height, and its layout's height with its text estimated the same way."""
    delegate = view.timeline_delegate
    _key, _version, kind, _from_end, text, has_reasoning, _special = index.data(TimelineRole.MEASURE)
    option = gallery.option_for(view, width)
    laid_out = delegate._layout(option, index, None, exact=False).height
    return delegate._estimate(option, kind, text, has_reasoning, width), laid_out


def test_every_row_kind_is_estimated_exactly_as_it_is_laid_out(qapp: QApplication, shown: tuple[TimelineView, TimelineModel]) -> None:
    view, model = shown
    state = view.view_state
    delegate = view.timeline_delegate
    kinds: set[str] = set()
    # Each width is the delegate's row width, as the view gives it when it is that wide (see the
    # property below): resizing the shown gallery made the view lay out and paint every row again
    # at each width, most of this test's CPU, and none of it is what the test compares.
    view_width = delegate._row_width
    try:
        for width in ROW_WIDTHS:
            delegate._row_width = lambda width=width: width
            for key, index in gallery.rows(model):
                *_, kind, _from_end, _text, _reasoning, special = index.data(TimelineRole.MEASURE)
                if state.signature(key) != (False, False) or (special and kind != "notice"):
                    continue  # measured exactly, never estimated (see the next test)
                estimate, laid_out = estimate_and_layout(view, index, width)
                assert estimate == pytest.approx(laid_out, abs=1e-6), (key, width)
                kinds.add(kind)
    finally:
        delegate._row_width = view_width
    assert kinds == {"user", "assistant", "tool", "notice"}


def test_rows_the_estimate_cannot_know_are_always_measured_exactly(qapp: QApplication, shown: tuple[TimelineView, TimelineModel]) -> None:
    """Streaming, error, interrupted, Task, ask-user rows and subagent notices: their size needs more than the MEASURE tuple."""
    view, model = shown
    delegate = view.timeline_delegate
    gallery.set_width(qapp, view, 640)
    seen = set()
    for key, index in gallery.rows(model):
        *_, kind, _from_end, _text, _reasoning, special = index.data(TimelineRole.MEASURE)
        estimate, laid_out = estimate_and_layout(view, index, 640)
        if abs(estimate - laid_out) < 1e-6 and view.view_state.signature(key) == (False, False):
            continue
        assert special or view.view_state.signature(key) != (False, False), key
        delegate.clear_caches()
        option = gallery.option_for(view, 640)
        assert delegate.sizeHint(option, index).height() == round(delegate._layout(option, index, None).height), key
        seen.add(kind)
    assert seen == {"assistant", "tool", "notice", SUBAGENT_NOTICE}


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(st.sampled_from("ab c\n`#*-"), max_size=400) | st.sampled_from(["", gallery.MARKDOWN, gallery.LONG]),
    reasoning=st.sampled_from(["", "thinking"]),
    width=st.integers(min_value=100, max_value=2000),
)
def test_for_any_text_and_width_a_message_is_estimated_as_laid_out(qapp: QApplication, text: str, reasoning: str, width: int) -> None:
    model = TimelineModel()
    model.load(LoadedConversation("proj", "conv", (
        TimelineMessage("u", "user", gallery.T, text),
        TimelineMessage("a", "assistant", gallery.T, text, reasoning=reasoning),
        TimelineMessage("n", "user", gallery.T, text, is_summary=True),
    )))
    view = TimelineView()
    view.set_timeline(model)
    try:
        view.timeline_delegate._row_width = lambda: width
        laid_width = view.timeline_delegate.row_width()
        for row in range(model.rowCount()):
            estimate, laid_out = estimate_and_layout(view, model.index(row, 0), laid_width)
            assert estimate == pytest.approx(laid_out, abs=1e-6)
    finally:
        view.deleteLater()


def test_every_row_looks_as_recorded(qapp: QApplication) -> None:
    """Pixel for pixel, as recorded in timeline_look.json (see timeline_gallery.py to see or record the rows)."""
    recorded = json.loads(RECORDED.read_text())
    if recorded["environment"] != gallery.environment():
        pytest.skip(f"recorded with other fonts or another Qt: {recorded['environment']} (here: {gallery.environment()})")
    drawn = {name: gallery.digest(image) for name, image in gallery.images(qapp)}
    assert drawn == recorded["digests"]
