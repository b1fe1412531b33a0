"""A message the user wrote: a bubble on the right, as wide as its text needs, with Copy and Edit on hover."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF

from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, Text, TextSizer
from crewagent.ui.timeline.metrics import METRICS
from crewagent.ui.timeline.model import TimelineRole
from crewagent.ui.timeline.rows import actions
from crewagent.ui.timeline.rows.base import Index, RowContext, RowPainter


@dataclass(frozen=True)
class UserFacts:
    text: str
    #: Edit is offered (nothing runs, and the timeline is not a subagent's read-only tab).
    editable: bool = False


@dataclass(frozen=True)
class UserGeometry:
    bubble: QRectF
    text: Text
    height: float
    frame: Frame
    actions: tuple[str, ...] = ()
    #: The links do not fit beside the bubble: they float over its lower left corner.
    actions_over: bool = False


class UserPainter(RowPainter[UserFacts, UserGeometry]):
    def facts(self, index: Index, context: RowContext) -> UserFacts:
        state = context.state
        return UserFacts(str(index.data(TimelineRole.TEXT) or ""), not state.busy and not state.read_only)

    def estimated(self, text: str, has_reasoning: bool) -> UserFacts:
        return UserFacts(text)

    def measure(self, facts: UserFacts, frame: Frame, fonts: Fonts, sizer: TextSizer) -> UserGeometry:
        m = METRICS.user
        widest = frame.width * m.max_ratio - 2 * m.pad_x
        laid = sizer("text", facts.text, widest, fonts.base)
        text_h, text_w = (laid, widest) if isinstance(laid, float) else (laid.height, min(laid.ideal_width, widest))
        bubble = QRectF(frame.left + frame.width - text_w - 2 * m.pad_x, frame.top + m.top, text_w + 2 * m.pad_x, text_h + 2 * m.pad_y)
        names = (actions.COPY, actions.EDIT) if facts.editable else (actions.COPY,)
        over = bubble.left() - frame.left < actions.width(names, fonts) + actions.GAP
        return UserGeometry(bubble, laid, bubble.bottom() + METRICS.column.row_gap - frame.top, frame, names, over)

    def draw(self, geometry: UserGeometry, canvas: Canvas) -> None:
        m, bubble = METRICS.user, geometry.bubble
        canvas.card(bubble, canvas.c.user_bubble, canvas.c.user_bubble, m.radius)
        canvas.place(geometry.text, bubble.left() + m.pad_x, bubble.top() + m.pad_y, canvas.c.user_text)
        if geometry.actions_over:
            right = bubble.left() + actions.width(geometry.actions, canvas.fonts) + 2 * actions.GAP
            actions.draw(canvas, geometry.actions, right, bubble.bottom() - actions.HEIGHT / 2 - 2, backdrop=True)
        else:
            actions.draw(canvas, geometry.actions, bubble.left() - actions.GAP, bubble.bottom() - actions.HEIGHT / 2)
