"""An assistant message: avatar and name with badges, reasoning, the answer or its error part, Retry and Continue;
Copy and Regenerate on hover."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QRectF

from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, Text, TextSizer, height_of
from crewagent.ui.timeline.labels import translate
from crewagent.ui.timeline.metrics import METRICS
from crewagent.ui.timeline.model import TimelineRole
from crewagent.ui.timeline.rows import actions, error, reasoning
from crewagent.ui.timeline.rows.base import Index, RowContext, RowPainter
from crewagent.ui.timeline.rows.error import ErrorGeometry
from crewagent.ui.timeline.rows.reasoning import ReasoningFacts, ReasoningGeometry


@dataclass(frozen=True)
class AssistantFacts:
    text: str
    reasoning: ReasoningFacts | None = None
    streaming: bool = False
    #: The ``error`` block of an error part; None when the message is not one.
    error: Mapping[str, Any] | None = None
    interrupted: bool = False
    synthetic: bool = False
    #: Retry and Continue are offered (the last message failed or was stopped, and nothing runs).
    offer: bool = False
    #: The hover actions (rows/actions.py): Copy when there is text, Regenerate on the last answer.
    actions: tuple[str, ...] = ()


@dataclass(frozen=True)
class AssistantGeometry:
    facts: AssistantFacts
    frame: Frame
    header: QRectF
    height: float
    reasoning: ReasoningGeometry | None = None
    error: ErrorGeometry | None = None
    #: The answer and where it goes.
    text: tuple[Text, float] | None = None
    #: "● ● ●" while a stream has nothing to show yet.
    typing: QRectF | None = None
    buttons_y: float | None = None


class AssistantPainter(RowPainter[AssistantFacts, AssistantGeometry]):
    def facts(self, index: Index, context: RowContext) -> AssistantFacts:
        text = str(index.data(TimelineRole.TEXT) or "")
        streaming = bool(index.data(TimelineRole.STREAMING))
        thoughts = str(index.data(TimelineRole.REASONING) or "")
        seconds = index.data(TimelineRole.REASONING_SECONDS)
        is_error = bool(index.data(TimelineRole.IS_ERROR))
        interrupted = bool(index.data(TimelineRole.INTERRUPTED))
        state = context.state
        offer = ((is_error or interrupted) and bool(index.data(TimelineRole.IS_LAST)) and not state.busy
                 and not state.read_only and not streaming)
        names: tuple[str, ...] = (actions.COPY,) if text and not streaming else ()
        if bool(index.data(TimelineRole.IS_LAST)) and not (state.busy or state.read_only or streaming or offer):
            names += (actions.REGENERATE,)
        return AssistantFacts(
            actions=names,
            text=text,
            reasoning=ReasoningFacts(thoughts, seconds if isinstance(seconds, (int, float)) else None,
                                     context.key in state.expanded_reasoning, streaming and not text) if thoughts else None,
            streaming=streaming,
            error=(index.data(TimelineRole.ERROR) or {}) if is_error else None,
            interrupted=interrupted,
            synthetic=bool(index.data(TimelineRole.SYNTHETIC)),
            offer=offer,
        )

    def estimated(self, text: str, has_reasoning: bool) -> AssistantFacts:
        return AssistantFacts(text, ReasoningFacts("", None, False, False) if has_reasoning else None)

    def measure(self, facts: AssistantFacts, frame: Frame, fonts: Fonts, sizer: TextSizer) -> AssistantGeometry:
        m, column = METRICS.assistant, METRICS.column
        header = QRectF(frame.text_left, frame.top + m.top, frame.text_width, column.avatar)
        y = header.bottom() + m.header_gap
        thoughts = errors = text = typing = buttons_y = None
        if facts.reasoning is not None:
            thoughts = reasoning.measure(facts.reasoning, frame, fonts, sizer, y)
            y = thoughts.bottom
        if facts.error is not None:
            errors = error.measure(facts.text, facts.error, frame, fonts, sizer, y)
            y = errors.card.bottom() + column.row_gap
        elif facts.text:
            laid = sizer("text", facts.text, frame.text_width, fonts.base, growing=facts.streaming)
            text = (laid, y)
            y += height_of(laid) + m.text_gap
        elif facts.streaming and facts.reasoning is None:
            typing = QRectF(frame.text_left, y, m.typing_width, m.typing_height)
            y += m.typing_advance
        if facts.offer:
            y += m.buttons_gap
            buttons_y = y
            y += METRICS.controls.button_height + m.buttons_gap
        return AssistantGeometry(facts, frame, header, y + column.row_gap - frame.top, thoughts, errors, text, typing, buttons_y)

    def draw(self, geometry: AssistantGeometry, canvas: Canvas) -> None:
        facts, frame, header = geometry.facts, geometry.frame, geometry.header
        canvas.avatar(frame.left, header.top())
        x = frame.text_left + canvas.text(header, translate("TimelineDelegate", "Assistant"), canvas.fonts.bold, canvas.c.text)
        x += METRICS.assistant.name_gap
        center = header.center().y()
        if facts.streaming:
            x = canvas.pill(x, center, translate("TimelineDelegate", "streaming…"), canvas.c.accent)
        if facts.interrupted:
            x = canvas.pill(x, center, translate("TimelineDelegate", "Interrupted"), canvas.c.badges["interrupted"])
        if facts.synthetic:
            x = canvas.pill(x, center, translate("TimelineDelegate", "Synthetic"), canvas.c.badges["synthetic"])
        if geometry.reasoning is not None:
            reasoning.draw(geometry.reasoning, canvas)
        if geometry.error is not None:
            error.draw(geometry.error, canvas)
        elif geometry.text is not None:
            canvas.place(geometry.text[0], frame.text_left, geometry.text[1], canvas.c.text)
        elif geometry.typing is not None:
            canvas.text(geometry.typing, "● ● ●", canvas.fonts.small, canvas.c.muted)
        actions.draw(canvas, facts.actions, header.right(), center)
        if geometry.buttons_y is not None:
            x = canvas.button("retry", frame.text_left, geometry.buttons_y, "↻ " + translate("TimelineDelegate", "Retry"))
            canvas.button("continue", x, geometry.buttons_y, translate("TimelineDelegate", "Continue") + " →", primary=True)
