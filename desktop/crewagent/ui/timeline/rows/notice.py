"""A summary of the earlier conversation: one centred line that opens onto the summary."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt

from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, Text, TextSizer, height_of
from crewagent.ui.timeline.labels import translate
from crewagent.ui.timeline.metrics import METRICS
from crewagent.ui.timeline.model import TimelineRole
from crewagent.ui.timeline.rows.base import Index, RowContext, RowPainter


@dataclass(frozen=True)
class NoticeFacts:
    text: str
    expanded: bool = False


@dataclass(frozen=True)
class NoticeGeometry:
    facts: NoticeFacts
    toggle: QRectF
    #: The summary and where it goes (expanded only).
    text: tuple[Text, float, float] | None
    height: float


class NoticePainter(RowPainter[NoticeFacts, NoticeGeometry]):
    def facts(self, index: Index, context: RowContext) -> NoticeFacts:
        return NoticeFacts(str(index.data(TimelineRole.TEXT) or ""), context.key in context.state.expanded_reasoning)

    def estimated(self, text: str, has_reasoning: bool) -> NoticeFacts:
        return NoticeFacts(text)

    def measure(self, facts: NoticeFacts, frame: Frame, fonts: Fonts, sizer: TextSizer) -> NoticeGeometry:
        n = METRICS.notice
        y = frame.top + n.top
        toggle = QRectF(frame.left, y, frame.width, n.header)
        y += n.header_advance
        text = None
        if facts.expanded:
            laid = sizer("text", facts.text, frame.width - 2 * n.indent, fonts.small)
            text = (laid, frame.left + n.indent, y)
            y += height_of(laid) + n.text_gap
        return NoticeGeometry(facts, toggle, text, y + n.bottom - frame.top)

    def draw(self, geometry: NoticeGeometry, canvas: Canvas) -> None:
        label = translate("TimelineDelegate", "Summary of the earlier conversation") + ("  ▾" if geometry.facts.expanded else "  ▸")
        canvas.hit("toggle_reasoning", geometry.toggle)
        canvas.text(geometry.toggle, label, canvas.fonts.small_bold, canvas.c.muted, Qt.AlignmentFlag.AlignHCenter)
        if geometry.text is not None:
            canvas.place(*geometry.text, canvas.c.muted)
