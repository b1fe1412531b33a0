"""An assistant message's reasoning: "Thought for N s", opening onto the thoughts with a bar beside them."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetricsF

from crewagent.ui.timeline.canvas import Canvas, Fonts, Frame, Text, TextSizer, height_of
from crewagent.ui.timeline.labels import translate
from crewagent.ui.timeline.metrics import METRICS


@dataclass(frozen=True)
class ReasoningFacts:
    text: str
    #: Seconds spent thinking (None: not known).
    seconds: float | None
    expanded: bool
    #: Still thinking: the message is streaming and has no answer text yet.
    thinking: bool


@dataclass(frozen=True)
class ReasoningGeometry:
    label: str
    toggle: QRectF
    #: The thoughts (expanded only) and the bar beside them.
    text: Text | None
    bar: QRectF | None
    bottom: float


def measure(facts: ReasoningFacts, frame: Frame, fonts: Fonts, sizer: TextSizer, y: float) -> ReasoningGeometry:
    m = METRICS.assistant
    if facts.thinking:
        label = translate("TimelineDelegate", "Thinking…")
    elif facts.seconds is not None:
        label = translate("TimelineDelegate", "Thought for {n} s").format(n=max(1, round(facts.seconds)))
    else:
        label = translate("TimelineDelegate", "Thoughts")
    label = f"{label} {'▾' if facts.expanded else '▸'}"
    toggle = QRectF(frame.text_left, y, QFontMetricsF(fonts.small_bold).horizontalAdvance(label) + m.toggle_pad, m.toggle_height)
    y = toggle.bottom() + m.toggle_gap
    text = bar = None
    if facts.expanded:
        text = sizer("reasoning", facts.text, frame.text_width - m.reasoning_inset, fonts.small)
        bar = QRectF(frame.text_left, y, m.reasoning_bar, height_of(text))
        y += height_of(text) + m.reasoning_gap
    return ReasoningGeometry(label, toggle, text, bar, y)


def draw(geometry: ReasoningGeometry, canvas: Canvas) -> None:
    canvas.link("toggle_reasoning", geometry.toggle, geometry.label, canvas.c.muted)
    if geometry.bar is not None:
        canvas.fill(geometry.bar, canvas.c.card_border)
        canvas.place(geometry.text, geometry.bar.left() + METRICS.assistant.reasoning_indent, geometry.bar.top(), canvas.c.muted)
