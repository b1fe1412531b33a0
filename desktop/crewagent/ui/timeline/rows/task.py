"""A Task part's body, under its header: what the subagent was asked, how it went, the way to its tab."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF

from crewagent.ui.core_texts import translate_core
from crewagent.ui.timeline.canvas import Canvas, Fonts, Text, TextSizer, height_of
from crewagent.ui.timeline.labels import compact, open_subagent_label, translate
from crewagent.ui.timeline.metrics import METRICS
from crewagent.worker.turn_values import SubagentInfo


@dataclass(frozen=True)
class TaskGeometry:
    info: SubagentInfo | None
    description: tuple[str, QRectF] | None
    #: "Working…" while the subagent runs (or before it is known).
    note: tuple[str, QRectF] | None
    summary: tuple[Text, float, float] | None
    button: tuple[float, float] | None
    height: float


def measure(info: SubagentInfo | None, description: str, left: float, y: float, width: float, fonts: Fonts, sizer: TextSizer) -> TaskGeometry:
    t = METRICS.tool
    x = left + t.task_indent  # under the part's name, past the status dot
    inner_w = width - (x - left) - METRICS.controls.card_pad
    height = 0.0
    line = note = summary = button = None
    if description:
        line = (description, QRectF(x, y + height, inner_w, t.task_line))
        height += t.task_line_advance
    if info is None or info.running:
        waiting = info is not None and info.background
        text = translate("TimelineDelegate", "Working in the background…") if waiting else translate("TimelineDelegate", "Working…")
        note = (text, QRectF(x, y + height, inner_w, t.task_note))
        height += t.task_note_advance
    elif info.summary:
        # A finished subagent's summary is its answer (data); a cancelled one's is the core's notice.
        shown = info.summary if info.status == "completed" else translate_core(info.summary)
        laid = sizer("summary", compact(shown), inner_w, fonts.small, plain=True)
        summary = (laid, x, y + height)
        height += height_of(laid) + t.task_summary_gap
    if info is not None:
        button = (x, y + height + t.task_button_gap)
        height += METRICS.controls.button_height + t.task_button_gap
    return TaskGeometry(info, line, note, summary, button, height + t.task_bottom)


def draw(geometry: TaskGeometry, canvas: Canvas) -> None:
    if geometry.description is not None:
        canvas.text(geometry.description[1], geometry.description[0], canvas.fonts.base, canvas.c.text)
    if geometry.note is not None:
        canvas.text(geometry.note[1], geometry.note[0], canvas.fonts.small, canvas.c.muted)
    if geometry.summary is not None:
        laid, x, y = geometry.summary
        failed = geometry.info is not None and geometry.info.status == "failed"
        canvas.place(laid, x, y, canvas.c.error_text if failed else canvas.c.muted)
    if geometry.button is not None:
        canvas.button("open_subagent", *geometry.button, open_subagent_label())
