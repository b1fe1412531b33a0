"""A finished background subagent's notice: one subtle card, not a bubble the user wrote."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF

from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, TextSizer
from crewagent.ui.timeline.labels import compact, notice_description, open_subagent_label, subagent_status_label, translate
from crewagent.ui.timeline.metrics import METRICS
from crewagent.ui.timeline.model import TimelineRole
from crewagent.ui.timeline.rows.base import Index, RowContext, RowPainter
from crewagent.worker.turn_values import SubagentInfo


@dataclass(frozen=True)
class SubagentNoticeFacts:
    info: SubagentInfo | None
    description: str
    summary: str


@dataclass(frozen=True)
class SubagentNoticeGeometry:
    facts: SubagentNoticeFacts
    card: QRectF
    #: The title line (status dot, title, description), the summary line and the button's place.
    title: QRectF
    summary: QRectF | None
    button: QPointF | None
    height: float


class SubagentNoticePainter(RowPainter[SubagentNoticeFacts, SubagentNoticeGeometry]):
    def facts(self, index: Index, context: RowContext) -> SubagentNoticeFacts:
        info: SubagentInfo | None = index.data(TimelineRole.SUBAGENT)
        return self._facts(info, str(index.data(TimelineRole.TEXT) or ""))

    def estimated(self, text: str, has_reasoning: bool) -> SubagentNoticeFacts:
        return self._facts(None, text)

    @staticmethod
    def _facts(info: SubagentInfo | None, text: str) -> SubagentNoticeFacts:
        summary = compact(info.summary, METRICS.notice.subagent_summary_chars) if info is not None else ""
        return SubagentNoticeFacts(info, notice_description(text), summary)

    def measure(self, facts: SubagentNoticeFacts, frame: Frame, fonts: Fonts, sizer: TextSizer) -> SubagentNoticeGeometry:
        n, controls = METRICS.notice, METRICS.controls
        y = frame.top + n.subagent_top
        left, width = frame.text_left, frame.text_width
        height = (n.subagent_pad_top + n.subagent_title + (n.subagent_summary if facts.summary else 0) + n.subagent_button_gap
                  + (controls.button_height + n.subagent_button_bottom if facts.info is not None else 0) + n.subagent_pad_bottom)
        card = QRectF(left, y, width, height)
        inner_x, inner_w = left + controls.card_pad, width - 2 * controls.card_pad
        inner_y = y + n.subagent_pad_top
        title = QRectF(inner_x, inner_y, inner_w, n.subagent_title)
        inner_y += n.subagent_title
        summary = None
        if facts.summary:
            summary = QRectF(inner_x, inner_y, inner_w, n.subagent_summary)
            inner_y += n.subagent_summary
        button = QPointF(inner_x, inner_y + n.subagent_button_gap) if facts.info is not None else None
        return SubagentNoticeGeometry(facts, card, title, summary, button, card.bottom() + METRICS.column.row_gap - frame.top)

    def draw(self, geometry: SubagentNoticeGeometry, canvas: Canvas) -> None:
        n, facts, title, fonts, c = METRICS.notice, geometry.facts, geometry.title, canvas.fonts, canvas.c
        status = facts.info.status if facts.info is not None else ""
        kind = facts.info.subagent_type if facts.info is not None else ""
        canvas.card(geometry.card, c.notice_fill, c.notice_border, n.subagent_radius)
        x, inner_x, inner_y, inner_w = title.left(), title.left(), title.top(), title.width()
        dot_x, dot_y = n.subagent_dot
        canvas.dot(QPointF(x + dot_x, inner_y + dot_y), n.subagent_dot_radius, c.subagent_states.get(status, c.muted))
        x += n.subagent_dot_advance
        text = translate("TimelineDelegate", "Background subagent {type} {status}").format(type=kind, status=subagent_status_label(status))
        x += canvas.text(QRectF(x, inner_y, inner_w - (x - inner_x), title.height()), text, fonts.small_bold, c.notice_text) + n.subagent_title_gap
        if facts.description:
            canvas.text(QRectF(x, inner_y, inner_w - (x - inner_x), title.height()), "· " + facts.description, fonts.small, c.notice_text)
        if geometry.summary is not None:
            canvas.text(geometry.summary, facts.summary, fonts.small, c.muted)
        if geometry.button is not None:
            canvas.button("open_subagent", geometry.button.x(), geometry.button.y(), open_subagent_label())
