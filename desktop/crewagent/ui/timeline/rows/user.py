"""A message the user wrote: a bubble on the right, as wide as its text needs."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF

from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, Text, TextSizer
from crewagent.ui.timeline.metrics import METRICS
from crewagent.ui.timeline.model import TimelineRole
from crewagent.ui.timeline.rows.base import Index, RowContext, RowPainter


@dataclass(frozen=True)
class UserGeometry:
    bubble: QRectF
    text: Text
    height: float


class UserPainter(RowPainter[str, UserGeometry]):
    def facts(self, index: Index, context: RowContext) -> str:
        return str(index.data(TimelineRole.TEXT) or "")

    def estimated(self, text: str, has_reasoning: bool) -> str:
        return text

    def measure(self, facts: str, frame: Frame, fonts: Fonts, sizer: TextSizer) -> UserGeometry:
        m = METRICS.user
        widest = frame.width * m.max_ratio - 2 * m.pad_x
        laid = sizer("text", facts, widest, fonts.base)
        text_h, text_w = (laid, widest) if isinstance(laid, float) else (laid.height, min(laid.ideal_width, widest))
        bubble = QRectF(frame.left + frame.width - text_w - 2 * m.pad_x, frame.top + m.top, text_w + 2 * m.pad_x, text_h + 2 * m.pad_y)
        return UserGeometry(bubble, laid, bubble.bottom() + METRICS.column.row_gap - frame.top)

    def draw(self, geometry: UserGeometry, canvas: Canvas) -> None:
        m, bubble = METRICS.user, geometry.bubble
        canvas.card(bubble, canvas.c.user_bubble, canvas.c.user_bubble, m.radius)
        canvas.place(geometry.text, bubble.left() + m.pad_x, bubble.top() + m.pad_y, canvas.c.user_text)
