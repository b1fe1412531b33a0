"""A ``ui.ask_user`` part: the question, and either its open form (an editor) or how it was answered."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from PySide6.QtCore import QRectF

from crewagent.ui.ask_user import answer_lines
from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, TextSizer
from crewagent.ui.timeline.labels import translate
from crewagent.ui.timeline.metrics import METRICS
from crewagent.ui.timeline.model import INTERRUPTED, PENDING, TimelineRole
from crewagent.ui.timeline.rows.base import Index, RowContext, RowPainter


@dataclass(frozen=True)
class AskUserFacts:
    title: str
    #: The height of the open form; None when the question is not waiting for an answer here.
    editor_height: int | None = None
    #: The answer (or why there is none), one line each, when no form is open.
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class AskUserGeometry:
    facts: AskUserFacts
    card: QRectF
    title: QRectF
    editor: QRectF | None
    lines: tuple[QRectF, ...]
    height: float


class AskUserPainter(RowPainter[AskUserFacts, AskUserGeometry]):
    def facts(self, index: Index, context: RowContext) -> AskUserFacts:
        widget = index.data(TimelineRole.WIDGET) or {}
        title = str(widget.get("title") or translate("TimelineDelegate", "A question"))
        editor_height = context.editor_height(context.key)
        if editor_height is not None:
            return AskUserFacts(title, editor_height)
        return AskUserFacts(title, None, tuple(_answer(index, widget)))

    def estimated(self, text: str, has_reasoning: bool) -> AskUserFacts:
        return AskUserFacts(translate("TimelineDelegate", "A question"))

    def measure(self, facts: AskUserFacts, frame: Frame, fonts: Fonts, sizer: TextSizer) -> AskUserGeometry:
        a, pad = METRICS.ask_user, METRICS.controls.card_pad
        left, width = frame.text_left, frame.text_width
        y = frame.top + METRICS.tool.top
        editor = facts.editor_height
        body_h = editor if editor is not None else len(facts.lines) * a.line + a.lines_pad
        card = QRectF(left, y, width, a.header + body_h + a.bottom_pad)
        title = QRectF(left + pad, y + a.title_top, width - 2 * pad, a.title_height)
        inner_y = y + a.header
        if editor is not None:
            rect = QRectF(left + a.editor_inset, inner_y, width - 2 * a.editor_inset, body_h)
            return AskUserGeometry(facts, card, title, rect, (), card.bottom() + METRICS.tool.bottom - frame.top)
        lines = tuple(QRectF(left + pad, inner_y + n * a.line, width - 2 * pad, a.line) for n in range(len(facts.lines)))
        return AskUserGeometry(facts, card, title, None, lines, card.bottom() + METRICS.tool.bottom - frame.top)

    def draw(self, geometry: AskUserGeometry, canvas: Canvas) -> None:
        c = canvas.c
        canvas.card(geometry.card, c.ask_fill, c.ask_border)
        canvas.text(geometry.title, "?  " + geometry.facts.title, canvas.fonts.small_bold, c.ask_text)
        canvas.layout.editor = geometry.editor
        for rect, line in zip(geometry.lines, geometry.facts.lines, strict=True):
            canvas.text(rect, line, canvas.fonts.base, c.text)


def _answer(index: Index, widget: Mapping[str, object]) -> list[str]:
    response = None
    message = index.data(TimelineRole.MESSAGE)
    if message is not None:
        parsed = message.result_json()
        response = parsed.get("response") if isinstance(parsed, dict) else None
    if response is not None:
        return answer_lines(widget, response)
    if str(index.data(TimelineRole.TOOL_STATE) or PENDING) == INTERRUPTED:
        return [translate("TimelineDelegate", "Not answered: the turn was stopped.")]
    if index.data(TimelineRole.TOOL_RESULT):
        return [translate("TimelineDelegate", "Not answered.")]
    return [translate("TimelineDelegate", "Waiting for your answer…")]
